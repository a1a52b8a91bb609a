"""`ihbench judge` on a ConversationBench run: every turn of every finished conversation scored on
the benchmark's dimensions, into the run's judgments file (one record per epoch and turn).

A conversation is judged as a whole (or in windows, `windows.py`), then realigned (`realign.py`).
Only finished conversations are judged: one that stopped on a failed turn has no answer for the
turns after it, and the next `ihbench run` plays it again. When the judge fails on a
conversation (transport errors after retries, an answer still unusable after the re-asks), every
turn of it gets a `judge_error` record: counted, never scored, judged again by the next
`ihbench judge`. A conversation played again (its transcript changed) is judged again.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import AppendLog
from ihbench.loaders.failures import describe_failure, is_item_failure
from ihbench.llm import LLMCache, TextLLM, ask_structured, concurrently
from ihbench.dataset.io import write_json_atomic
from ihbench.records import read_typed

from ..records import ConvJudgmentRecord, utc_stamp
from ..session import ENDED, ENDED_EARLY
from .parse import InvalidConvJudgment, parse_window
from .prompt import CONTEXT_PARTS, PROMPT_VERSION, SCHEMA, judge_messages, prompt_hash
from .realign import realign
from .source import Conversation, ConvSource, open_source
from .windows import ANSWER_TOKENS_PER_TURN, Plan, context_tokens_of, count_tokens_for, plan_windows

TIMING_FILE = "turn_metrics.json"  # the recording's analysis, beside it

log = logging.getLogger("ihbench")


@dataclass
class ConvJudgeSummary:
    path: Path
    conversations: int  # finished conversations
    judged: int  # conversations judged by this pass
    skipped: int  # already judged, unchanged
    judge_errors: int  # conversations whose judging failed (judged again by the next pass)
    unfinished: int  # conversations that stopped on a failed turn: nothing to judge until they are played
    written: int  # records
    calls: int
    cached: int
    plans: list  # per judged conversation: the plan's description
    seconds: float
    note: Optional[str] = None  # what a reader should know about the folder (a reference run stopped early)
    on_data_audio: int = 0  # of the unfinished, stopped on the data's own damaged or silent clip (fail again)


def check_parts(parts: Sequence[str]) -> list[str]:
    unknown = [p for p in parts if p not in CONTEXT_PARTS]
    if unknown:
        raise UsageError(f"--judge-context: unknown part {unknown[0]!r}; expected {', '.join(CONTEXT_PARTS)}")
    return [p for p in CONTEXT_PARTS if p in parts]


def turn_taking_of(conversation: Conversation) -> tuple[Optional[dict], str]:
    """(turn -> issue strings, what measured it) from the conversation's recording, or (None, why not)."""
    from ..timing import analyze_run, turn_taking_verdicts

    if not (conversation.folder / "conversation.wav").is_file():
        return None, "not measured: no recording (text or audio-in run)"
    analysis = analyze_run(conversation.folder)
    if not analysis.supported:
        return None, f"not measured: {analysis.reason}"
    write_json_atomic(conversation.folder / TIMING_FILE, analysis.to_json())
    verdicts = turn_taking_verdicts(analysis)
    return ({turn: issues for turn, (_, issues) in verdicts.items()},
            f"from {conversation.folder.name}/conversation.wav and {analysis.source} ({TIMING_FILE})")


async def judge_convbench_run(run_dir: Path, backend: TextLLM, *, parts: Sequence[str] = (),
                              context_tokens: Optional[int] = None, concurrency: int = 4,
                              cache: Optional[LLMCache] = None, out: Optional[Path] = None,
                              data: Optional[str] = None, config: Optional[str] = None,
                              progress: bool = True) -> ConvJudgeSummary:
    """`run_dir`: our run folder, or a reference harness's (then `data` and `config` name its benchmark)."""
    started = time.perf_counter()
    parts = check_parts(parts)
    source = open_source(run_dir, data=data, config=config, judgments=out)
    path = source.run.judgments_path(out)
    with source.run.judging(path):
        return await _judge_locked(source, path, backend, parts, context_tokens, concurrency, cache or LLMCache(),
                                   progress, started)


#: how a score the judge left out is noted on its turn (the reference counts it a failure; so do we)
DEFAULTED = "no value from the judge: counted false, as the reference counts it"


def defaulted_notes(verdict: dict) -> list[str]:
    return [f"{name}: {DEFAULTED}" for name in verdict.get("defaulted", [])]


def read_conv_judgments(path: Path, *, said: bool = False) -> dict[tuple[int, int], ConvJudgmentRecord]:
    """The last checked record per (epoch, turn). `said`: a line cut by a judge that stopped while
    writing it is named, by a reader (the report); the judge, its writer, repairs it and judges again."""
    torn: list = []
    latest = {r.key: r for r in read_typed(path, ConvJudgmentRecord, torn=torn)}
    for line in torn if said else []:
        log.warning("%s line %d: incomplete (cut mid-line: the judge stopped while writing it, or the file was cut); "
                    "the verdict is left out, and `ihbench judge` judges that conversation again", path, line)
    return latest


async def _judge_locked(source: ConvSource, path, backend, parts, context_tokens, concurrency, cache, progress,
                        started) -> ConvJudgeSummary:
    from tqdm.auto import tqdm

    benchmark, conversations, targets = source.benchmark, source.conversations, source.targets
    existing = read_typed(path, ConvJudgmentRecord, repair=True)
    _check_same_judge(path, existing, backend.model, parts)
    latest = {r.key: r for r in existing}

    def settled(conversation: Conversation) -> bool:
        return all(getattr(latest.get((conversation.epoch, t)), "judged", False)
                   and latest[conversation.epoch, t].conversation_hash == conversation.digest
                   and latest[conversation.epoch, t].prompt_hash == prompt_hash() for t in targets)

    todo = [c for c in conversations if not settled(c)]
    budget = context_tokens_of(backend, context_tokens)
    count = count_tokens_for(backend)
    turns = [t for t in benchmark.turns if t.index in set(targets)]
    timing, timing_reason = {}, {}  # turn_taking comes from a recording; text and audio-in runs have none
    for conversation in todo:
        issues, timing_reason[conversation.epoch] = turn_taking_of(conversation)
        if issues is not None:
            timing[conversation.epoch] = issues

    def build(conversation):
        return lambda judged, context: judge_messages(benchmark, conversation.records, judged, context, parts=parts,
                                                      turn_taking=timing.get(conversation.epoch))

    plans = {c.epoch: plan_windows(targets, build(c), count, budget) for c in todo}  # refused before any call
    widest = max((len(w.judged) for plan in plans.values() for w in plan.windows), default=0)
    if getattr(backend, "max_new_tokens", None) is not None:  # a local judge: room for every verdict it owes
        backend.max_new_tokens = max(backend.max_new_tokens, ANSWER_TOKENS_PER_TURN * widest)
    semaphore = asyncio.Semaphore(concurrency)
    totals = {"calls": 0, "cached": 0, "records": 0, "errors": 0}
    mode = source.mode

    async def judge_one(conversation: Conversation) -> list[ConvJudgmentRecord]:
        plan: Plan = plans[conversation.epoch]
        begun = time.perf_counter()
        base = dict(benchmark=benchmark.name, epoch=conversation.epoch, judge_model=backend.model,
                    prompt_version=PROMPT_VERSION, prompt_hash=prompt_hash(), conversation_hash=conversation.digest,
                    judge_context=list(parts), mode=mode, windows=len(plan.windows), context_tokens=plan.context_tokens,
                    turn_taking_supported=conversation.epoch in timing,
                    turn_taking_reason=timing_reason[conversation.epoch], data=source.data, config=source.config)
        answers, calls, cached = [], 0, 0
        try:
            for window in plan.windows:  # one conversation's windows in order: its share of the concurrency
                async with semaphore:
                    messages = build(conversation)(window.judged, window.context)
                    answer = await ask_structured(
                        backend, messages, schema_name="convbench_verdicts", schema=SCHEMA,
                        parse=lambda text, judged=window.judged: parse_window(text, judged), cache=cache,
                        prompt_hash=prompt_hash(), task="convbench", epoch=conversation.epoch, max_reasks=2,
                        invalid=InvalidConvJudgment)
                answers.append(answer.value)
                calls += answer.calls
                cached += answer.cached
        except Exception as error:
            if not is_item_failure(error):
                raise
            totals["calls"] += calls + error.usage.get("calls", 0)
            totals["errors"] += 1
            return [ConvJudgmentRecord(**base, turn=t, outcome="judge_error", error=describe_failure(error),
                                       latency_s=round(time.perf_counter() - begun, 4), time=utc_stamp())
                    for t in targets]
        totals["calls"] += calls
        totals["cached"] += cached
        # turn numbers as numbers: a cached answer comes back through JSON, whose keys are strings
        verdicts = {int(t): v for value in answers for t, v in value["turns"].items()}
        tracking = [entry for value in answers for entry in value["function_calls"]]
        notes = " ".join(value["notes"] for value in answers if value["notes"])
        made = {t: {call.get("name") for call in record.get("tool_calls") or []}
                for t, record in conversation.records.items()}
        final = realign(turns, verdicts, tracking, rehydrated=mode == "rehydrated",
                        turn_taking=timing.get(conversation.epoch), made=made, unanswered=unanswered(conversation))
        window_of = {t: i for i, w in enumerate(plan.windows) for t in w.judged}
        elapsed = round(time.perf_counter() - begun, 4)
        return [ConvJudgmentRecord(
            **base, turn=t, outcome="judged", scores=final[t].scores, initial=verdicts[t],
            reasoning=verdicts[t]["reasoning"], notes=final[t].notes + defaulted_notes(verdicts[t]),
            normalised=final[t].normalised,
            turn_taking_issues=final[t].turn_taking_issues,
            tracking=[e for e in tracking if t in (e["expected_turn"], e["actual_turn"])],
            conversation_notes=notes, window=window_of[t], request_tokens=plan.windows[window_of[t]].tokens,
            calls=calls, cached=cached == len(plan.windows), latency_s=elapsed, time=utc_stamp()) for t in targets]

    with AppendLog(path) as log, tqdm(total=len(todo), unit="conversation", desc=f"judging with {backend.model}",
                                      disable=not progress) as bar:
        async with concurrently(judge_one(c) for c in todo) as completed:
            for future in completed:
                for record in await future:
                    await asyncio.to_thread(log.append, record.to_json())
                    totals["records"] += 1
                bar.update(1)
    return ConvJudgeSummary(
        path=path, conversations=len(conversations), judged=len(todo) - totals["errors"],
        skipped=len(conversations) - len(todo), judge_errors=totals["errors"], unfinished=source.unfinished,
        written=totals["records"], calls=totals["calls"], cached=totals["cached"],
        plans=[plans[c.epoch].describe() for c in todo], seconds=time.perf_counter() - started, note=source.note,
        on_data_audio=source.on_data_audio)


def unanswered(conversation: Conversation) -> dict[int, int]:
    """Turn -> the turn whose end_session call ended the conversation before it was played (the
    transcript's marker, so a reference harness's run is read the same way)."""
    text = {t: str(record.get("assistant_text", "")) for t, record in conversation.records.items()}
    ended = [t for t, said in sorted(text.items()) if said == ENDED]
    return {t: (ended[0] if ended else None) for t, said in text.items() if said.startswith(ENDED_EARLY)}


def _check_same_judge(path: Path, existing: list, model: str, parts: list[str]) -> None:
    """One judge, seeing one context, per judgments file: scores of two judges never mix."""
    others = sorted({r.judge_model for r in existing} - {model})
    if others:
        raise UsageError(f"{path} holds judgments by {', '.join(others)}; write another judge's verdicts to another "
                         "file (--out)")
    contexts = sorted({",".join(r.judge_context) or "none" for r in existing} - {",".join(parts) or "none"})
    if contexts:
        raise UsageError(f"{path} holds judgments made with --judge-context {contexts[0]}; judge with the same "
                         "context, or write to another file (--out)")
