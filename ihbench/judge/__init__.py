"""LLM judges: task fulfillment (comparative, against the baseline) and recovery quality
(absolute, 2-4 criteria). Verdicts are data (judgments.jsonl); scores come from metrics/."""
from ..rundir import JUDGMENTS
from .backends import OpenAIJudgeBackend, TransformersJudgeBackend, TransportError
from .cache import JudgeCache
from .parse import InvalidJudgment, extract_json, parse_rq, parse_tf
from .prompts import PROMPT_VERSION, prompt_hash
from .run import JudgeConfigError, JudgeSummary, judge_run, tf_order

__all__ = [
    "JUDGMENTS", "PROMPT_VERSION", "InvalidJudgment", "JudgeCache", "JudgeConfigError", "JudgeSummary",
    "OpenAIJudgeBackend", "TransformersJudgeBackend", "TransportError", "extract_json", "judge_run",
    "parse_rq", "parse_tf", "prompt_hash", "tf_order",
]
