"""Reading a ConversationBench-style benchmark from the layouts it is published in.

- A benchmark folder of the published repositories (`turns.py`, `tools.py`, `system.py`,
  `config.py`, `data/knowledge_base.txt`; audio in `audio/turn_NNN.wav` or
  `real_audio/<speaker>/turn_NNN.wav`), read by `pyfiles` without running any of it.
- The Hugging Face layouts: `metadata.jsonl` rows (audiofolder style, one call wrapped in a list,
  tool columns possibly JSON strings, a `speaker` column when several voices exist) or
  `benchmark/turns.json`. These hold the turns only; the system instruction, the tools and the
  category mapping come from the benchmark folder given as `setup`.
"""
from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..io import json_lines
from ..io.json_object import TOO_DEEP, TOO_LONG_NUMBER, json_problem, not_utf8
from ..io.regular import absent, check_inside
from .benchmark import ConvBenchmark, ConvTurn, normalise_turn
from .pyfiles import (
    ConvBenchFormatError,
    check_package_init,
    read_config,
    read_system,
    read_tools,
    read_turns,
)

KB_FILE = Path("data") / "knowledge_base.txt"
HUB_FILES = ("metadata.jsonl", "benchmark/turns.json")


@dataclass
class ReadBenchmark:
    benchmark: ConvBenchmark
    root: Path  # the folder the audio paths are relative to
    audio_files: list[str]  # per turn, relative to root
    audio_label: str  # where the audio is expected: "audio/", "real_audio/person1/"
    config: dict  # the config's constants (name, description, hf_repo, ...)

    def __post_init__(self):
        """Each turn is its own recording: two naming one file (an edit copied from a line above) would play
        one turn's words as the other's, and a model be scored on a request it never heard."""
        first: dict[str, tuple[int, str]] = {}
        for position, name in enumerate(self.audio_files):
            turn = self.benchmark.turns[position].index
            key = posixpath.normpath(name.replace("\\", "/"))  # ./audio/x.wav, audio//x.wav: one file
            if key in first:
                earlier, spelled = first[key]
                names = repr(name) if spelled == name else f"{spelled!r} and {name!r}"
                raise ConvBenchFormatError(f"{self.root}: turns {earlier} and {turn} name the same audio "
                                           f"({names}); each turn is its own recording")
            first[key] = (turn, name)


def is_benchmark_folder(path: Path) -> bool:
    return os.path.lexists(path / "turns.py")  # one that is no regular file is said so when it is parsed


def read_benchmark(path, *, setup=None, speaker: Optional[str] = None, name: Optional[str] = None,
                   text_only: bool = False) -> ReadBenchmark:
    """The benchmark at `path` (a benchmark folder, a Hub folder, or a Hub rows file).

    `speaker` chooses a voice: in a benchmark folder its audio (`real_audio/SPEAKER/`), in Hub rows
    with a `speaker` column that speaker's rows. Where it would choose nothing (a folder imported
    `text_only`, Hub rows of one voice) it is refused, naming why, rather than ignored."""
    path = Path(path)
    if path.is_dir() and is_benchmark_folder(path):
        if setup is not None:
            raise ConvBenchFormatError(f"{path}: a benchmark folder carries its own system instruction and tools; "
                                       "--setup is only for the Hub layouts")
        if speaker is not None and text_only:
            raise ConvBenchFormatError(f"--speaker {speaker}: in a benchmark folder the speaker chooses the audio "
                                       f"(real_audio/{speaker}/) and --text-only imports none; the turns are the "
                                       "same for every speaker: leave --speaker out")
        return _read_folder(path, speaker, name)
    rows_file = _hub_rows_file(path)
    if rows_file is None:
        raise ConvBenchFormatError(_not_a_benchmark(path))
    if setup is None:
        if not any("input_text" in row or "input" in row for _, row in _rows(rows_file)):  # some other JSON
            raise ConvBenchFormatError(f"{rows_file}: not ConversationBench turn rows (no row has input_text); give a "
                                       "benchmark folder (with turns.py), or the Hub layout's metadata.jsonl or "
                                       "benchmark/turns.json")
        raise ConvBenchFormatError(f"{rows_file}: the Hub layout holds the turns only; give the benchmark folder of "
                                   "the published repository with --setup (its system.py, tools.py and turns.py give "
                                   "the instruction, the tools and the category mapping)")
    setup_read = _read_folder(Path(setup), None, name, audio=False)
    return _read_hub_rows(rows_file, setup_read, speaker, name)


def _not_a_benchmark(path: Path) -> str:
    if not path.exists():
        return f"{path}: no such folder"
    nested = sorted(p.parent for p in path.glob("benchmarks/*/turns.py")) if path.is_dir() else []
    if nested:
        return (f"{path}: a repository with several benchmarks; give one folder: "
                + ", ".join(str(p) for p in nested))
    return (f"{path}: not a ConversationBench layout (expected turns.py, tools.py, system.py, config.py and "
            f"data/knowledge_base.txt, or the Hub's {' or '.join(HUB_FILES)})")


def _hub_rows_file(path: Path) -> Optional[Path]:
    if path.is_file() and path.suffix in (".jsonl", ".json"):
        return path
    for name in HUB_FILES:
        if (path / name).is_file():
            return path / name
    return None


def _read_folder(folder: Path, speaker: Optional[str], name: Optional[str], audio: bool = True) -> ReadBenchmark:
    if not is_benchmark_folder(folder):
        raise ConvBenchFormatError(_not_a_benchmark(folder))
    for part in ("__init__.py", "turns.py", "tools.py", "system.py", "config.py", KB_FILE):
        check_inside(folder / part, folder, ConvBenchFormatError)
    check_package_init(folder / "__init__.py")
    raw_turns, core, mapping = read_turns(folder / "turns.py")
    tools = read_tools(folder / "tools.py")
    preamble, tools_section = read_system(folder / "system.py")
    config = read_config(folder / "config.py")
    knowledge_base = _read_kb(folder / KB_FILE)
    turns = [normalise_turn(raw, index, f"{folder / 'turns.py'}: turn {index}", core, mapping)
             for index, raw in enumerate(raw_turns)]
    benchmark = ConvBenchmark(
        name=name or config.get("name") or folder.name, turns=turns, tools=tools,
        system_instruction=preamble + knowledge_base + tools_section, knowledge_base=knowledge_base,
        core_dimensions=core, category_dimensions=mapping, description=str(config.get("description") or ""),
        hf_repo=config.get("hf_repo") if isinstance(config.get("hf_repo"), str) else None, source="benchmark folder")
    if speaker is None and config.get("use_real_audio") is True and isinstance(config.get("real_audio_speaker"), str):
        speaker = config["real_audio_speaker"]
    if speaker is not None:
        files = [f"real_audio/{speaker}/{Path(turn.audio_file).name}" for turn in turns]
        label = f"real_audio/{speaker}/"
    else:
        files, label = [turn.audio_file for turn in turns], "audio/"
    return ReadBenchmark(benchmark, folder, files if audio else [], label, config)


def _read_kb(path: Path) -> str:
    """Verbatim: the bytes decoded as UTF-8, line endings and the leading blank line kept."""
    if not path.is_file():
        raise ConvBenchFormatError(f"{path}: {absent(path)}; system.py joins the preamble, this knowledge base and "
                                   "the tools section")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConvBenchFormatError(f"{path}: {not_utf8(error)}") from None
    if not text.strip():  # every kb_grounding verdict would be judged against nothing
        raise ConvBenchFormatError(f"{path}: is empty; the model and the judges read the knowledge base from it")
    return text


def _read_hub_rows(path: Path, setup: ReadBenchmark, speaker: Optional[str], name: Optional[str]) -> ReadBenchmark:
    rows = _rows(path)
    speakers = sorted({row["speaker"] for _, row in rows if isinstance(row.get("speaker"), str)})
    if len(speakers) > 1 and speaker is None:
        raise ConvBenchFormatError(f"{path}: rows for several speakers ({', '.join(speakers)}); choose one with "
                                   "--speaker")
    if speaker is not None and not speakers:  # the rows would be imported as they are, under a label they lack
        raise ConvBenchFormatError(f"--speaker {speaker}: {path} has no `speaker` column (its rows are one voice, "
                                   "the audio they name); leave --speaker out")
    if speaker is not None:
        if speaker not in speakers:
            raise ConvBenchFormatError(f"{path}: no rows of speaker {speaker!r}; speakers: {', '.join(speakers)}")
        rows = [(line, row) for line, row in rows if row.get("speaker") == speaker]
    base = setup.benchmark
    turns: list[ConvTurn] = []
    files: list[str] = []
    for line, row in rows:
        where = f"{path}: row {line}"
        turn_id = row.get("turn_id", row.get("index", len(turns)))
        if not isinstance(turn_id, int) or isinstance(turn_id, bool) or turn_id < 0:
            raise ConvBenchFormatError(f"{where}: `turn_id` must be a whole number >= 0")
        raw = {key: _json_field(row.get(key), where, key) for key in
               ("required_function_call", "function_call_response", "categories", "scoring_dimensions",
                "flexible_args")}
        raw["required_function_call"], raw["function_call_response"] = _unwrap_single(
            raw["required_function_call"], raw["function_call_response"])
        raw.update({"input": row.get("input_text", row.get("input")), "golden_text": row.get("golden_text"),
                    "subcategory": row.get("subcategory"), "tool_use_guidance": row.get("tool_use_guidance"),
                    "audio_file": row.get("audio_file") or row.get("file_name")})
        raw = {key: value for key, value in raw.items() if value is not None}
        turns.append(normalise_turn(raw, turn_id, where, base.core_dimensions, base.category_dimensions))
        files.append(turns[-1].audio_file)
    ids = [turn.index for turn in turns]
    if len(set(ids)) != len(ids):
        raise ConvBenchFormatError(f"{path}: a turn_id appears twice; one row per turn (and speaker)")
    # one conversation, played turn by turn: a row lost (a cut download, a deleted line) is a gap in it.
    # Counted, not listed, past the rows there are: a turn_id of 10**9 would list a billion missing turns
    last = max(max(ids) + 1, len(base.turns))
    if last > len(ids) + len(base.turns):
        far = max(ids)
        raise ConvBenchFormatError(f"{path}: turn_id {far} is far past the {len(ids)} row(s) of the file "
                                   f"({setup.root} has {len(base.turns)} turns): a number edited or damaged; "
                                   "download the file again")
    expected = set(range(last))
    missing = sorted(expected - set(ids))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        setup_turns = f" ({setup.root} has {len(base.turns)} turns)" if len(base.turns) > max(ids) + 1 else ""
        raise ConvBenchFormatError(f"{path}: no row for turn_id {shown}{setup_turns}; the turns are one conversation "
                                   "and each is needed: download the file again")
    order = sorted(range(len(turns)), key=lambda i: ids[i])
    benchmark = ConvBenchmark(
        name=name or base.name, turns=[turns[i] for i in order], tools=base.tools,
        system_instruction=base.system_instruction, knowledge_base=base.knowledge_base,
        core_dimensions=base.core_dimensions, category_dimensions=base.category_dimensions,
        description=base.description, hf_repo=base.hf_repo, source=f"Hub rows ({path.name}) with {setup.root}")
    label = f"real_audio/{speaker}/" if speaker else "audio/"
    return ReadBenchmark(benchmark, path.parent if path.name != "turns.json" else path.parent.parent,
                         [files[i] for i in order], label, setup.config)


def _rows(path: Path) -> list[tuple[int, dict]]:
    """(line or position, row): metadata.jsonl one object per line, turns.json one list."""
    if path.suffix == ".jsonl":  # each line named by its own number; a BOM read; its strings checked by the turn
        rows = list(json_lines(path, ConvBenchFormatError, where="{path}:{number}", hand_made=False))
    else:
        try:
            text = path.read_text(encoding="utf-8-sig")  # a Windows editor's BOM is not part of the JSON
        except UnicodeDecodeError as error:
            raise ConvBenchFormatError(f"{path}: {not_utf8(error)}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConvBenchFormatError(f"{path}:{error.lineno}: not valid JSON ({json_problem(error, 'column')})") from None
        except RecursionError:
            raise ConvBenchFormatError(f"{path}: {TOO_DEEP}") from None
        except ValueError:  # after JSONDecodeError: the interpreter's digit limit
            raise ConvBenchFormatError(f"{path}: {TOO_LONG_NUMBER}") from None
        data = data.get("turns", data) if isinstance(data, dict) else data
        if not isinstance(data, list):
            raise ConvBenchFormatError(f"{path}: expected a list of turn rows, as the Hub layout's "
                                       f"benchmark/turns.json holds, got a JSON {type(data).__name__}")
        rows = list(enumerate(data))
    for where, row in rows:
        if not isinstance(row, dict):
            raise ConvBenchFormatError(f"{path}: row {where} is not an object")
    if not rows:
        raise ConvBenchFormatError(f"{path}: no rows")
    return rows


def _json_field(value, where: str, key: str):
    """Audiofolder rows may carry the tool columns as JSON strings."""
    if isinstance(value, str) and key != "subcategory":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise ConvBenchFormatError(f"{where}: `{key}` is a string that is not JSON") from None
    return value


def _unwrap_single(calls, responses):
    """The Hub wraps a single call (and its response) in a list; the benchmark folder writes them
    bare, and a bare response answers every call of the turn in the original tool results."""
    if isinstance(calls, list) and len(calls) == 1 and (responses is None or (isinstance(responses, list)
                                                                             and len(responses) == 1)):
        return calls[0], None if responses is None else responses[0]
    return calls, responses
