"""Reading the in-house conversation sources (one JSON file each; see sources/FORMAT.md).

Parsing is strict about structure (a missing or mistyped field names the file and the field);
the content rules (prefixes, placeholders, leakage) live in `verify.py`.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from .errors import IHBenchError
from .io.json_object import TOO_DEEP, TOO_LONG_NUMBER, JsonContentError, hand_written, json_problem
from .io.regular import check_regular

SOURCES_DIR = Path(__file__).parent / "sources" / "conversations"
DOMAINS = (
    "saas",
    "financial_services",
    "healthcare",
    "telecom",
    "e_commerce",
    "travel",
    "education",
    "government",
    "subscription_media",
    "professional_services",
)
USER_VOICES = ("piper:joe", "flite:slt")
ASSISTANT_VOICE = "flite:rms"


class SourceError(IHBenchError, ValueError):
    """A source file is malformed; the message names the file and the field."""


REVIEW_QUESTIONS = ("leakage", "user_knowledge", "type", "grounding")


@dataclass(frozen=True)
class BaselineVerdict:
    """The baseline response judged against one RQ criterion: the anchor TF win rates are relative to."""

    met: bool
    reason: str


@dataclass(frozen=True)
class SourceInterruption:
    type: str
    tf_rubric: str
    rq_rubrics: list[str]
    baseline: str
    baseline_rq_verdicts: Optional[list[BaselineVerdict]] = None  # one per RQ criterion, when judged
    review: Optional[dict] = None  # a second reader's answers to the verifier's four questions


@dataclass(frozen=True)
class SourceTurn:
    index: int  # 0-based; equals the depth of an interruption at this turn
    stage: str
    assistant: str
    user: str
    delivered: Optional[str] = None
    interruption: Optional[SourceInterruption] = None
    user_audio: Optional[Path] = None

    @property
    def number(self) -> int:
        """1-based turn number, as in the wide schema's column names."""
        return self.index + 1

    @property
    def heard(self) -> str:
        return self.delivered if self.delivered is not None else self.assistant


@dataclass(frozen=True)
class SourceConversation:
    path: Path
    conversation_id: str
    domain: dict
    goal: str
    knowledge_base: dict
    system_message: str
    user_intent: dict
    user_voice: str
    turns: list[SourceTurn]
    raw: dict  # the parsed file, for checks that walk every string
    digest: str  # sha256 of the file as read, for the build's sources fingerprint
    provenance: Optional[dict] = None  # who wrote, reviewed and judged what (free-form strings)

    @property
    def domain_name(self) -> str:
        return self.domain["name"]

    @property
    def interrupted_turns(self) -> list[SourceTurn]:
        return [t for t in self.turns if t.interruption is not None]


def source_files(paths: Optional[Iterable[Union[str, Path]]] = None) -> list[Path]:
    """JSON files under the given files/directories (default: the shipped dev set), sorted."""
    files: list[Path] = []
    for path in [Path(p) for p in (paths or [SOURCES_DIR])]:
        if path.is_dir():
            _refuse_toolkit_folder(path)
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise SourceError(f"{path}: no such file or directory")
    if not files:
        raise SourceError(f"no conversation JSON files found in {', '.join(map(str, paths or [SOURCES_DIR]))}")
    return files


def _refuse_toolkit_folder(path: Path) -> None:
    """A folder the toolkit made (a built dataset, a run) holds JSON files that are not sources
    (build_info.json, run.json): read as conversations they gave "conversation_id: missing"."""
    from .outputs import DESCRIPTIONS, folder_kind

    kind = folder_kind(path)
    if kind == "dataset":
        raise SourceError(f"{path}: is a dataset folder built by `ihbench build`, not conversation source JSON "
                          "files (what a build is made from: its --sources); `ihbench verify --audio` checks a "
                          "built dataset's cuts")
    if kind == "generated" and (path / "conversations").is_dir():  # what generate wrote is there
        raise SourceError(f"{path}: is {DESCRIPTIONS[kind]}, not conversation source JSON files; the conversations "
                          f"it generated are in {path / 'conversations'}")
    if kind:
        raise SourceError(f"{path}: is {DESCRIPTIONS[kind]}, not conversation source JSON files")


class _Fields:
    """Typed access to a JSON object that reports `file: field.path` on every problem."""

    def __init__(self, data: Any, path: Path, prefix: str = ""):
        self.data, self.path, self.prefix = data, path, prefix

    def error(self, name: str, problem: str) -> SourceError:
        return SourceError(f"{self.path}: {self.prefix}{name}: {problem}")

    def get(self, name: str, kind: type = str, *, required: bool = True, nonempty: bool = True):
        if not isinstance(self.data, dict):
            raise SourceError(f"{self.path}: {self.prefix.rstrip('.') or 'top level'}: expected an object")
        if name not in self.data or self.data[name] is None:
            if required:
                raise self.error(name, "missing" if name not in self.data else f"is null; expected {_json_name(kind)}")
            return None
        value = self.data[name]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(name, f"must be {_json_name(kind)}, got {_json_name(type(value))}")
        if nonempty and kind in (str, list, dict) and not (value.strip() if kind is str else value):
            raise self.error(name, "is empty")
        return value

    def child(self, name: str, kind: type = dict) -> "_Fields":
        return _Fields(self.get(name, kind), self.path, f"{self.prefix}{name}.")

    def strings(self, name: str, *, blank: bool = False) -> list[str]:
        """A list of strings; `blank`: a blank one is left for the content checks to name (a criterion)."""
        values = self.get(name, list, nonempty=False)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise self.error(f"{name}[{i}]", f"must be a string, got {_json_name(type(value))}")
            if not blank and not value.strip():
                raise self.error(f"{name}[{i}]", "must be a non-empty string")
        return values


#: a source is JSON: its values named in JSON's words, not Python's ("got NoneType", "must be str")
_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
               dict: "an object", type(None): "null"}


def _json_name(kind: type) -> str:
    return _JSON_NAMES.get(kind, kind.__name__)


def _verdicts(inner: _Fields) -> Optional[list[BaselineVerdict]]:
    raw = inner.get("baseline_rq_verdicts", list, required=False)
    if raw is None:
        return None
    verdicts = []
    for i in range(len(raw)):
        entry = _Fields(raw[i], inner.path, f"{inner.prefix}baseline_rq_verdicts[{i}].")
        verdicts.append(BaselineVerdict(met=entry.get("met", bool), reason=entry.get("reason")))
    return verdicts


def _review(inner: _Fields) -> Optional[dict]:
    if inner.get("review", dict, required=False) is None:
        return None
    review = inner.child("review")
    review.get("reviewer")
    for question in REVIEW_QUESTIONS:
        review.get(question)
    for optional in ("finding", "resolution"):
        review.get(optional, required=False)
    return review.data


def _no_constant(name: str):
    """Python's JSON reader takes NaN and Infinity, which JSON has not: a probability of NaN would pass
    every range check (all comparisons false) and plan nothing."""
    raise JsonContentError(f"{name} is not a JSON number (Python writes it, JSON has no such value); "
                           "give a number")


def check_setting(data: dict, path: Path, intent: str = "user_intent") -> None:
    """The fields of a conversation that are not its turns (domain, knowledge base, intent, voice, goal,
    system message), checked as a source's are and named as `path`'s: `ihbench generate` checks a
    goal's prerequisites with it (`intent`: where the intent is there) before it spends a call on them."""
    top = _Fields(data, path)
    domain = top.child("domain")
    name = domain.get("name")
    if name not in DOMAINS:
        raise domain.error("name", f"unknown domain {name!r}; expected one of {', '.join(DOMAINS)}")
    domain.get("description")

    kb = top.child("knowledge_base")
    stages = kb.get("workflow_stages", list)
    for i in range(len(stages)):
        stage = _Fields(stages[i], path, f"knowledge_base.workflow_stages[{i}].")
        stage.get("name"), stage.get("description"), stage.get("failure_handling")
        stage.strings("skip_conditions"), stage.strings("termination_conditions")
    kb.strings("guidelines")
    user_data = kb.get("user_data", list)
    for i in range(len(user_data)):
        entry = _Fields(user_data[i], path, f"knowledge_base.user_data[{i}].")
        entry.get("field"), entry.get("value")

    user_intent = _Fields(top.get("user_intent", dict), path, f"{intent}.")
    user_intent.get("profile")
    user_intent.strings("hidden_info")
    probabilities = user_intent.child("interruption_probabilities")
    for key, value in probabilities.data.items():
        probabilities.get(key, float, nonempty=False)

    voice = top.get("user_voice")
    if voice not in USER_VOICES:
        raise top.error("user_voice", f"unknown voice {voice!r}; expected one of {', '.join(USER_VOICES)}")
    top.get("goal"), top.get("system_message")


def load_conversation(path: Union[str, Path]) -> SourceConversation:
    path = Path(path)
    check_regular(path, "a conversation's JSON file", SourceError)  # a named pipe among them waited for ever
    try:
        content = path.read_bytes()
        # a byte-order mark, as Windows editors write, is no error; a key given twice is
        data = json.loads(content.decode("utf-8-sig"), object_pairs_hook=hand_written, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise SourceError(f"{path}: malformed JSON ({json_problem(error)})") from None
    except JsonContentError as error:
        raise SourceError(f"{path}: {error}") from None
    except UnicodeDecodeError as error:
        raise SourceError(f"{path}: not UTF-8 text ({error})") from None
    except RecursionError:
        raise SourceError(f"{path}: {TOO_DEEP}") from None
    except ValueError:  # after the two above: the interpreter's digit limit
        raise SourceError(f"{path}: {TOO_LONG_NUMBER}") from None
    except OSError as error:  # gone since it was listed, or unreadable
        raise SourceError(f"{path}: cannot be read ({error.strerror or error})") from None
    top = _Fields(data, path)
    conversation_id = top.get("conversation_id")
    check_setting(data, path)

    turns = []
    raw_turns = top.get("turns", list)
    for i in range(len(raw_turns)):
        turn = _Fields(raw_turns[i], path, f"turns[{i}].")
        interruption = None
        if turn.get("interruption", dict, required=False) is not None:
            inner = turn.child("interruption")
            interruption = SourceInterruption(
                type=inner.get("type"),
                tf_rubric=inner.get("tf_rubric", nonempty=False),
                rq_rubrics=inner.strings("rq_rubrics", blank=True),
                baseline=inner.get("baseline", nonempty=False),
                baseline_rq_verdicts=_verdicts(inner),
                review=_review(inner),
            )
        audio = turn.get("user_audio", required=False)
        turns.append(
            SourceTurn(
                index=i,
                stage=turn.get("stage"),
                assistant=turn.get("assistant"),
                user=turn.get("user"),
                delivered=turn.get("delivered", required=False, nonempty=False),
                interruption=interruption,
                user_audio=(path.parent / audio) if audio else None,
            )
        )
        if (interruption is None) != (turns[-1].delivered is None):
            missing = "delivered" if interruption is not None else "interruption"
            raise turn.error(missing, "missing: an interrupted turn needs both 'delivered' and 'interruption'")

    provenance = top.get("provenance", dict, required=False)
    for key in provenance or {}:
        _Fields(provenance, path, "provenance.").get(key)
    return SourceConversation(
        provenance=provenance,
        path=path,
        conversation_id=conversation_id,
        domain=data["domain"],
        goal=data["goal"],
        knowledge_base=data["knowledge_base"],
        system_message=data["system_message"],
        user_intent=data["user_intent"],
        user_voice=data["user_voice"],
        turns=turns,
        raw=data,
        digest=hashlib.sha256(content).hexdigest(),
    )
