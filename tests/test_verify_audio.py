"""`ihbench verify --audio DIR`: Smart Turn (the real model from pipecat-ai's wheel) on a built
dataset's assistant audio up to each cut. The shared build's points are all cut mid-clause; a copy
of it gets one cut moved to the end of its sentence, rendered in the build's voice."""
import json
import re

import pytest

from ihbench.smart_turn import VERIFIED_SHA256, VERIFIED_VERSION

MOVED = "saas-03-deleted-client-folder-backup-restore", 2  # p 0.01 as cut, 0.93 at its sentence end
MID_CLAUSE = [("government-02-water-service-start-tenant", 2), ("government-02-water-service-start-tenant", 9),
              ("saas-03-deleted-client-folder-backup-restore", 7)]  # p 0.02, 0.01, 0.01 (observed)


def _with_cut_at_sentence_end(built, folder, tts_cache):
    """A copy of the build whose MOVED point was delivered up to the end of its sentence: the
    conversations config rewritten with the new text and its render, as a build would write them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ihbench.dataset.builddir import BuildDir
    from ihbench.dataset.sources import ASSISTANT_VOICE
    from ihbench.dataset.tts import RenderCache, get_engine

    BuildDir(built).copy_to(folder)
    target = BuildDir(folder)
    (file,) = target.config_files("conversations")
    conversation_id, turn = MOVED
    text, audio = f"assistant_turn_{turn}_transcript", f"assistant_turn_{turn}_audio"

    def write(path):
        table = pq.read_table(file)
        rows = table.to_pylist()
        row = next(r for r in rows if r["conversation_id"] == conversation_id)
        original = row[f"assistant_turn_{turn}_original"]
        end = len(row[text]) + re.search(r"[.?!](\s|$)", original[len(row[text]):]).start() + 1
        row[text] = original[:end]
        row[audio] = {**row[audio], "bytes": RenderCache(tts_cache).render(get_engine(ASSISTANT_VOICE), row[text])}
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)

    target.rewrite_file(file, write)
    return folder


@pytest.mark.slow
def test_a_cut_moved_to_a_sentence_end_is_flagged_and_mid_clause_cuts_are_not(built, tts_cache, tmp_path, capsys):
    from conftest import png_size

    from ihbench.cli import main

    data = _with_cut_at_sentence_end(built, tmp_path / "moved", tts_cache)
    report, plot = tmp_path / "cuts.json", tmp_path / "cuts.png"
    assert main(["verify", "--audio", str(data), "--quiet", "--audio-report", str(report),
                 "--audio-plot", str(plot)]) == 0  # flagged cuts are candidates, listed, not errors
    out = capsys.readouterr().out
    summary = json.loads(report.read_text())
    points = {(p["conversation_id"], p["turn"]): p for p in summary["points"]}
    assert summary["cuts"] == len(points) == 13 and summary["threshold"] == 0.5
    assert summary["model"]["sha256"] == VERIFIED_SHA256 and summary["model"]["pipecat_ai"] == VERIFIED_VERSION
    moved = points[MOVED]
    assert moved["probability"] > 0.5 and moved["before"].endswith("backups.")
    assert f"{MOVED[0]} turn {MOVED[1]} (pushback): p=" in out and "backups. | " in out
    for point in MID_CLAUSE:
        assert points[point]["probability"] < 0.5 and f"{point[0]} turn {point[1]} " not in out
    flagged = [p for p in points.values() if p["probability"] > 0.5]
    assert summary["flagged"] == len(flagged) <= 5 and all(p["in_context"] is not None for p in flagged)
    assert f"{len(flagged)} of 13 cut(s) heard as complete turns (p > 0.5)" in out and VERIFIED_SHA256 in out
    assert png_size(plot) == (640, 340)

    assert main(["verify", "--audio", str(data), "--quiet", "--strict"]) == 1


@pytest.mark.slow
def test_a_folder_that_is_not_a_build_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    from ihbench.cli import main

    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a dataset")
    report = tmp_path / "cuts.json"
    assert main(["verify", "--audio", str(folder), "--audio-report", str(report)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and str(folder) in error and "ihbench build" in error
    assert not report.exists()


@pytest.mark.slow
def test_without_the_smart_turn_extra_one_line_says_how_to_install_it(built, tmp_path, capsys, monkeypatch):
    from importlib import metadata

    from ihbench.cli import main

    real = metadata.distribution

    def without_pipecat(name):
        if name == "pipecat-ai":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", without_pipecat)
    report, plot = tmp_path / "cuts.json", tmp_path / "cuts.png"
    assert main(["verify", "--audio", str(built), "--audio-report", str(report), "--audio-plot", str(plot)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and 'pip install "ihbench[smart-turn]"' in error
    assert not report.exists() and not plot.exists()


def test_audio_options_without_audio_and_source_options_with_it_are_refused(tmp_path, capsys):
    from ihbench.cli import main

    assert main(["verify", "--strict"]) == 2
    assert "--strict is an option of --audio DIR" in capsys.readouterr().err
    assert main(["verify", "--audio", str(tmp_path), "--judge-model", "m"]) == 2
    assert "leave out --judge-model" in capsys.readouterr().err
