"""What the Gradio Space shows, as plain functions (testable without a browser).

The Space (`spaces/app.py`) only lays these out. Errors meant for the page are `UserError`s with
messages that name no server path and no secret.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from ihbench.dataset.characters import name_problem
from ihbench.dataset.schema import SAMPLING_RATE
from ihbench.dataset.sid_build import SID_DEV_SPEECH

log = logging.getLogger("ihbench")

MAX_UPLOAD_BYTES = 20 * 2**20
#: the longest recording an upload may hold (read from its header, before it is decoded)
MAX_UPLOAD_SECONDS = 20 * 60
MAX_ITEMS = 20
DEFAULT_DATA = Path("data") / "ihbench-dev"  # where `make demo` and `ihbench publish-space` put a built set

SETUP_HELP = (
    "Give a dataset folder written by `ihbench build` (e.g. `ihbench build --out data/ihbench-dev`) or a Hub "
    "dataset id (e.g. `bosonai/IHBench`): `ihbench space --data ...`, or the variable `IHBENCH_DATA` (on a "
    "Space: Settings → Variables), then restart. Without it the Metrics and Leaderboard tabs still work."
)


class UserError(ValueError):
    """A problem to show in the page; the message is safe to display."""


def whole(value, label: str) -> int:
    """A slider's count as the page's API caller sent it: a fraction (2.5 points) is refused, not cut to
    2 without a word; gradio itself keeps it within the slider's range."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{label}: expected a whole number, got {value!r}") from None
    if not number.is_integer():
        raise UserError(f"{label}: expected a whole number, got {value!r}")
    return int(number)


def data_dir() -> Optional[str]:
    """`$IHBENCH_DATA` (a folder or a Hub id), else ./data/ihbench-dev when it exists, else None.

    A folder is made absolute: a relative name that is not found is sent to the Hub by `datasets`.
    """
    value = os.environ.get("IHBENCH_DATA", "").strip()
    if value:
        return str(Path(value).resolve()) if Path(value).exists() else value
    return str(DEFAULT_DATA.resolve()) if DEFAULT_DATA.is_dir() else None


def runs_dir() -> Path:
    return Path(os.environ.get("IHBENCH_RUNS") or Path.cwd() / "runs")


def served_to_others() -> bool:
    """Visitors other than its owner reach the Space: it runs on Hugging Face (`SPACE_ID`), or listens
    beyond this machine (`ihbench space --host 0.0.0.0`). Paths of the server typed into its pages are
    then not opened (`visitor_run_path`, `visitor_model`): a run of another folder would be shown, and
    the answer would tell a visitor which paths exist."""
    import ipaddress

    if os.environ.get("SPACE_ID"):
        return True
    host = os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: whoever can resolve it can reach it
        return True


def visitor_run_path(typed: str) -> Path:
    """A run folder typed into a page. Served to others, only a folder of the runs folder is opened, and
    anything else gets one answer, whether it exists or not."""
    try:
        path = Path(typed.strip()).expanduser().resolve()
        path.is_dir()  # a name past the system's limits, a symlink loop: no folder the page could open
    except (OSError, RuntimeError, ValueError):
        raise UserError("there is no such run folder") from None
    if served_to_others() and not path.is_relative_to(runs_dir().resolve()):
        raise UserError("this Space opens only the runs of its runs folder: pick one of the list")
    return path


#: a Hub model id: owner/name, no path of the server
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


#: the longest name typed into a page (a served model's name, a Hub id, a judge): each is written into every
#: record of the run and sent with every request, so a visitor's 3 MB name wrote megabytes per call
MAX_TYPED_NAME = 256


def typed_name(text: str, what: str) -> str:
    """A name typed into a page, stripped, of a sane length and one line; not blank (spaces alone were
    stripped to '' and written as the judge's name into every judgment)."""
    text = text.strip()
    if not text:
        raise UserError(f"the {what} is blank; type a name")
    if len(text) > MAX_TYPED_NAME:
        raise UserError(f"the {what} is {len(text):,} characters long; at most {MAX_TYPED_NAME}")
    problem = name_problem(text)
    if problem:
        raise UserError(f"the {what} holds {problem}")
    from ihbench.dataset.redaction import credential_in

    found = credential_in(text)
    if found:  # as the command line refuses it: recorded, the key was in run.json in clear
        raise UserError(f"the {what} holds {found} (a credential; not shown): a name holds none, and a server's "
                        "key goes in the Space's secrets")
    return text


def visitor_model(model_path: str) -> str:
    """A model typed into a page: served to others, a Hub id only (a folder of the server is not loaded
    for a visitor, and its answer would tell which folders exist); locally, any path or id."""
    model_path = typed_name(model_path, "model path")
    if served_to_others() and (not _HUB_ID.match(model_path) or ".." in model_path):
        raise UserError("this Space loads models by their Hub id (owner/name), not from folders of its server")
    return model_path


def check_runs_dir() -> Path:
    """The runs folder follows the rule of every place the toolkit keeps things (`check_cache_path`):
    not inside a dataset (publish-dataset would upload the runs), a run or the installed package (a
    Space published from it would carry them), nor one of those itself. `ihbench space` says it before
    serving; a page that makes a run says it to the visitor."""
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.io.cache import refuse_blank
    from ihbench.dataset.outputs import check_cache_path

    refuse_blank("IHBENCH_RUNS", "./runs")
    value = os.environ.get("IHBENCH_RUNS")
    name = "IHBENCH_RUNS (the Space's runs folder)" if value else "./runs (the Space's runs folder; IHBENCH_RUNS moves it)"
    check_cache_path(runs_dir(), name, file=False)
    if runs_dir().exists() and not runs_dir().is_dir():  # every visitor's run would fail, each with a traceback
        raise UsageError(f"{name}: {runs_dir()} is a file, not a folder; give a folder (it is made when missing)")
    return runs_dir()


def new_run_folder(prefix: str, *labels: str) -> Path:
    """Unique per click: two runs in the same second must never share (and be refused by) one folder."""
    import time
    import uuid

    from ihbench.dataset.errors import IHBenchError

    try:
        check_runs_dir()
    except IHBenchError as error:
        raise UserError(f"this server cannot keep runs: {masked(str(error))}") from None
    return runs_dir() / "-".join([prefix, time.strftime("%Y%m%d-%H%M%S"), *labels, uuid.uuid4().hex[:6]])


def data_problem() -> Optional[str]:
    """Why the data tabs cannot be shown (for the setup page), or None when the data opens."""
    data = data_dir()
    if data is None:
        return "No dataset is configured. " + SETUP_HELP
    try:
        _dataset(data)
    except UserError as error:
        return f"The dataset `{data}` cannot be browsed here: {error}. " + SETUP_HELP
    return None


def loader_names() -> list[str]:
    from ihbench.loaders import available

    return available()


@lru_cache(maxsize=4)
def _dataset(data: Optional[str]):
    from ihbench.dataset import load_items
    from ihbench.dataset.load import load_conversations

    if data is None:
        raise UserError("no dataset is configured (set IHBENCH_DATA)")
    from ihbench.dataset.errors import IHBenchError

    try:
        return load_conversations(data), load_items(data)
    except IHBenchError as error:  # said as the CLI says it (a ConversationBench-only dataset, say), paths masked
        raise UserError(masked(str(error))) from None
    except Exception as error:
        log.error("the dataset %s could not be opened", data, exc_info=error)
        raise UserError(f"it could not be opened ({type(error).__name__}; the server log has the traceback)") \
            from None


# --- Browse ------------------------------------------------------------------------------------

def conversation_choices(domain: Optional[str] = None, kind: Optional[str] = None) -> list[str]:
    conversations, items = _dataset(data_dir())
    with_kind = {i.conversation_id for i in items if not kind or i.interruption_type == kind}
    return [c.conversation_id for c in conversations
            if (not domain or c.domain == domain) and c.conversation_id in with_kind]


def domains() -> list[str]:
    return sorted({c.domain for c in _dataset(data_dir())[0]})


def _conversation(conversation_id: str):
    for conversation in _dataset(data_dir())[0]:
        if conversation.conversation_id == conversation_id:
            return conversation
    raise UserError(f"no conversation {conversation_id!r}")


def turn_choices(conversation_id: str) -> list[str]:
    return [f"{t.number}" + (f" · {t.interruption_type}" if t.interruption_type else "")
            for t in _conversation(conversation_id).turns]


def conversation_markdown(conversation_id: str) -> str:
    c = _conversation(conversation_id)
    lines = [f"### {c.conversation_id}", f"**Domain:** {c.domain} · **Goal:** {c.goal}", ""]
    for t in c.turns:
        if t.interruption_type:
            lines.append(f"**{t.number}. Assistant (cut off):** {t.heard} —")
            lines.append(f"**User ({t.interruption_type}):** {t.user_text}")
        else:
            lines.append(f"**{t.number}. Assistant:** {t.heard}")
            lines.append(f"**User:** {t.user_text}")
        lines.append("")
    return "\n".join(lines)


def turn_detail(conversation_id: str, turn_label: str):
    """(markdown with delivered vs planned text and the rubric, assistant audio, user audio)."""
    c = _conversation(conversation_id)
    number = int(str(turn_label).split(" ")[0])
    turn = c.turns[number - 1]
    item = next((i for i in _dataset(data_dir())[1] if i.conversation_id == c.conversation_id and i.turn == number), None)
    lines = [f"#### Turn {number}"]
    if item is None:
        lines += [f"**Assistant:** {turn.heard}", f"**User:** {turn.user_text}", "", "_Not an interruption point._"]
    else:
        lines += [f"**Delivered (what the user heard):** {item.interrupted.delivered}",
                  f"**Planned:** {item.interrupted.original}",
                  f"**Interruption ({item.interruption_type}):** {item.interruption.transcript}", "",
                  f"**TF criterion:** {item.rubric.tf}", "", "**RQ criteria:**",
                  *[f"- {criterion}" for criterion in item.rubric.rq], "",
                  f"**Baseline response:** {item.baseline or '–'}"]
    clip = lambda audio: None if audio is None else playable(audio.decode())  # noqa: E731
    return "\n".join(lines), clip(turn.assistant_audio), clip(turn.user_audio)


def playable(samples: np.ndarray) -> tuple[int, np.ndarray]:
    """(rate, 16-bit samples), as a gr.Audio output plays them: given floats, gradio converts them itself and
    warns on the server's console at every playback."""
    return SAMPLING_RATE, (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16)


# --- Evaluate ----------------------------------------------------------------------------------

def select(kind: Optional[str], domain: Optional[str], count: int):
    _, items = _dataset(data_dir())
    chosen = [i for i in items if (not kind or i.interruption_type == kind) and (not domain or i.domain == domain)]
    if not chosen:
        raise UserError("no interruption points match these filters")
    return chosen[: max(1, min(whole(count, "Interruption points"), MAX_ITEMS))]


#: the Stop button's hold on the runs a visitor's page started: {session: their stop events}
_STOPS: dict[str, set] = {}
_STOPS_LOCK = threading.Lock()


def stoppable(session: str) -> threading.Event:
    """A new stop event for a run this session starts; `forget_stop` once the run ends."""
    stop = threading.Event()
    with _STOPS_LOCK:
        _STOPS.setdefault(session, set()).add(stop)
    return stop


def forget_stop(session: str, stop: threading.Event) -> None:
    with _STOPS_LOCK:
        running = _STOPS.get(session, set())
        running.discard(stop)
        if not running:
            _STOPS.pop(session, None)


def stop_runs(session: str) -> int:
    """Asks the runs this session started to stop (no other batch starts; the one being answered ends
    first, up to the server's timeout); how many were running."""
    with _STOPS_LOCK:
        events = list(_STOPS.get(session, ()))
    for event in events:
        event.set()
    return len(events)


def evaluate_stream(loader_name: str, model_path: str, kind: Optional[str], domain: Optional[str], count: int,
                    epochs: int, max_new_tokens: int = 64, base_url: Optional[str] = None,
                    session: str = "") -> Iterator[tuple]:
    """Runs the chosen points through the runner into a real run directory under the runs folder
    (the Leaderboard picks it up once judged). Yields (rows, last interruption audio, run dir) as
    responses arrive; rows are [id, type, interruption, response, re-delivery, error]. `stop_runs(session)`
    ends it early: a server that never answers held the page until every request's timeout and retries."""
    import queue

    from ihbench.loaders import ModelNotFoundError

    from .report.diagnostics import diagnose
    from .runner import RunSpec, run

    if not model_path or not model_path.strip():
        raise UserError("enter a model path or id")
    model_path = typed_name(model_path, "model name") if loader_name == "openai" else visitor_model(model_path)
    epochs, max_new_tokens = whole(epochs, "Epochs"), whole(max_new_tokens, "Max new tokens")  # before any work
    items = select(kind, domain, count)
    by_id = {item.id: item for item in items}
    options = server_options("server URL", base_url) if loader_name == "openai" else {}
    out = new_run_folder("space", loader_name)
    spec = RunSpec(loader=loader_name, model_path=model_path, data=data_dir(), out=out,
                   epochs=max(1, epochs), generation={"max_new_tokens": max_new_tokens}, loader_options=options,
                   command=["space", loader_name, model_path])
    arrived: queue.Queue = queue.Queue()
    outcome: dict = {}
    stop = stoppable(session)

    def work():
        try:
            run(spec, items=items, progress=False, on_record=arrived.put, stop=stop)
        except BaseException as error:  # reported on the page below
            outcome["error"] = error
        finally:
            arrived.put(None)
            forget_stop(session, stop)

    threading.Thread(target=work, daemon=True).start()
    rows = []
    while True:
        try:
            record = arrived.get(timeout=0.5)
        except queue.Empty:
            if stop.is_set():  # the page moved on; the run ends after the batch being answered, its folder kept
                return
            continue
        if record is None:
            break
        item = by_id[record.id]
        ratio = diagnose(item, record.response)["redelivery_ratio"]
        rows.append([item.id, item.interruption_type, item.interruption.transcript, record.response or "",
                     None if ratio is None else round(ratio, 3), masked(record.error or "", (model_path,))])
        yield rows, _interruption_audio(item), str(out)
    error = outcome.get("error")
    if isinstance(error, ModelNotFoundError):
        raise UserError("that model was not found (check the path or id; the hub is not reachable here)")
    if isinstance(error, KeyError):
        raise UserError(f"unknown model family {loader_name!r}")
    if error is not None:
        raise _failure("the model could not be run", error, (model_path,))


def _interruption_audio(item):
    """The point's interruption for the player, or none when its clip is damaged (the row's error says so):
    one damaged clip dropped the whole table of answers."""
    from ihbench.dataset.audio import AudioError

    if item.interruption.audio is None:
        return None
    try:
        return playable(item.interruption.audio.decode())
    except AudioError as error:
        log.warning("the Space's player: %s", error)
        return None


#: the one server the Space's OPENAI_API_KEY may go to (its owner's judge, say): set by the owner
OWNER_ENDPOINT = "IHBENCH_SPACE_ENDPOINT"


def check_owner_endpoint() -> None:
    """$IHBENCH_SPACE_ENDPOINT checked as --base-url is, before serving (`ihbench space`, and the app started
    on its own, as a Space starts it): a typo would leave the owner's server unused, the owner told nothing."""
    from ihbench.dataset.argtypes import url
    from ihbench.dataset.errors import UsageError

    value = os.environ.get(OWNER_ENDPOINT)
    if value is None:
        return
    try:
        url().convert(value)
    except ValueError as error:
        raise UsageError(f"{OWNER_ENDPOINT}: {error}") from None
#: the variable named for the key of any other server: the Space sets it to the client's word for no key
NO_KEY, NO_KEY_VALUE = "IHBENCH_SPACE_NO_KEY", "EMPTY"


def server_options(field: str, value: Optional[str]) -> dict:
    """The `base_url` and `api_key_env` for a server a visitor typed: the URL checked by the rule of
    the CLI's options, and the owner's OPENAI_API_KEY sent only to the owner's own endpoint
    ($IHBENCH_SPACE_ENDPOINT). Any other server gets no key, and there is no default server: a URL
    typed on a public page would otherwise have received the owner's key (or spent it at OpenAI)."""
    from ihbench.dataset.argtypes import same_servers, url
    from ihbench.dataset.errors import IHBenchError

    if not value or not value.strip():
        raise UserError(f"enter the {field}: an OpenAI-compatible server's URL (this Space calls no server of its "
                        "own choosing)")
    try:
        base_url = url().check(field, value.strip())
    except IHBenchError as error:
        raise UserError(str(error)) from None
    if os.environ.setdefault(NO_KEY, NO_KEY_VALUE) != NO_KEY_VALUE:
        raise UserError(f"this server sets {NO_KEY}, the variable the Space names for visitors' servers so that they "
                        "get no key; unset it")
    owner = os.environ.get(OWNER_ENDPOINT, "").strip()
    owners = bool(owner) and same_servers(owner, base_url)
    if served_to_others() and not owners:
        _refuse_inside(field, base_url)
    return {"base_url": base_url, "api_key_env": "OPENAI_API_KEY" if owners else NO_KEY}


def _refuse_inside(field: str, base_url: str) -> None:
    """A Space others visit calls no server of its own network for them (this machine, a private range, the
    cloud's metadata address): a visitor's URL would reach what only the server can reach, and the answer or
    error would tell them what is there. The owner's endpoint is theirs to name."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    host = urlsplit(base_url).hostname or ""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):  # not resolvable from here: the request fails as any unreachable server does
        return
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%")[0])
        if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_multicast or \
                ip.is_unspecified:
            raise UserError(f"{field}: {host} is an address of this server's own network; give a model server "
                            "reachable from the internet (the Space's owner names theirs in IHBENCH_SPACE_ENDPOINT)")


def owner_endpoint() -> str:
    """The owner's endpoint, for the judge field to start with ("" when none is set)."""
    return os.environ.get(OWNER_ENDPOINT, "").strip()


def _failure(what: str, error: BaseException, typed: tuple = ()) -> UserError:
    """What the page says when a command fails: a user error with its own message, as the CLI says it
    (a visitor who typed `ftp://x` is told what is wrong with it), the server's own folders masked;
    anything else as the bug it is, with the traceback in the server's log."""
    from ihbench.dataset.errors import IHBenchError

    if isinstance(error, IHBenchError):
        return UserError(f"{what}: {masked(str(error), typed)}")
    log.error("%s", what, exc_info=error)
    return UserError(f"{what}: an internal error ({type(error).__name__}); the server log has the traceback")


#: an absolute path in a message (not the path part of a URL: that follows a host)
_PATH = re.compile(r"(?<![\w:/.~<])/[\w.@+-]+(?:/[\w.@+ -]*[\w.@+-])*/?")


def masked(text: str, typed: tuple = ()) -> str:
    """`text` as a visitor may read it: the server's own folders said by role (its runs, dataset,
    working folder, Python, home), any other server path as <server path>, a URL's credentials
    redacted; what the visitor typed (`typed`: their model path) stays, so they learn what was wrong
    with it, not the server's layout."""
    import sys

    from ihbench.dataset.redaction import redact_text

    text = redact_text(text)
    keep = [value.strip() for value in typed if value and value.strip().startswith("/")]
    places = {str(runs_dir()): "<runs>", str(Path.cwd()): "<server>", sys.prefix: "<python>",
              str(Path.home()): "<home>"}
    data = data_dir()
    if data and Path(data).is_dir():
        places[data] = "<dataset>"

    def hide(match) -> str:
        path = match.group(0)
        if any(path == k or path.startswith(k.rstrip("/") + "/") for k in keep):
            return path
        for place, role in sorted(places.items(), key=lambda pair: -len(pair[0])):
            if len(place) > 1 and (path == place or path.startswith(place.rstrip("/") + "/")):
                return role + path[len(place.rstrip("/")):]
        return "<server path>"

    return _PATH.sub(hide, text)


def _last_judge_error(path: Path, judge_model: str) -> str:
    """The reason of the last judge_error `judge_model` wrote in a judgments file, for a page that has no terminal to
    read: the file keeps an earlier judge's errors too, and the first of them was said as this judge's (battery 65,
    L9: an HTTP 500 said for a judge whose answers were empty)."""
    from ihbench.records import JudgmentRecord, read_typed

    errors = [r.error for r in read_typed(path, JudgmentRecord)
              if r.outcome == "judge_error" and r.error and r.judge_model == judge_model]
    return f": {masked(errors[-1])}" if errors else ""


def judge_run_dir(run_dir: Optional[str], judge_base_url: str, judge_model: str):
    """Judges the Space's run (TF and RQ), then reports it like `ihbench report`: scores with CIs,
    and the report's own per-type plot."""
    import asyncio

    from ihbench.judge import judge_run
    from ihbench.judge.run import OtherJudgeError
    from ihbench.llm import OpenAICompatibleLLM
    from ihbench.report import summarize, write_report

    if not run_dir or not Path(run_dir, "run.json").is_file():
        raise UserError("run a model first")
    if not judge_base_url or not judge_model:
        raise UserError("set the judge endpoint and model")
    server = server_options("judge endpoint", judge_base_url)
    judge_model = typed_name(judge_model, "judge model")
    backend = OpenAICompatibleLLM(judge_model, base_url=server["base_url"], api_key_env=server["api_key_env"],
                                  timeout=60)

    async def go():
        try:
            return await judge_run(Path(run_dir), backend, progress=False)
        finally:
            await backend.close()

    try:
        summary = asyncio.run(go())
    except OtherJudgeError as error:  # the CLI's way out (--out) is no field of this page
        raise UserError(f"this run holds verdicts by {', '.join(error.judges)}, and the Space keeps one judge's "
                        f"verdicts per run: judge it with that model, or run the model again (a new run) to judge "
                        f"with {judge_model}") from None
    except Exception as error:  # an unreachable judge is judge_error inside judge_run, not an exception
        raise _failure("the run could not be judged", error) from None
    if summary.judged == 0 and not summary.judge_errors and not summary.skipped:
        raise UserError(f"nothing to judge: every response of the run is an error ({summary.unanswered}); see the "
                        "error column, and run the model again")
    if summary.judged == 0 and summary.judge_errors:
        raise UserError(f"the judge returned no usable verdicts ({summary.judge_errors} judge errors)"
                        + _last_judge_error(summary.path, judge_model))
    report = summarize([Path(run_dir)])
    paths = write_report(report, Path(run_dir))
    scores = report.runs[0]
    table = []
    for key in ("tf_win_rate", "rq_pass_rate"):
        r = scores.get(key)
        if r:
            table.append([key, round(r[key], 3), round(r["ci_low"], 3), round(r["ci_high"], 3), r["n_items"]])
    table.append(["judge_errors", summary.judge_errors, None, None, None])
    chart = paths.get("per_type")
    return table, str(chart) if chart else None


# --- Detect ------------------------------------------------------------------------------------

def sid_clip_choices() -> list[str]:
    from ihbench.dataset.sid import sid_rows

    try:
        references, _ = sid_rows(data_dir(), SID_DEV_SPEECH)
    except Exception:
        return []
    return [r["audio"] for r in references]


def refuse_oversize_upload(path: str) -> None:
    """An uploaded recording within the file cap and, read from its header before any decoding, the length
    cap: 20 MB of compressed silence is hours of audio, tens of GB once decoded."""
    from ihbench.dataset.audio import audio_header_seconds, longer_than

    if os.path.getsize(path) > MAX_UPLOAD_BYTES:
        raise UserError(f"the file is larger than {MAX_UPLOAD_BYTES // 2**20} MB")
    seconds = audio_header_seconds(path)
    too_long = f"; this Space analyses up to {MAX_UPLOAD_SECONDS // 60} minutes (`ihbench` on your machine takes any " \
        "length)"
    if seconds is not None and seconds > MAX_UPLOAD_SECONDS:
        raise UserError(f"the recording is {seconds / 60:.0f} minutes long{too_long}")
    if longer_than(path, MAX_UPLOAD_SECONDS):  # its header said less (or nothing): decoded up to the cap only
        raise UserError(f"the recording is longer than its header says, over {MAX_UPLOAD_SECONDS // 60} minutes"
                        f"{too_long}")


def _read_upload(path: str) -> np.ndarray:
    from ihbench.dataset.audio import AudioError, load_recording

    refuse_oversize_upload(path)
    try:
        return load_recording(path).samples
    except AudioError as error:  # named by the visitor's file name, never the server's upload folder
        raise UserError(f"that file is not usable audio: {masked(str(error).replace(path, Path(path).name))}") \
            from None


def detect(detector_name: str, upload: Optional[str], sid_clip: Optional[str], threshold: Optional[float] = None):
    """(waveform figure with predicted and true break, result dict). `threshold` is smart-turn's, as
    `ihbench sid --detector smart-turn --option threshold=T`: the turn ends at the first pause where
    P(turn complete) > T; the other detectors keep their defaults."""
    from ihbench.dataset.errors import MissingDependencyError, MissingFileError
    from ihbench.dataset.sid import sid_rows
    from ihbench.sid.detectors import get_detector

    truth = None
    if upload:
        samples = _read_upload(upload)
    elif sid_clip:
        references, clips = sid_rows(data_dir(), SID_DEV_SPEECH)
        index = [r["audio"] for r in references].index(sid_clip)
        samples, truth = clips[index], references[index]
    else:
        raise UserError("record or upload a clip, or pick an SID clip")
    options = {"threshold": float(threshold)} if detector_name == "smart-turn" and threshold is not None else {}
    try:
        detector = get_detector(detector_name, **options)
    except (MissingDependencyError, MissingFileError) as error:  # written for users: what to install
        raise UserError(f"{detector_name} is not available on this server: {error}") from None
    prediction = detector.detect(samples, SAMPLING_RATE)
    result = {"prediction": prediction, "truth": truth, "detector": detector.describe()}
    if detector_name == "smart-turn":  # where it was asked, and what it said
        result["pauses"] = [{"time": round(p.time, 3), "probability": round(p.probability, 4)}
                            for p in detector.traces[-1].pauses if p.probability is not None] if detector.traces else []
    return waveform_figure(samples, prediction, truth), result


def waveform_figure(samples: np.ndarray, prediction: dict, truth: Optional[dict]):
    from ihbench.dataset.plotting import pyplot

    plt = pyplot()

    figure, axis = plt.subplots(figsize=(8, 2.5), constrained_layout=True)
    t = np.arange(len(samples)) / SAMPLING_RATE
    axis.plot(t, samples, linewidth=0.5, color="#555555")
    if not prediction["total_nonbreak"]:
        axis.axvline(prediction["break_time"], color="#d62728", label=f"predicted {prediction['break_time']:.2f} s")
    if truth and not truth["total_nonbreak"]:
        axis.axvline(truth["break_time"], color="#2ca02c", linestyle="--", label=f"true {truth['break_time']:.2f} s")
    axis.set_xlabel("seconds")
    axis.legend(loc="upper right", fontsize=8)
    return figure


# --- Metrics and leaderboard -------------------------------------------------------------------

def metrics_table(metric: str, upload: Optional[str]) -> list[list]:
    """Upload a jsonl of verdicts or SID predictions+references; get the module's result as a table.

    Lines: rq_pass_rate {"verdicts": [bool,...], "item_id"?, "interruption_type"?}; tf_win_rate
    {"verdict": "model"|"baseline"|"tie", ...}; fir/irl/apt {"prediction": {...}, "reference": {...}};
    convbench_pass_rate {"verdict": bool|null, "dimension", "turn", "epoch"?, "call_expected"?,
    "categories"?}, or the lines of a run's judgments.jsonl as `ihbench judge` wrote them (IHBench: the TF or
    RQ lines, as the metric scores; ConversationBench: every dimension).
    """
    from ihbench.resources import load_metric

    if not upload:
        raise UserError("upload a .jsonl file")
    if os.path.getsize(upload) > MAX_UPLOAD_BYTES:
        raise UserError("the file is too large")
    from ihbench.dataset.io import json_lines

    class Unreadable(Exception):
        pass

    try:  # the CLI's reader: a line nested thousands deep or with a number too long for Python, named
        numbered = list(json_lines(upload, Unreadable, where="line {number}"))
    except Unreadable as error:
        raise UserError(f"not a usable JSON-lines file: {masked(str(error))}") from None
    rows = [value for _, value in numbered]
    for number, row in numbered:
        if not isinstance(row, dict):
            raise UserError(f"line {number}: expected an object with the fields described above, got "
                            f"{type(row).__name__ if row is not None else 'null'}")
    failed = _judge_errors(rows, metric)
    if metric in ("rq_pass_rate", "tf_win_rate") and rows and all(isinstance(r, dict) and "axis" in r for r in rows):
        rows = _judgment_rows(rows, metric)
    try:
        if metric in ("rq_pass_rate", "tf_win_rate"):
            field = "verdicts" if metric == "rq_pass_rate" else "verdict"
            kwargs = {"predictions": [r[field] for r in rows]}
            if all("item_id" in r for r in rows):
                kwargs["item_ids"] = [r["item_id"] for r in rows]
            if all("interruption_type" in r for r in rows):
                kwargs["interruption_types"] = [r["interruption_type"] for r in rows]
            result = load_metric(metric).compute(**kwargs)
        elif metric == "convbench_pass_rate":
            result = load_metric(metric).compute(**_convbench_columns(rows))
        elif metric in ("fir", "irl", "apt"):
            if rows and all("reference" not in r and {"audio", "total_nonbreak", "break_time"} <= set(r) for r in rows):
                raise UserError("these are SID predictions alone (as `ihbench sid` writes predictions.jsonl), with no "
                                "reference to score them against: give each line its reference ({\"prediction\": "
                                "{...}, \"reference\": {...}}), or score the file against the dataset with "
                                "`ihbench sid --data DATA --predictions FILE --out OUT`")
            result = load_metric(metric).compute(predictions=[r["prediction"] for r in rows],
                                                 references=[r["reference"] for r in rows])
        else:
            raise UserError(f"unknown metric {metric!r}")
    except (KeyError, TypeError) as error:
        raise UserError(f"each line needs the fields described above (missing {error})") from None
    except ValueError as error:
        raise UserError(str(error)) from None
    table = [[key, json.dumps(value) if isinstance(value, (dict, list)) else value] for key, value in result.items()]
    return table + ([] if failed is None else [["judge_errors", failed]])


def _judge_errors(rows: list[dict], metric: str) -> Optional[int]:
    """In a run's judgments file, the lines the metric would score had the judge answered (None for a file
    of bare verdicts): shown beside the result, as `ihbench report` and the Judge tab show them, so a score
    over half the file is not read as the whole file's."""
    if metric in ("rq_pass_rate", "tf_win_rate") and rows and all("axis" in r for r in rows):
        axis = "rq" if metric == "rq_pass_rate" else "tf"
        return sum(1 for r in rows if r.get("axis") == axis and r.get("outcome") == "judge_error")
    if metric == "convbench_pass_rate" and rows and all("scores" in r for r in rows):
        return sum(1 for r in rows if r.get("outcome", "judged") != "judged")
    return None


def _judgment_rows(rows: list[dict], metric: str) -> list[dict]:
    """The metric's lines from an IHBench judgments.jsonl as `ihbench judge` wrote it (TF and RQ lines together):
    the axis the metric scores, judged lines only (a judge_error is no verdict)."""
    from .records import JudgmentRecord, RecordError

    for number, row in enumerate(rows, start=1):  # as the CLI reads them: a line edited by hand is no verdict
        try:
            JudgmentRecord.from_json(row)
        except RecordError as error:
            raise UserError(f"line {number} of this judgments file is not as `ihbench judge` wrote it ({error}); "
                            "`ihbench report` leaves such lines out and says so") from None
    axis = "rq" if metric == "rq_pass_rate" else "tf"
    kept = [r for r in rows if r.get("axis") == axis and r.get("outcome") == "judged"]
    if not kept:
        raise UserError(f"this judgments file holds no judged {axis.upper()} line, which {metric} scores")
    if axis == "rq":
        return [{"verdicts": r.get("criteria"), "item_id": r.get("id")} for r in kept]
    return [{"verdict": r.get("verdict"), "item_id": r.get("id")} for r in kept]


def _convbench_columns(rows: list[dict]) -> dict:
    """The module's long-form columns from verdict lines, or from judged turns (one line per turn with
    its `scores`: each dimension becomes a row; a judge_error line is skipped, never a failure)."""
    if rows and all("scores" in r for r in rows):
        rows = [{"verdict": verdict, "dimension": dimension, "turn": r["turn"], "epoch": r.get("epoch", 0)}
                for r in rows if r.get("outcome", "judged") == "judged" for dimension, verdict in r["scores"].items()
                if not (dimension == "turn_taking" and not r.get("turn_taking_supported", True))]
        if not rows:
            raise UserError("no judged turn in the file (every line is a judge_error)")
    columns = {"predictions": [r["verdict"] for r in rows], "dimensions": [r["dimension"] for r in rows],
               "turn_ids": [r["turn"] for r in rows], "epochs": [r.get("epoch", 0) for r in rows]}
    for field, column in (("call_expected", "call_expected"), ("categories", "categories")):
        if all(field in r for r in rows):
            columns[column] = [r[field] for r in rows]
    return columns


#: the official test set the paper's rows were measured on (45 conversations; the paper, section 3)
PAPER_POINTS = 428
LEADERBOARD_HEADERS = ["model", "TF win rate", "RQ pass rate", "items", "data", "source"]


def leaderboard() -> list[list]:
    """The paper's rows first, ranked among themselves, then this Space's runs, ranked among
    themselves: a run over a few dev-set items, TF against hand-written baselines, is another
    measurement, and ranked in one list with the paper's a visitor's echo server came first."""
    from .report.paper import PAPER_BASELINE_MODEL, paper_model, paper_table
    from .summaries import ReportSummary, SummaryFileError, read_summary

    paper = [[paper_model(r), float(r["tf_win_rate"]), float(r["rq_pass_rate"]), PAPER_POINTS,
              f"official test set; the paper's baseline ({PAPER_BASELINE_MODEL}) and judge", "paper"]
             for r in paper_table("table1")]
    local = []
    for summary_path in sorted(runs_dir().glob("*/summary.json")):
        try:
            summary = read_summary(summary_path)
        except SummaryFileError as error:  # one edited summary does not take the board down; its owner reads why
            log.warning("the leaderboard leaves out %s", error)
            continue
        if not isinstance(summary, ReportSummary):  # an SID, turns or cross-benchmark folder
            continue
        for run in summary.runs:
            tf, rq = run["tf_win_rate"], run["rq_pass_rate"]
            local.append([f"{Path(str(run['model'])).name} ({run['modality']})", tf and round(tf["tf_win_rate"], 3),
                          rq and round(rq["rq_pass_rate"], 3), run.get("n_items"), _run_data(run),
                          f"runs/{summary_path.parent.name}"])
    return sorted(paper, key=lambda row: -row[1]) + sorted(local, key=lambda row: -(row[1] or 0))


def _run_data(run: dict) -> str:
    """What a Space run's scores are over, so its row is not read as the paper's measurement."""
    if run.get("dev_set"):
        return ("in-house dev set; TF against hand-written baselines, not comparable with the paper's"
                if not run["dev_set"].get("baselines") else "in-house dev set; baselines set by `ihbench set-baseline`")
    return f"{Path(str(run.get('data') or '?')).name}; not the paper's test set, baseline or judge"
