"""The long layout (`interruptions` config): one row per interruption point, context included.

Written from `EvalItem`s by the build and read back into the same `EvalItem`s, so a user can run
on either config and get identical items.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from .schema import EvalItem, Interrupted, Message, Rubric, Utterance, canonical_interruption_type
from .wide import SchemaError, _clip, _Row

INTERRUPTIONS_CONFIG = "interruptions"


def interruption_row(item: EvalItem) -> dict:
    return {
        "id": item.id,
        "conversation_id": item.conversation_id,
        "domain": item.domain,
        "goal": item.goal,
        "interruption_type": item.interruption_type,
        "turn": item.turn,
        "depth": item.depth,
        "depth_bin": item.depth_bin,
        "system_prompt": item.system_prompt,
        "history": [{"role": m.role, "text": m.text, "audio": m.audio.to_hf() if m.audio else None}
                    for m in item.history],
        "interrupted_original": item.interrupted.original,
        "interrupted_delivered": item.interrupted.delivered,
        "interrupted_audio": item.interrupted.audio.to_hf() if item.interrupted.audio else None,
        "interruption_transcript": item.interruption.transcript,
        "interruption_audio": item.interruption.audio.to_hf() if item.interruption.audio else None,
        "tf_rubric": item.rubric.tf,
        "rq_rubrics": list(item.rubric.rq),
        "baseline_response": item.baseline,
        "baseline_rq_verdicts": item.baseline_rq,
    }


def items_from_interruption_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "<dataset>") -> list[EvalItem]:
    items = []
    rows_of: dict[str, int] = {}  # a point's id names one point: two answered under one id, one was lost
    for index, raw in enumerate(rows):
        row = _Row(raw, source, index)
        point = row.words("id", "(a point is found by it)")
        if point in rows_of:
            raise row.error("id", f"repeats {point!r} (also row {rows_of[point]}); each point's id is its own")
        rows_of[point] = index
        try:
            kind = canonical_interruption_type(row.get("interruption_type"))
        except ValueError as error:
            raise row.error("interruption_type", str(error)) from None
        history = []
        for position, message in enumerate(row.get("history", kind=list)):
            if message.get("role") not in ("user", "assistant") or not isinstance(message.get("text"), str):
                raise row.error(f"history[{position}]", "needs role 'user' or 'assistant' and a text")
            history.append(Message(message["role"], message["text"],
                                   _clip(message.get("audio"), f"{row.label}: column 'history[{position}].audio'")))
        items.append(
            EvalItem(
                id=point,
                conversation_id=row.words("conversation_id", "(every point's id begins with it)"),
                domain=row.get("domain"),
                goal=row.get("goal"),
                interruption_type=kind,
                turn=row.get("turn", kind=int),
                depth=row.get("depth", kind=int),
                system_prompt=row.get("system_prompt"),
                history=history,
                interrupted=Interrupted(
                    original=row.get("interrupted_original"),
                    delivered=row.get("interrupted_delivered"),
                    audio=row.clip("interrupted_audio"),
                ),
                interruption=Utterance(
                    transcript=row.words("interruption_transcript", "(the words the model recovers from)"),
                    audio=row.clip("interruption_audio"),
                ),
                rubric=Rubric(tf=row.words("tf_rubric", "(what the recovery must do)"), rq=row.criteria("rq_rubrics")),
                baseline=row.get("baseline_response", required=False),
                baseline_rq=row.get("baseline_rq_verdicts", required=False, kind=None),
            )
        )
    if not items:
        raise SchemaError(f"{source}: no interruption points")
    return items
