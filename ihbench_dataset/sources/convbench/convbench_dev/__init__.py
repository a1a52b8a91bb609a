"""In-house ConversationBench-layout dev set: a phone assistant for the Lakeshore Community College Summer Term 2026 registration desk."""

from .config import BenchmarkConfig
