"""`ihbench verify --judge-model M`: the semantic halves of the content checks (issue 28), run
after the review questions.

Per point, a correct reply is written blind from the model's context, then every criterion is
judged against it and against the agent's own continuation in the source: a criterion either
fails is ungrounded or over-strict (`reference_fails`, `blind_reply_fails`; a blind reply the
judge finds incorrect shows nothing and is set aside). Per scripted agent turn, every fact,
number, promise and step is traced to what the agent was given (`ungrounded_turn`). Per pair of
near-identical criteria with opposite baseline verdicts (the lexical rule's pairs, wording 60 %
alike, and within one call a clause 55 % alike: "lets her accept it" and "Lets her choose"), the
judge says whether the behaviour is the same (`inconsistent_verdict`). Findings take
the lexical checks' names, fields and justifications (`ihbench.dataset.checks.accepted`). Answers
go through `ask_structured` (cache, retries, one re-ask on an invalid answer); a failed ask is
reported as not checked, never as a pass.
"""
from __future__ import annotations

import asyncio
import difflib
import re
from dataclasses import dataclass, field
from itertools import combinations
from typing import Optional, Sequence

from ihbench.dataset.checks import Finding, unsettled
from ihbench.dataset.checks.consistency import inconsistent_verdicts
from ihbench.dataset.sources import SourceConversation, SourceTurn
from ihbench.loaders.failures import describe_failure, is_item_failure

from ..llm import LLMCache, TextLLM, ask_structured, concurrently, extract_json
from .content_prompts import (BLIND_SCHEMA, CONSISTENCY_SCHEMA, CRITERIA_SCHEMA, GROUNDING_SCHEMA, blind_messages,
                              consistency_messages, content_prompt_hash, criteria_messages, grounding_messages,
                              reference_continuation)
from .parse import InvalidJudgment

#: criteria this alike (word sequence), with opposite verdicts, are asked about; within one call,
#: criteria with a clause this alike too ("lets her accept it" and "Lets her choose")
CANDIDATE_SIMILARITY = 0.6
CLAUSE_SIMILARITY = 0.55
_CLAUSE = re.compile(r",|;|:|\band\b|\bthen\b|\bwithout\b|\brather than\b|\binstead of\b")


def _clauses(text: str) -> list[list[str]]:
    """A criterion's clauses of three words or more, as words."""
    return [words for words in (re.findall(r"[a-z0-9']+", c.lower()) for c in _CLAUSE.split(text)) if len(words) >= 3]


def _alike(a: list[str], b: list[str], threshold: float) -> bool:
    if 2 * min(len(a), len(b)) < threshold * (len(a) + len(b)):
        return False  # too different in length (difflib's real_quick_ratio, without the object)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= threshold
_PROBLEMS = ("none", "ungrounded", "over_strict")


def _reason(entry, where: str) -> str:
    reason = entry.get("reason") if isinstance(entry, dict) else None
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidJudgment(f"{where}: the reason is missing")
    return reason.strip()


def _bool(entry, key: str, where: str) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get(key), bool):
        raise InvalidJudgment(f"{where}: {key} must be true or false")
    return entry[key]


def parse_blind(text: str) -> str:
    reply = extract_json(text).get("reply")
    if not isinstance(reply, str) or not reply.strip():
        raise InvalidJudgment("reply: expected the agent's next reply as a non-empty string")
    return reply.strip()


def criteria_parser(count: int):
    """The parser of a criteria answer for a point with `count` RQ criteria."""
    def parse(text: str) -> dict:
        data = extract_json(text)
        blind = data.get("blind_correct")
        answer = {"blind_correct": _bool(blind, "correct", "blind_correct"),
                  "blind_reason": _reason(blind, "blind_correct")}
        rq = data.get("rq")
        if not isinstance(rq, list) or len(rq) != count:
            raise InvalidJudgment(f"rq: expected {count} entries, one per recovery criterion")
        entries = [("tf", data.get("tf"))] + list(enumerate(rq))
        answer["criteria"] = []
        for criterion, entry in entries:
            where = "tf" if criterion == "tf" else f"rq[{criterion}]"
            problem = entry.get("problem") if isinstance(entry, dict) else None
            if problem not in _PROBLEMS:
                raise InvalidJudgment(f"{where}: problem must be one of {', '.join(_PROBLEMS)}")
            answer["criteria"].append({
                "criterion": criterion, "reference_met": _bool(entry, "reference_met", where),
                "blind_met": True if criterion == "tf" else _bool(entry, "blind_met", where),
                "problem": problem, "reason": _reason(entry, where)})
        return answer
    return parse


def parse_grounding(text: str) -> list[dict]:
    problems = extract_json(text).get("problems")
    if not isinstance(problems, list):
        raise InvalidJudgment("problems: expected a list (empty when the message is grounded)")
    found = []
    for n, entry in enumerate(problems):
        claim = entry.get("claim") if isinstance(entry, dict) else None
        if not isinstance(claim, str) or not claim.strip():
            raise InvalidJudgment(f"problems[{n}]: claim must quote the message's words")
        found.append({"claim": claim.strip(), "kind": str(entry.get("kind", "fact")),
                      "reason": _reason(entry, f"problems[{n}]")})
    return found


def parse_consistency(text: str) -> dict:
    data = extract_json(text)
    return {"inconsistent": _bool(data, "inconsistent", "answer"), "reason": _reason(data, "answer")}


@dataclass
class ContentReport:
    findings: list[tuple[SourceConversation, Finding]] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)  # "conversation: turn N: what (error)"
    asked: dict = field(default_factory=lambda: {"points": 0, "turns": 0, "pairs": 0})


def criterion_findings(conversation: SourceConversation, turn: SourceTurn, answer: dict) -> list[Finding]:
    """A criterion the reference continuation fails, or the blind reply (if correct) fails."""
    found = []
    for entry in answer["criteria"]:
        criterion = entry["criterion"]
        field_name = (f"turns[{turn.index}].interruption.tf_rubric" if criterion == "tf"
                      else f"turns[{turn.index}].interruption.rq_rubrics[{criterion}]")
        label = {"none": "failed", "ungrounded": "ungrounded", "over_strict": "over-strict"}[entry["problem"]]
        if not entry["reference_met"] and reference_continuation(conversation, turn) is not None:
            found.append(Finding("reference_fails", turn, field_name,
                                 f"{label}: the agent's own continuation (turn {turn.number + 1}) fails it: "
                                 f"{entry['reason']}", criterion=criterion))
        if not entry["blind_met"] and answer["blind_correct"]:
            found.append(Finding("blind_reply_fails", turn, field_name,
                                 f"{label}: a correct reply written blind from the model's context fails it: "
                                 f"{entry['reason']}", criterion=criterion))
    return found


def candidate_pairs(conversations: Sequence[SourceConversation]) -> list[tuple]:
    """Pairs of (conversation, turn, criterion) with opposite verdicts worth a reader's look: the
    lexical rule's pairs, criteria whose wording is 60 % alike, and within one call criteria with a
    clause 55 % alike."""
    entries = [(c, t, k) for c in sorted(conversations, key=lambda c: c.path.name) for t in c.interrupted_turns
               for k in range(min(len(t.interruption.rq_rubrics), len(t.interruption.baseline_rq_verdicts or [])))]
    words = {id(e): re.findall(r"[a-z0-9]+", e[1].interruption.rq_rubrics[e[2]].lower()) for e in entries}
    pairs = {(id(f.partner[1]), f.partner[2], id(f.turn), f.criterion): (f.partner, (c, f.turn, f.criterion))
             for c, f in inconsistent_verdicts(list(conversations))}
    for first, second in combinations(entries, 2):
        if first[1].interruption.baseline_rq_verdicts[first[2]].met == \
                second[1].interruption.baseline_rq_verdicts[second[2]].met:
            continue
        same_call = first[0] is second[0] and first[1] is not second[1]
        if _alike(words[id(first)], words[id(second)], CANDIDATE_SIMILARITY) or same_call and any(
                _alike(a, b, CLAUSE_SIMILARITY) for a in _clauses(first[1].interruption.rq_rubrics[first[2]])
                for b in _clauses(second[1].interruption.rq_rubrics[second[2]])):
            pairs.setdefault((id(first[1]), first[2], id(second[1]), second[2]), (first, second))
    return list(pairs.values())


async def check_content(conversations: Sequence[SourceConversation], backend: TextLLM, *, concurrency: int = 8,
                        cache: Optional[LLMCache] = None, progress: bool = True) -> ContentReport:
    from tqdm.auto import tqdm

    from ihbench.dataset.argtypes import concurrency as in_flight

    in_flight().check("--concurrency", concurrency)
    cache = cache or LLMCache()
    semaphore = asyncio.Semaphore(concurrency)
    report = ContentReport()
    prompt_hash = content_prompt_hash()

    async def ask(messages, name, schema, parse):
        async with semaphore:
            answer = await ask_structured(backend, messages, schema_name=name, schema=schema, parse=parse, cache=cache,
                                          prompt_hash=prompt_hash, task=f"verify-{name}", invalid=InvalidJudgment)
        return answer.value

    async def guarded(conversation, turn, what, job):
        try:
            return conversation, await job()
        except Exception as error:
            if not is_item_failure(error):
                raise
            report.not_checked.append(f"{conversation.conversation_id}: turn {turn.number}: {what} not checked "
                                      f"({describe_failure(error)})")
            return conversation, []

    def point(conversation, turn):
        async def job():
            blind = await ask(blind_messages(conversation, turn), "blind_reply", BLIND_SCHEMA, parse_blind)
            answer = await ask(criteria_messages(conversation, turn, blind), "criterion_check", CRITERIA_SCHEMA,
                               criteria_parser(len(turn.interruption.rq_rubrics)))
            return criterion_findings(conversation, turn, answer)
        return guarded(conversation, turn, "criteria", job)

    def agent_turn(conversation, turn):
        async def job():
            problems = await ask(grounding_messages(conversation, turn), "turn_grounding", GROUNDING_SCHEMA,
                                 parse_grounding)
            return [Finding("ungrounded_turn", turn, f"turns[{turn.index}].assistant",
                            f"{p['kind']}: {p['claim']!r}: {p['reason']}", text=p["claim"]) for p in problems]
        return guarded(conversation, turn, "agent turn", job)

    def pair(first, second):
        async def job():
            answer = await ask(consistency_messages(first, second), "verdict_consistency", CONSISTENCY_SCHEMA,
                               parse_consistency)
            if not answer["inconsistent"]:
                return []
            c, turn, index = first
            return [Finding("inconsistent_verdict", second[1],
                            f"turns[{second[1].index}].interruption.baseline_rq_verdicts[{second[2]}]",
                            f"judged differently from {c.path.name} turn {turn.number} rq_rubrics[{index}] for the same "
                            f"behaviour: {answer['reason']}", criterion=second[2], partner=first)]
        return guarded(second[0], second[1], "verdict consistency", job)

    jobs = [point(c, t) for c in conversations for t in c.interrupted_turns]
    report.asked["points"] = len(jobs)
    turns = [agent_turn(c, t) for c in conversations for t in c.turns]
    report.asked["turns"] = len(turns)
    pairs = [pair(a, b) for a, b in candidate_pairs(conversations)]
    report.asked["pairs"] = len(pairs)
    with tqdm(total=len(jobs) + len(turns) + len(pairs), unit="check", desc=f"content checks with {backend.model}",
              disable=not progress) as bar:
        async with concurrently(jobs + turns + pairs) as completed:
            for future in completed:
                conversation, findings = await future
                report.findings += [(conversation, f) for f in unsettled(conversation, findings)]
                bar.update(1)
    report.findings.sort(key=lambda cf: (cf[0].path.name, cf[1].turn.index, cf[1].field, cf[1].check))
    report.not_checked.sort()
    return report
