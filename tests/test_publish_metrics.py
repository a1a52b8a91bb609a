"""`ihbench publish-metrics`: staged folders are self-contained Spaces named for their namespace;
uploads go where they should."""
import re
import subprocess
import sys

import pytest

from ihbench.publish import publish_metrics
from ihbench.resources import metric_names


def test_dry_run_stages_every_module_with_links_resolved(tmp_path):
    plans = publish_metrics("acme", dry_run=True, staging_dir=tmp_path)
    assert [p.repo_id for p in plans] == [f"acme/{name}" for name in metric_names()]
    assert metric_names() == ["apt", "convbench_pass_rate", "fir", "irl", "rq_pass_rate", "tf_win_rate",
                              "turn_taking_agreement"]
    staged = tmp_path / "rq_pass_rate" / "item_bootstrap.py"
    assert staged.is_file() and not staged.is_symlink() and "def bootstrap_ci" in staged.read_text()
    for plan in plans:
        assert {f"{plan.name}.py", "README.md", "app.py", "requirements.txt"} <= set(plan.files)


@pytest.mark.parametrize("name", ["apt", "rq_pass_rate", "turn_taking_agreement"])
def test_staged_widget_and_card_load_the_module_by_its_namespace(tmp_path, name):
    publish_metrics("acme", [name], dry_run=True, staging_dir=tmp_path)
    app = (tmp_path / name / "app.py").read_text()
    assert f'evaluate.load("acme/{name}")' in app and "launch_gradio_widget(module)" in app
    card = (tmp_path / name / "README.md").read_text()
    loads = re.findall(r'evaluate\.load\(([^),]*)', card)
    # by the namespace (never evaluate-metric/<name>), or from the installed toolkit
    assert loads and set(loads) == {f'"acme/{name}"', f'ihbench.metric_path("{name}"'}, loads
    assert "NAMESPACE" not in card


def test_no_staged_file_loads_a_shipped_metric_by_its_bare_name(tmp_path):
    """A bare `evaluate.load("rq_pass_rate")` on the Hub opens `evaluate-metric/rq_pass_rate`, not ours:
    modules (docstring examples), cards and widgets all say `acme/...`."""
    publish_metrics("acme", dry_run=True, staging_dir=tmp_path)
    names = metric_names()
    loads = {}
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file():
            for name in re.findall(r'evaluate\.load\(\s*["\']([^"\']*)["\']', path.read_text(encoding="utf-8")):
                loads.setdefault(name, set()).add(str(path.relative_to(tmp_path)))
    assert {n for n in loads if n in names or n == "{name}"} == set(), loads
    assert {f"acme/{n}" for n in names} <= set(loads)
    assert "rq_pass_rate/rq_pass_rate.py" in loads["acme/rq_pass_rate"]  # the module's docstring example


def test_a_staged_folder_loads_alone_with_evaluate(tmp_path):
    import evaluate

    publish_metrics("acme", ["apt", "rq_pass_rate"], dry_run=True, staging_dir=tmp_path)
    apt = evaluate.load(str(tmp_path / "apt"))
    result = apt.compute(predictions=[{"total_nonbreak": True, "break_time": -1.0}],
                         references=[{"total_nonbreak": True, "break_time": 3.0, "duration": 3.0}])
    assert result["apt"] == 0.0
    rq = evaluate.load(str(tmp_path / "rq_pass_rate"))
    assert rq.compute(predictions=[[True]])["rq_pass_rate"] == 1.0
    # the usage shown by the module itself (its inputs description) names the namespace
    for module, name in ((apt, "apt"), (rq, "rq_pass_rate")):
        assert f'evaluate.load("acme/{name}")' in module.inputs_description
        assert f'evaluate.load("{name}"' not in module.inputs_description


class RecordingHubApi:
    """Stand-in for huggingface_hub.HfApi: the Hub cannot be reached from here. It records the calls."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def add_space_variable(self, repo_id, key, value):
        self.calls.append(("add_space_variable", repo_id, {key: value}))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))


def test_publish_creates_gradio_spaces_and_uploads_the_staged_folders(tmp_path):
    api = RecordingHubApi()
    publish_metrics("acme", ["fir", "tf_win_rate"], api=api, staging_dir=tmp_path)
    assert [(c[0], c[1]) for c in api.calls] == [("create_repo", "acme/fir"), ("upload_folder", "acme/fir"),
                                                  ("create_repo", "acme/tf_win_rate"), ("upload_folder", "acme/tf_win_rate")]
    assert api.calls[0][2] == {"repo_type": "space", "space_sdk": "gradio", "exist_ok": True}
    assert api.calls[1][2]["folder_path"] == str(tmp_path / "fir") and api.calls[1][2]["repo_type"] == "space"


def test_cli_dry_run_and_bad_names():
    ok = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-metrics", "--namespace", "acme", "--dry-run", "apt"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "acme/apt (space): would upload" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-metrics", "--namespace", "acme", "--dry-run",
                          "bleu"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown metric(s) bleu" in bad.stderr


@pytest.mark.parametrize("namespace", ["acme/extra", "", "-acme", "a b"])
def test_namespace_must_be_a_name(namespace):
    with pytest.raises(ValueError, match="namespace"):
        publish_metrics(namespace, dry_run=True)


class FailingHubApi(RecordingHubApi):
    def upload_folder(self, **kwargs):
        super().upload_folder(**kwargs)
        raise ConnectionError("the Hub cannot be reached")


@pytest.mark.parametrize("api", [RecordingHubApi, FailingHubApi])
def test_a_temporary_staging_folder_is_removed_after_an_upload_or_a_failed_one(api, tmp_path, monkeypatch):
    """Found by the bad-input battery: /tmp/ihbench-metrics-* (and -space-*, 81 MB with data) were
    never removed. Without --staging-dir the folder is the toolkit's own: gone once uploaded, or
    once the upload failed, and after a dry run (the second battery: 726 MB per dry run of the Space);
    --staging-dir keeps one to look at."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    recorder = api()
    if api is FailingHubApi:
        with pytest.raises(ConnectionError):
            publish_metrics("acme", ["fir"], api=recorder)
    else:
        publish_metrics("acme", ["fir"], api=recorder)
    staged = recorder.calls[-1][2]["folder_path"]
    assert staged.startswith(str(tmp_path)) and list(tmp_path.iterdir()) == []
    plans = publish_metrics("acme", ["fir"], dry_run=True)
    assert not plans[0].staged.exists() and list(tmp_path.iterdir()) == []
    kept = publish_metrics("acme", ["fir"], dry_run=True, staging_dir=tmp_path / "look")
    assert kept[0].staged.is_dir()
