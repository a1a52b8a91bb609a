"""Every tiny random-weight family (real classes, built offline) runs end to end through the CLI
on the in-house data."""
import json
import subprocess
import sys

import pytest

from ihbench.jsonl import read_records
from loaders.tiny import AUDIO_FAMILIES, loader_name


@pytest.mark.parametrize("family,modality", [*((family, "audio") for family in AUDIO_FAMILIES),
                                             ("qwen2-audio", "text")])
def test_tiny_model_runs_through_the_cli(built, tmp_path, family, modality):
    model = tmp_path / f"tiny-{family}"
    made = subprocess.run([sys.executable, "-m", "ihbench.cli", "make-tiny-model", family, "--out", str(model)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    out = tmp_path / "run"
    command = [sys.executable, "-m", "ihbench.cli", "run", "--model", loader_name(family), "--model-path", str(model),
               "--data", str(built), "--epochs", "2", "--limit", "2", "--types", "filler,pushback,impatient",
               "--max-new-tokens", "6", "--modality", modality, "--out", str(out), "--quiet"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    records = read_records(out / "responses.jsonl")
    assert len(records) == 4 and all(r["error"] is None for r in records), records
    assert all(isinstance(r["response"], str) and r["output_tokens"] >= 1 and r["input_tokens"] > 0 for r in records)
    info = json.loads((out / "run.json").read_text())
    assert info["model"]["loader"] == loader_name(family)
    assert info["model"]["dtype"] and info["model"]["device"] == "cpu"
    if family != "qwen2-audio":
        return  # resuming is the runner's, not the family's: checked once
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0 and "0 response(s) written, 4 already done" in again.stdout
