"""`ihbench set-baseline`: one epoch of a real run (here the local OpenAI-compatible test double
stands in for an API model) becomes the baselines of a copy of the dataset."""
import subprocess
import sys

from ihbench.dataset import load_items
from openai_test_server import OpenAITestServer

from ihbench.dataset.io import read_records
from ihbench.runner import RunSpec, run


def test_set_baseline_replaces_every_baseline_and_says_where_they_came_from(built, tmp_path):
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="gpt-4o-audio-preview", data=str(built), out=tmp_path / "run",
                    epochs=2, modality="text", loader_options={"base_url": server.base_url}), progress=False)
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "set-baseline", str(tmp_path / "run"), "--data",
                             str(built), "--out", str(tmp_path / "rebased"), "--epoch", "1"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    responses = {r["id"]: r["response"] for r in read_records(tmp_path / "run" / "responses.jsonl") if r["epoch"] == 1}
    new = load_items(str(tmp_path / "rebased"))
    assert {i.id: i.baseline for i in new} == responses and all(i.baseline_rq is None for i in new)
    long = load_items(str(tmp_path / "rebased"), config="interruptions")
    assert [i.baseline for i in long] == [i.baseline for i in new]
    card = (tmp_path / "rebased" / "README.md").read_text()
    assert "gpt-4o-audio-preview" in card and "epoch 1" in card and server.base_url in card
    original = load_items(str(built))
    assert all(i.baseline_rq is not None for i in original)  # the source dataset is untouched


def test_set_baseline_refuses_a_partial_run(built, tmp_path):
    with OpenAITestServer() as server:
        run(RunSpec(loader="openai", model_path="m", data=str(built), out=tmp_path / "run", epochs=1, limit=2,
                    loader_options={"base_url": server.base_url}), progress=False)
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "set-baseline", str(tmp_path / "run"), "--data",
                             str(built), "--out", str(tmp_path / "rebased")], capture_output=True, text=True)
    assert result.returncode == 2 and "did not run on every interruption point" in result.stderr
    assert not (tmp_path / "rebased").exists()
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "set-baseline", str(tmp_path / "run"), "--data",
                             str(built), "--out", str(tmp_path / "rebased"), "--epoch", "2"], capture_output=True,
                            text=True)  # found by the bad-input battery: blamed "errors or an unfinished run"
    assert result.returncode == 2 and "has 1 epoch(s), numbered 0 to 0; there is no epoch 2" in result.stderr
    assert not (tmp_path / "rebased").exists()


def test_a_rebaselined_folder_made_again_at_the_same_path_is_read_as_new(built, tmp_path):
    """The rewritten files are named by their new bytes, in the folder and in the card; under the old
    names `load_dataset` served the first folder's baselines from its cache after `rm -r` and a rerun."""
    import shutil

    import datasets
    from openai_test_server import Reply

    out = tmp_path / "rebased"
    for label in ("first", "second"):
        with OpenAITestServer(respond=lambda body, label=label: Reply(content=f"{label} baseline")) as server:
            run(RunSpec(loader="openai", model_path="m", data=str(built), out=tmp_path / label, epochs=1,
                        modality="text", loader_options={"base_url": server.base_url}), progress=False)
        shutil.rmtree(out, ignore_errors=True)
        result = subprocess.run([sys.executable, "-m", "ihbench.cli", "set-baseline", str(tmp_path / label), "--data",
                                 str(built), "--out", str(out)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr

        points = datasets.load_dataset(str(out), "interruptions", split="dev")
        assert set(points["baseline_response"]) == {f"{label} baseline"}
        card = (out / "README.md").read_text()
        for config in ("baseline", "interruptions"):
            (parquet,) = (out / config).glob("*.parquet")
            assert f"{config}/{parquet.name}" in card
