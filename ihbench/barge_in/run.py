"""`ihbench barge-in`: each conversation of an IHBench suite played on-policy against the model under
test, the caller cutting into the model's own sentences where the suite has its interruption points.

A round: the pipeline's planner plans it (the suite's point for the round as its seeded
suggestion); the model writes its message; on a target round the message is put on the clock
(`clock`), the cut placed (`cuts`), the caller barges in having heard only the words before the
cut (`simulator`), and the rubric and blind baseline of the point are written, all before the model
is asked for its next message, which is its recovery. Otherwise the caller answers the whole
message. The call goes on from the model's own messages until the planner ends it.

Run folder (one writer at a time, locked):
  run.json        what was run (the model's identity as `ihbench run` writes it; the simulator,
                  voices and prompt versions under "barge_in"), checked on resume; and under
                  "barge_in.caller" which conversations' callers were filled by `caller.RULES`, and how
  barge_in.jsonl  one record per round (`records.RoundRecord`); a conversation's rounds are made
                  durable together by its closing record (one fsync per conversation)

Resuming continues each conversation after its last closing record, with the call it had: a
conversation that was being played when the run was killed is played again from its start (its
partial rounds are superseded), one stopped by a failed round from that round. A conversation the
suite has changed since its rounds were played (another `records.conversation_hash`: a new
version of the suite) is played again from its start, said in one warning; the others are kept.
Until it is, its old rounds are not scored (`points`). With a
deterministic model and the simulator's answers cached, a run killed at any point and resumed
holds the rounds an uninterrupted run holds (`records.durable`).
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import IHBenchError, UsageError
from ihbench.dataset.io import AppendLog
from ihbench.dataset.load import recorded_source
from ihbench.dataset.redaction import redact
from ihbench.dataset.verify import MIN_TURNS
from ihbench.records import RECORD_FORMAT, RUN_INFO_FORMAT, RunInfo, described, read_typed
from ihbench.rundir import RunDir
from ihbench.seeds import record_seed

from .audio_clock import ALIGNED, NoSpeechInAudio, aligner, spoken_from_audio
from .clock import method, speak
from .cuts import Cut, place_cut, targets
from .points import RECORDS, as_turn
from .records import BARGE_IN_RECORD_FORMAT, RoundChecks, RoundRecord, conversation_hash, round_format, round_redone

logger = logging.getLogger("ihbench")

#: conversations played at once against a served model (`--concurrency`)
DEFAULT_CONCURRENCY = 4

BARGE_IN_VERSION = "1"


@dataclass
class BargeInSpec:
    loader: str
    model_path: str
    data: str
    out: Path
    sim_model: str
    sim_base_url: Optional[str] = None
    sim_temperature: float = 0.7
    sim_timeout: float = 300.0
    max_reasks: int = 2
    cache: Optional[Path] = None
    config: Optional[str] = None
    split: Optional[str] = None
    limit: Optional[int] = None
    concurrency: Optional[int] = None  # conversations at once (default: DEFAULT_CONCURRENCY served, 1 local)
    modality: str = "audio"
    user_voice: str = "flite:slt"
    generation: dict = field(default_factory=dict)
    seed: int = 0
    loader_options: dict = field(default_factory=dict)
    command: Optional[list[str]] = None
    allow_endpoint_change: bool = False


@dataclass
class BargeInSummary:
    out: Path
    conversations: int
    rounds: int = 0  # played by this invocation
    skipped: int = 0  # played by an earlier one
    errors: int = 0  # conversations stopped on a failed round (played again by the next run)
    placed: int = 0
    unplaced: int = 0
    sim_calls: int = 0
    seconds: float = 0.0
    at_budget: int = 0  # replies played by this run that may have been cut by --max-new-tokens


class RoundFailure(IHBenchError):
    """The model or an agent gave no usable answer: the round is recorded as an error."""


def load_suite(spec: BargeInSpec) -> list:
    from ihbench.dataset.load import load_conversations

    if spec.config not in (None, "conversations"):
        raise UsageError(f"--config: barge-in plays whole conversations (config conversations), got {spec.config!r}")
    conversations = load_conversations(spec.data, split=spec.split)
    conversations = [c for c in conversations if targets(c)]
    if spec.limit is not None:
        conversations = conversations[:spec.limit]
    if not conversations:
        raise UsageError(f"--data: {spec.data} has no conversation with an interruption point")
    return conversations


def run_barge_in(spec: BargeInSpec, *, loader=None, backend=None, progress: bool = True) -> BargeInSummary:
    """`loader`/`backend` (the model under test, the simulator's LLM) are made from the spec when not given."""
    from ihbench.loaders import GenerationConfig

    from .caller import caller

    from ihbench.dataset.tts import RenderCache

    started = time.perf_counter()
    generation = GenerationConfig(**spec.generation)
    RenderCache()  # a render cache (IHBENCH_CACHE) inside a dataset or another toolkit folder: refused first
    conversations = load_suite(spec)
    callers = {c.conversation_id: caller(c, spec.data) for c in conversations}  # refused before any file
    if spec.loader_options.get("audio_voice"):  # the model speaks: its audio is timed by the aligner
        aligner()
    if backend is None:
        from ihbench.llm import OpenAICompatibleLLM

        backend = OpenAICompatibleLLM(spec.sim_model, base_url=spec.sim_base_url, timeout=spec.sim_timeout,
                                      temperature=spec.sim_temperature)
    run_dir = RunDir(spec.out)
    with run_dir.writing():
        return asyncio.run(_run_locked(spec, run_dir, generation, conversations, callers, loader, backend,
                                       progress, started))


def _settings(spec: BargeInSpec, backend, callers: dict) -> dict:
    from ihbench.dataset.sources import ASSISTANT_VOICE
    from ihbench.dataset.tts import get_engine
    from ihbench.generate import prompts as pipeline_prompts

    from . import prompts
    from .caller import FALLBACK_VERSION

    filled = {cid: list(c.fallbacks) for cid, c in callers.items() if c.fallbacks}
    return {"version": BARGE_IN_VERSION, "simulator": redact(backend.describe()), "max_reasks": spec.max_reasks,
            "assistant_voice": ASSISTANT_VOICE, "user_voice": spec.user_voice,
            # each reply's own method is in its record
            "clock": ALIGNED if spec.loader_options.get("audio_voice") else method(get_engine(ASSISTANT_VOICE)),
            "prompts": {"pipeline": [pipeline_prompts.PROMPT_VERSION, pipeline_prompts.prompt_hash()],
                        "barge_in": [prompts.PROMPT_VERSION, prompts.prompt_hash()]},
            # the caller and planner given the suite's own knowledge base and intent, or filled by `caller.RULES`
            "caller": {"from_suite": len(callers) - len(filled), "filled": len(filled),
                       "fallback_version": FALLBACK_VERSION, "fallbacks": filled},
            "limit": spec.limit, "round_format": BARGE_IN_RECORD_FORMAT}


def _identity(settings: dict) -> dict:
    """What a resume must keep: all but --limit, how the caller was given (it depends on the conversations
    --limit takes; each conversation's own version, `records.conversation_hash`, holds its caller), and
    where the simulator is served (the same model may move to another port; the rounds it already
    played are in the records)."""
    simulator = {k: v for k, v in (settings.get("simulator") or {}).items() if k != "base_url"}
    return {**{k: v for k, v in settings.items() if k not in ("limit", "caller", "round_format")},
            "simulator": simulator}


async def _run_locked(spec, run_dir, generation, conversations, callers, loader, backend, progress, started):
    from tqdm.auto import tqdm

    from ihbench.dataset.tts import RenderCache, get_engine
    from ihbench.generate.agents import Agents
    from ihbench.llm import LLMCache, concurrently
    from ihbench.loaders import create
    from ihbench.runner import (RunConfigError, check_same_run, endpoint_identity, first_difference,
                                kept_from_first_start, options_identity, setting_said, versions)

    identity = {"loader": spec.loader, "model_path": spec.model_path, "data": recorded_source(spec.data),
                "config": spec.config,
                "split": spec.split, "modality": spec.modality, "history_audio": None,
                "generation": generation.to_dict(), "seed": spec.seed, "types": None,
                **endpoint_identity(spec.loader_options.get("base_url")),
                **options_identity(spec.loader_options), "convbench": None}
    settings = _settings(spec, backend, callers)
    hashes = {c.conversation_id: conversation_hash(c) for c in conversations}
    existing = run_dir.info() if run_dir.exists() else None
    if existing:
        check_same_run(existing, {**identity, "barge_in": settings}, run_dir.info_path, spec.allow_endpoint_change)
        before, now = _identity(existing.extra.get("barge_in") or {}), _identity(settings)
        if before != now:
            changed, there, here = first_difference("barge_in", before, now)
            raise RunConfigError(f"{run_dir.info_path} belongs to a different run: {changed} is {setting_said(there)} "
                                 f"there but {setting_said(here)} now; use another --out (or the same options to "
                                 "resume)")
    if existing:  # the round format the run began with (None: before it was kept): an older line was edited
        settings["round_format"] = round_format(existing, run_dir.info_path)
    cache = LLMCache(spec.cache) if spec.cache else LLMCache()  # a wrong --cache is refused before run.json
    passed_in = loader is not None  # a loader object from Python: --model-path is then only its label
    if loader is None:
        loader = create(spec.loader, spec.model_path, **spec.loader_options)
    loader.check_modality(spec.modality)
    if spec.modality == "audio":
        _check_clip_count(conversations, loader)
    run_dir.write_info(RunInfo(
        **{**identity, **kept_from_first_start(identity, existing)},
        epochs=1, limit=spec.limit, model=described(loader, passed_in),
        effective_generation=loader.effective_generation(generation),
        data_fingerprint=hashlib.sha256("".join(hashes.values()).encode()).hexdigest()[:16],
        n_items=len(conversations), versions=versions(), command=redact(list(spec.command or sys.argv)),
        created=existing.created if existing else time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        record_format=existing.record_format if existing else RECORD_FORMAT,
        format_version=RUN_INFO_FORMAT, extra={"barge_in": settings}))

    path = run_dir.path / RECORDS
    checks = RoundChecks(run_dir.info(), set(hashes))
    read_typed(path, RoundRecord, repair=True, redone=round_redone, oldest=settings["round_format"],
               fits=checks.fits, then=checks.then)
    latest = checks.playings.durable()
    changed = sorted({cid for (cid, _), r in latest.items() if cid in hashes and r.data_hash != hashes[cid]})
    if changed:
        logger.warning("%s: %d conversation(s) changed in the suite since they were played (%s): played again from "
                    "their start", run_dir.path, len(changed), ", ".join(changed[:5]) + (", ..." if len(changed) > 5
                                                                                     else ""))
        latest = {key: r for key, r in latest.items() if key[0] not in changed}
    renders = RenderCache()
    voices = {"assistant": get_engine(settings["assistant_voice"]), "user": get_engine(spec.user_voice)}
    summary = BargeInSummary(out=run_dir.path, conversations=len(conversations))
    # a server takes requests in parallel; a local model plays one conversation at a time (threads on one
    # model would share torch's global seed, and gain nothing on one device)
    served = getattr(loader, "runs_via", "").startswith("server")
    at_once = spec.concurrency or (DEFAULT_CONCURRENCY if served else 1)
    semaphore = asyncio.Semaphore(at_once)
    spent = []
    try:
        with AppendLog(path) as log, tqdm(total=len(conversations), unit="conversation", desc="barge-in",
                                          disable=not progress) as bar:
            async def play(c) -> None:
                async with semaphore:
                    # each conversation its own agents (one backend, one cache): its calls are logged as its own
                    agents = Agents(backend, cache, reasks=spec.max_reasks)
                    spent.append(agents.run_usage)
                    await _Player(spec, c, callers[c.conversation_id], loader, generation, agents, renders, voices,
                                  latest, log, summary, alone=at_once == 1).play()
                    bar.update(1)

            async with concurrently(play(c) for c in conversations) as finished:
                for done in finished:
                    await done
    finally:
        await backend.close()
    summary.sim_calls = sum(usage.calls for usage in spent)
    summary.seconds = time.perf_counter() - started
    return summary


def _check_clip_count(conversations: list, loader) -> None:
    """Round N hears the caller's N-1 answers so far, each as audio; the last round is the
    conversation's last (one more when a cut there gets its recovery)."""
    from ihbench.loaders.limits import check_clip_count

    longest = max(conversations, key=rounds_of)
    rounds = rounds_of(longest)
    check_clip_count(loader, rounds - 1, f"round {rounds} of {longest.conversation_id}, with the caller's answers "
                     "of every round before it, each heard", "--modality text")


def rounds_of(conversation) -> int:
    """The most rounds a conversation is played for: its turns, and a recovery after a cut in the last."""
    last = len(conversation.turns)
    return last + (1 if last in targets(conversation) else 0)


class _Player:
    """Plays one conversation round by round, from where its records end."""

    def __init__(self, spec, conversation, caller, loader, generation, agents, renders, voices, latest, log, summary,
                 alone: bool = False):
        from .conversation import Call
        from .simulator import Simulator

        self.spec, self.c, self.loader, self.generation = spec, conversation, loader, generation
        self.renders, self.voices, self.latest, self.log, self.summary = renders, voices, latest, log, summary
        self.sim = Simulator(agents, caller.prereq, caller.intent)
        self.call = Call(conversation, spec.modality, lambda text: renders.render(voices["user"], text))
        self.targets = targets(conversation)
        self.digest = conversation_hash(conversation)
        self.maximum = rounds_of(conversation)
        self.rounds = {"minimum": min(MIN_TURNS, self.maximum), "target": len(conversation.turns),
                       "maximum": self.maximum}
        self.alone = alone

    async def _blocking(self, function, *args):
        """`function(*args)`, a blocking call (the model's answer, the reply's clock), off the event loop
        while other conversations play beside this one. Played alone, there is nothing the loop could do
        meanwhile, and the hop to a thread and back costs two thread wake-ups per call, for nothing
        (issue 29's benchmark: about 0.5 ms each)."""
        if self.alone:
            return function(*args)
        return await asyncio.to_thread(function, *args)

    async def play(self) -> None:
        number, after_cut, replaying = 1, False, False
        while True:
            # once a round is played anew, the rounds kept after it answered another call: played again too
            record = None if replaying else self.latest.get((self.c.conversation_id, number))
            if record is not None and record.played:
                self.summary.skipped += 1
            else:
                replaying = True
                record = await self._round(number)
                closes = not record.played or self._last(record, number)
                if closes:
                    record = dataclasses.replace(record, closes=True)
                self.log.append(record.to_json(), durable=closes)  # the closing record syncs the rest
                self.latest[record.key] = record
                if not record.played:
                    self.summary.errors += 1
                    return
                self.summary.rounds += 1
                self.summary.at_budget += record.ended_at_budget
                self.summary.placed += record.placed
                self.summary.unplaced += record.cut is not None and not record.placed
            self.call.add(as_turn(record))
            if self._last(record, number):
                return
            number += 1

    def _last(self, record: RoundRecord, number: int) -> bool:
        return not record.placed and (record.end or number >= self.maximum)  # a cut always gets its recovery

    async def _round(self, number: int) -> RoundRecord:
        from ihbench.generate.agents import AgentFailure
        from ihbench.dataset.schema import item_id
        from ihbench.loaders.failures import used_the_budget

        from .simulator import suggestion

        seed = record_seed(self.spec.seed, item_id(self.c.conversation_id, number), 0)
        target = self.targets.get(number)
        base = {"conversation_id": self.c.conversation_id, "round": number, "seed": seed, "data_hash": self.digest,
                "target": target, "model": f"{self.spec.loader}:{self.spec.model_path}",
                "modality": self.spec.modality}
        fields: dict = {}
        try:
            plan = await self.sim.plan(self.call.turns, suggestion=suggestion(target), rounds=self.rounds,
                                       variation=seed)
            fields.update(stage=plan["stage"], plan=plan, end=plan["end"])
            model_input = self.call.model_input()
            response = await self._blocking(self.loader.generate, model_input, self.generation, seed)
            fields.update(latency_s=round(response.latency_s, 4), input_tokens=response.input_tokens,
                          output_tokens=response.output_tokens, reasoning=response.reasoning,
                          audio_turns=len(model_input.audio_clips),
                          ended_at_budget=response.error is None and used_the_budget(response,
                                                                                     self.generation.max_new_tokens))
            if response.error is not None:
                raise RoundFailure(f"the model: {response.error}")
            reply = response.text
            longest = MAX_CHARACTERS_PER_TOKEN * self.generation.max_new_tokens
            if len(reply) > longest:  # a server that ignores max_tokens: timing it word by word took hours
                raise RoundFailure(f"the model: its reply is {len(reply):,} characters long, past what "
                                   f"--max-new-tokens {self.generation.max_new_tokens} allows (at most {longest:,}; "
                                   "does the server honour max_tokens?)")
            fields["reply"] = reply
            turn = {"stage": plan["stage"], "assistant": reply}
            if target:
                try:
                    if response.audio is not None:  # it spoke: cut on its own audio's clock
                        spoken = await self._blocking(spoken_from_audio, reply, response.audio,
                                                         f"the model's own ({self.spec.model_path})")
                    else:
                        spoken = await self._blocking(speak, reply, self.voices["assistant"], self.renders)
                except UsageError as error:  # the voice made no audio of this text
                    raise RoundFailure(f"the assistant's voice: {error}") from None
                except NoSpeechInAudio as error:  # nothing of it was said: played again, never cut
                    raise RoundFailure(f"the model's audio answer: {error}") from None
                cut = place_cut(spoken, seed)
                fields.update(words=[w.to_json() for w in spoken.words], duration_s=round(spoken.duration_s, 4),
                              clock=spoken.method, cut=cut.to_json())
                if isinstance(cut, Cut):
                    said = await self.sim.interject(self.call.turns, plan, target, reply, cut.heard)
                    turn.update(delivered=cut.heard, user=said["utterance"], interruption={"type": target})
                    fields.update(user=said["utterance"], refused=said["refused"])
                    rubric = await self.sim.rubric(self.call.turns, turn)
                    turn["interruption"].update(rubric)
                    fields["rubric"] = rubric
                    fields["baseline"] = await self.sim.baseline([*self.call.turns, turn])
            if "user" not in fields:
                fields["user"] = await self.sim.reply(self.call.turns, plan, reply)
        except (AgentFailure, RoundFailure) as error:
            return _record(base, "error", fields, self.sim.take_calls(), error=str(error))
        return _record(base, "played", fields, self.sim.take_calls())


#: no token is this long: a reply longer than this many characters per --max-new-tokens was not
#: bounded by it (its time on the TTS clock grows with its length: 8,000 words took minutes)
MAX_CHARACTERS_PER_TOKEN = 16


def _record(base: dict, status: str, fields: dict, calls: list, error: Optional[str] = None) -> RoundRecord:
    from ihbench.convbench.records import utc_stamp

    return RoundRecord(**base, status=status, **fields, calls=calls, error=error, time=utc_stamp())
