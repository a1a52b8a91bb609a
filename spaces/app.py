"""IHBench Space: browse the data, run a local audio model on it, detect interruptions, analyse
turn-taking in two-channel calls, step through ConversationBench runs, score files.

Launch: `make demo`, `python spaces/app.py`, or as a Hugging Face Space (`ihbench publish-space`).
The data comes from `$IHBENCH_DATA` (a folder or a Hub id); without it the page says what to set.
The address is gradio's own: `GRADIO_SERVER_NAME` (a Space sets 0.0.0.0) and `GRADIO_SERVER_PORT`
or `PORT` (default 7860). The layout is all this file does; what each tab computes lives in
`ihbench.ui` (the Turns tab: `ihbench.ui_turns`; ConversationBench: `ihbench.ui_convbench`).
"""
from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path

import gradio as gr
from ihbench.dataset.schema import INTERRUPTION_TYPES

from ihbench import ui, ui_convbench, ui_turns

try:  # ZeroGPU hardware on Hugging Face Spaces; a no-op elsewhere
    import spaces

    gpu = spaces.GPU
except (ImportError, AttributeError):
    def gpu(function):
        return function

def _quiet(component):
    """`component` whose own check of a value sent through the API (a choice not offered, a number out of range, a
    file of a type not offered) is said to the caller as gradio says it, without gradio's traceback on the server's
    terminal (battery 64, K8 and battery 65, L7: one per bad call). The page itself sends only what it offers. Its
    method is wrapped, not its class subclassed: gradio writes a `.pyi` file beside the module of every component
    class defined."""
    check = component.preprocess

    def preprocess(payload):
        try:
            return check(payload)
        except gr.Error as error:
            raise gr.Error(error.message, print_exception=False) from None

    component.preprocess = preprocess
    return component


DETECTORS = ["silero-vad", "energy", "smart-turn"]
METRICS = ["rq_pass_rate", "tf_win_rate", "fir", "irl", "apt", "convbench_pass_rate"]


def _page_error(error: Exception) -> gr.Error:
    """A UserError's own message; anything else by type only (no traceback or server path)."""
    if isinstance(error, ui.UserError):  # the visitor's own mistake: said on the page, no traceback on the terminal
        return gr.Error(str(error), print_exception=False)
    if isinstance(error, ModuleNotFoundError) and error.name:  # an optional extra the server was installed without
        from ihbench.cli import OPTIONAL_MODULES

        extra = OPTIONAL_MODULES.get(error.name.split(".")[0])
        if extra:
            return gr.Error(f"this server has no {error.name.split('.')[0]} (the optional extra '{extra}' of ihbench, "
                            f"installed with pip install 'ihbench[{extra}]'); pick another model family or option",
                            print_exception=False)
    from ihbench.dataset.audio import AudioError

    if isinstance(error, AudioError):  # a damaged clip of the served data: the owner's to mend, named in the log
        ui.log.warning("a page's call met damaged audio: %s", error)
        return gr.Error("this audio of the dataset is damaged and cannot be played or heard by a model; the server "
                        "log names its file, row and column", print_exception=False)
    # a bug: its own traceback in the server's log (the page's error is raised from None, and would hide it)
    ui.log.error("a page's call failed", exc_info=error)
    return gr.Error(f"something went wrong ({type(error).__name__}); the server log has the traceback",
                    print_exception=False)


def shown(function):
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def stream(*args, **kwargs):
            try:
                yield from function(*args, **kwargs)
            except Exception as error:
                raise _page_error(error) from None
        return stream

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            raise _page_error(error) from None
    return call


@shown
def filter_conversations(domain, kind):
    choices = ui.conversation_choices(domain or None, kind or None)
    return gr.update(choices=choices, value=choices[0] if choices else None)


@shown
def show_conversation(conversation_id):
    if not conversation_id:
        return "", gr.update(choices=[], value=None)
    turns = ui.turn_choices(conversation_id)
    first = next((t for t in turns if "·" in t), turns[0])
    return ui.conversation_markdown(conversation_id), gr.update(choices=turns, value=first)


@shown
def show_turn(conversation_id, turn):
    if not conversation_id or not turn:
        return "", None, None
    return ui.turn_detail(conversation_id, turn)


@gpu
@shown
def run_model(loader, model_path, kind, domain, count, epochs, max_new_tokens, base_url,
              request: gr.Request = None):
    for rows, audio, run_dir in ui.evaluate_stream(loader, model_path, kind or None, domain or None, count, epochs,
                                                   max_new_tokens, base_url or None, session=_session(request)):
        yield rows, audio, run_dir


def stop_model(request: gr.Request = None):
    """The Stop button: the page is freed at once (the Run event is cancelled), and this visitor's runs
    start no other batch; what was answered stays in the run's folder."""
    if ui.stop_runs(_session(request)):
        gr.Info("stopping: no new request is sent and none is retried; the ones already sent are awaited (up to "
                "the server's timeout) and written to the run's folder with the answers so far")


def stop_convbench_model(request: gr.Request = None) -> str:
    """The ConversationBench run's Stop: as `stop_model`, and its status line says so (the cancelled
    event's last one said "Playing turns ...")."""
    stop_model(request)
    return "Stopped: the turn being played ends first; the turns played are kept in the run's folder."


def _session(request) -> str:
    return getattr(request, "session_hash", None) or ""


@shown
def judge(run_dir, judge_base_url, judge_model):
    return ui.judge_run_dir(run_dir, judge_base_url, judge_model)


@shown
def detect(detector, upload, sid_clip, threshold=0.5):
    return ui.detect(detector, upload, sid_clip, threshold)


@shown
def score_file(metric, upload):
    return ui.metrics_table(metric, upload)


@shown
def leaderboard():
    return ui.leaderboard()


@shown
def analyze_turns(recording_id, upload, smart_turn=False):
    return ui_turns.analyze_recording(recording_id, upload, smart_turn)


@shown
def open_convbench(choice, typed):
    path, header, labels = ui_convbench.open_run(choice, typed)
    return path, header, gr.update(choices=labels, value=labels[0] if labels else None)


@shown
def show_convbench_turn(path, label):
    if not path or not label:
        return "", None, "", "", [], [], [], ""
    return tuple(ui_convbench.turn_view(path, label))


@shown
def previous_convbench_turn(path, label):
    return gr.update(value=ui_convbench.step(path, label, -1)) if path else gr.update()


@shown
def next_convbench_turn(path, label):
    return gr.update(value=ui_convbench.step(path, label, 1)) if path else gr.update()


@shown
def convbench_runs():
    return gr.update(choices=ui_convbench.run_choices())


@gpu
@shown
def run_convbench_model(loader, model_path, tiny, base_url, turns, max_new_tokens, request: gr.Request = None):
    for status, path in ui_convbench.run_stream(loader, model_path, tiny, base_url or None, turns, max_new_tokens,
                                                session=_session(request)):
        if path is None:
            yield status, gr.update(), gr.update(), gr.update(), gr.update()
            continue
        path, header, labels = ui_convbench.open_run(None, path)
        yield (status, gr.update(choices=ui_convbench.run_choices(), value=Path(path).name), path, header,
               gr.update(choices=labels, value=labels[0] if labels else None))


def build_app() -> gr.Blocks:
    problem = ui.data_problem()
    with gr.Blocks(title="IHBench") as app:
        gr.Markdown("# IHBench: does your voice agent recover after being interrupted?")
        if problem:
            with gr.Tab("Setup"):
                gr.Markdown(problem, elem_id="setup")
        else:
            _data_tabs(app)
        _turns_tab()
        _convbench_tab(app)
        _metric_tabs(app)
    for block in app.blocks.values():  # every input's own checks said without a traceback (`_quiet`)
        if callable(getattr(block, "preprocess", None)):
            _quiet(block)
    return app


def _data_tabs(app: gr.Blocks) -> None:
    """Browse, Evaluate and Detect: they need the dataset."""
    run_state = gr.State(None)  # the run directory the Evaluate tab wrote
    with gr.Tab("Browse"):
        with gr.Row():
            domain = gr.Dropdown([""] + ui.domains(), value="", label="Domain")
            kind = gr.Dropdown([""] + list(INTERRUPTION_TYPES), value="", label="Interruption type")
        conversations = ui.conversation_choices()
        conversation = gr.Dropdown(conversations, value=conversations[0] if conversations else None,
                                   label="Conversation", elem_id="conversation")
        with gr.Row():
            with gr.Column(scale=3):
                transcript = gr.Markdown(elem_id="transcript")
            with gr.Column(scale=2):
                turn = gr.Dropdown([], label="Turn", elem_id="turn")
                detail = gr.Markdown(elem_id="turn-detail")
                assistant_audio = gr.Audio(label="Assistant (delivered part)", type="numpy")
                user_audio = gr.Audio(label="User", type="numpy")
        domain.change(filter_conversations, [domain, kind], conversation)
        kind.change(filter_conversations, [domain, kind], conversation)
        conversation.change(show_conversation, conversation, [transcript, turn])
        turn.change(show_turn, [conversation, turn], [detail, assistant_audio, user_audio])
        app.load(show_conversation, conversation, [transcript, turn])
    with gr.Tab("Evaluate"):
        with gr.Row():
            loader = gr.Dropdown(ui.loader_names(), value="qwen2-audio", label="Model family", elem_id="model-family")
            model_path = gr.Textbox(label="Model path or id", elem_id="model-path")
            base_url = gr.Textbox(label="Server URL (openai family only)")
        with gr.Row():
            eval_kind = gr.Dropdown([""] + list(INTERRUPTION_TYPES), value="", label="Type")
            eval_domain = gr.Dropdown([""] + ui.domains(), value="", label="Domain")
            count = gr.Slider(1, ui.MAX_ITEMS, value=2, step=1, label="Interruption points")
            epochs = gr.Slider(1, 3, value=1, step=1, label="Epochs")
            max_new_tokens = gr.Slider(1, 512, value=64, step=1, label="Max new tokens")
        with gr.Row():
            run_button = gr.Button("Run", variant="primary", elem_id="run")
            stop_button = gr.Button("Stop", elem_id="stop")
        responses = gr.Dataframe(headers=["id", "type", "interruption", "response", "re-delivery", "error"],
                                 label="Responses", elem_id="responses", wrap=True)
        interruption_audio = gr.Audio(label="Interruption audio", type="numpy")
        with gr.Row():
            judge_base_url = gr.Textbox(value=ui.owner_endpoint(), label="Judge endpoint (OpenAI-compatible URL)")
            judge_model = gr.Textbox(label="Judge model")
        # the Space's OPENAI_API_KEY goes only to its owner's endpoint ($IHBENCH_SPACE_ENDPOINT), never to a typed one
        judge_button = gr.Button("Judge", elem_id="judge")
        scores = gr.Dataframe(headers=["metric", "value", "ci_low", "ci_high", "n_items"], label="Scores",
                              elem_id="scores")
        chart = gr.Image(label="RQ by type (the report's plot)", type="filepath", elem_id="chart")
        running = run_button.click(run_model, [loader, model_path, eval_kind, eval_domain, count, epochs,
                                               max_new_tokens, base_url], [responses, interruption_audio, run_state])
        stop_button.click(stop_model, None, None, cancels=[running])
        judge_button.click(judge, [run_state, judge_base_url, judge_model], [scores, chart])
    with gr.Tab("Detect"):
        with gr.Row():
            detector = gr.Dropdown(DETECTORS, value="silero-vad", label="Detector", elem_id="detector")
            sid_clip = gr.Dropdown([""] + ui.sid_clip_choices(), value="", label="SID clip", elem_id="sid-clip")
            threshold = gr.Slider(0, 1, value=0.5, step=0.01, elem_id="smart-turn-threshold",
                                  label="smart-turn threshold: the turn ends at a pause where P(complete) > it")
        upload = gr.Audio(label="Record or upload", type="filepath", sources=["upload", "microphone"])
        detect_button = gr.Button("Detect", elem_id="detect")
        waveform = gr.Plot(label="Waveform", elem_id="waveform")
        detection = gr.JSON(label="Result", elem_id="detection")
        detect_button.click(detect, [detector, upload, sid_clip, threshold], [waveform, detection])


def _turns_tab() -> None:
    """Works on uploads without a dataset; the dataset's duplex recordings add a ground truth."""
    with gr.Tab("Turns"):
        recordings = ui_turns.recording_choices()
        with gr.Row():
            recording = gr.Dropdown([""] + recordings, value=recordings[0] if recordings else "",
                                    label="Two-channel recording of the dataset (duplex config)", elem_id="recording")
            upload = gr.Audio(label="Or upload a stereo call (channel 0 the AI, channel 1 the user)", type="filepath",
                              sources=["upload"])
        smart_turn = gr.Checkbox(False, elem_id="smart-turn-track",
                                 label="Smart Turn: P(turn end) at each pause under the timeline (and its agreement)")
        analyze_button = gr.Button("Analyse turn-taking", elem_id="analyze-turns")
        summary = gr.Markdown(elem_id="turns-summary")
        timeline = gr.Image(label="Timeline: speech per channel, backchannels, floor events", type="filepath",
                            elem_id="timeline")
        timing = gr.Dataframe(headers=["figure", "value", "ci_low", "ci_high", "n"], label="Timing",
                              elem_id="timing")
        analyze_button.click(analyze_turns, [recording, upload, smart_turn], [timeline, timing, summary])


def _convbench_tab(app: gr.Blocks) -> None:
    """Opens any run of the runs folder (or a typed path) without the dataset; running a model needs
    the dataset's in-house benchmark."""
    run_state = gr.State(None)  # the open run's folder
    with gr.Tab("ConversationBench"):
        with gr.Row():
            runs = ui_convbench.run_choices()
            run = gr.Dropdown(runs, value=runs[0] if runs else None, label="ConversationBench run (runs folder)",
                              elem_id="convbench-run")
            typed = gr.Textbox(label="Or the path of a run folder", elem_id="convbench-path")
            open_button = gr.Button("Open", elem_id="convbench-open", scale=0)
        with gr.Accordion("Run a model on the first turns of the in-house benchmark", open=False):
            problem = ui_convbench.in_house_problem()
            if problem:
                gr.Markdown(problem)
            families = ui_convbench.tool_families()
            with gr.Row():
                loader = gr.Dropdown(families, value="qwen3-omni" if "qwen3-omni" in families else families[0],
                                     label="Model family (those that call tools)", elem_id="convbench-family")
                tiny = gr.Checkbox(True, label="Tiny random-weight model (made here; its replies are noise)",
                                   elem_id="convbench-tiny")
                model_path = gr.Textbox(label="Or a model path or id", elem_id="convbench-model-path")
                base_url = gr.Textbox(label="Server URL (openai family only)", elem_id="convbench-base-url")
            with gr.Row():
                turns = gr.Slider(1, ui_convbench.MAX_TURNS, value=3, step=1, label="First turns")
                max_new_tokens = gr.Slider(1, 512, value=32, step=1, label="Max new tokens")
            with gr.Row():
                run_button = gr.Button("Run", variant="primary", elem_id="convbench-run-model")
                stop_button = gr.Button("Stop", elem_id="convbench-stop")
            status = gr.Markdown(elem_id="convbench-status")
        header = gr.Markdown(elem_id="convbench-header")
        with gr.Row():
            turn = gr.Dropdown([], label="Turn (✗: a dimension failed)", elem_id="convbench-turn")
            previous_button = gr.Button("◀ Previous", elem_id="convbench-previous", scale=0)
            next_button = gr.Button("Next ▶", elem_id="convbench-next", scale=0)
        with gr.Row():
            with gr.Column():
                user = gr.Markdown(elem_id="convbench-user")
                audio = gr.Audio(label="The user's turn", type="numpy")
            with gr.Column():
                gr.Markdown("**Golden reply**")
                golden = gr.Markdown(elem_id="convbench-golden")
            with gr.Column():
                gr.Markdown("**The model's reply**")
                reply = gr.Markdown(elem_id="convbench-reply")
        with gr.Row():
            expected = gr.Dataframe(headers=["tool", "arguments"], label="Expected calls", elem_id="convbench-expected",
                                    wrap=True, column_widths=["30%", "70%"])
            actual = gr.Dataframe(headers=["tool", "arguments", "result"], label="Actual calls with their results",
                                  elem_id="convbench-actual", wrap=True, column_widths=["24%", "38%", "38%"])
        with gr.Row():
            verdicts = gr.Dataframe(headers=["dimension", "verdict", "judge's first answer"], label="Verdicts",
                                    elem_id="convbench-verdicts", wrap=True, column_widths=["38%", "34%", "28%"])
            judge_notes = gr.Markdown(elem_id="convbench-judge")
        opened = [run_state, header, turn]
        open_button.click(open_convbench, [run, typed], opened)
        run.input(open_convbench, [run, gr.State("")], opened)
        turn.change(show_convbench_turn, [run_state, turn],
                    [user, audio, golden, reply, expected, actual, verdicts, judge_notes])
        previous_button.click(previous_convbench_turn, [run_state, turn], turn)
        next_button.click(next_convbench_turn, [run_state, turn], turn)
        playing = run_button.click(run_convbench_model, [loader, model_path, tiny, base_url, turns, max_new_tokens],
                                   [status, run, *opened])
        stop_button.click(stop_convbench_model, None, status, cancels=[playing])
        app.load(convbench_runs, None, run)


def _metric_tabs(app: gr.Blocks) -> None:
    """Metrics and Leaderboard: they work without a dataset."""
    with gr.Tab("Metrics"):
        metric = gr.Dropdown(METRICS, value="rq_pass_rate", label="Metric module")
        verdicts = gr.File(label="Verdicts or predictions (.jsonl)", file_types=[".jsonl"])
        metric_button = gr.Button("Score", elem_id="score")
        metric_result = gr.Dataframe(headers=["key", "value"], label="Result")
        gr.Markdown(ui.metrics_table.__doc__.split("\n\n", 1)[1])
        metric_button.click(score_file, [metric, verdicts], metric_result)
    with gr.Tab("Leaderboard"):
        gr.Markdown("The paper's models on its official test set first; then this Space's runs, ranked among "
                    "themselves: their items, baselines and judge are not the paper's, so they are not ranked "
                    "with it.")
        board = gr.Dataframe(headers=ui.LEADERBOARD_HEADERS, elem_id="leaderboard")
        refresh = gr.Button("Refresh")
        refresh.click(leaderboard, None, board)
        app.load(leaderboard, None, board)


#: gradio's words when its own request for the page, allowed 3 s, went unanswered
_NOT_REACHED = "localhost is not accessible"


def serve(app, **options) -> None:
    """`app.queue().launch(...)`, asked again (up to three times) when gradio's own first request for
    the page times out: on a busy machine the first page of six tabs takes longer than gradio allows,
    and it stops with advice (share=True) that no user of `ihbench space` can follow. The clean-clone
    CI lost every browser test to it while the machine ran other work. A port taken between the command's check and
    the server's start (two Spaces started at once) is said as the port it is (battery 65, L2: gradio's advice about
    launch() and uvicorn's bind error were printed under an address announced for a server that never ran)."""
    import logging

    from ihbench.dataset.errors import UsageError

    bind_errors = logging.getLogger("uvicorn.error")
    quiet = _WithoutBindErrors()
    bind_errors.addFilter(quiet)
    try:
        for attempt in range(3):
            try:
                app.queue().launch(**options)
                return
            except ValueError as error:
                if _NOT_REACHED not in str(error) or attempt == 2:
                    raise
                app.close()  # its server was started before the check: the port is free again for the next try
            except OSError as error:
                if "Cannot find empty port" not in str(error):
                    raise
                raise UsageError(f"port {options.get('server_port')} on {options.get('server_name')} was taken as the "
                                 "Space started (another server bound it first); give another --port") from None
    finally:
        bind_errors.removeFilter(quiet)


class _WithoutBindErrors:
    """uvicorn's own line for a port in use: `serve` says it as the option it is."""

    @staticmethod
    def filter(record) -> bool:
        return "error while attempting to bind" not in record.getMessage()


def main() -> None:
    port = int(os.environ.get("GRADIO_SERVER_PORT") or os.environ.get("PORT") or 7860)
    host = os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    ui.check_owner_endpoint()  # started as a Space starts it (not through `ihbench space`): said before serving
    app = build_app()
    # quiet: the address is said below once the server runs; gradio's own lines advise launch(share=True), which no
    # user of `ihbench space` (nor of a Space) can set
    serve(app, server_name=host, server_port=port, max_file_size="20mb", show_error=False, quiet=True,
          prevent_thread_lock=True)
    print(f"IHBench Space on http://{host}:{port}", flush=True)
    app.block_thread()


if __name__ == "__main__":
    main()
