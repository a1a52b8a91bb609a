"""`ihbench generate`: prerequisites, then each call through simulation, the verify-modify loop and
the baselines, into source files that `ihbench verify` accepts and `ihbench build` turns into data.

Output folder (one writer at a time, locked):
  conversations/<id>.json   finished calls, source format, written whole (temp file + rename)
  prerequisites/<slug>.json knowledge base, system message, intents of a goal
  discarded.jsonl           calls the verifier discarded, and calls that failed (append-only)
  generate.json             versions, LLM, seeds, token counts, cost estimate, one entry per run

Rerunning the command continues: a call whose file is present and valid is never regenerated; a
discarded call is not retried unless asked; a failed call (an agent that never answered usably,
a server that stayed down) is tried again. Every LLM call goes through the cache, so redoing work
with the same inputs sends nothing.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from ihbench.dataset.argtypes import number
from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import AppendLog, exclusive, new_folders, read_records, write_json_atomic
from ihbench.dataset.outputs import GENERATE_JSON
from ihbench.dataset.redaction import address_without_credentials, hidden_as_before, quoted, redact
from ihbench.dataset.sources import DOMAINS, SourceError, load_conversation
from ihbench.dataset.verify import check_conversation, max_chars

from ..llm import LLMCache, TextLLM
from ..seeds import record_seed
from . import agents as a
from .prerequisites import prepare, slugify
from .prompts import PROMPT_VERSION, prompt_hash
from .simulate import simulate
from .source import lexical_problems, source_document
from .usage import Usage, cost_estimate
from .verify_loop import verify_and_fix
from .workflow import load_workflow

log = logging.getLogger("ihbench")

PIPELINE_VERSION = "1.0"
DISCARDED, INFO, LOCK = "discarded.jsonl", GENERATE_JSON, ".generate.lock"
STAGES = ("simulate", "verify", "baselines")


@dataclass
class GenerateSpec:
    out: Path
    domain: Optional[str] = None
    goal: Optional[str] = None
    description: Optional[str] = None
    workflow: Optional[Path] = None
    intents: int = 3
    conversations: int = 5
    seed: int = 0
    concurrency: int = 4
    max_reasks: int = 2
    max_fix_rounds: int = 3
    retry_discarded: bool = False
    price_input: Optional[float] = None  # US dollars per 1k prompt tokens
    price_output: Optional[float] = None  # US dollars per 1k completion tokens
    command: Optional[list[str]] = None


@dataclass
class GenerateSummary:
    out: Path
    planned: int
    written: int = 0
    skipped: int = 0  # finished by an earlier run
    discarded: int = 0
    failed: int = 0
    kept_out: int = 0  # discarded by an earlier run, not retried
    usage: Usage = field(default_factory=Usage)
    cost: object = "unknown"
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def _check_no_credential(spec: GenerateSpec, goal: str, description: Optional[str], workflow: Optional[dict]) -> None:
    """The goal, description and stage names, which generate.json and every conversation copy, hold no key:
    the rule `--goal` has, for the workflow file's fields and `--description` too (battery 54, A11)."""
    from ihbench.dataset.redaction import credential_in, credential_in_data

    named = [("goal", goal), ("description", description)] + \
        [(f"stages[{i}].name", stage["name"]) for i, stage in enumerate((workflow or {}).get("stages") or [])]
    for field, value in named:
        found = credential_in(value) if isinstance(value, str) else None
        if found:
            where = f"--workflow {spec.workflow}: {field}" if workflow else f"--{field}"
            raise UsageError(f"{where}: holds {found} (a credential; not shown), which generate.json and every "
                             "conversation would copy; remove it")
    # its knowledge base and policies: a provider's key, which no conversation needs, went into every prompt and
    # every conversation (battery 58, E9); a random-looking account number there is the workflow's own
    secret = credential_in_data(json.dumps(workflow, default=str, ensure_ascii=False)) if workflow else None
    if secret:  # an environment secret's value too (battery 61, H10)
        raise UsageError(f"--workflow {spec.workflow}: holds {secret} (a credential; not shown), which every prompt "
                         "would send and every conversation copy; remove it")


def check_spec(spec: GenerateSpec) -> tuple[str, str, Optional[str], Optional[dict]]:
    workflow = None
    if spec.workflow is not None:
        if spec.domain or spec.goal or spec.description:
            raise UsageError("give either --workflow FILE or --domain/--goal/--description, not both (the file "
                             "names its domain, goal and description)")
        workflow = load_workflow(spec.workflow)
        domain, goal, description = workflow["domain"], workflow["goal"], workflow["description"]
    else:
        if not spec.domain or not spec.goal:
            raise UsageError("--domain and --goal are required (or --workflow FILE)")
        domain, goal, description = spec.domain, spec.goal.strip(), spec.description
        if domain not in DOMAINS:
            raise UsageError(f"--domain: unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    _check_no_credential(spec, goal, description, workflow)
    if len(goal) > max_chars("goal"):  # the conversation's own goal field, as verify holds it
        where = f"--workflow {spec.workflow}: goal" if workflow else "--goal"
        raise UsageError(f"{where}: {len(goal):,} characters long; a conversation's goal may be at most "
                         f"{max_chars('goal'):,} (`ihbench verify` would discard every one made, its calls paid for)")
    for name, value, low in (("--intents", spec.intents, 1), ("--conversations", spec.conversations, 1),
                             ("--concurrency", spec.concurrency, 1), ("--max-reasks", spec.max_reasks, 0),
                             ("--max-fix-rounds", spec.max_fix_rounds, 0)):
        if value < low:
            raise UsageError(f"{name}: must be >= {low}, got {value}")
    if (spec.price_input is None) != (spec.price_output is None):
        raise UsageError("give both --price-per-1k-input and --price-per-1k-output, or neither")
    for name, price in (("--price-per-1k-input", spec.price_input), ("--price-per-1k-output", spec.price_output)):
        if price is not None:
            number(min=0).check(name, price)
    return domain, goal, description, workflow


def finished(path: Path) -> bool:
    """A call is done when its file is there and passes the lexical verifier. One that does not is
    made again, and the file is kept aside first: it may hold a user's hand edits with one slip."""
    if not path.exists():
        return False
    try:
        problems = check_conversation(load_conversation(path))
    except SourceError as error:
        problems = [error]
    if problems:
        aside = _aside(path)
        os.replace(path, aside)
        log.warning("%s does not pass `ihbench verify` (%s); kept as %s, and generated again", path, problems[0],
                    aside.name)
    return not problems


def _aside(path: Path) -> Path:
    """A free name beside `path` that no reader of conversations takes for one (they read *.json)."""
    number, aside = 1, path.with_name(path.name + ".rejected")
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.rejected-{number}")
    return aside


def _llm_line(describe: dict) -> str:
    """The LLM as a conversation's provenance names it. A URL's user part (or a key in its path) is left out, not written
    `<redacted>`: verify reads `<...>` in a conversation as an unfilled placeholder, and refused every
    conversation of an LLM reached through http://KEY@host, after all its requests (battery 42, M2)."""
    url = describe.get("base_url")
    where = " at " + address_without_credentials(url) if url else ""
    temperature = f", temperature {describe['temperature']}" if "temperature" in describe else ""
    return f"{describe.get('backend', '?')} backend, model {describe.get('model')}{where}{temperature}"


def _cost_text(usage: Usage, spec: GenerateSpec) -> str:
    cost = cost_estimate(usage, spec.price_input, spec.price_output)
    if cost == "unknown":
        return "unknown (no --price-per-1k-input/--price-per-1k-output given)" if spec.price_input is None else \
            "unknown (the backend reported no token counts)"
    return f"${cost:.4f} at ${spec.price_input}/${spec.price_output} per 1k prompt/completion tokens"


async def generate(spec: GenerateSpec, backend: TextLLM, *, cache: Optional[LLMCache] = None,
                   progress: bool = True) -> GenerateSummary:
    domain, goal, description, workflow = check_spec(spec)
    out = Path(spec.out)
    with new_folders(out), exclusive(out / LOCK, f"generate output folder {out}"):
        return await _generate_locked(spec, out, backend, cache or LLMCache(), progress, domain, goal,
                                      description, workflow)


async def _generate_locked(spec, out, backend, cache, progress, domain, goal, description, workflow):
    from tqdm.auto import tqdm

    started, started_at = time.perf_counter(), datetime.now(timezone.utc).isoformat(timespec="seconds")
    slug = slugify(goal)
    ids = [f"{domain}-{slug}-{n:02d}" for n in range(1, spec.conversations + 1)]
    recorded = {}
    if (out / INFO).exists():  # the suite's history of runs: a damaged file is said, never started afresh over
        from ihbench.dataset.io import read_json_object

        recorded = read_json_object(out / INFO, UsageError, hint="it records every run that made this suite "
                                    "(command, seeds, tokens, cost): repair it, or move it away to start a new history")
        runs = recorded.get("runs")
        if not isinstance(runs, list):
            raise UsageError(f"{out / INFO}: its runs are not a list; repair it, or move it away to start a new "
                             "history")
        _check_tokens(out / INFO, recorded.get("tokens"))
        if recorded.get("goal") is not None and (recorded.get("domain"), recorded.get("goal")) != (domain, goal):
            # its seeds and record are of one goal (a record repaired without them is taken as it is)
            raise UsageError(f"--out: {out} holds the suite of goal {recorded.get('goal')!r} "
                             f"({recorded.get('domain')}); "
                             f"give another --out for {goal!r} ({domain}), or that --domain and --goal to go on "
                             "with it")
    else:  # first: a run killed before its first conversation still resumes here
        write_json_atomic(out / INFO, {"pipeline_version": PIPELINE_VERSION, "domain": domain, "goal": goal,
                                       "runs": []})
    conversations = out / "conversations"
    conversations.mkdir(exist_ok=True)
    for stale in [*out.glob(".*.tmp"), *out.glob("*/.*.tmp")]:  # half-written by a killed run; we hold the lock
        stale.unlink()
    last = {r["conversation_id"]: r for r in read_records(out / DISCARDED, repair=True)}
    summary = GenerateSummary(out=out, planned=len(ids))
    todo = []
    for slot, conversation_id in enumerate(ids):
        if finished(conversations / f"{conversation_id}.json"):
            summary.skipped += 1
        elif last.get(conversation_id, {}).get("outcome") == "discarded" and not spec.retry_discarded:
            summary.kept_out += 1
        else:
            todo.append((slot, conversation_id))
    if summary.skipped:
        _check_same_author(out, recorded, backend.describe(), spec.seed)
    agents = a.Agents(backend, cache, reasks=spec.max_reasks, run_usage=summary.usage)

    with AppendLog(out / DISCARDED) as log:
        def record(conversation_id: str, outcome: str, reason: str, **extra) -> None:
            entry = {"conversation_id": conversation_id, "outcome": outcome, "reason": reason, **extra,
                     "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            log.append(entry)

        prereq = None
        if todo:
            with tqdm(total=1, desc="prerequisites", unit="goal", disable=not progress) as bar:
                try:
                    prereq = await prepare(agents, out, domain=domain, goal=goal, description=description,
                                           workflow=workflow, intents=spec.intents)
                except a.AgentFailure as error:
                    for _, conversation_id in todo:
                        record(conversation_id, "failed", str(error), agent=error.agent)
                    summary.failed += len(todo)
                    summary.failures.append(str(error))
                bar.update(1)
        if prereq is not None:
            # the LLM as the suite's record said it: a part hidden then (a secret variable's value in its address) stays
            # hidden in the new conversations, set or not now (battery 60, G6)
            llm = hidden_as_before(recorded.get("llm"), backend.describe())
            await _calls(spec, out, agents, prereq, todo, record, summary, progress, slug, llm)

    with contextlib.suppress(OSError):  # nothing written (every call failed): no empty folder is left
        conversations.rmdir()
    summary.seconds = time.perf_counter() - started
    summary.cost = cost_estimate(summary.usage, spec.price_input, spec.price_output)
    _write_info(spec, out, backend, summary, started_at, domain, goal, slug, ids)
    return summary


AUTHOR_FLAGS = {"backend": "--llm-backend", "model": "--llm-model", "temperature": "--temperature", "seed": "--seed"}


def _check_same_author(out: Path, recorded: dict, llm: dict, seed: int) -> None:
    """A suite that holds conversations is one LLM's, at one temperature and seed: generate.json names them once,
    and each new conversation's provenance says its prerequisites are by the same LLM. Going on with others added
    conversations without a word under a header that then named the new LLM (battery 58, E6)."""
    before = recorded.get("llm")
    if not isinstance(before, dict):  # a record from before the first run ended
        return
    there = {**{key: before.get(key) for key in ("backend", "model", "temperature")}, "seed": recorded.get("seed")}
    here = {**{key: llm.get(key) for key in ("backend", "model", "temperature")}, "seed": seed}
    differ = [key for key in there if there[key] is not None and there[key] != here[key]]
    if differ:
        said = ", ".join(f"{AUTHOR_FLAGS[key]} {quoted(there[key])} there but {quoted(here[key])} now"
                         for key in differ)
        raise UsageError(f"--out: {out} holds conversations generated with other settings ({said}); give those to "
                         "go on with the suite, or another --out")


async def _calls(spec, out, agents, prereq, todo, record, summary, progress, slug, llm: dict) -> None:
    from tqdm.auto import tqdm

    semaphore = asyncio.Semaphore(spec.concurrency)
    bars = {stage: tqdm(total=len(todo), desc=stage, unit="call", position=n + 1, disable=not progress)
            for n, stage in enumerate(STAGES)}
    n_intents = len(prereq["intents"])

    async def one(slot: int, conversation_id: str) -> None:
        intent_index = slot % n_intents
        intent = {k: prereq["intents"][intent_index][k] for k in ("profile", "interruption_probabilities",
                                                                  "hidden_info")}
        seed = record_seed(spec.seed, conversation_id, 0)
        usage = Usage()
        async with semaphore:
            try:
                turns = await simulate(agents, usage, prereq, intent, seed)
                bars["simulate"].update(1)
                outcome = await verify_and_fix(agents, usage, prereq, intent, conversation_id, turns,
                                               max_rounds=spec.max_fix_rounds)
                bars["verify"].update(1)
                if not outcome.passed:
                    record(conversation_id, "discarded", outcome.reason, findings=outcome.findings, seed=seed,
                           usage=usage.as_dict())
                    summary.discarded += 1
                    return
                turns = outcome.turns
                for index, turn in enumerate(turns):
                    if "interruption" in turn:
                        turn["interruption"]["baseline"] = await a.write_baseline(agents, usage, prereq, turns, index)
                bars["baselines"].update(1)
            except a.AgentFailure as error:
                record(conversation_id, "failed", str(error), agent=error.agent, seed=seed, usage=usage.as_dict())
                summary.failed += 1
                summary.failures.append(f"{conversation_id}: {error}")
                return
        provenance = _provenance(spec, llm, seed, intent_index, n_intents, usage, outcome, slug)
        document = source_document(prereq, intent, conversation_id, turns, provenance)
        problems = await asyncio.to_thread(lexical_problems, document)
        if problems:  # the baselines are the only text not yet checked; nothing `ihbench verify` refuses is written
            record(conversation_id, "failed", f"final check: {problems[0]}", agent="baseline", seed=seed,
                   usage=usage.as_dict())
            summary.failed += 1
            summary.failures.append(f"{conversation_id}: final check: {problems[0]}")
            return
        path = out / "conversations" / f"{conversation_id}.json"
        await asyncio.to_thread(write_json_atomic, path, document)
        summary.written += 1

    try:
        await asyncio.gather(*(one(slot, conversation_id) for slot, conversation_id in todo))
    finally:
        for bar in bars.values():
            bar.close()


def _provenance(spec, describe, seed, intent_index, n_intents, usage, outcome, slug) -> dict:
    checks = (f"passed the LLM verifier and the lexical checks of `ihbench verify` after {outcome.rounds} "
              f"modify round(s); {len(outcome.fixed)} finding(s) sent to the modifier")
    return {
        "author": f"ihbench generate (pipeline {PIPELINE_VERSION}, prompts {PROMPT_VERSION}, "
                  f"prompt hash {prompt_hash()})",
        "llm": _llm_line(describe),
        "seed": f"{seed} (run seed {spec.seed}; intent {intent_index + 1} of {n_intents})",
        "tokens": usage.describe(),
        "cost_estimate": _cost_text(usage, spec),
        "prerequisites": f"prerequisites/{slug}.json: knowledge base, system message and intents by the same LLM",
        "review": checks,
        "baselines": "written by the pipeline's baseline writer (same LLM), blind to the rubric: it saw only what "
                     "the evaluated model sees (system prompt, history as heard, delivered part, interruption); "
                     "`ihbench set-baseline` replaces them with a real model's responses",
    }


def _check_tokens(path: Path, tokens) -> None:
    """The suite's running token and call counts, which each run adds its own to: checked before any
    call, since a count that is no count would fail only after the run's conversations were written,
    and leave their run unrecorded (and every later run the same)."""
    from dataclasses import fields

    if tokens is None:
        return
    names = [f.name for f in fields(Usage)] + ["total_tokens"]
    if not isinstance(tokens, dict):
        raise UsageError(f"{path}: field 'tokens' must be an object of counts, got {json.dumps(tokens)[:40]}; repair "
                         "it, or move the file away to start a new history")
    for name, value in tokens.items():
        if name not in names or not isinstance(value, int) or isinstance(value, bool) or value < 0:
            what = f"is not one of {', '.join(names)}" if name not in names else f"must be a count (0 or more), got " \
                f"{json.dumps(value)[:40]}"
            raise UsageError(f"{path}: field 'tokens.{name}' {what} (edited by hand?); repair it, or move the file "
                             "away to start a new history")


def _write_info(spec, out, backend, summary, started_at, domain, goal, slug, ids) -> None:
    path = out / INFO
    previous = json.loads(path.read_text(encoding="utf-8-sig")) if path.exists() else {}  # checked at the start
    total = Usage(**{k: v for k, v in (previous.get("tokens") or {}).items() if k != "total_tokens"})
    total.merge(summary.usage)
    earlier = [r for r in previous.get("runs") or [] if isinstance(r, dict)]
    llm = hidden_as_before(previous.get("llm"), backend.describe())
    command = redact(spec.command)
    for before in earlier:  # a word an earlier run's command hid stays hidden in this one's
        command = hidden_as_before(before.get("command"), command)
    run = {
        "command": command, "started": started_at, "seconds": round(summary.seconds, 2),
        "domain": domain, "goal": goal, "workflow": str(spec.workflow) if spec.workflow else None,
        "seed": spec.seed, "intents": spec.intents, "conversations": spec.conversations,
        "llm": llm, "written": summary.written, "already_done": summary.skipped,
        "discarded": summary.discarded, "failed": summary.failed, "kept_out_discarded": summary.kept_out,
        "usage": summary.usage.as_dict(), "cost_estimate": summary.cost,
    }
    info = {
        "pipeline_version": PIPELINE_VERSION, "prompt_version": PROMPT_VERSION, "prompt_hash": prompt_hash(),
        "llm": llm, "domain": domain, "goal": goal, "prerequisites": f"prerequisites/{slug}.json",
        "seed": spec.seed, "conversation_seeds": {cid: record_seed(spec.seed, cid, 0) for cid in ids},
        "prices_per_1k_tokens": (None if spec.price_input is None else
                                 {"input": spec.price_input, "output": spec.price_output, "currency": "USD"}),
        "tokens": total.as_dict(),
        "cost_estimate": cost_estimate(total, spec.price_input, spec.price_output),
        "cost_note": "US dollars from the prices given on the command line; \"unknown\" without them",
        "runs": (previous.get("runs") or []) + [run],
    }
    write_json_atomic(path, info)  # what an earlier run hid stays hidden (G6), as in every record written again
