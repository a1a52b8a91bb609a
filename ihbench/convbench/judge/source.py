"""What the ConversationBench judge and report read: the conversations of a run folder, ours or the
reference harness's, in one shape.

- Ours (`ihbench run` on a ConversationBench config): run.json names the benchmark; each epoch is
  a conversation, read from `responses.jsonl` (the last record per turn). Only finished
  conversations are judged; one that stopped on a failed turn is counted as unfinished (the next
  `ihbench run` plays it again). Its recording, if any, is `epoch_N/conversation.wav`.
- The reference harness's (`runs/<bench>/<stamp>_<model>_<hex>/`): `transcript.jsonl` (one line
  per turn, the real turn indices), `runtime.json` (absent when it stopped on a timeout), and for
  speech-to-speech runs `conversation.wav` with `run.log`. It does not name its benchmark, so the
  judge is told (`--data`, `--config`) and records it in every judgment, where the report finds
  it. The turns in the transcript are the conversation (its `--only-turns` are sparse).

Every line is kept in the reference's transcript fields, so the prompt and the timing analysis
read both kinds the same way.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import UsageError
from ihbench.records import read_typed
from ihbench.rundir import RunDir, RunDirError, judgment_files_in

TRANSCRIPT, RUNTIME = "transcript.jsonl", "runtime.json"

log = logging.getLogger("ihbench")


@dataclass
class Conversation:
    epoch: int
    records: dict  # turn -> transcript line (the reference's fields)
    digest: str  # what was judged: a conversation played again is judged again
    folder: Path  # where its recording would be


@dataclass
class ConvSource:
    path: Path
    kind: str  # "ihbench" or "reference"
    benchmark: object  # ConvBenchmark
    data: str
    config: str
    model: str
    mode: str  # on_policy or rehydrated
    modality: str
    epochs: int
    targets: list[int]
    conversations: list[Conversation]
    unfinished: int
    tool_results: Optional[str] = None
    on_data_audio: int = 0  # of the unfinished, stopped on a clip of the data damaged or silent (fail again)
    note: Optional[str] = None  # what a reader should know about the folder

    @property
    def run(self) -> RunDir:
        return RunDir(self.path)


def digest_of(lines: dict) -> str:
    payload = json.dumps([{k: v for k, v in line.items() if k not in ("ts", "latency_ms", "ttfb_ms")}
                          for _, line in sorted(lines.items())], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def is_reference_run(path: Path) -> bool:
    path = Path(path)
    return (path / TRANSCRIPT).is_file() and not RunDir(path).exists()


def is_convbench_run(path: Path) -> bool:
    """A ConversationBench run, ours or the reference harness's. A run.json that cannot be read says
    no here: the command that reads it then names what is wrong with it, in its own order of checks."""
    run = RunDir(path)
    if is_reference_run(path):
        return True
    try:
        return run.exists() and run.info().convbench is not None
    except RunDirError:
        return False


def open_source(path, *, data: Optional[str] = None, config: Optional[str] = None,
                judgments: Optional[Path] = None) -> ConvSource:
    path = Path(path)
    if RunDir(path).exists():
        if data or config:
            raise UsageError(f"--data/--config: {path} is an ihbench run, which names its benchmark in run.json")
        return _ours(path)
    if (path / TRANSCRIPT).is_file():
        if not (data and config):
            data, config = _recorded_benchmark(path, judgments) or (data, config)
        if not (data and config):
            raise UsageError(f"{path}: a reference harness run (transcript.jsonl) does not name its benchmark; give "
                             "--data DATASET and --config NAME (the ConversationBench config it played)")
        local = Path(data)
        return _reference(path, str(local.resolve()) if local.exists() else data, config)
    raise RunDirError(f"{path}: not a ConversationBench run (no run.json of `ihbench run`, no transcript.jsonl of the "
                      "reference harness)")


def _ours(path: Path) -> ConvSource:
    from ihbench.dataset.convbench import load_benchmark
    from ihbench.dataset.load import DataSourceError

    from ..records import TurnRecord, of_the_run
    from ..run import benchmark_hash
    from ..transcript import transcript_line

    info = RunDir(path).info()
    if info.convbench is None:
        raise RunDirError(f"{path}: an IHBench run, not a ConversationBench one")
    try:
        benchmark = load_benchmark(info.data, info.config)
    except DataSourceError as error:  # the config run.json names (by hand, or the dataset changed since)
        raise RunDirError(f"{RunDir(path).info_path} names config {info.config!r}: {error}") from None
    if not isinstance(info.convbench.get("benchmark_hash"), str):  # what ties the run to the benchmark it played
        raise RunDirError(f"{RunDir(path).info_path}: field 'convbench.benchmark_hash' is missing or not a string; "
                          "the run always writes it (edited by hand?): restore it")
    if benchmark_hash(benchmark) != info.convbench.get("benchmark_hash"):
        raise RunDirError(f"{path}: {info.data} [{info.config}] changed since this run played it; judge and report a "
                          "run of the benchmark as it is now (`ihbench run` into a new folder)")
    targets = sorted(_selection(RunDir(path).info_path, info, benchmark) or [turn.index for turn in benchmark.turns])
    responses = RunDir(path).responses_path
    judged = [f for f in judgment_files_in(path) if f.stat().st_size]
    if judged and (not responses.is_file() or not responses.stat().st_size):  # as an IHBench run's: refused
        raise RunDirError(f"{responses}: {'empty' if responses.exists() else 'missing'}, while {judged[0]} holds "
                          "judgments: the run's turns are gone; restore the file, or run `ihbench run` again into a "
                          "new folder")
    torn: list = []
    latest = {r.key: r for r in read_typed(RunDir(path).responses_path, TurnRecord, fits=of_the_run(info), torn=torn)}
    for line in torn:  # its writer (`ihbench run`) repairs it; a reader names it
        log.warning("%s line %d: incomplete (cut mid-line: the run stopped while writing it, or the file was cut); "
                    "the turn is left out, and `ihbench run` with the same options plays that conversation again",
                    RunDir(path).responses_path, line)
    _name_outside(path, info, latest, targets)
    from ihbench.records import failed_on_data_audio

    conversations, unfinished, on_data_audio = [], 0, 0
    for epoch in range(info.epochs or 1):
        records = [latest.get((epoch, turn)) for turn in targets]
        if not all(r is not None and r.done for r in records):
            unfinished += 1
            on_data_audio += any(r is not None and failed_on_data_audio(r.error) for r in records)
            continue
        lines = {r.turn: transcript_line(r, info.model_path) for r in records}
        conversations.append(Conversation(epoch, lines, digest_of(lines), path / f"epoch_{epoch}"))
    return ConvSource(path=path, kind="ihbench", benchmark=benchmark, data=info.data, config=info.config,
                      model=info.model_path, mode="rehydrated" if info.convbench.get("rehydrate") else "on_policy",
                      modality=info.modality, epochs=info.epochs or 1, targets=targets, conversations=conversations,
                      unfinished=unfinished, tool_results=info.convbench.get("tool_results"),
                      on_data_audio=on_data_audio)


def _selection(run_json: Path, info, benchmark) -> Optional[list[int]]:
    """run.json's convbench.only_turns as `ihbench run` writes it (None: every turn; else turns of the
    benchmark), or one line naming the field: read otherwise, a list of no turn or of turns the benchmark
    lacks would leave every conversation "stopped before its end", to be played by a run that refuses it."""
    only = info.convbench.get("only_turns")
    indices = [turn.index for turn in benchmark.turns]
    if only is None or (isinstance(only, list) and only and all(
            isinstance(turn, int) and not isinstance(turn, bool) and turn in indices for turn in only)
            and len(set(only)) == len(only)):
        return only
    raise RunDirError(f"{run_json}: field 'convbench.only_turns' must be null (every turn) or a list of turns of "
                      f"{info.config} ({indices[0]}-{indices[-1]}), each once, got {only!r} (edited by hand?); "
                      "restore it")


def _name_outside(path: Path, info, latest: dict, targets: list[int]) -> None:
    """Turns recorded that run.json's selection does not hold: the run plays only its selection, so
    these were played before run.json was narrowed by hand, or copied in. They are left out, and said,
    as an IHBench run's answers outside its selection are: a score from part of what was played is
    never given without a word."""
    outside = sorted({turn for _, turn in latest} - set(targets))
    if outside:
        log.warning("%s: %d turn record(s) in %s are of turns not among run.json's convbench.only_turns %s (turn%s "
                    "%s): left out (run.json edited by hand, or the records copied from another run)", path,
                    sum(1 for _, turn in latest if turn in outside), RunDir(path).responses_path.name,
                    info.convbench.get("only_turns") or f"(every turn of {info.config})",
                    "s" if len(outside) > 1 else "", ", ".join(map(str, outside[:5])) + (", ..." if len(outside) > 5
                                                                                        else ""))


def _reference(path: Path, data: str, config: str) -> ConvSource:
    from ihbench.dataset.convbench import load_benchmark
    from ihbench.dataset.io import read_records

    benchmark = load_benchmark(data, config)
    known = {turn.index for turn in benchmark.turns}
    lines = {}
    for line in read_records(path / TRANSCRIPT):
        turn = line.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn not in known:
            raise UsageError(f"{path / TRANSCRIPT}: turn {turn!r} is not a turn of {data} [{config}] "
                             f"({min(known)}-{max(known)}); is this the benchmark the run played?")
        for name, kinds in (("assistant_text", str), ("tool_calls", list)):
            if not isinstance(line.get(name), kinds):
                raise UsageError(f"{path / TRANSCRIPT}: turn {turn}: `{name}` must be a {kinds.__name__}")
        lines[turn] = line  # a rehydrated run may write a turn again; the last line counts
    if not lines:
        raise UsageError(f"{path / TRANSCRIPT}: no turns")
    runtime = _runtime(path)
    note = None if runtime else (f"{path / RUNTIME} is missing: the reference harness writes it only when a run ends "
                                 f"normally, so the run may have stopped early ({len(lines)} turn(s) in the transcript)")
    status = (runtime or {}).get("status", "complete")  # the reference writes none; `ihbench run` writes one
    if status != "complete":  # an epoch folder of our own run that failed or is still being played: not finished
        failed = (runtime or {}).get("failed_turns")
        note = (f"{path / RUNTIME} says the conversation is {status}"
                + (f" ({runtime['error']})" if (runtime or {}).get("error") else "")
                + (f", failed turns {failed}" if failed else "")
                + f": it is not judged; `ihbench run` with its options plays it again (then judge {path.parent})")
    model = next(iter(lines.values())).get("model_name") or (runtime or {}).get("model_name") or path.name
    finished = [Conversation(0, lines, digest_of(lines), path)] if status == "complete" else []
    return ConvSource(path=path, kind="reference", benchmark=benchmark, data=str(data), config=config, model=model,
                      mode="rehydrated" if (runtime or {}).get("mode") == "rehydrated" else "on_policy",
                      modality="audio" if (path / "conversation.wav").is_file() else "unknown", epochs=1,
                      targets=sorted(lines), conversations=finished, unfinished=1 - len(finished),
                      note=note)


def _runtime(path: Path) -> Optional[dict]:
    file = path / RUNTIME
    if not file.is_file():
        return None
    from ihbench.dataset.io import read_json_object

    return read_json_object(file, UsageError)


def _recorded_benchmark(path: Path, judgments: Optional[Path]) -> Optional[tuple[str, str]]:
    """The benchmark an earlier `ihbench judge --data --config` recorded in the folder's judgments."""
    from ..records import ConvJudgmentRecord

    files = [Path(judgments)] if judgments else judgment_files_in(path)
    for file in files:
        for record in read_typed(file, ConvJudgmentRecord):
            if record.data and record.config:
                return record.data, record.config
    return None
