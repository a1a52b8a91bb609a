"""The Space's ConversationBench tab: a run's turns one at a time, as plain functions.

A ConversationBench verdict is only believable beside what was said, so each (epoch, turn) is shown
with the user's audio and words, the golden reply beside the model's, the expected calls beside the
actual ones with their results, and the judge's verdicts with its reasoning and what realignment
changed. The header's rates are `ihbench report`'s own (`summarize_convbench`), never recomputed.

A run is a folder of the Space's runs folder, a path typed in (on a Space others visit, only one of the
runs folder: `ui.served_to_others`), or a fresh one: a model on the first
turns of the in-house benchmark (`convbench_dev` of the Space's dataset), so a visitor sees the
whole pipeline in a minute or two on a CPU. A tiny random-weight checkpoint of a tool-calling family is made once
under the toolkit's cache folder (`tiny-models/`) for a visitor without a model of their own.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterator, NamedTuple, Optional

from ihbench.ui import (UserError, _failure, data_dir, forget_stop, new_run_folder, playable, runs_dir, server_options,
                        stoppable, typed_name, visitor_model, visitor_run_path, whole)

IN_HOUSE = "convbench_dev"
MAX_TURNS = 10
LABEL = re.compile(r"^epoch (\d+) · turn (\d+)")
SHOWN = {True: "pass", False: "FAIL", None: "not scored"}


class TurnView(NamedTuple):
    user: str  # markdown: where we are, the categories, the user's words
    audio: Optional[tuple]  # (rate, samples) of the user's turn, or None for a text-only benchmark
    golden: str
    reply: str
    expected_calls: list  # [tool, arguments]
    actual_calls: list  # [tool, arguments, result]
    verdicts: list  # [dimension, verdict, judge's first answer]
    judge: str  # markdown: reasoning, realignment notes, or why there are no verdicts


# --- which run ---------------------------------------------------------------------------------

def run_choices() -> list[str]:
    """The runs folder's ConversationBench runs, newest first (an IHBench or SID folder is not one)."""
    from ihbench.dataset.errors import IHBenchError
    from ihbench.rundir import RunDir

    found = []
    for info in runs_dir().glob("*/run.json"):
        try:
            if RunDir(info.parent).info().convbench is not None:
                found.append(info.parent)
        except IHBenchError:
            continue
    return [path.name for path in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)]


def run_path(choice: Optional[str], typed: Optional[str] = None) -> Path:
    """A typed path wins over the list; a name from the list is only ever a folder of the runs folder."""
    if typed and typed.strip():
        return visitor_run_path(typed)
    if not choice:
        raise UserError("pick a run or type the path of a run folder")
    if Path(choice).name != choice:
        raise UserError("pick a run of the list, or type a path in the box beside it")
    return runs_dir() / choice


@lru_cache(maxsize=4)
def _benchmark(data: str, config: str):
    from ihbench.dataset.convbench import load_benchmark

    try:
        return load_benchmark(data, config)
    except Exception as error:
        raise _failure(f"the run's benchmark ({config}) could not be opened", error) from None


class _Run(NamedTuple):
    path: Path
    info: object
    benchmark: object
    records: dict  # (epoch, turn) -> the TurnRecord that counts
    summary: dict  # `ihbench report`'s summary of the run as it is now
    judgments: dict  # (epoch, turn) -> the last ConvJudgmentRecord, current or not

    @property
    def scored_epochs(self) -> set:
        """Conversations whose verdicts are of the conversation as it is now (the report scores these)."""
        return {turn["epoch"] for turn in self.summary["turns"]}


def _load(path: Path) -> _Run:
    from ihbench.convbench.judge import read_conv_judgments
    from ihbench.convbench.records import TurnRecord
    from ihbench.convbench.run import benchmark_hash
    from ihbench.dataset.errors import IHBenchError
    from ihbench.records import read_typed
    from ihbench.rundir import RunDir

    run = RunDir(path)
    if not path.is_dir():
        raise UserError("there is no such run folder")
    if not run.exists():
        raise UserError("that folder is not a run (it has no run.json)")
    try:
        info = run.info()
    except IHBenchError as error:
        raise _failure("its run.json cannot be read", error) from None
    if info.convbench is None:
        raise UserError("that is not a ConversationBench run (its run.json has no `convbench` settings)")
    if not run.responses_path.is_file():
        raise UserError("the run has no responses.jsonl: nothing was played yet")
    benchmark = _benchmark(info.data, info.config)
    if benchmark_hash(benchmark) != info.convbench.get("benchmark_hash"):
        raise UserError(f"the benchmark {info.config} changed since this run played it; its golden replies would "
                        "not be the ones the run was played against")
    files = run.judgment_files()
    summary = _summary(str(path), *(_stamp(f) for f in [run.responses_path, *files]))
    judged = Path(summary["judge"]["file"]) if summary["judge"] else (files[0] if files else None)
    try:
        records = {r.key: r for r in read_typed(run.responses_path, TurnRecord)}
        judgments = read_conv_judgments(judged) if judged else {}
    except IHBenchError as error:
        raise _failure("the run's records cannot be read", error) from None
    return _Run(path, info, benchmark, records, summary, judgments)


def _stamp(path: Path) -> tuple:
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=8)
def _summary(path: str, *stamps) -> dict:
    """`ihbench report`'s summary, made again only when a records file changed (`stamps`)."""
    from ihbench.report.convbench_summary import summarize_convbench

    try:
        return summarize_convbench(Path(path))
    except Exception as error:
        raise _failure("the run's pass rates could not be computed", error) from None


# --- the run's header and its turns ------------------------------------------------------------

def open_run(choice: Optional[str], typed: Optional[str] = None) -> tuple[str, str, list[str]]:
    """(the run folder, header markdown, turn labels "epoch E · turn T", failing ones marked)."""
    path = run_path(choice, typed)
    run = _load(path)
    return str(path), _header(run, run.summary), turn_labels(run)


def turn_labels(run: _Run) -> list[str]:
    labels = []
    for (epoch, turn), record in sorted(run.records.items()):
        judgment = run.judgments.get((epoch, turn)) if epoch in run.scored_epochs else None
        mark = " · error" if record.status == "error" else " · ✗" if judgment and _failed(judgment) else ""
        labels.append(f"epoch {epoch} · turn {turn}{mark}")
    return labels


def _failed(judgment) -> list[str]:
    """The dimensions the turn failed, as the report counts them (turn_taking only where measured)."""
    return [d for d, value in judgment.scores.items()
            if value is False and (d != "turn_taking" or judgment.turn_taking_supported)]


def _header(run: _Run, summary: dict) -> str:
    info, counts, scores = run.info, summary["conversations"], summary["scores"]
    shape = [f"{summary['n_turns']} turn(s) × {summary['epochs'] or 1} epoch(s)", summary["mode"].replace("_", "-"),
             summary["modality"], f"tool results {summary['tool_results']}", f"{len(run.records)} turn record(s)"]
    lines = [f"### {Path(str(info.model_path)).name} on {run.benchmark.name}", " · ".join(shape)]
    if scores:
        judge = summary["judge"]
        rates = [f"pass rows **{_rate(scores['pass_rows'])}**"] + [
            f"{name} {_rate(cell['applicable'])}" for name, cell in scores["per_dimension"].items()
            if cell["applicable"]["rate"] is not None]
        lines.append(f"**Pass rates** (judge {judge['model']}, prompt {judge['prompt_version']}; applicable turns): "
                     + " · ".join(rates))
        others = [f"{n} {what.replace('_', ' ')}" for what, n in counts.items() if what not in ("finished", "judged")
                  and n]
        if others:
            lines.append(f"Conversations left out of the rates: {', '.join(others)}.")
    else:
        lines.append("**Not judged yet**: `ihbench judge` on this folder scores every turn; the turns show without "
                     "verdicts until then.")
    return "\n\n".join(lines)


def _rate(cell: dict) -> str:
    return f"{cell['rate']:.3f} ({cell['passes']}/{cell['n']})"


def step(path: str, label: Optional[str], by: int) -> Optional[str]:
    """The turn `by` places away, staying at the ends (Previous on the first turn stays there)."""
    labels = turn_labels(_load(Path(path)))
    if not labels:
        return None
    index = labels.index(label) if label in labels else 0
    return labels[max(0, min(len(labels) - 1, index + by))]


def turn_view(path: str, label: str) -> TurnView:
    from ihbench.dataset.audio import decode_audio
    from ihbench.dataset.schema import SAMPLING_RATE

    match = LABEL.match(label or "")
    if not match:
        raise UserError("pick a turn")
    run = _load(Path(path))
    key = (int(match[1]), int(match[2]))
    record = run.records.get(key)
    turns = {turn.index: turn for turn in run.benchmark.turns}
    if record is None or key[1] not in turns:
        raise UserError(f"the run has no epoch {key[0]}, turn {key[1]}")
    turn = turns[key[1]]
    categories = ", ".join(turn.categories) + (f" ({turn.subcategory})" if turn.subcategory else "")
    user = f"#### Epoch {key[0]} · turn {key[1]}\n\n**Categories:** {categories or '–'}\n\n**User:** {turn.input}"
    audio = None
    if turn.audio and turn.audio.get("bytes"):
        audio = playable(decode_audio(turn.audio["bytes"], SAMPLING_RATE))
    expected = [[call["name"], _json(call["args"])] for call in turn.required_calls]
    actual = [[call["name"] + (" (duplicate, skipped)" if call.get("is_duplicate") else ""), _json(call["args"]),
               _json(call.get("result"))] for call in record.tool_calls]
    verdicts, judge = _verdicts(run, key)
    return TurnView(user, audio, turn.golden_text, _reply(record), expected, actual, verdicts, judge)


def _reply(record) -> str:
    if record.status == "error":
        return f"_The turn failed ({record.error}); the next `ihbench run` plays it again._"
    if record.status == "ended_early":
        return "_Never played: the model ended the session at an earlier turn._"
    text = record.text or "_(no words: calls only)_"
    ended = "\n\n_The model called end_session here._" if record.status == "ended_session" else ""
    return f"{text}{ended}\n\n<sub>{record.latency_s:.2f} s · {record.rounds} round(s)</sub>"


def _verdicts(run: _Run, key: tuple[int, int]) -> tuple[list, str]:
    judgment = run.judgments.get(key)
    if judgment is None:
        return [], "_No verdicts: not judged yet (`ihbench judge` on this run)._"
    if judgment.judged and key[0] not in run.scored_epochs:
        return [], ("_No verdicts: this conversation's are not current (it was played again since, or its judging "
                    "failed part way); `ihbench judge` judges it anew._")
    if not judgment.judged:
        return [], f"_The judge failed on this conversation (judge_error: {judgment.error}); never counted against " \
                   "the model, judged again by the next `ihbench judge`._"
    rows = []
    for dimension, value in judgment.scores.items():
        if dimension == "turn_taking" and not judgment.turn_taking_supported:
            rows.append([dimension, "not measured (no recording)", ""])
            continue
        first = (judgment.initial or {}).get(dimension, value)
        rows.append([dimension, SHOWN[value], "" if first == value else SHOWN.get(first, str(first))])
    lines = [f"**Judge's reasoning** ({judgment.judge_model}): {judgment.reasoning or '–'}"]
    if judgment.notes:
        lines += ["", "**Realignment:**", *[f"- {note}" for note in judgment.notes]]
    if judgment.normalised:
        lines += ["", f"Scored out of the turn's dimensions, set to null: {', '.join(judgment.normalised)}."]
    return rows, "\n".join(lines)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# --- a fresh run on the in-house benchmark -----------------------------------------------------

def in_house_problem() -> Optional[str]:
    """Why no model can be run here (for the page), or None when the Space's data has convbench_dev."""
    from ihbench.dataset.convbench.load import is_convbench_config

    data = data_dir()
    try:
        present = data is not None and is_convbench_config(data, IN_HOUSE)
    except Exception:
        present = False
    return None if present else (f"The Space's dataset has no in-house ConversationBench (`{IN_HOUSE}`): build it "
                                 "with `ihbench build` (without `--no-convbench`) to run a model here. Runs of the "
                                 "runs folder can still be opened.")


def tool_families() -> list[str]:
    """The model families that can hold a tool conversation (the others are refused by the run)."""
    from ihbench.loaders import available, get

    return [name for name in available() if not get(name).tools_unsupported]


def tiny_model(family: str) -> Path:
    """A tiny random-weight checkpoint of `family`, made once: its replies are noise, but the chat
    template, the tool prompt, the audio path and the run's files are the real ones."""
    from ihbench.dataset.io import cache_root
    from ihbench.loaders.tiny import FAMILIES, make_tiny_model

    if family not in FAMILIES:
        raise UserError(f"no tiny checkpoint of {family!r}: enter a model path instead")
    out = cache_root() / "tiny-models" / family
    return out if (out / "config.json").is_file() else make_tiny_model(family, out)


def run_stream(loader_name: str, model_path: Optional[str], tiny: bool, base_url: Optional[str], turns: int,
               max_new_tokens: int, session: str = "") -> Iterator[tuple[str, Optional[str]]]:
    """Plays the first `turns` turns of the in-house benchmark as one conversation into a new run
    folder. Yields (status, None) while it plays, then (status, run folder). `ui.stop_runs(session)`
    ends it after the turn being played (the Stop button)."""
    import threading
    import time

    from ihbench.convbench import ConvRunSpec, run_convbench
    from ihbench.convbench.records import TurnRecord
    from ihbench.loaders import ModelNotFoundError
    from ihbench.records import read_typed

    if not tiny and not (model_path and model_path.strip()):
        raise UserError("enter a model path or id, or tick the tiny model")
    typed = None if tiny else typed_name(model_path, "model name") if loader_name == "openai" else \
        visitor_model(model_path)
    first_turns, tokens = whole(turns, "First turns"), whole(max_new_tokens, "Max new tokens")  # before any work
    if in_house_problem():
        raise UserError(f"the Space's dataset has no in-house ConversationBench ({IN_HOUSE})")
    yield "Preparing the model and the benchmark…", None
    model = str(tiny_model(loader_name)) if tiny else typed
    data = data_dir()
    targets = [turn.index for turn in _benchmark(data, IN_HOUSE).turns][: max(1, min(first_turns, MAX_TURNS))]
    out = new_run_folder("convbench", loader_name)
    spec = ConvRunSpec(loader=loader_name, model_path=model, data=data, config=IN_HOUSE, out=out,
                       generation={"max_new_tokens": tokens}, only_turns=targets,
                       loader_options=server_options("server URL", base_url) if loader_name == "openai" else {},
                       command=["space", "convbench", loader_name, "tiny" if tiny else model])
    outcome: dict = {}
    stop = stoppable(session)

    def work():
        try:
            outcome["summary"] = run_convbench(spec, benchmark=_benchmark(data, IN_HOUSE), progress=False, stop=stop)
        except BaseException as error:  # reported on the page below
            outcome["error"] = error
        finally:
            forget_stop(session, stop)

    started = time.monotonic()
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        done = sum(1 for r in read_typed(out / "responses.jsonl", TurnRecord) if r.done)
        yield f"Playing turns {targets[0]}–{targets[-1]}: {done} of {len(targets)} done " \
              f"({time.monotonic() - started:.0f} s)…", None
        worker.join(timeout=1.0)
    error = outcome.get("error")
    if isinstance(error, ModelNotFoundError):
        raise UserError("that model was not found (check the path or id; the hub is not reachable here)")
    if error is not None:
        raise _failure("the model could not be run", error)
    summary = outcome["summary"]
    stopped = "; stopped on a failed turn (the next run plays it again)" if summary.errors else \
        "; stopped by the Stop button" if stop.is_set() else ""
    yield f"{summary.written} turn(s) played in {summary.seconds:.0f} s into `{out.name}`{stopped}.", str(out)
