"""The one reader of the official wide schema (one row per conversation, columns per turn).

The official `bosonai/IHBench` data and the in-house build share this layout, so both become
`EvalItem`s here and nowhere else.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Optional

from .errors import IHBenchError
from .schema import (
    AudioClip,
    EvalItem,
    Interrupted,
    Message,
    Rubric,
    Utterance,
    canonical_interruption_type,
    item_id,
)


class SchemaError(IHBenchError, ValueError):
    """The data does not follow the IHBench wide schema; the message names source, row and column."""


def domain_name(domain: Any) -> str:
    """The official `domain` is a struct; its name field is what reports group by."""
    if isinstance(domain, Mapping):
        for key in ("name", "domain", "id"):
            if isinstance(domain.get(key), str):
                return domain[key]
        strings = [v for v in domain.values() if isinstance(v, str)]
        if strings:
            return strings[0]
        raise SchemaError(f"domain struct has no name field: {dict(domain)!r}")
    if isinstance(domain, str):
        return domain
    raise SchemaError(f"domain must be a struct or a string, got {type(domain).__name__}")


def _clip(value: Any, where: Optional[str] = None) -> Optional[AudioClip]:
    """`where`: the cell it was read from, named by any error about its audio."""
    if value is None:
        return None
    if isinstance(value, AudioClip):
        return value
    if isinstance(value, Mapping):
        if value.get("bytes") is None and value.get("path") is None:
            return None
        return AudioClip(bytes=value.get("bytes"), path=value.get("path"), where=where)
    raise SchemaError(f"audio value must be a {{bytes, path}} struct, got {type(value).__name__}")


class _Row:
    """Column access that names the source, the conversation and the column in every error."""

    def __init__(self, row: Mapping[str, Any], source: str, index: int):
        self.row = row
        self.source = source
        self.label = f"{source}: row {index}"
        if row.get("conversation_id"):
            self.label += f" (conversation {row['conversation_id']})"

    def error(self, column: str, problem: str) -> SchemaError:
        return SchemaError(f"{self.label}: column {column!r} {problem}")

    def clip(self, column: str) -> Optional[AudioClip]:
        """The audio of an optional audio column, labelled with this row and column."""
        return _clip(self.get(column, required=False, kind=None), f"{self.label}: column {column!r}")

    def words(self, column: str, why: str) -> str:
        """A text that must say something (`why`: what it is for): the words of an interruption or its
        rubric, an id. Empty or blank, the point would be answered, judged and scored as if it had them."""
        value = self.get(column)
        if not value.strip():
            raise self.error(column, f"is empty {why}")
        return value

    def criteria(self, column: str) -> list[str]:
        """RQ criteria: a point judged against none, or against a blank one, passes or fails on nothing."""
        rq = self.get(column, kind=(list, tuple))
        if not rq or not all(isinstance(c, str) and c.strip() for c in rq):
            raise self.error(column, "must be a non-empty list of non-empty strings")
        return list(rq)

    def get(self, column: str, *, required: bool = True, kind: type | tuple = str) -> Any:
        if column not in self.row:
            if required:
                raise self.error(column, "is missing")
            return None
        value = self.row[column]
        if value is None:
            if required:
                raise self.error(column, "is null")
            return None
        if kind is not None and not isinstance(value, kind):
            raise self.error(column, f"must be {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class WideTurn:
    """One assistant message and the user message after it, as the wide row stores them."""

    number: int  # 1-based, as in the column names
    heard: str  # assistant_turn_N_transcript: truncated where the user cut in
    original: str
    user_text: str
    user_audio: Optional[AudioClip]
    assistant_audio: Optional[AudioClip]  # in-house only
    interruption_type: Optional[str]
    rubric: Optional[Rubric]


@dataclass(frozen=True)
class WideConversation:
    conversation_id: str
    domain: str
    goal: str
    system_prompt: str
    turns: list[WideTurn]
    #: the ground truth behind the call (in-house and generated suites; None where a row has no such
    #: column): what an on-policy run's user simulator plays (`ihbench barge-in`)
    knowledge_base: Optional[dict] = None
    user_intent: Optional[dict] = None
    domain_description: Optional[str] = None


def conversations_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "<dataset>") -> list[WideConversation]:
    """Parse and check each wide row once; ids must be unique across rows."""
    conversations: list[WideConversation] = []
    seen: set[str] = set()
    for index, raw in enumerate(rows):
        row = _Row(raw, source, index)
        conversation = _parse_row(row)
        if conversation.conversation_id in seen:
            raise row.error("conversation_id", f"repeats {conversation.conversation_id!r}")
        seen.add(conversation.conversation_id)
        conversations.append(conversation)
    return conversations


def items_from_conversation_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    baselines: Optional[Mapping[tuple[str, int], str]] = None,
    source: str = "<dataset>",
) -> list[EvalItem]:
    """Every interruption point of every row, in row order then turn order."""
    items: list[EvalItem] = []
    for conversation in conversations_from_rows(rows, source=source):
        items.extend(items_from_conversation(conversation, baselines or {}))
    return items


def items_from_conversation(conversation: WideConversation, baselines: Mapping[tuple[str, int], "Baseline"]) -> list[EvalItem]:
    c = conversation
    history: list[Message] = []
    items: list[EvalItem] = []
    for turn in c.turns:
        if turn.interruption_type is not None:
            items.append(
                EvalItem(
                    id=item_id(c.conversation_id, turn.number),
                    conversation_id=c.conversation_id,
                    domain=c.domain,
                    goal=c.goal,
                    interruption_type=turn.interruption_type,
                    turn=turn.number,
                    depth=turn.number - 1,
                    system_prompt=c.system_prompt,
                    history=list(history),
                    interrupted=Interrupted(original=turn.original, delivered=turn.heard, audio=turn.assistant_audio),
                    interruption=Utterance(transcript=turn.user_text, audio=turn.user_audio),
                    rubric=turn.rubric,
                    baseline=baselines[(c.conversation_id, turn.number)].text
                    if (c.conversation_id, turn.number) in baselines else None,
                    baseline_rq=baselines[(c.conversation_id, turn.number)].rq_verdicts
                    if (c.conversation_id, turn.number) in baselines else None,
                )
            )
        history.append(Message("assistant", turn.heard))
        history.append(Message("user", turn.user_text, turn.user_audio))
    return items


def _parse_row(row: _Row) -> WideConversation:
    conversation_id = row.words("conversation_id", "(every point's id begins with it)")
    num_turns = row.get("num_turns", kind=int)
    if num_turns < 1:
        raise row.error("num_turns", f"must be >= 1, got {num_turns}")
    turns = []
    for n in range(1, num_turns + 1):
        raw_type = row.get(f"user_turn_{n}_interruption_type", required=False)
        try:
            kind = canonical_interruption_type(raw_type)
        except ValueError as error:
            raise row.error(f"user_turn_{n}_interruption_type", str(error)) from None
        rubric = None
        if kind is not None:
            tf = row.words(f"turn_{n}_tf_rubric", "on an interruption turn")
            row.words(f"user_turn_{n}_transcript", "on an interruption turn (the words the model recovers from)")
            rubric = Rubric(tf=tf, rq=row.criteria(f"turn_{n}_rq_rubrics"))
        turns.append(
            WideTurn(
                number=n,
                heard=row.get(f"assistant_turn_{n}_transcript"),
                original=row.get(f"assistant_turn_{n}_original"),
                user_text=row.get(f"user_turn_{n}_transcript"),
                user_audio=row.clip(f"user_turn_{n}_audio"),
                assistant_audio=row.clip(f"assistant_turn_{n}_audio"),
                interruption_type=kind,
                rubric=rubric,
            )
        )
    domain = row.get("domain", kind=None)
    return WideConversation(
        conversation_id=conversation_id,
        domain=domain_name(domain),
        goal=row.get("goal"),
        system_prompt=row.get("system_message"),
        turns=turns,
        knowledge_base=_mapping(row.get("knowledge_base", required=False, kind=None)),
        user_intent=_mapping(row.get("user_intent", required=False, kind=None)),
        domain_description=domain.get("description") if isinstance(domain, Mapping) else None,
    )


def _mapping(value: Any) -> Optional[dict]:
    """A struct column as a plain dict; any other shape (another schema's JSON text, say) is left
    out rather than refused: no reader of interruption points needs it."""
    return dict(value) if isinstance(value, Mapping) else None


class Baseline(NamedTuple):
    text: str
    rq_verdicts: Optional[list[bool]] = None


def baselines_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "<baseline>") -> dict[tuple[str, int], Baseline]:
    """Baseline responses (and, in the in-house build, their RQ verdicts) keyed by (conversation_id, turn).

    Accepts the wide layout the in-house build writes (`turn_N_baseline_response`, one row per
    conversation) and a long layout (`conversation_id`, `turn`, `baseline_response` or
    `response`), so a baseline produced by any pipeline can be attached.
    """
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise SchemaError(f"{source}: baseline rows must be rows (dicts), a Dataset or a list, got "
                          f"{type(rows).__name__}")
    result: dict[tuple[str, int], str] = {}
    seen_columns, count = False, 0

    def keep(key, baseline, row, column) -> None:  # one baseline per point: a second, different one is refused
        if key in result and result[key].text != baseline.text:
            raise row.error(column, f"a second, different baseline for {key[0]} turn {key[1]}")
        result[key] = baseline

    for index, raw in enumerate(rows):
        count += 1
        row = _Row(raw, source, index)
        conversation_id = row.get("conversation_id")
        if "turn" in raw:
            turn = row.get("turn", kind=int)
            column = "baseline_response" if "baseline_response" in raw else "response"
            seen_columns = seen_columns or column in raw
            text = row.get(column, required=False)
            if text is not None:
                keep((conversation_id, turn), Baseline(text), row, column)
            continue
        for column, value in raw.items():
            seen_columns = seen_columns or bool(re.fullmatch(r"turn_(\d+)_baseline(?:_response)?", column))
            match = re.fullmatch(r"turn_(\d+)_baseline(?:_response)?", column)
            if match and value is not None:
                if not isinstance(value, str):
                    raise row.error(column, f"must be str, got {type(value).__name__}")
                number = int(match.group(1))
                verdicts = raw.get(f"turn_{number}_baseline_rq_verdicts")
                if verdicts is not None and not all(isinstance(v, bool) for v in verdicts):
                    raise row.error(f"turn_{number}_baseline_rq_verdicts", "must be a list of true/false")
                keep((conversation_id, number), Baseline(value, list(verdicts) if verdicts is not None else None), row,
                     column)
    if count and not seen_columns:  # the conversations config given by mistake
        raise SchemaError(f"{source}: no baseline column (turn_N_baseline_response, or baseline_response with turn); "
                          "these rows are not baselines")
    return result
