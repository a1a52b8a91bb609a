"""`ihbench verify` on a ConversationBench-style benchmark: what the judge takes for truth must be
traceable, and every expected call must be one the agent could make.

A golden reply is the judge's reference: a fact in it that nothing in the conversation supports
would fail a correct agent. So every number (time, price, ID, count) and every capitalised name in
a golden reply, not at the start of a sentence, must appear in what the agent was given by then:
the system instruction (knowledge base included), the caller's words up to that turn, or the
scripted tool results up to that turn. On a numerical-reasoning turn the numbers are worked out
(totals, differences, refunds), so they are left to the judge and its arithmetic; from then on
they count as known (a later "the $50 permit"). An expected argument must likewise be a
value the agent can know: short values verbatim (case aside) from those sources or the earlier
expected calls; free text (a description, feedback) must be made mostly of words the caller or
the knowledge base used, its numbers traceable.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from .benchmark import ConvBenchmark, check_calls_against_tools

_NUMBER = re.compile(r"\d+(?:[:.,]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$|^\s*$|[-*#>]\s*$|\*\*$|\n\s*$")
#: capitalised words that are not names wherever they stand
_NOT_NAMES = {"I", "I'm", "I'll", "I've", "I'd", "OK", "Okay", "AM", "PM", "Mr", "Mrs", "Ms", "Dr", "Prof"}
_FREE_TEXT_WORDS = 5
COMPUTING = "numerical_reasoning"  # the category whose goldens hold values worked out, not looked up  # a value of more words than this is free text, not a value to match verbatim


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("’", "'")).strip().lower()


def _names(text: str) -> list[str]:
    """Capitalised words that do not start a sentence (or a list item, or a bold run)."""
    names = []
    for match in _WORD.finditer(text):
        word = match.group()
        if not word[0].isupper() or word in _NOT_NAMES or word.rstrip("'’s") in _NOT_NAMES:
            continue
        if _SENTENCE_END.search(text[:match.start()]):
            continue
        names.append(word.removesuffix("'s").removesuffix("’s"))
    return names


def _numbers(text: str) -> list[str]:
    return [n.rstrip(".,") for n in _NUMBER.findall(text)]


def check_benchmark(benchmark: ConvBenchmark, where: str) -> list[str]:
    """Every problem, each naming `where` (the folder) and the turn."""
    problems = check_calls_against_tools(benchmark, where)
    given = benchmark.system_instruction
    earlier_args: list[str] = []
    for position, turn in enumerate(benchmark.turns):
        if turn.index != position:
            problems.append(f"{where}: turn {turn.index}: listed at position {position}; turns are numbered from 0 "
                            "in order")
        given += "\n" + turn.input + "\n" + json.dumps(turn.function_call_response or {}, ensure_ascii=False)
        lowered = _normal(given)
        computed = COMPUTING in turn.categories  # totals and differences: the judge checks the arithmetic
        for number in [] if computed else _numbers(turn.golden_text):
            if number not in given:
                problems.append(f"{where}: turn {turn.index}: golden_text: {number!r} is in no source the agent has "
                                "by then (knowledge base, caller's words, scripted tool results)")
        for name in _names(turn.golden_text):
            if name not in given:
                problems.append(f"{where}: turn {turn.index}: golden_text: the name {name!r} is in no source the "
                                "agent has by then")
        callers_words = _normal(" ".join(t.input for t in benchmark.turns[:position + 1]))
        for call in turn.required_calls:
            for argument, value in call["args"].items():
                problem = _argument_problem(str(value), lowered, callers_words, earlier_args,
                                            argument in turn.flexible_args)
                if problem:
                    problems.append(f"{where}: turn {turn.index}: `{call['name']}` argument {argument}={value!r}: "
                                    f"{problem}")
        earlier_args += [_normal(str(v)) for call in turn.required_calls for v in call["args"].values()]
        if computed:  # what the agent worked out is its own from then on ("the $50 permit")
            given += "\n" + " ".join(_numbers(turn.golden_text))
    return problems


def _argument_problem(value: str, given: str, callers_words: str, earlier: list[str], flexible: bool) -> str:
    text = _normal(value)
    if not text:
        return "" if flexible else "empty"
    if len(text.split()) > _FREE_TEXT_WORDS:  # free text: words of the conversation, numbers traceable
        content = [w for w in re.findall(r"[a-z']{4,}", text)]
        said = [w for w in content if w in callers_words or w in given]
        if content and len(said) < len(content) / 2:
            return "free text whose words are mostly neither the caller's nor the knowledge base's"
        missing = [n for n in _numbers(value) if n not in given]
        return f"{missing[0]!r} is in no source the agent has by then" if missing else ""
    parts = [part.strip() for part in re.split(r",|;| and ", text) if part.strip()]
    missing = [part for part in parts if part not in given and part not in earlier]
    return f"{missing[0]!r} is in no source the agent has by then (nor an earlier call)" if missing else ""


def verify_benchmark_folder(folder, *, check_audio: bool = True) -> tuple[Optional[ConvBenchmark], list[str]]:
    """The importer's reading of `folder` (its refusal is a problem too; no benchmark then), then the
    checks above. `check_audio`: each turn's WAV that is there read as the import reads it (an empty or
    damaged clip, refused by the import, would otherwise pass here); a benchmark whose audio is not put
    in place yet (published apart, or rendered by the build) is checked on its text."""
    import dataclasses

    from .importing import read_audio
    from .pyfiles import ConvBenchFormatError
    from .read import read_benchmark

    try:
        read = read_benchmark(Path(folder))
        present = [name for name in read.audio_files if (read.root / name).is_file()]
        if check_audio and present:
            read_audio(dataclasses.replace(read, audio_files=present), progress=False)
    except ConvBenchFormatError as error:
        return None, [str(error)]
    return read.benchmark, check_benchmark(read.benchmark, str(folder))
