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
    "OMP_NUM_THREADS": "1",
}.items():
    os.environ[name] = value

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
