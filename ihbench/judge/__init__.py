"""LLM judges: task fulfillment (comparative, against the baseline) and recovery quality
(absolute, 2-4 criteria). Verdicts are data (judgments.jsonl); scores come from metrics/.
The calls go through the one text-LLM client, `ihbench.llm`."""
from ..rundir import JUDGMENTS
from .parse import InvalidJudgment, parse_rq, parse_tf
from .prompts import PROMPT_VERSION, prompt_hash
from .run import JudgeConfigError, JudgeSummary, judge_run, tf_order

# Transitional: the command modules still import the client from here; they move to `ihbench.llm`
# when the CLI is split into `ihbench/cli/`, and these three names go.
from ..llm import LLMCache as JudgeCache  # noqa: E402
from ..llm import OpenAICompatibleLLM as OpenAIJudgeBackend  # noqa: E402
from ..llm import TransformersLLM as TransformersJudgeBackend  # noqa: E402

__all__ = [
    "JUDGMENTS", "PROMPT_VERSION", "InvalidJudgment", "JudgeCache", "JudgeConfigError", "JudgeSummary",
    "OpenAIJudgeBackend", "TransformersJudgeBackend", "judge_run", "parse_rq", "parse_tf", "prompt_hash", "tf_order",
]
