"""`ihbench verify`: the content rules every in-house conversation must pass before it is built.

Each rule protects a measurement: a delivered text that is not a prefix of the plan makes
"do not repeat what was heard" unjudgeable; an interruption that quotes undelivered words
leaks information the user could not have; a placeholder makes a correction uncheckable.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

from .audio import AudioError, load_recording
from .schema import INTERRUPTION_TYPES
from .checks import Finding, content_findings, inconsistent_verdicts, invalid_justifications, unsettled
from .checks.words import WORD as _WORD
from .checks.words import distinctive as _distinctive
from .checks.words import flatten as _flatten
from .checks.words import stem as _stem
from .checks.words import stems as _stems
from .checks.words import strings as _strings
from .checks.words import has_visible
from .redaction import credential_in_data
from .source_fields import unknown_fields
from .sources import SourceConversation, SourceError, SourceTurn, load_conversation, source_files

MIN_TURNS, MAX_TURNS = 8, 20
MIN_RQ, MAX_RQ = 2, 4
MIN_WORDS_EACH_SIDE = 3

PLACEHOLDER_PATTERNS = (
    re.compile(r"\[[A-Za-z][A-Za-z0-9_ ]*\]"),    # [NAME], [account number], [criterion]
    re.compile(r"\[\s*(?:\.{2,}|…)\s*\]"),          # [...]
    re.compile(r"\{\{?[A-Za-z_][A-Za-z0-9_]*\}?\}"),  # {account}, {{name}}
    re.compile(r"\bX{3,}\b"),                     # XXX, XXXX
    re.compile(r"<[^<>\n]{1,40}>"),               # <...>, <customer name>
    re.compile(r"\b(?:TBD|TODO|FIXME)\b", re.IGNORECASE),
    re.compile(r"lorem ipsum", re.IGNORECASE),
)

#: the longest a text field may be, in characters, by its name (the rest: DEFAULT_MAX_CHARS). A
#: generator that runs away writes a page where a sentence belongs; twice the longest shipped value.
MAX_CHARS = {"system_message": 12_000, "assistant": 2_000, "delivered": 2_000, "baseline": 2_000, "user": 1_000,
             "tf_rubric": 800, "rq_rubrics": 800}
DEFAULT_MAX_CHARS = 2_000
#: a baseline this close to the interrupted message (and opening with what was heard) repeats it
NEAR_EQUAL = 0.9


def max_chars(field: str) -> int:
    name = re.sub(r"\[\d+\]", "", field).rsplit(".", 1)[-1]
    return MAX_CHARS.get(name, DEFAULT_MAX_CHARS)


def repeats_the_message(baseline: str, assistant: str, delivered: str) -> bool:
    """The baseline says the interrupted message again, from what was already heard: a recovery
    that re-reads it is the failure the benchmark measures, not a reference for it. A baseline that
    goes on from the cut (a filler's continuation) does not open with the heard words."""
    words = lambda text: re.findall(r"[a-z0-9']+", text.lower())  # noqa: E731
    base, message, heard = words(baseline), words(assistant), words(delivered)
    opening = heard[: min(len(heard), 5)]
    if not opening or base[: len(opening)] != opening:
        return False
    return difflib.SequenceMatcher(None, base, message, autojunk=False).ratio() >= NEAR_EQUAL

@dataclass(frozen=True)
class Problem:
    path: Path
    field: str
    message: str
    turn: Optional[int] = None  # 1-based turn number

    def __str__(self) -> str:
        where = f"turn {self.turn}, " if self.turn is not None else ""
        return f"{self.path}: {where}{self.field}: {self.message}"


@dataclass
class Report:
    problems: list[Problem]
    notes: list[str]
    conversations: list[SourceConversation]

    @property
    def ok(self) -> bool:
        return not self.problems


#: characters that show as nothing: an id holding one reads the same as one without it
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")


def _id_key(conversation_id: str) -> str:
    """What a reader sees of an id: two ids that differ only in Unicode form (NFC and NFD 'café'), in
    compatibility forms (a full-width letter), by an invisible character or a blank at an end are one id
    to a person, to a report's table and to a case-insensitive file system's export folder."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", conversation_id)).strip().casefold()


def verify_paths(paths: Optional[Iterable[Union[str, Path]]] = None, *, check_audio: bool = True) -> Report:
    """Check every source file; collect all problems rather than stopping at the first."""
    report = Report(problems=[], notes=[], conversations=[])
    seen: dict[str, tuple[Path, str]] = {}
    for path in source_files(paths):  # a path that does not exist is a usage error: raises
        try:
            conversation = load_conversation(path)
        except SourceError as error:
            report.problems.append(Problem(path, "structure", str(error).removeprefix(f"{path}: ")))
            continue
        key = _id_key(conversation.conversation_id)
        if key in seen:
            same = "" if seen[key][1] == conversation.conversation_id else \
                f", written {seen[key][1]!r} there: one id to a reader and to a case-insensitive file system, " \
                "written in another Unicode form, case or with an invisible character"
            report.problems.append(Problem(path, "conversation_id", f"duplicate id {conversation.conversation_id!r} "
                                                                    f"(also in {seen[key][0]}{same})"))
        seen.setdefault(key, (path, conversation.conversation_id))
        report.problems.extend(check_conversation(conversation))  # the content checks included
        if check_audio:
            report.notes.extend(_check_audio(conversation, report.problems))
        report.conversations.append(conversation)
    report.problems.extend(shared_identities(report.conversations))
    report.problems.extend(_problem(c, f) for c, f in inconsistent_verdicts(report.conversations)
                           if unsettled(c, [f]))
    return report


def check_content(conversation: SourceConversation) -> list[Problem]:
    """The lexical content checks (`checks/`): criteria a correct reply may fail, numbers the agent
    was never given; each finding unless a justification in the file settles it, and every
    justification that cannot settle anything. Part of `check_conversation`, so `ihbench generate`
    re-asks for what `ihbench verify` would refuse (only the checks across calls, such as opposite
    verdicts, wait for the whole suite)."""
    problems = [Problem(conversation.path, field, message, turn.number)
                for turn, field, message in invalid_justifications(conversation)]
    return problems + [_problem(conversation, finding) for finding in content_findings(conversation)]


def _problem(conversation: SourceConversation, finding: Finding) -> Problem:
    return Problem(conversation.path, finding.field, f"{finding.check}: {finding.message}", finding.turn.number)


_PERSON = re.compile(r"[A-Z][a-z'’-]+(?: [A-Z][a-z'’.-]+){1,2}")  # a person's name: "Emmett Calloway"


def _identities(conversation: SourceConversation) -> set[str]:
    """The caller's names and long numbers (phones, accounts): what must not recur across calls."""
    values = set()
    for entry in conversation.knowledge_base["user_data"]:
        text = str(entry["value"])
        values.update(d for d in (re.sub(r"\D", "", m) for m in re.findall(r"\d[\d\s().-]{5,}\d", text)) if len(d) >= 6)
        person = re.sub(r"\s*\(.*?\)", "", text).strip()
        if "name" in entry["field"].lower() or _PERSON.fullmatch(person):
            values.add(person.lower())
    return values


def shared_identities(conversations: list[SourceConversation]) -> list[Problem]:
    """Two callers of different goals with the same name or number read as one person reused: a
    template, not a set of calls. Callers of one goal may share the account by design."""
    problems, owners = [], {}
    for c in conversations:
        for value in sorted(_identities(c)):
            other = owners.setdefault(value, c)
            if other is not c and other.goal != c.goal:
                problems.append(Problem(c.path, "knowledge_base.user_data",
                                        f"{value!r} also appears in {other.path.name} (another goal); use distinct "
                                        "names and numbers per caller"))
    return problems


def check_conversation(conversation: SourceConversation) -> list[Problem]:
    c = conversation
    problems: list[Problem] = []

    def add(field: str, message: str, turn: Optional[SourceTurn] = None) -> None:
        problems.append(Problem(c.path, field, message, turn.number if turn else None))

    for field, message in unknown_fields(c.raw):
        in_turn = re.match(r"turns\[(\d+)\]", field)
        add(field, message, c.turns[int(in_turn.group(1))] if in_turn else None)
    if c.path.stem != c.conversation_id:
        add("conversation_id", f"{c.conversation_id!r} differs from the file name {c.path.stem!r}")
    if not MIN_TURNS <= len(c.turns) <= MAX_TURNS:
        add("turns", f"{len(c.turns)} turns; expected {MIN_TURNS}-{MAX_TURNS} ({2 * MIN_TURNS}-{2 * MAX_TURNS} messages)")
    probabilities = c.user_intent["interruption_probabilities"]
    if set(probabilities) != set(INTERRUPTION_TYPES):
        add("user_intent.interruption_probabilities", f"keys must be exactly {', '.join(INTERRUPTION_TYPES)}")
    elif abs(sum(probabilities.values()) - 1.0) > 0.01:
        add("user_intent.interruption_probabilities", f"sum to {sum(probabilities.values()):.3f}, not 1")
    stage_names = [s["name"] for s in c.knowledge_base["workflow_stages"]]
    if len(set(stage_names)) != len(stage_names):
        add("knowledge_base.workflow_stages", "stage names repeat")

    invisible: list[Problem] = []
    for field, text in _strings(c.raw):
        for pattern in PLACEHOLDER_PATTERNS:
            match = pattern.search(text)
            if match:
                add(field, f"placeholder token {match.group(0)!r}")
        secret = credential_in_data(text)
        if secret:  # the dataset copies it, the voice reads it, `publish-dataset` uploads it
            add(field, f"holds {secret} (a credential; not shown), which the dataset would copy and publish; "
                       "remove it")
        if text.strip() and not has_visible(text):  # looks filled to str.strip; a field's own check may say more
            invisible.append(Problem(c.path, field, "is empty: only invisible characters (zero-width, control or "
                                                    "no-break spaces)"))
        if len(text) > max_chars(field):
            add(field, f"is {len(text):,} characters long; the limit for this field is {max_chars(field):,}")

    for turn in c.turns:
        prefix = f"turns[{turn.index}]"
        if turn.stage not in stage_names:
            add(f"{prefix}.stage", f"stage {turn.stage!r} is not in knowledge_base.workflow_stages", turn)
        if turn.interruption is None:
            continue
        problems.extend(Problem(c.path, f"{prefix}.{f}", m, turn.number) for f, m in _check_cut(turn))
        problems.extend(Problem(c.path, f"{prefix}.interruption.{f}", m, turn.number) for f, m in _check_rubric(turn))
        leaked = leaked_words(c, turn)
        if leaked:
            add(f"{prefix}.user", "the interruption quotes words the user has not heard yet (only in the "
                f"undelivered part): {', '.join(sorted(leaked))}", turn)
    named = {problem.field for problem in problems}
    return problems + [problem for problem in invisible if problem.field not in named] + check_content(c)


def _check_cut(turn: SourceTurn) -> list[tuple[str, str]]:
    delivered, original = turn.delivered, turn.assistant
    if not original.startswith(delivered):
        return [("delivered", "is not a prefix of the assistant text")]
    rest = original[len(delivered):]
    if not rest.strip():
        return [("delivered", "is the whole message: an interruption must cut the turn before its end")]
    if not _WORD.search(rest):
        return [("delivered", f"leaves only {rest.strip()!r} unheard: the sentence was finished, not cut; cut "
                              "mid-sentence")]
    problems = []
    if re.search(r"[.?!:]['\")]*\s*$", delivered):
        problems.append(("delivered", "ends at a sentence boundary; cut mid-sentence"))
    if len(delivered.split()) < MIN_WORDS_EACH_SIDE:
        problems.append(("delivered", f"fewer than {MIN_WORDS_EACH_SIDE} words delivered"))
    if len(rest.split()) < MIN_WORDS_EACH_SIDE:
        problems.append(("delivered", f"fewer than {MIN_WORDS_EACH_SIDE} words left undelivered"))
    return problems


def _check_rubric(turn: SourceTurn) -> list[tuple[str, str]]:
    i = turn.interruption
    problems = []
    if i.type not in INTERRUPTION_TYPES:
        problems.append(("type", f"unknown type {i.type!r}; expected one of {', '.join(INTERRUPTION_TYPES)}"))
    if not has_visible(i.tf_rubric):
        problems.append(("tf_rubric", "is empty"))
    if not MIN_RQ <= len(i.rq_rubrics) <= MAX_RQ:
        problems.append(("rq_rubrics", f"has {len(i.rq_rubrics)} criteria; expected {MIN_RQ}-{MAX_RQ}"))
    if any(not isinstance(r, str) or not has_visible(r) for r in i.rq_rubrics):
        problems.append(("rq_rubrics", "contains an empty criterion"))
    if not has_visible(i.baseline):
        problems.append(("baseline", "is empty"))
    elif repeats_the_message(i.baseline, turn.assistant, turn.delivered):
        problems.append(("baseline", "says the interrupted message again from what was already heard; a baseline "
                                     "recovers from the cut, it does not re-read it"))
    if i.baseline_rq_verdicts is not None and len(i.baseline_rq_verdicts) != len(i.rq_rubrics):
        problems.append(("baseline_rq_verdicts", f"has {len(i.baseline_rq_verdicts)} verdicts for "
                                                 f"{len(i.rq_rubrics)} criteria; expected one per criterion"))
    return problems


_SKIPPED = " \"'“”‘’("
_SENTENCE_END = ".?!…—-:"


def _words_with_position(text: str):
    """Each word and whether it opens a sentence (where capitals say nothing about names): the last
    character before it, quotes and spaces skipped, ends a sentence. Each gap is read once, so a
    long text costs its length, not its length squared."""
    previous, end = "", 0
    for match in _WORD.finditer(text):
        before = (previous + text[end:match.start()]).rstrip(_SKIPPED)  # a word never strips away whole
        yield match.group(0), (not before) or before[-1] in _SENTENCE_END
        previous, end = match.group(0), match.end()


def leaked_words(conversation: SourceConversation, turn: SourceTurn) -> set[str]:
    """Distinctive words of the interruption that the user can only know from the unheard rest."""
    rest = turn.assistant[len(turn.delivered):] if turn.assistant.startswith(turn.delivered) else ""
    unheard = _stems(rest)
    known_texts = [turn.delivered, conversation.goal, _flatten(conversation.user_intent),
                   _flatten(conversation.knowledge_base.get("user_data", []))]
    for earlier in conversation.turns[: turn.index]:
        known_texts += [earlier.heard, earlier.user]
    known = _stems(" ".join(known_texts))
    leaked = set()
    for word, sentence_start in _words_with_position(turn.user):
        stem = _stem(word)
        if _distinctive(word, sentence_start) and stem in unheard and stem not in known:
            leaked.add(word)
    return leaked


def _check_audio(conversation: SourceConversation, problems: list[Problem]) -> list[str]:
    notes = []
    for turn in conversation.turns:
        if turn.user_audio is None:
            continue
        try:
            notes.extend(load_recording(turn.user_audio, what=f"turns[{turn.index}].user_audio").notes)
        except AudioError as error:
            problems.append(Problem(conversation.path, f"turns[{turn.index}].user_audio", str(error), turn.number))
    return notes
