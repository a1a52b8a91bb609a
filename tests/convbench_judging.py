"""A scripted ConversationBench judge: a TEST DOUBLE standing in for a judge LLM behind the local
OpenAI-compatible test server. It reads the request as a judge would (the turns to judge, each
turn's score dimensions) and answers with verdicts: by default every scored dimension passes;
`overrides` sets a turn's fields, `calls` the function_calls it reports."""
from __future__ import annotations

import json
import re
from typing import Optional

from openai_test_server import Reply

CORE = ("tool_use_correct", "instruction_following", "kb_grounding")


def requested_turns(body) -> dict[int, list[str]]:
    """turn -> its score dimensions, for the turns the request asks to judge."""
    text = body["messages"][1]["content"]  # the request (a re-ask appends the answer and what was wrong)
    judged = text.split("## Turns to judge", 1)[1]
    turns = {}
    for block in re.split(r"^### Turn ", judged, flags=re.M)[1:]:
        number = int(block.split("\n", 1)[0])
        dims = re.search(r"^Score dimensions: (.*)$", block, re.M).group(1)
        expects_call = re.search(r"^Expected calls: (.*)$", block, re.M).group(1) != "none"
        turns[number] = [d.strip() for d in dims.split(",")] + (["expects_call"] if expects_call else [])
    return turns


class ConvJudge:
    def __init__(self, overrides: Optional[dict] = None, calls: Optional[list] = None, fail: bool = False):
        self.overrides = overrides or {}
        self.calls = calls or []
        self.fail = fail
        self.requests = []

    def verdict(self, turn: int, dims: list[str]) -> dict:
        row = {"turn": turn, "missed_call_cause": "none", "cascade_from": None, "honest_about_missing": None,
               "reasoning": f"turn {turn} is fine"}
        for name in ("tool_use_correct", "instruction_following", "kb_grounding", "ambiguity_handling",
                     "state_tracking"):
            row[name] = True if name in dims else None
        if "expects_call" not in dims:
            row["tool_use_correct"] = None
        row.update(self.overrides.get(turn, {}))
        return row

    def __call__(self, body):
        self.requests.append(body)
        if self.fail:
            return Reply(status=500)
        turns = requested_turns(body)
        answer = {"turns": [self.verdict(t, dims) for t, dims in sorted(turns.items())],
                  "function_calls": [c for c in self.calls if c.get("expected_turn") in turns
                                     or c.get("actual_turn") in turns],
                  "notes": "scripted"}
        return Reply(content=json.dumps(answer))
