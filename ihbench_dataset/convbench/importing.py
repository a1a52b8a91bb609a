"""`ihbench convbench-import`: a ConversationBench-style benchmark into two configs of a dataset folder.

    NAME         one row per turn: the user's words and audio (at the file's own rate), the golden
                 reply, the expected calls, the scripted tool results, categories, scored dimensions
    NAME_setup   one row: the system instruction, the knowledge base, the tools in the OpenAI shape,
                 the category mapping and where everything came from

Both are listed in the folder's card (`load_dataset(DIR, NAME, split="test")`), with the mapping
version and the source under the card's `conversation_bench` metadata. Several benchmarks and the
IHBench configs live side by side; a rebuild keeps them. Everything is read and checked before
anything is written; the Parquet files are renamed into place only when both are complete.
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
import re
from dataclasses import fields
from pathlib import Path
from typing import Optional

from ..audio import AudioError, decode_audio, repair_wav_sizes
from ..builddir import BuildDir
from ..errors import UsageError
from ..redaction import credential_in_data
from .benchmark import ConvBenchmark, check_calls_against_tools, check_categories, dumps
from ..io.regular import absent, check_inside
from .pyfiles import ConvBenchFormatError
from .read import ReadBenchmark, read_benchmark

log = logging.getLogger("ihbench")

SPLIT = "test"
SETUP_SUFFIX = "_setup"
CARD_KEY = "conversation_bench"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
#: configs other commands write into a dataset folder; an import may not take their names
RESERVED = ("conversations", "baseline", "interruptions", "duplex", "sid_en", "sid_zh", "sid_noise", "sid_dev_en",
            "sid_dev_noise")


def turn_features():
    import datasets

    return datasets.Features({
        "turn_id": datasets.Value("int32"),
        "input_text": datasets.Value("string"),
        "audio": datasets.Audio(),  # the file's own rate (24 kHz for the published turns)
        "audio_file": datasets.Value("string"),
        "golden_text": datasets.Value("string"),
        "required_function_call": datasets.List({"name": datasets.Value("string"), "args": datasets.Value("string")}),
        "required_function_call_json": datasets.Value("string"),
        "function_call_response_json": datasets.Value("string"),
        "categories": datasets.List(datasets.Value("string")),
        "subcategory": datasets.Value("string"),
        "scoring_dimensions": datasets.List(datasets.Value("string")),
        "flexible_args": datasets.List(datasets.Value("string")),
        "tool_use_guidance": datasets.Value("string"),
        "extras_json": datasets.Value("string"),
    })


def setup_features():
    import datasets

    return datasets.Features({
        "name": datasets.Value("string"),
        "description": datasets.Value("string"),
        "hf_repo": datasets.Value("string"),
        "system_instruction": datasets.Value("string"),
        "knowledge_base": datasets.Value("string"),
        "tools_json": datasets.Value("string"),
        "core_dimensions": datasets.List(datasets.Value("string")),
        "category_dimensions_json": datasets.Value("string"),
        "mapping_version": datasets.Value("string"),
        "source": datasets.Value("string"),
        "audio": datasets.Value("string"),
        "turns": datasets.Value("int32"),
    })


#: the in-house benchmarks `ihbench build` renders into every dataset (their config names are its own)
CONVBENCH_SOURCES = Path(__file__).parent.parent / "sources" / "convbench"


def shipped_folders() -> list[Path]:
    return sorted(folder for folder in CONVBENCH_SOURCES.iterdir() if (folder / "turns.py").is_file()) \
        if CONVBENCH_SOURCES.is_dir() else []


def check_name(name: str, what: str = "--name") -> str:
    from ..redaction import credential_in

    found = credential_in(name) if isinstance(name, str) else None
    if found:  # it would name two folders and the card's configs (battery 54, A8)
        raise UsageError(f"{what}: expected a config name, got {found} (a credential; not shown): a config's name "
                         "names its folder and its entry in the dataset card")
    if not isinstance(name, str) or not _NAME.match(name):
        from ..characters import escaped  # an invisible character by its code (battery 64, K7)

        raise UsageError(f"{what}: expected a config name (1 to 64 lower-case letters, digits and _, starting with a "
                         f"letter), got " + (f"{escaped(name)} ({len(name)} character(s))" if isinstance(name, str)
                                             else repr(name)))
    if name.endswith(SETUP_SUFFIX):
        raise UsageError(f"{what}: {name!r} ends in {SETUP_SUFFIX!r}, which names a benchmark's setup config; "
                         "choose another name")
    if name in RESERVED:  # whether or not this dataset has it yet: the command that writes it would replace it
        writer = "`ihbench sid-import`" if name in ("sid_en", "sid_zh", "sid_noise") else "`ihbench build`"
        raise UsageError(f"{what}: {name!r} is reserved for a config {writer} writes; choose another name")
    return name


def read_audio(read: ReadBenchmark, progress: bool = True) -> list[dict]:
    """Each turn's WAV as stored: its own bytes, with placeholder RIFF sizes set from the file length."""
    import soundfile
    from tqdm.auto import tqdm

    root, files = read.root, read.audio_files
    missing = [f for f in files if not (root / f).is_file()]
    odd = [f for f in missing if os.path.lexists(root / f)]  # there, but no file to read
    if odd:
        raise ConvBenchFormatError(f"{root / odd[0]}: {absent(root / odd[0])}, where turn audio is expected")
    if missing:
        raise ConvBenchFormatError(_missing_audio(read, missing))
    clips = []
    for relative in tqdm(files, unit="turn", desc=f"reading {read.benchmark.name} audio", disable=not progress):
        check_inside(root / relative, root, ConvBenchFormatError)
        data = repair_wav_sizes((root / relative).read_bytes())
        try:
            soundfile.info(io.BytesIO(data))
        except Exception:  # libsndfile's own error type varies with its version, and names its buffer object
            raise ConvBenchFormatError(f"{root / relative}: not a readable audio file (not a WAV libsndfile "
                                       "can open)") from None
        try:  # an empty or NaN clip stopped the on-policy run at that turn, naming no file
            decode_audio(data, where=str(root / relative))
        except AudioError as error:
            raise ConvBenchFormatError(str(error)) from None
        clips.append({"bytes": data, "path": Path(relative).name})
    return clips


def _same_recordings(read: ReadBenchmark, clips: list[dict]) -> None:
    """Two turns of different words whose files hold the same bytes (a file copied over another): the
    model hears one request for both. Said, not refused: a deterministic TTS renders one sentence said
    twice ("Yes, that's right.") to the same bytes, and then the words are the same too."""
    first: dict[str, int] = {}
    for position, clip in enumerate(clips):
        digest = hashlib.sha256(clip["bytes"]).hexdigest()
        turn = read.benchmark.turns[position]
        earlier = first.setdefault(digest, position)
        if earlier != position and read.benchmark.turns[earlier].input.strip() != turn.input.strip():
            log.warning("%s: turns %d and %d hold the same audio (%s, %s) but different words; the model hears "
                        "turn %d's request for both", read.root, read.benchmark.turns[earlier].index, turn.index,
                        read.audio_files[earlier], read.audio_files[position], read.benchmark.turns[earlier].index)


def _missing_audio(read: ReadBenchmark, missing: list[str]) -> str:
    folder = read.root / read.audio_label
    where = (f"{folder}: no such folder" if not folder.is_dir()
             else f"{folder}: {len(missing)} of {len(read.audio_files)} turns have no WAV (first: {missing[0]})")
    voices = read.root / "real_audio"
    if read.audio_label.startswith("real_audio/") and not folder.is_dir() and voices.is_dir():  # --speaker mistyped?
        where += f" (the speakers of {voices}: {', '.join(sorted(d.name for d in voices.iterdir() if d.is_dir()))})"
    repo = read.benchmark.hf_repo or "<the benchmark's Hub dataset>"
    return (f"{where}; the published audio is not in the repository: put it in place with `hf download "
            f"{repo} --repo-type dataset --include '{read.audio_label}*.wav' --local-dir {read.root}`, or import "
            "with --text-only")


def turn_rows(benchmark: ConvBenchmark, audio: Optional[list]) -> list[dict]:
    return [{
        "turn_id": turn.index, "input_text": turn.input,
        "audio": audio[position] if audio is not None else None, "audio_file": turn.audio_file,
        "golden_text": turn.golden_text,
        "required_function_call": [{"name": c["name"], "args": dumps(c["args"])} for c in turn.required_calls],
        "required_function_call_json": dumps(turn.required_function_call),
        "function_call_response_json": dumps(turn.function_call_response),
        "categories": turn.categories, "subcategory": turn.subcategory,
        "scoring_dimensions": turn.scoring_dimensions, "flexible_args": turn.flexible_args,
        "tool_use_guidance": turn.tool_use_guidance, "extras_json": dumps(turn.extras) if turn.extras else None,
    } for position, turn in enumerate(benchmark.turns)]


def setup_row(benchmark: ConvBenchmark, audio_source: str) -> dict:
    return {
        "name": benchmark.name, "description": benchmark.description, "hf_repo": benchmark.hf_repo,
        "system_instruction": benchmark.system_instruction, "knowledge_base": benchmark.knowledge_base,
        "tools_json": dumps(benchmark.tools), "core_dimensions": benchmark.core_dimensions,
        "category_dimensions_json": dumps(benchmark.category_dimensions),
        "mapping_version": benchmark.mapping_version, "source": benchmark.source, "audio": audio_source,
        "turns": len(benchmark.turns),
    }


def import_convbench(path, out_dir, *, name: Optional[str] = None, setup=None, speaker: Optional[str] = None,
                     text_only: bool = False, progress: bool = True) -> dict:
    """Read the benchmark at `path` (see `read.py`), check it, and write its two configs into `out_dir`."""
    if name is not None:
        check_name(name)
    read = read_benchmark(path, setup=setup, speaker=speaker, name=name, text_only=text_only)
    benchmark = read.benchmark
    what = "--name" if name else "the benchmark's name in its config.py (give --name)"
    check_name(benchmark.name, what)
    _check_no_credential(read)
    # a dataset `ihbench build` made holds the in-house benchmark under its own name, with its users' audio
    if benchmark.name in {folder.name for folder in shipped_folders()} and BuildDir(out_dir).is_build():
        raise UsageError(f"{what}: {benchmark.name!r} is reserved for a config `ihbench build` writes (the in-house "
                         "benchmark, with its users' audio); choose another name")
    problems, notes = check_categories(benchmark, str(Path(path)))
    problems += check_calls_against_tools(benchmark, str(Path(path)))
    if problems:
        raise ConvBenchFormatError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    for note in notes:
        log.warning(note)
    audio = None if text_only else read_audio(read, progress)
    if audio is not None:
        _same_recordings(read, audio)
    audio_source = "none (--text-only)" if text_only else f"{read.audio_label} of {read.root}"
    return write_benchmark(benchmark, audio, audio_source, out_dir)


def _check_no_credential(read: ReadBenchmark) -> None:
    """The benchmark's own description and Hub repository, which the setup config and the card copy, hold no
    key (the key rule of the names a command is given, for the constants of the benchmark's config.py)."""
    from ..redaction import credential_in

    for field in ("description", "hf_repo"):
        found = credential_in(getattr(read.benchmark, field, None))
        if found:
            raise UsageError(f"{read.root}: the benchmark's {field} (config.py) holds {found} (a credential; not "
                             "shown), which the dataset would copy; remove it")
    # its texts: a provider's key by its prefix (`sk-proj-...`, `hf_...`), which no conversation needs, is refused
    # (battery 55, B13: one in the system prompt went into the setup parquet, and `publish-dataset` would upload it);
    # a random-looking account number or code in a text is the benchmark's own
    benchmark = read.benchmark
    texts = [("the knowledge base", benchmark.knowledge_base), ("the system instruction", benchmark.system_instruction),
             ("the tools", dumps(benchmark.tools)),  # the knowledge base first: the instruction may quote it
             ("the scoring dimensions", dumps([benchmark.core_dimensions, benchmark.category_dimensions]))]
    # every field of a turn the dataset copies, its recording aside (battery 56, C5: `subcategory`, `categories`,
    # `audio_file` and `tool_use_guidance` were left unread)
    texts += [(f"turn {turn.index}", dumps({field.name: getattr(turn, field.name) for field in fields(turn)
                                            if field.name != "audio"}))
              for turn in benchmark.turns]
    for where, text in texts:
        secret = credential_in_data(text)
        if secret:  # an environment secret's value too (battery 61, H11)
            raise UsageError(f"{read.root}: {where} holds {secret} (a credential; not shown), which the dataset would "
                             "copy and `publish-dataset` upload; remove it")


def write_benchmark(benchmark: ConvBenchmark, audio: Optional[list], audio_source: str, out_dir) -> dict:
    """The two configs of `benchmark` into the dataset folder `out_dir`, under the folder's lock."""
    out = BuildDir(Path(out_dir).resolve())
    with out.writing():
        return write_configs(out, benchmark, audio, audio_source)


def write_configs(out: BuildDir, benchmark: ConvBenchmark, audio: Optional[list], audio_source: str) -> dict:
    """The same, for a caller that holds the folder's lock already (`ihbench build`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name, setup_name = benchmark.name, benchmark.name + SETUP_SUFFIX
    # an import under a name the folder has replaces that config: said, with where the one replaced came from
    replaced = None
    if out.has_card() and name in out.config_names():
        earlier = out.card_metadata(CARD_KEY).get(name)
        earlier = earlier if isinstance(earlier, dict) else {}
        replaced = f"from {earlier.get('source') or 'an earlier import'}; audio: {earlier.get('audio') or 'unknown'}"
    tables = {name: (turn_rows(benchmark, audio), turn_features()),
              setup_name: ([setup_row(benchmark, audio_source)], setup_features())}
    out.path.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    try:
        for config, (rows, features) in tables.items():
            written[config] = out.new_file(config, SPLIT)
            pq.write_table(pa.Table.from_pylist(rows, schema=features.arrow_schema), str(written[config]))
    except BaseException:
        out.discard_files(written)  # nothing of this import stays
        raise

    def list_in_card(files: dict) -> None:
        out.list_configs([{"config_name": config, "data_files": [{"split": SPLIT, "path": files[config]}]}
                          for config in (name, setup_name)], new_card=_new_card(name))
        out.set_card_metadata(CARD_KEY, name, card_entry(benchmark, benchmark.source, audio_source, SPLIT))
    out.install_files(written, SPLIT, list_in_card)
    return {"out": str(out.path), "name": name, "setup": setup_name, "turns": len(benchmark.turns),
            "tools": len(benchmark.tools), "mapping_version": benchmark.mapping_version, "audio": audio_source,
            "replaced": replaced}


def card_entry(benchmark: ConvBenchmark, source: str, audio_source: str, split: str) -> dict:
    """What the card's `conversation_bench` metadata records of one benchmark's configs."""
    return {"turns": len(benchmark.turns), "tools": len(benchmark.tools),
            "setup_config": benchmark.name + SETUP_SUFFIX, "mapping_version": benchmark.mapping_version,
            "source": source, "audio": audio_source, "split": split}


def _new_card(name: str) -> str:
    return (f"\n# ConversationBench-style benchmark `{name}`\n\nImported by `ihbench convbench-import`: config "
            f"`{name}` has one row per turn, `{name}{SETUP_SUFFIX}` the system instruction, knowledge base and tools; "
            f"split `{SPLIT}`. The metadata key `{CARD_KEY}` says where each came from and which category mapping "
            "it uses.\n")
