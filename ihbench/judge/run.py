"""`ihbench judge`: every response of a run judged on TF and RQ into judgments.jsonl.

Judge failures (transport errors after retries, answers that stay invalid after one re-ask: the
item failures of `ihbench.llm.ask_structured`) are recorded as `judge_error`: counted and
reported, never scored as a loss for the model, and retried by the next `ihbench judge` on the
same file. Anything else is a bug and stops the run with its traceback (the verdicts written so
far stay valid). The file stays append-only: a retry appends
a new record for the same (id, epoch, axis), and readers take the last one (`RunDir.judgments`). A
response with no text (empty, or invisible characters only: `ResponseRecord.answered`) is no
answer, as an item error is: it is skipped and counted as failed, never scored as a loss (the next
`ihbench run` tries it again).
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from ihbench.dataset.errors import IHBenchError
from ihbench.dataset.io import AppendLog
from ihbench.dataset.schema import EvalItem
from ihbench.loaders.failures import describe_failure, is_item_failure

from ..llm import LLMCache, TextLLM, ask_structured, concurrently
from ..llm.batch import BatchPending
from ..records import AXES, RECORD_FORMAT, JudgmentRecord, ResponseRecord
from ..rundir import RunDir
from ..seeds import record_seed
from .asked import Asked, check_asked_path, unfinished_pass, write_asked
from .parse import InvalidJudgment, parse_rq, parse_tf
from .prompts import PROMPT_VERSION, RQ_SCHEMA, TF_SCHEMA, prompt_hash, rq_messages, tf_messages


class JudgeConfigError(IHBenchError, ValueError):
    pass


class OtherJudgeError(JudgeConfigError):
    """The judgments file holds another judge's verdicts: one judge per file. `judges` names them, for a page
    (the Space) whose way out is not the CLI's --out."""

    def __init__(self, message: str, judges: list[str]):
        super().__init__(message)
        self.judges = judges


@dataclass
class JudgeSummary:
    path: Path
    planned: int
    written: int
    skipped: int
    judged: int
    judge_errors: int
    calls: int
    cached: int
    seconds: float
    retried: int = 0  # judge errors of an earlier pass that this pass tried again
    unanswered: int = 0  # (item, epoch) whose run record is an error: nothing to judge until rerun
    waiting: int = 0  # questions written to a batch file (`--judge-batch`): no record until answered
    rerun: str = "`ihbench run` with the same options"  # what tries failed items again (`RunInfo.retried_by`)
    failed_unit: str = "response(s)"  # what those items are (`RunInfo.failed_unit`)
    #: (responses in the run, responses it planned) when it has fewer than planned: killed, or still running
    unfinished: Optional[tuple] = None
    #: a barge-in run's conversations whose last playing did not close (killed, or being played): not judged
    held_back: int = 0


def _unfinished(info, responses) -> Optional[tuple]:
    planned = (info.n_items or 0) * (info.epochs or 0)
    return (len(responses), planned) if planned and len(responses) < planned else None


def tf_order(seed: int, item_id: str, epoch: int) -> bool:
    """True when the model's response is shown as A; balanced and reproducible per (item, epoch)."""
    return random.Random(record_seed(seed, item_id, epoch) ^ 0x5EED).random() < 0.5


def _same(parsed: dict, stored) -> None:
    """Raises unless `stored` holds what `parse` gives for it (a cached verdict read back: only the
    fields a verdict has are compared, in JSON's own terms, so 1 is no `true`)."""
    if json.dumps(parsed, sort_keys=True) != json.dumps({name: stored[name] for name in parsed}, sort_keys=True):
        raise InvalidJudgment("a cached verdict that the judge's parser would not have written")


def check_tf(stored) -> None:
    """A cached TF verdict, checked as a live one is (`parse_tf` gives its own output back unchanged)."""
    _same(parse_tf(json.dumps(stored)), stored)


def rq_checker(n_criteria: int):
    """The check of a cached RQ verdict for `n_criteria` criteria: its answer rebuilt and parsed again."""
    def check(stored) -> None:
        entries = [{"index": n, "met": met, "reason": reason}
                   for n, (met, reason) in enumerate(zip(stored["criteria"], stored["reasons"], strict=True), 1)]
        _same(parse_rq(json.dumps({"criteria": entries}), n_criteria), stored)
    return check


async def _judge_one(record: ResponseRecord, item: EvalItem, axis: str, backend: TextLLM, cache: LLMCache,
                     seed: int, counter: dict) -> Optional[JudgmentRecord]:
    """The judgment, or None for a question waiting in a batch file (`ihbench.llm.batch`): not a
    judge error to count, a judgment not made yet; the next pass asks it again."""
    def judgment(outcome: str, **fields) -> JudgmentRecord:
        return JudgmentRecord(id=record.id, epoch=record.epoch, axis=axis, outcome=outcome, judge_model=backend.model,
                              prompt_version=PROMPT_VERSION, prompt_hash=prompt_hash(), item_hash=record.item_hash,
                              response_hash=record.digest, format_version=RECORD_FORMAT, **fields)

    started = time.perf_counter()
    response = record.response
    if axis == "tf" and not item.baseline:  # retrying cannot help: the data lacks what TF compares with
        return judgment("judge_error", error="item has no baseline response", retryable=False, latency_s=0.0)
    if not record.answered:  # no text: a failed item (`judge_run` never gives one), never a loss made up here
        raise ValueError(f"{record.id} epoch {record.epoch}: no answer to judge")
    if axis == "tf":
        model_first = tf_order(seed, record.id, record.epoch)
        a, b = (response, item.baseline) if model_first else (item.baseline, response)
        messages, schema_name, schema, parse = tf_messages(item, a, b), "tf_verdict", TF_SCHEMA, parse_tf
        check = check_tf
    else:
        messages, schema_name, schema = rq_messages(item, response), "rq_verdict", RQ_SCHEMA
        parse = lambda text: parse_rq(text, len(item.rubric.rq))  # noqa: E731
        check = rq_checker(len(item.rubric.rq))
    try:  # a cached verdict `check` refuses (damaged, edited by hand) is asked again, never scored
        answer = await ask_structured(backend, messages, schema_name=schema_name, schema=schema, parse=parse,
                                      cache=cache, prompt_hash=prompt_hash(), task=axis, epoch=record.epoch,
                                      invalid=InvalidJudgment, check=check)
    except Exception as error:
        if not is_item_failure(error):  # a bug: stops the run with its traceback
            raise
        if isinstance(error, BatchPending):
            return None
        # transport after retries, an answer unusable after the re-ask, a local judge out of memory
        counter["calls"] += error.usage["calls"]
        return judgment("judge_error", error=describe_failure(error), calls=getattr(error, "attempts", None),
                        latency_s=round(time.perf_counter() - started, 4))
    counter["calls"] += answer.calls
    parsed, calls, cached = answer.value, answer.calls, answer.cached
    if axis == "tf":
        model_won = (parsed["winner"] == "A") == model_first
        verdict = dict(verdict="model" if model_won else "baseline",
                       order="model_first" if model_first else "baseline_first", winner_label=parsed["winner"],
                       loser_deficiency=parsed["loser_deficiency"], reasoning=parsed["reasoning"])
    else:
        verdict = dict(verdict="pass" if parsed["passed"] else "fail", criteria=parsed["criteria"],
                       reasons=parsed["reasons"])
    return judgment("judged", **verdict, calls=calls, cached=cached, latency_s=round(time.perf_counter() - started, 4))


async def judge_run(run_dir: Path, backend: TextLLM, *, axes: Sequence[str] = AXES, concurrency: int = 16,
                    cache: Optional[LLMCache] = None, out: Optional[Path] = None, seed: Optional[int] = None,
                    progress: bool = True, data: Optional[str] = None) -> JudgeSummary:
    """`data`: where the run's dataset is now, when it moved from where run.json says (`RunDir`)."""
    started = time.perf_counter()
    unknown = sorted(set(axes) - set(AXES))
    if unknown:
        raise JudgeConfigError(f"--axes: unknown axis {', '.join(unknown)}; expected tf and/or rq")
    if concurrency < 1:
        raise JudgeConfigError(f"--concurrency: must be >= 1, got {concurrency}")
    run = RunDir(run_dir, data=data)
    info, responses, items = run.load()
    if "tf" in axes:  # TF compares with the baseline's response: without one, no call could ever judge it
        bare = sorted({r.id for r in responses if r.id in items and not items[r.id].baseline})
        if bare:
            raise JudgeConfigError(f"{len(bare)} answered item(s) have no baseline response in {data or info.data} (first: "
                                   f"{bare[0]}), and TF compares the answer with it: give the dataset a baseline "
                                   "(`ihbench set-baseline`), or judge RQ alone (--axes rq)")
    _refuse_environment_secrets(items, responses, data or info.data)
    seed = (info.seed or 0) if seed is None else seed
    path = run.judgments_path(out)
    check_asked_path(path)
    with run.judging(path):
        return await _judge_locked(run, path, info, responses, items, backend, axes, concurrency, cache, seed,
                                   progress, started)


def _refuse_environment_secrets(items: dict, responses: list, data) -> None:
    """An environment secret's value in what the judge's prompts would carry (an answered item of the data, or an
    answer) is said before any question (battery 62, I17: it went to the judge's server in every prompt)."""
    from ihbench.dataset.keys_in_data import environment_secret_in

    answered = [items[key] for key in sorted({r.id for r in responses} & set(items))]
    found = environment_secret_in(answered, lambda item: f"{data}: item {item.id}") or \
        environment_secret_in(responses, lambda response: f"the answer to {response.id}")
    if found:
        raise JudgeConfigError(f"{found} (a credential; not shown), which the judge's prompts would send to its "
                               "server; unset the variable if that text is no secret, or mend the data or the answer")


async def _judge_locked(run: RunDir, path: Path, info: dict, responses: list, items: dict, backend, axes, concurrency,
                        cache, seed, progress, started) -> JudgeSummary:
    from tqdm.auto import tqdm

    existing = run.judgments(path, repair=True, responses=responses)
    other = {r.judge_model for r in existing if r.judged} - {backend.model}
    if other:
        raise OtherJudgeError(f"{path} holds judgments by {', '.join(sorted(other))}; write another judge's "
                              "verdicts to another file (--out)", sorted(other))
    # another judge's errors bind nothing (a mistyped judge URL or name failed every call): this judge
    # tries them, even those that judge called final
    done = {r.key for r in existing if r.settled and r.judge_model == backend.model}
    failed_before = {r.key for r in existing if r.key not in done}
    # an item that failed (an error, or an answer with no text) has no answer to judge: the next
    # `ihbench run` tries it again, and it is counted as failed (`unanswered`)
    todo = [(r, axis) for r in responses if r.answered for axis in axes if (*r.key, axis) not in done]
    retried = sum((*r.key, axis) in failed_before for r, axis in todo)
    cache = cache or LLMCache()
    counter = {"calls": 0}
    semaphore = asyncio.Semaphore(concurrency)
    written = judged = errors = cached = waiting = 0

    waiting_keys = []  # a pass stopped midway keeps the last finished one's record: its facts still hold

    async def bounded(record, axis):
        async with semaphore:
            return (record, axis), await _judge_one(record, items[record.id], axis, backend, cache, seed, counter)

    if todo:  # nothing to judge (every item failed, or all judged): no file made for it
        with unfinished_pass(path, backend.model, list(axes)), AppendLog(path) as log, tqdm(total=len(todo), unit="judgment", desc=f"judging with {backend.model}",
                                          disable=not progress) as bar:
            async with concurrently(bounded(r, a) for r, a in todo) as completed:
                for future in completed:
                    (record, axis), result = await future
                    bar.update(1)
                    if result is None:
                        waiting += 1
                        waiting_keys.append([record.id, record.epoch, axis])
                        continue
                    await asyncio.to_thread(log.append, result.to_json())  # the fsync must not stall calls in flight
                    written += 1
                    judged += result.outcome == "judged"
                    errors += result.outcome == "judge_error"
                    cached += bool(result.cached)
    from ihbench.barge_in.points import HELD_BACK, failed_rounds

    batch = getattr(backend, "folder", None)  # a `--judge-batch` BatchLLM: its folder holds what waits
    if todo or path.exists():  # nothing to judge and nothing judged before: no file, and no record of it
        write_asked(path, Asked(judge_model=backend.model, axes=list(axes),
                                batch=str(Path(batch).resolve()) if batch else None, waiting=sorted(waiting_keys),
                                answers=sorted(r.digest for r in responses if r.answered),
                                unusable=getattr(backend, "unusable_questions", 0)))
    answered = sum(r.answered for r in responses)
    return JudgeSummary(path=path, planned=answered * len(axes), written=written,
                        skipped=answered * len(axes) - len(todo), judged=judged, judge_errors=errors,
                        unanswered=len(responses) - answered + failed_rounds(info),
                        calls=counter["calls"], cached=cached, seconds=time.perf_counter() - started,
                        retried=retried, waiting=waiting,
                        rerun=info.retried_by, failed_unit=info.failed_unit,
                        unfinished=_unfinished(info, responses),
                        held_back=len(info.extra.get(HELD_BACK) or {}))
