"""`ihbench run` on a ConversationBench config: each epoch one whole conversation, on-policy.

The model hears each user turn (audio, or the text with `--modality text`), answers with its own
history (its earlier replies, calls and results), and calls tools, answered as the reference harness
answers them (`tool_results`). `--only-turns` plays some turns as one conversation, keeping their
indices; `--rehydrate` plays each target turn alone after the golden history (user words and golden
replies, no tool messages, as the reference's text pipeline does it).

Epochs (and rehydrated turns) run concurrently up to `concurrency`; the turns of one conversation
stay in order. Every turn is a durable record before the next starts, so a run killed at turn 30
resumes at turn 30 with the history it had; a turn that failed stops its conversation and is tried
again by the next run. `epoch_<e>/transcript.jsonl` and `runtime.json` are written in the
reference's own layout after every conversation, and when one stops on a failure.
"""
from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import AppendLog
from ihbench.dataset.load import recorded_source
from ihbench.dataset.redaction import redact
from ihbench.loaders.failures import describe_failure, is_item_failure
from ihbench.records import RUN_INFO_FORMAT, RunInfo, described, read_typed
from ihbench.rundir import RunDir
from ihbench.runner import endpoint_identity, options_identity
from ihbench.seeds import record_seed

from .records import TurnRecord, of_the_run, utc_stamp
from .session import run_turn
from .tool_results import MODES, TurnTools
from .transcript import write_transcript

log = logging.getLogger("ihbench")

#: how long a first Ctrl-C waits for the turns being played to end (a local model's long answer; a server's
#: reply on its way) before the run stops without them
STOP_GRACE_SECONDS = 60.0


@dataclass
class ConvRunSpec:
    loader: str
    model_path: str
    data: str
    config: str
    out: Path
    epochs: int = 1
    modality: str = "audio"
    generation: dict = field(default_factory=dict)
    seed: int = 0
    loader_options: dict = field(default_factory=dict)
    tool_results: str = "positional"
    max_rounds: int = 8
    only_turns: Optional[list[int]] = None
    rehydrate: bool = False
    concurrency: Optional[int] = None
    command: Optional[list[str]] = None
    allow_endpoint_change: bool = False


@dataclass
class ConvRunSummary:
    out: Path
    conversations: int
    planned: int  # turns
    written: int
    skipped: int
    errors: int  # conversations that stopped on a failed turn (tried again by the next run)
    seconds: float
    on_data_audio: int = 0  # of those, stopped on a clip of the data that is damaged or silent (fail again)
    at_budget: int = 0  # turns written by this run that may have been cut by --max-new-tokens


def benchmark_hash(benchmark) -> str:
    """Everything the model is shown and the judge scores with, audio included: a resume never
    continues a conversation on another version of the benchmark."""
    digest = hashlib.sha256()
    digest.update(json.dumps([benchmark.system_instruction, benchmark.tools, benchmark.category_dimensions],
                             sort_keys=True).encode())
    for turn in benchmark.turns:
        digest.update(json.dumps([turn.index, turn.input, turn.golden_text, turn.required_function_call,
                                  turn.function_call_response, turn.categories, turn.scoring_dimensions,
                                  turn.flexible_args], sort_keys=True).encode())
        digest.update(hashlib.sha256((turn.audio or {}).get("bytes") or b"").digest())
    return digest.hexdigest()[:16]


def check_spec(spec: ConvRunSpec, benchmark) -> list[int]:
    """The target turns; every option that cannot work is refused before anything is made."""
    if spec.tool_results not in MODES:
        raise UsageError(f"--tool-results: expected one of {', '.join(MODES)}, got {spec.tool_results!r}")
    if spec.max_rounds < 1:
        raise UsageError(f"--max-tool-rounds: expected a whole number >= 1, got {spec.max_rounds}")
    indices = [turn.index for turn in benchmark.turns]
    targets = list(spec.only_turns) if spec.only_turns else indices
    unknown = [t for t in targets if t not in indices]
    if unknown:
        raise UsageError(f"--only-turns: no turn {unknown[0]} in {spec.config} (turns {indices[0]}-{indices[-1]})")
    if spec.modality == "audio" and any(benchmark.turns[indices.index(t)].audio is None for t in targets):
        raise UsageError(f"{spec.data} [{spec.config}]: the turns have no audio (imported with --text-only); run "
                         "with --modality text")
    return sorted(set(targets))


def _check_clip_count(spec: ConvRunSpec, benchmark, targets: list[int], loader) -> None:
    """Every user turn stays in the history as audio: the last turn's prompt holds them all."""
    from ihbench.loaders.limits import check_clip_count

    if spec.rehydrate:
        last = max(targets)
        needed = sum(1 for turn in benchmark.turns if turn.index <= last)
        check_clip_count(loader, needed, f"turn {last} after the golden history of every turn before it, each heard",
                         f"--only-turns with turns among the first {loader.max_audio_clips}, or --modality text")
    else:
        check_clip_count(loader, len(targets), f"turn {targets[-1]} with the {len(targets) - 1} turn(s) before it "
                         "in its history, each heard", f"--only-turns with at most {loader.max_audio_clips} turns, "
                         "or --modality text")


def run_convbench(spec: ConvRunSpec, *, loader=None, benchmark=None, progress: bool = True,
                  stop: Optional[threading.Event] = None) -> ConvRunSummary:
    """Once `stop` is set (the Space's Stop button) no other turn starts, as after a first Ctrl-C."""
    from ihbench.dataset.convbench import load_benchmark
    from ihbench.loaders import GenerationConfig

    started = time.perf_counter()
    generation = GenerationConfig(**spec.generation)
    from ihbench.dataset.argtypes import epochs

    epochs().check("--epochs", spec.epochs)  # from Python too: 10^20 epochs would be planned in memory
    benchmark = benchmark or load_benchmark(spec.data, spec.config)
    targets = check_spec(spec, benchmark)
    digest = benchmark_hash(benchmark)
    identity = {"loader": spec.loader, "model_path": spec.model_path, "data": recorded_source(spec.data),
                "config": spec.config,
                "split": None, "modality": spec.modality, "history_audio": None, "generation": generation.to_dict(),
                "seed": spec.seed, "types": None, **endpoint_identity(spec.loader_options.get("base_url")),
                **options_identity(spec.loader_options),
                "convbench": {"tool_results": spec.tool_results, "max_rounds": spec.max_rounds,
                              "only_turns": targets if spec.only_turns else None,  # as played: in order, once each
                              "rehydrate": spec.rehydrate, "benchmark_hash": digest}}
    run_dir = RunDir(spec.out)
    files = _benchmark_files(spec.data, spec.config)
    with run_dir.writing():
        try:
            return _run_locked(spec, run_dir, identity, generation, benchmark, targets, digest, loader, progress,
                               started, stop)
        finally:
            now = _benchmark_files(spec.data, spec.config)
            if files is not None and now is None:
                log.warning("%s [%s] is no longer where this run found it (moved or removed while the run played it); "
                            "judge and report read the benchmark from there", spec.data, spec.config)
            elif files != now and _changed(spec, digest):
                log.warning("%s [%s] was replaced while this run played it (`ihbench convbench-import` into it?): the "
                            "run played the benchmark as it was when it started, and judge and report will refuse it "
                            "as changed; play the benchmark as it is now into a new folder", spec.data, spec.config)


def _changed(spec: ConvRunSpec, digest: str) -> bool:
    """The benchmark rewritten during the run is another one now (not the same turns written again)."""
    from ihbench.dataset.convbench import load_benchmark
    from ihbench.dataset.errors import IHBenchError

    try:
        return benchmark_hash(load_benchmark(spec.data, spec.config)) != digest
    except (IHBenchError, OSError):  # gone or unreadable now: not the benchmark the run played
        return True


def _benchmark_files(data: str, config: str) -> Optional[list]:
    """(file, size, modification time) of a local dataset's card and the benchmark's two configs: a
    run reads them once, at its start, so a re-import while it plays is seen only by comparing these
    at its end (None: a Hub id or a folder without a card, which no import on this machine replaces)."""
    from ihbench.dataset.builddir import BuildDir, BuildDirError
    from ihbench.dataset.convbench import SETUP_SUFFIX

    folder = BuildDir(Path(data).expanduser())
    try:
        if not folder.path.is_dir() or not folder.has_card():
            return None
        files = [folder.card_path, *folder.config_files(config), *folder.config_files(config + SETUP_SUFFIX)]
        return [(str(file), file.stat().st_size, file.stat().st_mtime_ns) for file in files]
    except (BuildDirError, OSError):  # the reader that loaded the benchmark said what was wrong, if anything
        return None


def _run_locked(spec, run_dir: RunDir, identity: dict, generation, benchmark, targets, digest, loader, progress,
                started, stop: Optional[threading.Event] = None) -> ConvRunSummary:
    from tqdm.auto import tqdm

    from ihbench.loaders import create, get
    from ihbench.runner import check_same_run, kept_from_first_start, versions

    existing = run_dir.info() if run_dir.exists() else None
    if existing:
        check_same_run(existing, identity, run_dir.info_path, spec.allow_endpoint_change)
    passed_in = loader is not None  # a loader object from Python: --model-path is then only its label
    if loader is None:
        get(spec.loader).check_tool_support()  # before a model of a family that cannot call tools is loaded
        loader = create(spec.loader, spec.model_path, **spec.loader_options)
    loader.check_tools()
    loader.check_modality(spec.modality)
    if spec.modality == "audio":
        _check_clip_count(spec, benchmark, targets, loader)
    run_dir.write_info(RunInfo(
        **{**identity, **kept_from_first_start(identity, existing)},
        epochs=spec.epochs, model=described(loader, passed_in), data_fingerprint=digest, n_items=len(targets),
        versions=versions(), command=redact(list(spec.command or sys.argv)),
        created=existing.created if existing else time.strftime("%Y-%m-%dT%H:%M:%S%z"), format_version=RUN_INFO_FORMAT))

    latest = {record.key: record for record in _records(run_dir)}
    player = _Player(spec, benchmark, targets, digest, loader, generation, run_dir, latest)
    if stop is not None:
        player.stopping = stop
    conversations = [(epoch, turn) for epoch in range(spec.epochs) for turn in targets] if spec.rehydrate else \
        [(epoch, None) for epoch in range(spec.epochs)]
    planned = len(targets) * spec.epochs
    # a server takes requests in parallel; a local model plays one conversation at a time (threads on
    # one model would share torch's global seed, and gain nothing on one device)
    served = loader.runs_via.startswith("server")
    workers = max(1, spec.concurrency or (getattr(loader, "batch_size", 1) if served else 1) or 1)
    with AppendLog(run_dir.responses_path) as log_file, \
            tqdm(total=planned, unit="turn", desc=f"{benchmark.name} {Path(spec.model_path).name}",
                 disable=not progress) as bar:
        player.attach(log_file, bar)
        pool = ThreadPoolExecutor(max_workers=min(workers, len(conversations)) or 1)
        leave_now = False  # the workers are left to the process's exit (`ihbench.cli`), not waited for
        try:
            outcomes = list(pool.map(lambda conversation: player.play(*conversation), conversations))
        except KeyboardInterrupt:  # Ctrl-C: waiting for the queue (every conversation) took the whole run
            player.stopping.set()
            pool.shutdown(wait=False, cancel_futures=True)
            log.warning(f"stopping once the turns being played end (they are kept), for at most "
                        f"{STOP_GRACE_SECONDS:g} s; no other turn starts; Ctrl-C again stops at once (those turns are "
                        "then played again by the next run)")
            leave_now = True  # and so it stays if a second Ctrl-C ends the wait
            leave_now = not player.wait_until_idle(STOP_GRACE_SECONDS)
            if leave_now:  # a server that never answers held the first Ctrl-C for its timeout times its retries
                log.warning(f"the turns being played did not end within {STOP_GRACE_SECONDS:g} s: stopping now (they "
                            "are played again by the next run)")
            raise
        finally:  # whatever ends the wait, the worker threads are waited for here, not at the interpreter's exit
            if not leave_now:
                pool.shutdown(wait=True)
    if spec.rehydrate:  # an on-policy conversation wrote its epoch's files as it ended; rehydrated turns share them
        for epoch in range(spec.epochs):
            player.write_epoch(epoch)
    from ihbench.records import failed_on_data_audio

    stopped = [r for r in player.latest.values() if r.status == "error" and r.turn in targets]
    return ConvRunSummary(out=run_dir.path, conversations=len(conversations), planned=planned,
                          written=player.written, skipped=player.kept, errors=sum(1 for failed in outcomes if failed),
                          seconds=time.perf_counter() - started,
                          on_data_audio=sum(failed_on_data_audio(r.error) for r in stopped), at_budget=player.at_budget)


def _records(run_dir: RunDir) -> list[TurnRecord]:
    """The records so far; a record of the wrong shape is reported (file and line) and played again."""
    return read_typed(run_dir.responses_path, TurnRecord, repair=True, fits=of_the_run(run_dir.info()))


class _Player:
    """Plays conversations; shared by the worker threads (appends and the progress bar under a lock)."""

    def __init__(self, spec: ConvRunSpec, benchmark, targets, digest, loader, generation, run_dir, latest):
        self.spec, self.benchmark, self.targets, self.digest = spec, benchmark, targets, digest
        self.loader, self.generation, self.run_dir, self.latest = loader, generation, run_dir, latest
        self.turns = {turn.index: turn for turn in benchmark.turns}
        self.tools = benchmark.tools
        self.written = 0
        self.at_budget = 0
        self.kept = 0  # turns done by an earlier run and kept (not those played again after a turn played anew)
        self._lock = threading.Lock()
        self._audio: dict[int, object] = {}
        self.model_name = loader.describe().get("model_path") or spec.model_path
        self.stopping = threading.Event()  # the run was stopped: no turn starts after the ones being played
        self._playing = 0  # conversations being played now
        self._idle = threading.Condition()

    def wait_until_idle(self, seconds: float) -> bool:
        """True once no conversation is being played; False when `seconds` pass first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._playing == 0, timeout=seconds)

    def attach(self, log_file, bar) -> None:
        self.log_file, self.bar = log_file, bar

    # -- the user's side ----------------------------------------------------------------------
    def user_message(self, index: int) -> dict:
        turn = self.turns[index]
        if self.spec.modality == "text":
            return {"role": "user", "content": turn.input}
        with self._lock:
            samples = self._audio.get(index)
        if samples is None:
            from ihbench.dataset.audio import AudioError, decode_audio
            from ihbench.dataset.audio_format import SAMPLING_RATE
            from ihbench.loaders.base import DamagedAudioError

            where = f"{self.spec.data} [{self.spec.config}]: turn {index} ({turn.audio.get('path') or 'its audio'})"
            try:  # the data's own clip: a failed turn naming it, tried again by a rerun (after the data is mended)
                samples = decode_audio(turn.audio["bytes"], SAMPLING_RATE, where=where)
            except AudioError as error:
                raise DamagedAudioError(str(error)) from None
            with self._lock:
                self._audio[index] = samples
        return {"role": "user", "audio": samples, "sampling_rate": 16000}

    # -- a conversation -----------------------------------------------------------------------
    def play(self, epoch: int, rehydrated_turn: Optional[int]) -> bool:
        """True when the conversation stopped on a failed turn."""
        with self._idle:
            self._playing += 1
        try:
            if rehydrated_turn is not None:
                return self._play_rehydrated(epoch, rehydrated_turn)
            return self._play_on_policy(epoch)
        finally:
            try:
                if rehydrated_turn is None:
                    self.write_epoch(epoch)
            finally:
                with self._idle:
                    self._playing -= 1
                    self._idle.notify_all()

    def _play_on_policy(self, epoch: int) -> bool:
        history = [{"role": "system", "content": self.benchmark.system_instruction}]
        ended = replaying = False
        for index in self.targets:
            if self.stopping.is_set():  # the next run goes on from this turn, with the history kept
                return False
            # once a turn is played anew (a damaged or copied line in the middle), the turns kept after it
            # answered another history: played again too
            record = None if replaying else self.latest.get((epoch, index))
            if record is not None and record.done:  # resumed: the history it had
                self._keep()
                ended = ended or record.status == "ended_session"
                if record.status != "ended_early":
                    history += [self.user_message(index), *record.messages]
                continue
            if ended:
                self._write(epoch, index, "ended_early", mode="on_policy")
                continue
            replaying = True
            user = self._user_or_failed(epoch, index, "on_policy")
            outcome = user and self._turn(epoch, index, history, user, "on_policy")
            if outcome is None:
                return True
            history += [user, *outcome.messages]
            ended = outcome.ended_session
        return False

    def _play_rehydrated(self, epoch: int, index: int) -> bool:
        if self.stopping.is_set():
            return False
        record = self.latest.get((epoch, index))
        if record is not None and record.done:
            self._keep()
            return False
        history = [{"role": "system", "content": self.benchmark.system_instruction}]
        for earlier in self.benchmark.turns:
            if earlier.index >= index:
                break
            history += [self.user_message(earlier.index), {"role": "assistant", "content": earlier.golden_text}]
        user = self._user_or_failed(epoch, index, "rehydrated")
        return user is None or self._turn(epoch, index, history, user, "rehydrated") is None

    def _user_or_failed(self, epoch: int, index: int, mode: str) -> Optional[dict]:
        """The turn's user message, or None once its failure (a damaged clip of the data) is recorded."""
        try:
            return self.user_message(index)
        except Exception as error:
            if not is_item_failure(error):
                raise
            self._write(epoch, index, "error", mode=mode, error=describe_failure(error))
            return None

    def _turn(self, epoch: int, index: int, history: list, user: dict, mode: str):
        turn = self.turns[index]
        tools = TurnTools(self.spec.tool_results, turn.required_calls, turn.function_call_response,
                          turn.flexible_args)
        seed = record_seed(self.spec.seed, f"{self.benchmark.name}/{index}", epoch)
        try:
            outcome = run_turn(self.loader, history, user, self.tools, tools, self.generation, seed,
                               self.spec.max_rounds)
        except Exception as error:
            if not is_item_failure(error):
                raise
            self._write(epoch, index, "error", mode=mode, error=describe_failure(error))
            return None
        self._write(epoch, index, "ended_session" if outcome.ended_session else "answered", mode=mode,
                    text=outcome.text, final_text=outcome.final_text, tool_calls=outcome.tool_calls,
                    messages=outcome.messages, rounds=outcome.rounds, round_cap_hit=outcome.round_cap_hit,
                    latency_s=round(outcome.latency_s, 4),
                    ttfb_s=None if outcome.ttfb_s is None else round(outcome.ttfb_s, 4),
                    input_tokens=outcome.input_tokens, output_tokens=outcome.output_tokens,
                    reasoning=outcome.reasoning, ended_at_budget=outcome.ended_at_budget)
        return outcome

    def _keep(self) -> None:
        with self._lock:
            self.kept += 1
            self.bar.update(1)

    def _write(self, epoch: int, index: int, status: str, **fields) -> None:
        record = TurnRecord(
            benchmark=self.benchmark.name, epoch=epoch, turn=index, status=status,
            user_text=self.turns[index].input,
            seed=record_seed(self.spec.seed, f"{self.benchmark.name}/{index}", epoch),
            benchmark_hash=self.digest, modality=self.spec.modality,
            model=f"{self.spec.loader}:{self.spec.model_path}", time=utc_stamp(), **fields)
        with self._lock:
            self.log_file.append(record.to_json())
            self.latest[record.key] = record
            self.written += 1
            self.at_budget += record.done and record.ended_at_budget
            if record.done:
                self.bar.update(1)

    def write_epoch(self, epoch: int) -> None:
        with self._lock:
            records = [r for (e, _), r in self.latest.items() if e == epoch and r.turn in self.targets]
        failed = next((r for r in records if not r.done), None)
        complete = len([r for r in records if r.done]) == len(self.targets)
        write_transcript(self.run_dir.path / f"epoch_{epoch}", records, self.model_name,
                         mode="rehydrated" if self.spec.rehydrate else "on_policy",
                         status="complete" if complete else ("failed" if failed else "incomplete"),
                         error=failed.error if failed else None, attempted=len(records))
