"""Test environment: no network, no shared caches, one thread."""
import os
import tempfile

_SESSION_HOME = tempfile.mkdtemp(prefix="ihbench-tests-")
for name, value in {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HOME": os.path.join(_SESSION_HOME, "hf-home"),
    "IHBENCH_CACHE": os.path.join(_SESSION_HOME, "ihbench-cache"),  # never the user's TTS or judge cache
    "OMP_NUM_THREADS": "1",
}.items():
    os.environ[name] = value

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _per_test_datasets_cache(tmp_path, monkeypatch):
    """A fresh datasets cache per test, so no test is served another test's (or a user's) data."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets-cache"))
    yield


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)


# --- an in-house build shared by tests (real Piper/flite renders, two short conversations) -----

def _two_shortest():
    """The two shortest shipped conversations (one per user voice family): a fast but real build."""
    from ihbench.dataset.sources import source_files

    files = source_files()
    by_voice = {}
    for path in sorted(files, key=lambda p: len(json.loads(p.read_text())["turns"])):
        by_voice.setdefault(json.loads(path.read_text())["user_voice"], path)
    return sorted(by_voice.values())


@pytest.fixture(scope="session")
def subset():
    return _two_shortest()


@pytest.fixture(scope="session")
def tts_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("tts-cache")


@pytest.fixture(scope="session")
def built(tmp_path_factory, tts_cache, subset):
    out = tmp_path_factory.mktemp("build") / "ihbench-dev"
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "ihbench.cli", "build", "--out", str(out), "--cache-dir", str(tts_cache), "--quiet",
         "--no-convbench", "--sid-sources", str(FIXTURES / "sid_small.json"), "--sid-noise-clips", "7", "--sources", *map(str, subset)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    return out




@pytest.fixture(scope="session")
def judged_run(built, tmp_path_factory):
    """A run of 3 epochs over the in-house subset, judged by a scripted, misbehaving judge server."""
    from judging import make_judged_run

    return make_judged_run(built, tmp_path_factory.mktemp("judged"))


def pytest_collection_modifyitems(config, items):
    """A test that needs the shared build (real TTS renders), directly or through a fixture made
    from it such as `judged_run`, is slow: `make check` leaves it out."""
    for item in items:
        if "built" in getattr(item, "fixturenames", ()):  # the closure: fixtures of fixtures too
            item.add_marker(pytest.mark.slow)


def png_size(path) -> tuple[int, int]:
    """(width, height) from a PNG's header; raises when the file is not a PNG."""
    import struct

    data = Path(path).read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])
