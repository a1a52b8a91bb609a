"""Every tiny random-weight family (real classes, built offline) runs end to end through the CLI
on the in-house data: Qwen2-Audio in a fresh process (as a user runs it, resuming too), the other
families through the same `main()` in this process, which spares each a torch import."""
import json
import subprocess
import sys

import pytest
from ihbench.loaders.tiny import AUDIO_FAMILIES, loader_name

from ihbench.cli import main
from ihbench.dataset.io import read_records

pytestmark = pytest.mark.slow


def run_command(family, model, built, out, modality):
    return ["run", "--model", loader_name(family), "--model-path", str(model), "--data", str(built),
            "--epochs", "2", "--limit", "2", "--types", "filler,pushback,impatient", "--max-new-tokens", "6",
            "--modality", modality, "--out", str(out), "--quiet"]


#: the item failure of an answer of special tokens only (battery 5, finding 1): a tiny random model may give one
EMPTY = "EmptyReplyError: the model's answer has no text once its special tokens are removed"


def failed_empty(out) -> bool:
    """Whether some answer of the run had no text (the run then exits 1, as for any failed item)."""
    return any((r["error"] or "").startswith(EMPTY) for r in read_records(out / "responses.jsonl"))


def check_run(out, family):
    records = read_records(out / "responses.jsonl")
    assert len(records) == 4 and all(r["error"] is None or r["error"].startswith(EMPTY) for r in records), records
    assert all((isinstance(r["response"], str) or r["error"]) and r["output_tokens"] >= 1 and r["input_tokens"] > 0
               for r in records)
    info = json.loads((out / "run.json").read_text())
    assert info["model"]["loader"] == loader_name(family)
    assert info["model"]["dtype"] and info["model"]["device"] == "cpu"


def test_qwen2_audio_runs_and_resumes_through_the_cli_in_a_fresh_process(built, tmp_path, modality="audio"):
    model, out = tmp_path / "tiny", tmp_path / "run"
    made = subprocess.run([sys.executable, "-m", "ihbench.cli", "make-tiny-model", "qwen2-audio", "--out", str(model)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    command = [sys.executable, "-m", "ihbench.cli", *run_command("qwen2-audio", model, built, out, modality)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    check_run(out, "qwen2-audio")
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0
    assert "0 response(s) written, 0 failed (kept, tried again by the next run), 4 already done" in again.stdout


@pytest.mark.parametrize("family,modality", [*((f, "audio") for f in AUDIO_FAMILIES if f != "qwen2-audio"),
                                             ("qwen2-audio", "text")])
def test_every_family_runs_through_the_cli(built, tmp_path, family, modality):
    model, out = tmp_path / f"tiny-{family}", tmp_path / "run"
    assert main(["make-tiny-model", family, "--out", str(model)]) == 0
    code = main(run_command(family, model, built, out, modality))
    assert code == (1 if failed_empty(out) else 0)
    check_run(out, family)
