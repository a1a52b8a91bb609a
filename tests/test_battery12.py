"""Battery 12 (issue 23): findings of the twelfth battery of bad inputs, tried on an installed wheel as a
new user would. Stand-ins are named where used (scripted OpenAI-compatible servers on loopback)."""
import pytest
from metric_modules import load

from ihbench.cli import main

BREAK = {"total_nonbreak": False, "break_time": 1.0, "duration": 3.0}


@pytest.mark.parametrize("name", ["apt", "fir", "irl"])
def test_sid_rows_with_other_keys_are_scored_on_their_own_fields(name):
    """H1: a key beyond the module's features (a dataset row's audio, id) ended in a bare KeyError from
    deep inside `datasets`; the rows of a SID config are now given as they are."""
    module = load(name)
    plain = module.compute(predictions=[{"total_nonbreak": False, "break_time": 1.02}], references=[BREAK])
    richer = module.compute(predictions=[{"total_nonbreak": False, "break_time": 1.02, "foo": 1}],
                            references=[{**BREAK, "audio": {"path": "a.wav"}, "id": "clip-1"}])
    assert richer == plain and plain["hits_within_tolerance"] == 1
    module.add(prediction={"total_nonbreak": True, "break_time": -1.0, "score": 0.2}, reference={**BREAK, "id": "x"})
    module.add_batch(predictions=[{"total_nonbreak": False, "break_time": 2.0, "score": 0.9}],
                     references=[{**BREAK, "id": "y"}])
    added = module.compute()
    assert (added["misses"], added["late_hits"]) == (1, 1)
    with pytest.raises(ValueError, match=r"predictions\[0\]: missing break_time"):
        module.compute(predictions=[{"total_nonbreak": False, "break_tme": 1.0}], references=[BREAK])


def test_a_no_break_prediction_with_a_time_is_scored_as_the_card_says():
    """H2: the card said break_time is ignored when total_nonbreak is true, while the notebook's rule
    (times first) scores such a row at the true break as a hit. The card now says what is done."""
    from metric_modules import METRICS

    result = load("apt").compute(predictions=[{"total_nonbreak": True, "break_time": 1.0}], references=[BREAK])
    assert (result["hits_within_tolerance"], result["misses"], result["apt"]) == (1, 0, 0.0)
    result = load("apt").compute(predictions=[{"total_nonbreak": True, "break_time": -1.0}], references=[BREAK])
    assert (result["misses"], result["apt"]) == (1, 2.0)
    for name in ("apt", "fir", "irl"):
        card = " ".join((METRICS / name / "README.md").read_text().split())
        assert "is ignored" not in card
        assert "compares the times before the flags, so a \"no break\" prediction whose `break_time` lies within " \
               "tolerance of the true break counts as a hit" in card


@pytest.mark.parametrize("argv", [
    ["publish-dataset", "", "--repo", "a/b", "--dry-run"],
    ["sid", "--detector", "energy", "--data", "", "--config", "sid_en", "--out", "{tmp}/x"],
    ["set-baseline", "{tmp}/run", "--data", " ", "--out", "{tmp}/x"],
    ["run", "--model", "openai", "--model-path", "m", "--data", "", "--out", "{tmp}/x"],
    ["barge-in", "--data", "", "--model", "openai", "--model-path", "m", "--sim-model", "s", "--out", "{tmp}/x"],
    ["info", ""], ["export", "", "--out", "{tmp}/x"], ["space", "--data", ""], ["doctor", "--data", ""],
    ["publish-space", "--repo", "a/b", "--data", "", "--dry-run", "--staging-dir", "{tmp}/x"],
])
def test_an_empty_dataset_is_refused_when_parsed_not_read_as_the_current_folder(argv, tmp_path, capsys,
                                                                              monkeypatch):
    """H3: '' is the current folder to `Path`: publish-dataset listed whatever folder the user stood in
    for upload, sid and set-baseline read it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("a folder of the user's own\n")
    with pytest.raises(SystemExit) as stopped:
        main([part.replace("{tmp}", str(tmp_path)) for part in argv])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "expected a dataset folder or a Hub id, got" in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
