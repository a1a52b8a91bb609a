"""Benchmark configuration for the convbench_dev in-house conversation set."""

from pathlib import Path

from .turns import turns
from .tools import ToolsSchemaForTest
from .system import system_instruction


class BenchmarkConfig:
    """One continuous caller on the Lakeshore Community College Summer Term 2026 registration line."""

    name = "convbench_dev"
    description = "52-turn in-house benchmark: a summer-term registration desk, ~530-line knowledge base, 8 tools"
    hf_repo = None
    turns = turns
    tools_schema = ToolsSchemaForTest
    system_instruction = system_instruction
    audio_dir = Path(__file__).parent / "audio"

    def get_audio_path(self, index):
        return self.audio_dir / f"turn_{index:03d}.wav"
