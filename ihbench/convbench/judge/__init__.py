"""The ConversationBench judge: the benchmark's dimensions per turn, through the one LLM client.

    prompt.py    the prompt (in-house, versioned, hashed) and the answer's JSON schema
    parse.py     one window's answer, checked (re-asked when a turn is missing)
    windows.py   whole conversation in one request, or windows when it does not fit
    realign.py   phase 2 by rule: scope, charges, early/late calls, cascades, turn-taking
    run.py       `judge_convbench_run`: resumable, one record per (epoch, turn)
"""
from .prompt import CONTEXT_PARTS, PROMPT_VERSION, prompt_hash
from .realign import DIMENSIONS, realign
from .run import ConvJudgeSummary, judge_convbench_run, read_conv_judgments

__all__ = ["CONTEXT_PARTS", "DIMENSIONS", "PROMPT_VERSION", "ConvJudgeSummary", "judge_convbench_run", "prompt_hash",
           "read_conv_judgments", "realign"]
