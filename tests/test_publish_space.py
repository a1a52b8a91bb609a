"""`ihbench publish-space` and `publish-dataset`: a staged Space runs from its own folder in a
fresh virtualenv made from its requirements.txt alone, and shows the data in a real browser;
uploads go where they should (recorded by a stand-in for HfApi: no Hub here)."""
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest
from space_browser import chromium_missing, free_port, launch
from test_publish_metrics import RecordingHubApi

from ihbench.publish import publish_dataset, publish_space


@pytest.fixture(scope="module")
def staged(built, tmp_path_factory):
    folder = tmp_path_factory.mktemp("space") / "staged"
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-space", "--repo", "acme/ihbench-demo",
                             "--data", str(built), "--dry-run", "--staging-dir", str(folder)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "would set Space variable IHBENCH_DATA=data/ihbench-dev" in result.stdout
    return folder


def test_the_staged_space_is_self_contained(staged):
    for name in ("app.py", "README.md", "requirements.txt", "packages.txt", "ihbench/metrics/apt/apt.py",
                 "ihbench/metrics/apt/sid_scoring.py", "ihbench/dataset/sources/FORMAT.md", "ihbench/loaders/registry.py",
                 "data/ihbench-dev/README.md"):
        path = staged / name
        assert path.is_file() and not path.is_symlink(), name
    assert not list(staged.rglob("__pycache__")) and not (staged / "ihbench" / "spaces").exists()
    assert {p.name for p in staged.iterdir() if p.is_dir()} == {"ihbench", "data"}  # one import root
    requirements = (staged / "requirements.txt").read_text().split()
    assert "torch==2.13.0" in requirements and "torchcodec==0.13.0" in requirements
    assert any(r.startswith("gradio") for r in requirements) and any(r.startswith("transformers") for r in requirements)
    assert not any(r.startswith("ihbench") for r in requirements)  # the code itself is in the folder
    card = (staged / "README.md").read_text()
    assert "title: ihbench-demo" in card and "app_file: app.py" in card and "sdk: gradio" in card


@pytest.fixture(scope="module")
def fresh_venv(staged, tmp_path_factory):
    """A new virtualenv with only what the staged requirements.txt asks for (torch from the local
    CPU wheel, the rest from the package index), as the Hub would build it."""
    venv = tmp_path_factory.mktemp("space-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-r", str(staged / "requirements.txt")],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    return venv


def _start(venv, folder, port, **extra):
    variables = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "IHBENCH_DATA", "IHBENCH_RUNS")}
    variables.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), **extra)
    process = subprocess.Popen([str(venv / "bin" / "python"), "app.py"], cwd=folder, env=variables,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"app.py exited with {process.returncode}:\n{process.stdout.read()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise AssertionError(f"app.py did not answer on port {port}:\n{process.stdout.read()}")


def _stop(process):
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.mark.network  # pip installs the Space's requirements.txt from the package index
@pytest.mark.slow
@pytest.mark.skipif(bool(chromium_missing()), reason=chromium_missing() or "chromium present")
def test_the_staged_space_runs_from_a_fresh_venv_and_shows_a_conversation(staged, fresh_venv, built):
    from ihbench.dataset import load_items
    from playwright.sync_api import expect, sync_playwright

    item = load_items(built)[-1]
    port = free_port()
    process = _start(fresh_venv, staged, port, IHBENCH_DATA="data/ihbench-dev")  # the Space variable
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/")
            for tab in ("Browse", "Evaluate", "Detect", "Turns", "Metrics", "Leaderboard"):
                expect(page.get_by_role("tab", name=tab)).to_be_visible(timeout=60_000)
            expect(page.locator("#turn-detail")).to_contain_text("TF criterion", timeout=60_000)  # first load done
            box = page.locator("#conversation input")
            box.click()
            box.fill(item.conversation_id)
            page.get_by_role("option", name=item.conversation_id, exact=True).click()
            page.locator("#transcript").get_by_text(item.conversation_id).wait_for(timeout=30_000)
            expect(page.locator("#turn-detail")).to_contain_text("TF criterion", timeout=30_000)
            # silero-vad and the turn-taking code run from the Space's own requirements too
            page.get_by_role("tab", name="Turns").click()
            page.locator("#analyze-turns").click()
            expect(page.locator("#turns-summary")).to_contain_text("rendered ground truth", timeout=120_000)
            browser.close()
    finally:
        _stop(process)


@pytest.mark.network  # pip installs the Space's requirements.txt from the package index
@pytest.mark.slow
@pytest.mark.skipif(bool(chromium_missing()), reason=chromium_missing() or "chromium present")
def test_without_data_the_staged_space_says_what_to_set(fresh_venv, tmp_path):
    bare = publish_space("acme/bare", dry_run=True, staging_dir=tmp_path / "bare").staged
    port = free_port()
    process = _start(fresh_venv, bare, port)
    try:
        from playwright.sync_api import expect, sync_playwright

        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            expect(page.locator("#setup")).to_contain_text("IHBENCH_DATA", timeout=60_000)
            expect(page.get_by_role("tab", name="Leaderboard")).to_be_visible()
            browser.close()
    finally:
        _stop(process)


def test_publish_space_creates_the_space_sets_the_data_variable_and_uploads(tmp_path):
    api = RecordingHubApi()
    plan = publish_space("acme/demo", data="acme/ihbench-data", api=api, staging_dir=tmp_path / "s")
    assert [(c[0], c[1]) for c in api.calls] == [("create_repo", "acme/demo"), ("add_space_variable", "acme/demo"),
                                                  ("upload_folder", "acme/demo")]
    assert api.calls[0][2] == {"repo_type": "space", "space_sdk": "gradio", "exist_ok": True}
    assert api.calls[1][2] == {"IHBENCH_DATA": "acme/ihbench-data"}
    assert api.calls[2][2]["folder_path"] == str(plan.staged)
    assert "- acme/ihbench-data" in (plan.staged / "README.md").read_text()  # the card links the dataset


def test_a_temporary_space_staging_folder_is_removed_after_the_upload(tmp_path, monkeypatch):
    """Found by the bad-input battery: /tmp/ihbench-space-* stayed behind after every publish."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    api = RecordingHubApi()
    plan = publish_space("acme/demo", data="acme/ihbench-data", api=api)
    assert api.calls[-1][2]["folder_path"] == str(plan.staged) and list(tmp_path.iterdir()) == []


def test_publish_space_refuses_a_bad_repo_or_data_id(tmp_path):
    with pytest.raises(ValueError, match="--repo"):
        publish_space("no-namespace", dry_run=True, staging_dir=tmp_path / "a")
    with pytest.raises(ValueError, match="--data"):
        publish_space("acme/demo", data="not/a/folder/or/id", dry_run=True, staging_dir=tmp_path / "b")


def test_publish_dataset_uploads_a_readable_build(built, tmp_path):
    api = RecordingHubApi()
    plan = publish_dataset(built, "acme/ihbench-dev", private=True, api=api)
    assert "README.md" in plan.files and any(f.startswith("interruptions/") for f in plan.files)
    assert [(c[0], c[1]) for c in api.calls] == [("create_repo", "acme/ihbench-dev"), ("upload_folder", "acme/ihbench-dev")]
    assert api.calls[0][2] == {"repo_type": "dataset", "exist_ok": True, "private": True}
    assert api.calls[1][2]["repo_type"] == "dataset" and ".*" in api.calls[1][2]["ignore_patterns"]


def test_publish_dataset_refuses_a_folder_the_toolkit_cannot_read(built, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(built, broken)
    for parquet in (broken / "conversations").glob("*.parquet"):
        parquet.write_bytes(b"not parquet")
    api = RecordingHubApi()
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-dataset", str(broken), "--repo",
                             "acme/x", "--dry-run"], capture_output=True, text=True)
    assert result.returncode == 2 and "not a readable Parquet file" in result.stderr and "nothing was uploaded" in result.stderr
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        publish_dataset(broken, "acme/x", api=api)
    assert api.calls == []


def test_publish_dataset_refuses_a_dataset_whose_texts_hold_a_provider_s_key(built, tmp_path):
    """Battery 58, E9 (P1): a key pasted into a source was built into two Parquet files (verify and build now
    refuse the source); a folder built before, with the file named by its new bytes as a build names it, is
    refused by the publish, naming the file and the column, never the key."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ihbench.dataset.content_names import name_by_content

    keyed = tmp_path / "keyed"
    shutil.copytree(built, keyed)
    parquet = next((keyed / "conversations").glob("*.parquet"))
    table = pq.read_table(parquet)
    rows = table.to_pylist()
    key = "sk-proj-iQrfNKp8zXzy5-ZWaoni92lBRlTW0UvCLlOAWN8xeH4"  # drawn once (fixed)
    text = json.dumps(rows[0], default=str)
    field = next(name for name, value in rows[0].items() if isinstance(value, str) and value and name != "id")
    rows[0][field] = f"my key is {key} by the way"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), parquet)
    renamed = name_by_content(parquet, parquet.name.split("-")[0])
    card = keyed / "README.md"
    card.write_text(card.read_text().replace(parquet.name, renamed.name))
    assert key not in text
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-dataset", str(keyed), "--repo", "acme/x",
                             "--dry-run"], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert f"{renamed}: its column {field} holds a provider's API key (a credential; not shown)" in result.stderr
    assert key not in result.stderr + result.stdout
    # battery 62, I1: publish-space copies the dataset into the Space: the same check, nothing staged
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "publish-space", "--repo", "acme/s", "--data",
                             str(keyed), "--dry-run", "--staging-dir", str(tmp_path / "staged")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and f"{renamed}: its column {field} holds a provider's API key" in result.stderr
    assert key not in result.stderr + result.stdout and not (tmp_path / "staged").exists()


def test_publish_dataset_reads_the_files_not_the_datasets_cache(built, tmp_path):
    """Found by the bad-input battery: a file cut short after the folder was loaded once was still
    'readable', because `load_dataset` answered from its cache of the earlier load."""
    from ihbench.dataset import load_items

    cut = tmp_path / "cut"
    shutil.copytree(built, cut)
    assert load_items(str(cut))  # the datasets cache now holds this folder
    parquet = next((cut / "conversations").glob("*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])
    api = RecordingHubApi()
    with pytest.raises(ValueError, match=f"{parquet}: not a readable Parquet file"):
        publish_dataset(cut, "acme/x", api=api)
    assert api.calls == []
