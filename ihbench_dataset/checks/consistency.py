"""Consistency of the recorded baseline verdicts across points: the same behaviour judged by the
same criterion gets the same verdict. Readers found it broken (one baseline passed as "a few short
sentences" with five; "I'll book that" passed in one call and failed in another against the same
wording). Two rules words can apply without a reader:

- length: RQ criteria that bound the whole reply in sentences ("Keeps the reply to a sentence or
  two", "Wraps up in a few sentences") are one rule across the set (a bound on one part, "States in
  a sentence or two that ...", is not: the rest of the reply may be longer). A baseline of n sentences that passed such a criterion and another of
  at most n sentences that failed the same bound are judged differently (the failure may have
  another reason, which a justification records);
- wording: RQ criteria with near-identical wording (the same words in the same order, 90 % or
  more, numbers and names included) whose verdicts disagree are listed, so a reader confirms that
  the baselines really differ in what the criterion asks and says so in a justification.

A finding is reported at the later of the two points (file name, then turn) and names the other;
a justification at either point settles it.
"""
from __future__ import annotations

import difflib
import re
from functools import lru_cache
from itertools import combinations

from ..sources import SourceConversation, SourceTurn
from .accepted import Finding

SIMILAR = 0.9
_BOUNDS = {  # the length a criterion allows, by the words that say it
    "one or two sentences": re.compile(r"\b(?:a|one) sentence or two\b|\bone or two (?:short )?sentences\b|"
                                       r"\btwo (?:short )?sentences\b", re.IGNORECASE),
    "one sentence": re.compile(r"\b(?:a|one) (?:single |short )?sentence\b(?! or)", re.IGNORECASE),
    "a few sentences": re.compile(r"\ba few (?:short )?sentences\b", re.IGNORECASE),
}
#: the bound is on the whole reply: "Keeps the reply to", "Keeps it to", "Wraps up in", "Closes in"
_WHOLE_REPLY = re.compile(r"^\s*(?:keeps (?:the |its |his |her )?(?:reply|response|answer|it)\b|wraps up\b|closes\b)",
                          re.IGNORECASE)
# a full stop that ends no sentence: initials, titles, "a.m.", decimals, "P.O."
_NOT_AN_END = re.compile(r"(?:^|[\s.])(?:[A-Za-z]\.){1,3}$|\b(?:Mr|Mrs|Ms|Dr|St|Ave|Inc|No|vs|etc)\.$")


def sentences(text: str) -> int:
    """Sentences in a spoken reply: ends at . ? ! (and …) followed by a space or the end."""
    count, start = 0, 0
    for match in re.finditer(r"[.?!…]+(?=\s|$)", text):
        piece = text[start:match.end()]
        if match.group(0) == "." and _NOT_AN_END.search(piece):
            continue
        if re.search(r"[A-Za-z0-9]", piece):
            count += 1
        start = match.end()
    return count + bool(re.search(r"[A-Za-z0-9]", text[start:]))


@lru_cache(maxsize=None)
def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9]+", text.lower()))


def _criteria(conversations: list[SourceConversation]):
    for c in sorted(conversations, key=lambda c: c.path.name):
        for turn in c.interrupted_turns:
            verdicts = turn.interruption.baseline_rq_verdicts or []
            for index, (criterion, verdict) in enumerate(zip(turn.interruption.rq_rubrics, verdicts)):
                yield c, turn, index, criterion, verdict


def _where(c: SourceConversation, turn: SourceTurn, index: int) -> str:
    return f"{c.path.name} turn {turn.number} rq_rubrics[{index}]"


def inconsistent_verdicts(conversations: list[SourceConversation]) -> list[tuple[SourceConversation, Finding]]:
    """(conversation, finding) for each pair of points judged differently by the same rule."""
    entries = list(_criteria(conversations))
    found = []

    def report(first, second, message):
        c, turn, index = second[0], second[1], second[2]
        field = f"turns[{turn.index}].interruption.baseline_rq_verdicts[{index}]"
        found.append((c, Finding("inconsistent_verdict", turn, field, message, criterion=index,
                                 partner=(first[0], first[1], first[2]))))

    def bound(text):
        return next((name for name, pattern in _BOUNDS.items() if pattern.search(text)), None) \
            if _WHOLE_REPLY.match(text) else None

    bounds = [bound(entry[3]) for entry in entries]
    for (i, first), (j, second) in combinations(enumerate(entries), 2):
        (_, _, _, text_a, verdict_a), (_, _, _, text_b, verdict_b) = first, second
        if verdict_a.met == verdict_b.met:
            continue
        if bounds[i] and bounds[i] == bounds[j]:
            passed, failed = (first, second) if verdict_a.met else (second, first)
            n_passed, n_failed = sentences(passed[1].interruption.baseline), sentences(failed[1].interruption.baseline)
            if n_failed <= n_passed:
                report(first, second,
                       f"the length rule '{bounds[i]}' passed a baseline of {n_passed} sentence(s) at "
                       f"{_where(*passed[:3])} and failed one of {n_failed} at {_where(*failed[:3])}: "
                       "judge length the same way, or record what else the failure is for")
            continue
        words_a, words_b = _words(text_a), _words(text_b)
        if 2 * min(len(words_a), len(words_b)) < SIMILAR * (len(words_a) + len(words_b)):
            continue  # too different in length to be near-identical (difflib's real_quick_ratio, without the object)
        matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
        if matcher.quick_ratio() >= SIMILAR and matcher.ratio() >= SIMILAR:
            report(first, second,
                   f"near-identical criterion at {_where(*first[:3])} ({'met' if verdict_a.met else 'not met'}) "
                   f"is {'met' if verdict_b.met else 'not met'} here: check that the baselines really differ "
                   "in what it asks, and record how")
    return found
