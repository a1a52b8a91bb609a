"""One ConversationBench-style benchmark as plain values: its turns, tools, system instruction and
category mapping, whichever layout it was read from (a benchmark folder, Hub rows, a dataset config).

The turn fields keep the published meaning: `required_function_call` and `function_call_response`
as the benchmark wrote them (a dict for one call, a list for several), because the original tool
results depend on that shape (a dict answers every call of the turn, a list is handed out by
position). `required_calls` is the same calls always as a list, for everything else.
"""
from __future__ import annotations

import difflib
import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from .pyfiles import ConvBenchFormatError

#: the published mappings of categories to the extra scored dimensions, to name the one a folder
#: holds (the mapping itself is always read from the folder): v0 at conference_assistant 6a833d3,
#: v1 on main, v2 on newBenchmarks and the successor
_STATE = ("long_range_memory", "cross_turn_reasoning", "cancellation_flow", "implicit_correction")
KNOWN_MAPPINGS = {
    "v0 (6a833d3)": {**{c: {"state_tracking"} for c in _STATE}, "ambiguous_entity": {"ambiguity_handling"}},
    "v1 (main)": {**{c: {"state_tracking"} for c in (*_STATE, "error_recovery")},
                  "ambiguous_entity": {"ambiguity_handling"}, "numerical_reasoning": {"ambiguity_handling"}},
    "v2 (newBenchmarks, audio-agent-bench)": {**{c: {"state_tracking"} for c in (*_STATE, "error_recovery")},
                                              "ambiguous_entity": {"ambiguity_handling"}},
}
DIMENSIONS = ("turn_taking", "tool_use_correct", "instruction_following", "kb_grounding", "ambiguity_handling",
              "state_tracking")
#: the turn keys the importer knows; any other key is kept in `extras`
KNOWN_KEYS = {"input", "golden_text", "required_function_call", "function_call_response", "categories", "category",
              "subcategory", "audio_file", "flexible_args", "tool_use_guidance", "scoring_dimensions"}


@dataclass
class ConvTurn:
    index: int
    input: str
    golden_text: str
    required_function_call: Any = None  # dict, list of dicts, or None, as written
    function_call_response: Any = None  # dict, list, or None, as written
    categories: list[str] = field(default_factory=list)
    subcategory: Optional[str] = None
    audio_file: str = ""
    scoring_dimensions: list[str] = field(default_factory=list)
    flexible_args: list[str] = field(default_factory=list)
    tool_use_guidance: Optional[str] = None
    extras: dict = field(default_factory=dict)
    audio: Optional[dict] = None  # {"bytes", "path"} as stored, decoded only when a model needs it

    @property
    def required_calls(self) -> list[dict]:
        """[{"name", "args"}], whether the benchmark wrote one call or a list."""
        calls = self.required_function_call
        return [] if calls is None else [calls] if isinstance(calls, dict) else list(calls)


@dataclass
class ConvBenchmark:
    name: str
    turns: list[ConvTurn]
    tools: list[dict]
    system_instruction: str
    knowledge_base: str
    core_dimensions: list[str]
    category_dimensions: dict
    description: str = ""
    hf_repo: Optional[str] = None
    source: str = ""  # what was read: "benchmark folder", "metadata.jsonl", ...

    @property
    def mapping_version(self) -> str:
        return mapping_version(self.category_dimensions)

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools]


def mapping_version(mapping: dict) -> str:
    """Which published mapping `mapping` is, or "unpublished" (a benchmark of one's own, like ours)."""
    given = {category: set(dims) for category, dims in mapping.items() if dims}
    for version, known in KNOWN_MAPPINGS.items():
        if given == known:
            return version
    return "unpublished (read from the folder)"


def relevant_dimensions(categories: list[str], core: list[str], mapping: dict) -> list[str]:
    """The dimensions a turn is scored on: the core ones in their order, then the union of its
    categories' extra dimensions, sorted (the published rule; unknown categories add nothing)."""
    extra = {dimension for category in categories for dimension in mapping.get(category, [])}
    return list(core) + sorted(extra - set(core))


#: why each required text of a turn must say something
BLANK_MEANS = {"input": "it is what the user says to the model in this turn",
               "golden_text": "it is the ideal reply the judge scores the model's answer against"}


def normalise_turn(raw: dict, index: int, where: str, core: list[str], mapping: dict) -> ConvTurn:
    """A turn record checked field by field; `where` names it in messages ("turns.py: turn 12")."""
    def text(key: str, required: bool = True) -> Optional[str]:
        value = raw.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str):
            raise ConvBenchFormatError(f"{where}: `{key}` must be a string, got {type(value).__name__}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate escape ("\\ud800") decodes to no character
            raise ConvBenchFormatError(f"{where}: `{key}` holds a lone surrogate escape ({value[error.start]!r}), "
                                       "which is no character; remove it") from None
        if required and not value.strip():  # a blank turn would be sent, answered, and judged against nothing
            raise ConvBenchFormatError(f"{where}: `{key}` is {'empty' if not value else 'blank'}; "
                                       f"{BLANK_MEANS[key]}")
        return value

    for key in raw:  # a misspelled known key would be kept as an extra, and its turn read without it
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.85) if key not in KNOWN_KEYS else []
        if close:
            raise ConvBenchFormatError(f"{where}: unknown key {key!r}; did you mean {close[0]!r}?")
    calls = raw.get("required_function_call")
    call_list = [] if calls is None else [calls] if isinstance(calls, dict) else calls
    if not isinstance(call_list, list) or not all(_is_call(c) for c in call_list):
        raise ConvBenchFormatError(f"{where}: `required_function_call` must be a call {{\"name\", \"args\"}} or a "
                                   "list of them")
    calls = [_canonical_call(c) for c in call_list] if isinstance(calls, list) else \
        (_canonical_call(calls) if calls is not None else None)
    response = raw.get("function_call_response")
    if response is not None:
        if isinstance(response, list):
            if not all(isinstance(r, dict) for r in response):
                raise ConvBenchFormatError(f"{where}: `function_call_response` must be a dict or a list of dicts")
            if isinstance(calls, list) and len(response) != len(calls):
                raise ConvBenchFormatError(f"{where}: {len(response)} scripted responses for {len(calls)} "
                                           "required calls; the list must match the calls one to one")
        elif not isinstance(response, dict):
            raise ConvBenchFormatError(f"{where}: `function_call_response` must be a dict or a list of dicts")
    categories = raw.get("categories") or ([raw["category"]] if isinstance(raw.get("category"), str) else [])
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise ConvBenchFormatError(f"{where}: `categories` must be a list of names")
    dimensions = raw.get("scoring_dimensions")
    if dimensions is None:
        dimensions = relevant_dimensions(categories, core, mapping)
    elif not isinstance(dimensions, list) or not all(d in DIMENSIONS for d in dimensions):
        raise ConvBenchFormatError(f"{where}: `scoring_dimensions` must list dimensions among {', '.join(DIMENSIONS)}")
    flexible = raw.get("flexible_args") or []
    if not isinstance(flexible, list) or not all(isinstance(a, str) for a in flexible):
        raise ConvBenchFormatError(f"{where}: `flexible_args` must be a list of argument names")
    audio_file = text("audio_file", False)
    if audio_file:
        _refuse_leaving(audio_file, f"{where}: `audio_file`", index)
    return ConvTurn(
        index=index, input=text("input"), golden_text=text("golden_text"), required_function_call=calls,
        function_call_response=response, categories=list(categories), subcategory=text("subcategory", False),
        audio_file=audio_file or f"audio/turn_{index:03d}.wav", scoring_dimensions=list(dimensions),
        flexible_args=list(flexible), tool_use_guidance=text("tool_use_guidance", False),
        extras={k: v for k, v in raw.items() if k not in KNOWN_KEYS})


def _refuse_leaving(audio_file: str, what: str, index: int) -> None:
    """A path that leaves the benchmark's folder, else any file of the machine is read; one that only
    passes through `..` inside it (`audio/../audio/x.wav`) does not."""
    spelled = posixpath.normpath(audio_file.replace("\\", "/"))
    if re.match(r"/|[A-Za-z]:", spelled) or spelled == ".." or spelled.startswith("../"):
        raise ConvBenchFormatError(f"{what} {audio_file!r} leaves the benchmark's folder; give a path inside it, "
                                   f"such as audio/turn_{index:03d}.wav")


def _is_call(call: Any) -> bool:
    args = call.get("args", call.get("arguments", {})) if isinstance(call, dict) else None
    return isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(args, dict)


def _canonical_call(call: dict) -> dict:
    """{"name", "args"}: `arguments` (the OpenAI spelling) is read as `args`."""
    return {"name": call["name"], "args": dict(call.get("args", call.get("arguments", {})))}


#: the categories the published benchmark's turns carry (conversation-bench.md §1.2); with the mapping's keys,
#: the names a category is checked against for a typo
PUBLISHED_CATEGORIES = frozenset({
    "long_range_memory", "basic_qa", "numerical_reasoning", "ambiguous_entity", "tool_use", "cross_turn_reasoning",
    "adversarial_trap", "multi_step_tool", "error_recovery", "cancellation_flow", "implicit_correction",
    "negation_reasoning", "distractor_injection"})


def check_categories(benchmark: ConvBenchmark, where: str) -> tuple[list[str], list[str]]:
    """(problems, notes) of the turns' categories. A category the mapping does not name adds no dimension (the
    published rule), so a misspelt one (`ambiguous_entitty`) drops the turn's ambiguity_handling and the turn is
    judged on fewer dimensions, passing more easily (battery 56, C15): one close to a known category is refused,
    naming it; another unknown one, and a turn with no category, are noted (a benchmark may add its own)."""
    used = Counter(category for turn in benchmark.turns for category in turn.categories)
    known = set(benchmark.category_dimensions) | PUBLISHED_CATEGORIES
    problems, unknown, bare = [], [], []
    for turn in benchmark.turns:
        if not turn.categories:
            bare.append(turn.index)
        for category in turn.categories:
            if category in known:
                continue
            others = sorted(known | {c for c, n in used.items() if n > used[category]})
            close = difflib.get_close_matches(category, others, n=1, cutoff=0.8)
            if close:
                problems.append(f"{where}: turn {turn.index}: category {category!r} is not a category of the mapping "
                                f"(CATEGORY_DIMENSIONS) or of the published benchmark; did you mean {close[0]!r}? As "
                                "written it adds no scoring dimension, and the turn would be judged on fewer")
            elif category not in unknown:
                unknown.append(category)
    notes = []
    if unknown:
        notes.append(f"{where}: categories the mapping does not name, which add no scoring dimension: "
                     f"{', '.join(map(repr, unknown))}")
    if bare:
        notes.append(f"{where}: turn(s) {', '.join(map(str, bare))} have no category: judged on the core dimensions "
                     "only")
    return problems, notes


def check_calls_against_tools(benchmark: ConvBenchmark, where: str) -> list[str]:
    """Problems of the expected calls: unknown tools, missing required or unknown arguments."""
    tools = {tool["function"]["name"]: tool["function"]["parameters"] for tool in benchmark.tools}
    problems = []
    for turn in benchmark.turns:
        for call in turn.required_calls:
            schema = tools.get(call["name"])
            if schema is None:
                problems.append(f"{where}: turn {turn.index}: expected call `{call['name']}` is not one of the "
                                f"tools ({', '.join(tools)})")
                continue
            missing = [p for p in schema.get("required", []) if p not in call["args"]]
            unknown = [a for a in call["args"] if a not in schema.get("properties", {})]
            if missing:
                problems.append(f"{where}: turn {turn.index}: `{call['name']}` lacks required argument {missing[0]}")
            if unknown:
                problems.append(f"{where}: turn {turn.index}: `{call['name']}` has no parameter {unknown[0]}")
    return problems


def dumps(value: Any) -> Optional[str]:
    """JSON for a Parquet string column (None stays null)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=False)
