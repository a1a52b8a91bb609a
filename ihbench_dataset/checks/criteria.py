"""Lexical checks of a point's RQ criteria: the two ways a criterion fails a correct reply that
words alone can show.

- `quotes_unheard`: the criterion quotes words of the interrupted message's unheard part whose
  content is nowhere in what the model under test sees (its system prompt, the call as heard, the
  delivered part, the interruption). The model never sees the planned message, so it cannot be
  held to saying them ("Continues with 'collect anything sensitive later'"). A quote whose content
  the model does have (a number in the system prompt, "the address on file") is not flagged: the
  criterion then asks for a fact the model can give, in whatever words. Content: numbers (compared
  as values; the number a quote cuts into counts whole: "nine percent" after "six point four" is
  6.49), written identifiers ("QX-4402", compared as written) and distinctive words (long words,
  names), compared as stems.
- `restates_heard`: the criterion demands a number (amount, date, time, count with a unit) that
  the caller has already heard from the agent at least twice (in earlier agent turns as heard, the
  delivered part counting as one), and that the caller's interruption did not bring up. A correct,
  concise reply may leave it out; a criterion that requires it a third time fails that reply
  (readers flagged "the August twentieth due date" in a recap). Once heard is not enough to flag:
  a confirmation or a recap legitimately says a fact again. A number in a clause that does not
  demand it is not flagged: after "not", "without", "instead of", "rather than", "at most", "may",
  "or", "if", "such as", "for example", "any" in the same clause (up to the last , ; : or "("), or
  inside parentheses (an aside or an example: "(the ninth may be said again or not)").

The TF rubric is not checked here: it describes the ideal reply for a pairwise comparison with the
baseline, and may name what the plan said; the judge's criterion check reads it.
"""
from __future__ import annotations

import re

from ..sources import SourceConversation, SourceTurn
from .accepted import Finding
from .grounding import Known, traced
from .numbers import quantities
from .words import distinctive, stem, stems

QUOTE = re.compile(r"""(?<![A-Za-z])'([^']{3,}?)'(?![A-Za-z])|"([^"]{3,}?)"|“([^”]{3,}?)”|‘([^’]{3,}?)’(?![A-Za-z])""")
NOT_DEMANDED = re.compile(r"\b(?:not|no|never|without|instead of|rather than|at most|avoid\w*|nor|may|optional\w*|"
                          r"if|or|such as|for example|e\.g|any)\b", re.IGNORECASE)
TIMES_HEARD = 2


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("’", "'")))


def model_context(conversation: SourceConversation, turn: SourceTurn) -> list[str]:
    """Everything the model under test is given at this point, as texts."""
    heard = [text for t in conversation.turns[: turn.index] for text in (t.heard, t.user)]
    return [conversation.system_message, *heard, turn.delivered, turn.user]


def _field(turn: SourceTurn, index: int) -> str:
    return f"turns[{turn.index}].interruption.rq_rubrics[{index}]"


#: a written identifier: letters and digits in one token ("QX-4402", "4C"), which the number
#: comparison leaves out (`grounding.traced`) and the word comparison cuts apart
IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")


def quotes_unheard(conversation: SourceConversation, turn: SourceTurn) -> list[Finding]:
    rest = turn.assistant[len(turn.delivered):]
    if not turn.assistant.startswith(turn.delivered) or not rest.strip():
        return []  # the cut check reports it
    context = model_context(conversation, turn)
    known_words, known_numbers = set().union(*map(stems, context)), Known(*context)
    known_text = " ".join(context).lower()
    rest_start = len(turn.delivered)
    findings = []
    for index, criterion in enumerate(turn.interruption.rq_rubrics):
        for match in QUOTE.finditer(criterion):
            quote = next(group for group in match.groups() if group)
            wanted = _normal(quote)
            if not wanted or wanted not in _normal(rest) or wanted in _normal(turn.delivered):
                continue
            missing = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", quote)
                       if distinctive(w, sentence_start=True) and not quantities(w) and stem(w) not in known_words]
            missing += [code for code in IDENTIFIER.findall(quote) if code.lower() not in known_text]
            at = turn.assistant.lower().find(quote.lower().strip(" .…"), rest_start)
            if at >= 0:  # the numbers the quote is part of, whole ("six point four | nine percent")
                end = at + len(quote)
                missing += [turn.assistant[q.start:q.end] for q in quantities(turn.assistant)
                            if q.end > at and q.start < end and traced(q, turn.assistant) and not known_numbers.has(q)]
            if missing:
                findings.append(Finding(
                    "quotes_unheard", turn, _field(turn, index),
                    f"quotes {quote!r} from the unheard part of the interrupted message, and the model's context "
                    f"(system prompt, the call as heard, the interruption) does not hold {', '.join(map(repr, missing))}: "
                    "the model never sees the planned message; ask for what it can know, in any words",
                    criterion=index))
    return findings


def restates_heard(conversation: SourceConversation, turn: SourceTurn) -> list[Finding]:
    heard = [(t.number, Known(t.heard, parts=False)) for t in conversation.turns[: turn.index]]
    heard.append((turn.number, Known(turn.delivered, parts=False)))
    raised = Known(turn.user)
    findings = []
    for index, criterion in enumerate(turn.interruption.rq_rubrics):
        for q in quantities(criterion):
            clause = re.split(r"[.;:,(]", criterion[: q.start])[-1]
            aside = criterion[: q.start].count("(") > criterion[: q.start].count(")")
            if not traced(q, criterion) or raised.has(q) or aside or NOT_DEMANDED.search(clause):
                continue
            turns = [number for number, known in heard if known.has(q)]
            if len(turns) >= TIMES_HEARD:
                said = criterion[q.start:q.end]
                findings.append(Finding(
                    "restates_heard", turn, _field(turn, index),
                    f"demands {said!r}, which the caller already heard from the agent in turns "
                    f"{', '.join(map(str, turns))}: a correct reply may leave it out; make it optional or record "
                    "why it must be said again", criterion=index))
                break  # one finding per criterion
    return findings
