"""benchmarks/gpu_smoke.py: skipped with one line where there is no GPU; on a device it answers
points spread over the depths in both modalities and fails on an error or an empty answer."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ihbench.loaders import Response
from ihbench.loaders.tiny import make_tiny_model
from official_layout import write_official_layout

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_smoke.py"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return make_tiny_model("qwen2-audio", tmp_path_factory.mktemp("smoke") / "model")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_official_layout(tmp_path_factory.mktemp("official") / "data")


def smoke(monkeypatch, capsys, *argv):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_smoke

    monkeypatch.setattr(sys, "argv", ["gpu_smoke.py", *argv])
    capsys.readouterr()
    code = gpu_smoke.main()
    return code, capsys.readouterr().out.splitlines()


def test_without_a_gpu_it_says_it_skipped_in_one_line(model):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    done = subprocess.run([sys.executable, str(SCRIPT), "qwen2-audio", str(model)], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.startswith("gpu_smoke: skipped: no CUDA GPU here") and done.stdout.count("\n") == 1


def test_it_answers_points_over_the_depths_in_both_modalities(model, data, monkeypatch, capsys):
    code, lines = smoke(monkeypatch, capsys, "qwen2-audio", str(model), "--device", "cpu", "--data", str(data),
                        "--max-new-tokens", "6")

    assert code == 0, lines
    assert lines[1].startswith("audio: 3 points (conv-b/1, conv-a/2, conv-b/4) at ")
    assert lines[2].startswith("text: 3 points") and "first answer: " in lines[2]
    assert lines[-1].startswith("family=qwen2-audio ok=True audio_items_per_s=")


def test_an_error_or_an_empty_answer_fails_the_smoke(model, data, monkeypatch, capsys):
    from ihbench.loaders.transformers_base import TransformersLoader

    def broken(self, conversation, config, seed):
        if conversation.item_id == "conv-b/4":
            return Response(text=None, latency_s=0.1, error="AudioTooLongError: too long")
        return Response(text="  ", latency_s=0.1)

    monkeypatch.setattr(TransformersLoader, "generate", broken)
    code, lines = smoke(monkeypatch, capsys, "qwen2-audio", str(model), "--device", "cpu", "--data", str(data))

    assert code == 1
    assert "FAIL audio conv-b/4: AudioTooLongError: too long" in lines
    assert "FAIL text conv-a/2: an empty answer" in lines and lines[-1].startswith("family=qwen2-audio ok=False")
