"""`ihbench publish-metrics`: staged folders are self-contained Spaces; uploads go where they should."""
import subprocess
import sys

import pytest

from ihbench.publish import metric_names, publish_metrics


def test_dry_run_stages_every_module_with_links_resolved(tmp_path):
    plans = publish_metrics("acme", dry_run=True, staging_dir=tmp_path)
    assert [p.repo_id for p in plans] == [f"acme/{name}" for name in metric_names()]
    staged = tmp_path / "rq_pass_rate" / "item_bootstrap.py"
    assert staged.is_file() and not staged.is_symlink() and "def bootstrap_ci" in staged.read_text()
    for plan in plans:
        assert {f"{plan.name}.py", "README.md", "app.py", "requirements.txt"} <= set(plan.files)


def test_a_staged_folder_loads_alone_with_evaluate(tmp_path):
    import evaluate

    publish_metrics("acme", ["apt", "rq_pass_rate"], dry_run=True, staging_dir=tmp_path)
    apt = evaluate.load(str(tmp_path / "apt"))
    result = apt.compute(predictions=[{"total_nonbreak": True, "break_time": -1.0}],
                         references=[{"total_nonbreak": True, "break_time": 3.0, "duration": 3.0}])
    assert result["apt"] == 0.0
    assert evaluate.load(str(tmp_path / "rq_pass_rate")).compute(predictions=[[True]])["rq_pass_rate"] == 1.0


class RecordingHubApi:
    """Stand-in for huggingface_hub.HfApi: the Hub cannot be reached from here."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))


def test_publish_creates_gradio_spaces_and_uploads_the_staged_folders(tmp_path):
    api = RecordingHubApi()
    publish_metrics("acme", ["fir", "tf_win_rate"], api=api, staging_dir=tmp_path)
    assert [(c[0], c[1]) for c in api.calls] == [("create_repo", "acme/fir"), ("upload_folder", "acme/fir"),
                                                  ("create_repo", "acme/tf_win_rate"), ("upload_folder", "acme/tf_win_rate")]
    assert api.calls[0][2] == {"repo_type": "space", "space_sdk": "gradio", "exist_ok": True}
    assert api.calls[1][2]["folder_path"] == str(tmp_path / "fir")


def test_cli_dry_run_and_bad_names():
    ok = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-metrics", "--namespace", "acme", "--dry-run", "apt"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "acme/apt: would upload" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-metrics", "--namespace", "acme", "--dry-run",
                          "bleu"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown metric(s) bleu" in bad.stderr


def test_namespace_must_be_a_name():
    with pytest.raises(ValueError, match="namespace"):
        publish_metrics("acme/extra", dry_run=True)
