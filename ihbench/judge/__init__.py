"""LLM judges: task fulfillment (comparative, against the baseline) and recovery quality
(absolute, 2-4 criteria). Verdicts are data (judgments.jsonl); scores come from metrics/.
The calls go through the one text-LLM client, `ihbench.llm`."""
from ..rundir import JUDGMENTS
from .parse import InvalidJudgment, parse_rq, parse_tf
from .prompts import PROMPT_VERSION, prompt_hash
from .run import JudgeConfigError, JudgeSummary, judge_run, tf_order

__all__ = [
    "JUDGMENTS", "PROMPT_VERSION", "InvalidJudgment", "JudgeConfigError", "JudgeSummary", "judge_run", "parse_rq",
    "parse_tf", "prompt_hash", "tf_order",
]
