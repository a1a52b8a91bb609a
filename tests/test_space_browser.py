"""The Space in a real browser: Playwright for Python driving Debian's Chromium (never
`playwright install`). Screenshots per tab go to tests/artifacts/ (ignored by git)."""
import shutil
import sys

import pytest
from conftest import REPO
from space_browser import chromium_missing, free_port, launch

ARTIFACTS = REPO / "tests" / "artifacts"
pytestmark = pytest.mark.slow

if chromium_missing():
    pytest.skip(chromium_missing(), allow_module_level=True)
import playwright.sync_api as playwright_api  # noqa: E402

sys.path.insert(0, str(REPO / "spaces"))


@pytest.fixture(scope="module")
def page(built, tmp_path_factory):
    import app as space_app
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("IHBENCH_DATA", str(built))
        environment.setenv("IHBENCH_RUNS", str(tmp_path_factory.mktemp("runs")))
        port = free_port()
        demo = space_app.build_app()
        space_app.serve(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        ARTIFACTS.mkdir(exist_ok=True)
        with OpenAITestServer(respond=ScriptedJudge()) as judge_server, playwright_api.sync_playwright() as p:
            browser = launch(p)
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.goto(f"http://127.0.0.1:{port}/")
            tab.judge_url = judge_server.base_url
            yield tab
            browser.close()
        demo.close()


def _pick(page, elem_id, value):
    box = page.locator(f"#{elem_id} input")
    box.click()
    box.fill(value)
    page.get_by_role("option", name=value, exact=True).click()


def test_browse_pick_a_conversation_and_see_its_rubric(page, built):
    from ihbench.dataset import load_items

    items = load_items(built)
    other = items[-1]
    page.get_by_text("TF criterion").first.wait_for(timeout=30_000)
    _pick(page, "conversation", other.conversation_id)
    page.locator("#transcript").get_by_text(other.conversation_id).wait_for(timeout=30_000)
    page.get_by_text("RQ criteria").first.wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "space-browse.png"), full_page=True)


def test_evaluate_a_tiny_model_on_two_items_and_see_responses_and_a_chart(page, tmp_path, built):
    from ihbench.dataset import load_items
    from ihbench.loaders.tiny import make_tiny_model

    first, second = load_items(built)[:2]

    model = make_tiny_model("qwen2-audio", tmp_path / "tiny")
    page.get_by_role("tab", name="Evaluate").click()
    page.locator("#model-path textarea").fill(str(model))
    page.locator("#run").click()
    for item in (first, second):
        playwright_api.expect(page.locator("#responses")).to_contain_text(item.id, timeout=120_000)
    page.get_by_label("Judge endpoint (OpenAI-compatible URL)").fill(page.judge_url)
    page.get_by_label("Judge model").fill("judge-x")
    page.locator("#judge").click()
    playwright_api.expect(page.locator("#scores")).to_contain_text("rq_pass_rate", timeout=120_000)
    page.locator("#chart img").first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "space-evaluate.png"), full_page=True)


def test_detect_on_an_sid_clip_plots_the_waveform(page):
    from ihbench import ui

    page.get_by_role("tab", name="Detect").click()
    _pick(page, "sid-clip", ui.sid_clip_choices()[0])
    page.locator("#detect").click()
    page.locator("#waveform img").first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "space-detect.png"), full_page=True)
    _pick(page, "detector", "smart-turn")
    page.locator("#detect").click()
    playwright_api.expect(page.locator("#detection")).to_contain_text("pipecat_ai", timeout=120_000)
    playwright_api.expect(page.locator("#detection")).to_contain_text("pauses", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "space-detect-smart-turn.png"), full_page=True)


def test_metrics_and_leaderboard_tabs_render(page):
    page.get_by_role("tab", name="Leaderboard").click()
    playwright_api.expect(page.locator("#leaderboard")).to_contain_text("GPT Realtime 2 (medium)", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "space-leaderboard.png"), full_page=True)
    page.get_by_role("tab", name="Metrics").click()
    page.locator("#score").wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "space-metrics.png"), full_page=True)


def test_turns_on_a_duplex_recording_shows_the_timeline_and_the_agreement(page):
    page.get_by_role("tab", name="Turns").click()
    page.locator("#analyze-turns").click()
    playwright_api.expect(page.locator("#turns-summary")).to_contain_text("rendered ground truth", timeout=120_000)
    page.locator("#timeline img").first.wait_for(timeout=60_000)
    playwright_api.expect(page.locator("#timing")).to_contain_text("stop latency", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "space-turns.png"), full_page=True)
    page.locator("#smart-turn-track input").check()
    page.locator("#analyze-turns").click()
    playwright_api.expect(page.locator("#turns-summary")).to_contain_text("agreement backchannel: not covered",
                                                                          timeout=180_000)
    playwright_api.expect(page.locator("#turns-summary")).to_contain_text("agreement speak_up: C", timeout=30_000)
    page.locator("#timeline img").first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "space-turns-smart-turn.png"), full_page=True)


def test_convbench_pick_a_judged_run_step_to_a_turn_and_see_its_verdicts(page, tmp_path):
    """A golden replay judged by the scripted judge, in the Space's runs folder (made in a thread of
    its own: Playwright's loop runs in this one, and the judge runs its own); the page is loaded
    again so the tab's list holds it."""
    import os
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from test_space_convbench import make_judged_run

    with ThreadPoolExecutor(1) as thread:
        thread.submit(make_judged_run, tmp_path, Path(os.environ["IHBENCH_RUNS"])).result()
    page.reload()
    page.get_by_role("tab", name="ConversationBench").click()
    _pick(page, "convbench-run", "convbench-golden")
    playwright_api.expect(page.locator("#convbench-header")).to_contain_text("Pass rates", timeout=60_000)
    playwright_api.expect(page.locator("#convbench-user")).to_contain_text("Epoch 0 · turn 0", timeout=60_000)
    for turn in (1, 2):  # one step at a time: Next steps from the turn the page shows
        page.locator("#convbench-next").click()
        playwright_api.expect(page.locator("#convbench-user")).to_contain_text(f"Epoch 0 · turn {turn}",
                                                                                timeout=60_000)
    playwright_api.expect(page.locator("#convbench-golden")).to_contain_text("slot 43 is full", timeout=30_000)
    playwright_api.expect(page.locator("#convbench-actual")).to_contain_text("SLOT_FULL", timeout=30_000)
    playwright_api.expect(page.locator("#convbench-verdicts")).to_contain_text("state_tracking", timeout=30_000)
    playwright_api.expect(page.locator("#convbench-judge")).to_contain_text("charged to state_tracking",
                                                                             timeout=30_000)
    shot = tmp_path / "space-convbench.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copy(shot, ARTIFACTS / shot.name)


def test_stop_frees_the_page_from_a_server_that_never_answers(page):
    """Battery 46, S7: a run against a server that never answers held the Evaluate tab for each request's
    timeout times its retries, and a second Run waited behind it. Stop cancels it at once; its run starts
    no other batch."""
    import time

    from openai_test_server import SilentServer

    def connections_reach(count: int, seconds: float) -> bool:
        deadline = time.time() + seconds
        while time.time() < deadline and server.connections < count:
            time.sleep(0.1)
        return server.connections >= count

    with SilentServer() as server:
        page.reload()
        page.get_by_role("tab", name="Evaluate").click()
        _pick(page, "model-family", "openai")
        page.locator("#model-path textarea").fill("hanging-model")
        page.get_by_label("Server URL (openai family only)").fill(server.base_url)
        page.locator("#run").click()
        assert connections_reach(2, 60)  # the two points, asked at once
        page.locator("#stop").click()
        page.get_by_text("stopping: no new request is sent and none is retried").wait_for(timeout=30_000)
        page.locator("#run").click()
        assert connections_reach(4, 60), server.connections  # the second run was not held behind the first
        page.screenshot(path=str(ARTIFACTS / "space-evaluate-stop.png"), full_page=True)
        page.locator("#stop").click()

