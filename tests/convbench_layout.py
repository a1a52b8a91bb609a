"""A small benchmark folder in the published ConversationBench layout, written by the tests (our own
words: a bike-repair shop), with WAVs as the published ones are (24 kHz mono PCM-16 whose RIFF and
data sizes are the streaming placeholder 0xFFFFFFFF), and the Hub's metadata.jsonl rows of it."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

TURNS = [
    {"input": "Hi, when do you open on Saturday?", "golden_text": "We open at 9:00 AM on Saturday.",
     "categories": ["basic_qa"], "audio_file": "audio/turn_000.wav"},
    {"input": "Book a tune-up for Ada Park, slot 42.", "golden_text": "Done: your tune-up in slot 42 is booked.",
     "required_function_call": {"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "42"}},
     "categories": ["tool_use"], "audio_file": "audio/turn_001.wav"},
    {"input": "Actually cancel that and book slot 43 instead.",
     "golden_text": "Slot 42 is cancelled, but slot 43 is full, so it could not be booked.",
     "required_function_call": [
         {"name": "cancel_booking", "args": {"customer": "Ada Park", "slot_id": "42"}},
         {"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "43"}}],
     "function_call_response": [{"status": "success"}, {"status": "error", "error_code": "SLOT_FULL"}],
     "categories": ["implicit_correction", "error_recovery"], "subcategory": "partial_success",
     "audio_file": "audio/turn_002.wav"},
    {"input": "Which Park did I say I was?", "golden_text": "You said Ada Park.",
     "categories": ["long_range_memory", "ambiguous_entity"], "audio_file": "audio/turn_003.wav"},
    {"input": "Thanks, bye!", "golden_text": "Bye!", "required_function_call": {"name": "end_session", "args": {}},
     "categories": ["basic_qa"], "audio_file": "audio/turn_004.wav"},
]
CORE = ["kb_grounding", "instruction_following", "tool_use_correct"]
MAPPING = {"long_range_memory": ["state_tracking"], "implicit_correction": ["state_tracking"],
           "error_recovery": ["state_tracking"], "ambiguous_entity": ["ambiguity_handling"]}
KB = "\n# Spoke & Chain\n\nOpen Saturday 9:00 AM to 5:00 PM.\nSlots 42 and 43: tune-ups.\n"

TURNS_PY = f'''"""Turns of the bike shop benchmark."""

turns = {TURNS!r}

CORE_DIMENSIONS = {CORE!r}

CATEGORY_DIMENSIONS = {MAPPING!r}


def get_relevant_dimensions(turn):
    extra = set()
    for category in turn.get("categories") or [turn.get("category")]:
        extra.update(CATEGORY_DIMENSIONS.get(category, []))
    return CORE_DIMENSIONS + sorted(extra)
'''
TOOLS_PY = '''"""Tools."""
from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema

end_session_function = FunctionSchema(name="end_session", description="End the call.", properties={}, required=[])
book_repair_function = FunctionSchema(
    name="book_repair",
    description="Book a repair slot.",
    properties={"customer": {"type": "string", "description": "Full name."},
                "slot_id": {"type": "string", "description": "Slot number."}},
    required=["customer", "slot_id"],
)
cancel_booking_function = FunctionSchema(
    name="cancel_booking",
    description="Cancel a booking.",
    properties={"customer": {"type": "string", "description": "Full name."},
                "slot_id": {"type": "string", "description": "Slot number."}},
    required=["customer"],
)

ToolsSchemaForTest = ToolsSchema(standard_tools=[end_session_function, book_repair_function, cancel_booking_function])
'''
SYSTEM_PY = '''"""System instruction."""
from pathlib import Path

_PREAMBLE = """You are the phone assistant of Spoke & Chain.
---
### KNOWLEDGE BASE"""

_TOOLS_SECTION = """
### AVAILABLE TOOLS
Call a tool only with its required parameters."""


def _load_knowledge_base():
    return (Path(__file__).parent / "data" / "knowledge_base.txt").read_text(encoding="utf-8")


system_instruction = _PREAMBLE + _load_knowledge_base() + _TOOLS_SECTION
'''
CONFIG_PY = '''"""Config."""
from pathlib import Path

from .system import system_instruction
from .tools import ToolsSchemaForTest
from .turns import turns


class BenchmarkConfig:
    """The bike shop benchmark."""

    name = "bike_bench"
    description = "5-turn test benchmark"
    hf_repo = "example/bike-bench"
    turns = turns
    tools_schema = ToolsSchemaForTest
    system_instruction = system_instruction
    audio_dir = Path(__file__).parent / "audio"

    def get_audio_path(self, index):
        return self.audio_dir / f"turn_{index:03d}.wav"
'''
INIT_PY = '"""Bike bench."""\nfrom .config import BenchmarkConfig\n'


def streaming_wav(seconds: float, rate: int = 24000, seed: int = 0) -> bytes:
    """PCM-16 mono with both sizes set to the streaming placeholder, as the published turns are."""
    import soundfile

    samples = (np.random.default_rng(seed).standard_normal(int(seconds * rate)) * 0.1).astype(np.float32)
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV", subtype="PCM_16")
    data = bytearray(buffer.getvalue())
    data[4:8] = b"\xff\xff\xff\xff"
    position = data.index(b"data")
    data[position + 4:position + 8] = b"\xff\xff\xff\xff"
    return bytes(data)


def write_benchmark_folder(root: Path, *, audio: bool = True, real_speaker: str = "") -> Path:
    folder = root / "benchmarks" / "bike_bench"
    (folder / "data").mkdir(parents=True)
    for name, text in (("turns.py", TURNS_PY), ("tools.py", TOOLS_PY), ("system.py", SYSTEM_PY),
                       ("config.py", CONFIG_PY), ("__init__.py", INIT_PY)):
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "data" / "knowledge_base.txt").write_text(KB, encoding="utf-8")
    if audio:
        (folder / "audio").mkdir()
        for index in range(len(TURNS)):
            (folder / "audio" / f"turn_{index:03d}.wav").write_bytes(streaming_wav(0.5 + 0.1 * index, seed=index))
    if real_speaker:
        (folder / "real_audio" / real_speaker).mkdir(parents=True)
        for index in range(len(TURNS)):
            (folder / "real_audio" / real_speaker / f"turn_{index:03d}.wav").write_bytes(
                streaming_wav(0.3, rate=16000, seed=100 + index))
    return folder


def write_hub_rows(root: Path, *, speakers: tuple = ()) -> Path:
    """metadata.jsonl as the Hub viewer shows it: calls always wrapped in a list, tool columns as JSON
    strings when `speakers` (the audiofolder variant with file_name and speaker)."""
    root.mkdir(parents=True)
    lines = []
    for speaker in speakers or (None,):
        for index, turn in enumerate(TURNS):
            calls = turn.get("required_function_call")
            calls = None if calls is None else calls if isinstance(calls, list) else [calls]
            responses = turn.get("function_call_response")
            responses = None if responses is None else responses if isinstance(responses, list) else [responses]
            row = {"turn_id": index, "input_text": turn["input"], "golden_text": turn["golden_text"],
                   "required_function_call": calls, "function_call_response": responses,
                   "categories": turn["categories"], "subcategory": turn.get("subcategory"),
                   "scoring_dimensions": None}
            if speaker:
                row.update(file_name=f"real_audio/{speaker}/turn_{index:03d}.wav", speaker=speaker,
                           required_function_call=json.dumps(calls), function_call_response=json.dumps(responses))
                (root / "real_audio" / speaker).mkdir(parents=True, exist_ok=True)
                (root / row["file_name"]).write_bytes(streaming_wav(0.3, rate=16000, seed=index))
            else:
                row["audio_file"] = turn["audio_file"]
            lines.append(json.dumps({k: v for k, v in row.items() if v is not None or k == "required_function_call"}))
    (root / "metadata.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not speakers:
        (root / "audio").mkdir()
        for index in range(len(TURNS)):
            (root / "audio" / f"turn_{index:03d}.wav").write_bytes(streaming_wav(0.4, seed=index))
    return root
