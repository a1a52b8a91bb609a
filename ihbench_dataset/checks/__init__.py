"""Content checks of the conversation sources, beyond shapes and words: criteria a correct reply
can pass, agent turns grounded in what the agent was given, verdicts consistent across points.

Each check returns `Finding`s; a reader settles a false alarm with a justification recorded in the
file (`accepted.py`, FORMAT.md). `ihbench verify` runs the lexical checks here; the judge's
semantic versions live in `ihbench.judge` and share the findings' names and justifications.
"""
from __future__ import annotations

from ..sources import SourceConversation
from .accepted import CHECKS, Finding, invalid_justifications, justification, unsettled
from .consistency import inconsistent_verdicts
from .criteria import quotes_unheard, restates_heard
from .grounding import Known, given_texts, said_before, unsupported_numbers

__all__ = ["CHECKS", "Finding", "content_findings", "inconsistent_verdicts", "invalid_justifications",
           "justification", "unsettled", "Known", "given_texts", "said_before"]


def content_findings(conversation: SourceConversation) -> list[Finding]:
    """The lexical findings of one conversation that no justification recorded in it settles
    (the cross-conversation one, `inconsistent_verdicts`, runs over a whole set)."""
    found: list[Finding] = []
    for turn in conversation.turns:
        for words in dict.fromkeys(unsupported_numbers(conversation, turn)):
            found.append(Finding("unsupported_number", turn, f"turns[{turn.index}].assistant",
                                 f"says {words!r}, a number found nowhere the agent could have it from (system "
                                 "prompt, knowledge base, earlier turns); use the knowledge base's value or record "
                                 "why it is grounded (arithmetic on known facts)", text=words))
        if turn.interruption is not None and turn.assistant.startswith(turn.delivered):
            found += quotes_unheard(conversation, turn) + restates_heard(conversation, turn)
    return unsettled(conversation, found)
