"""Token counts and calls, per conversation and per run: what provenance and the cost estimate need.

A conversation's counts are what making it took, including answers later served from the cache
(they were paid for once: a resumed or re-made suite reports the same cost, and the same file,
as one made in one go); a run's counts are only the requests it actually sent.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional


@dataclass
class Usage:
    calls: int = 0  # requests sent, re-asks and transport retries included
    cached: int = 0  # agent answers served from the cache
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported: int = 0  # requests whose backend gave no token counts

    def add(self, counter: dict) -> None:
        """`counter`: an `ask_structured` answer's `usage` (calls, and token counts when reported)."""
        self.calls += counter.get("calls", 0)
        self.prompt_tokens += counter.get("prompt_tokens", 0)
        self.completion_tokens += counter.get("completion_tokens", 0)
        if counter.get("calls") and "prompt_tokens" not in counter:
            self.unreported += counter.get("calls", 0)

    def merge(self, other: "Usage") -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict:
        return {**vars(self), "total_tokens": self.total_tokens}  # flat: asdict's deep copy cost more than the call it counted

    def describe(self) -> str:
        known = "" if not self.unreported else f"; {self.unreported} without token counts"
        return f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens ({self.calls} request(s){known})"


def cost_estimate(usage: Usage, price_input: Optional[float], price_output: Optional[float]):
    """US dollars from per-1k-token prices the user gave; "unknown" without them (prices change
    too often for a table in the code to stay right), or when the backend reported no counts."""
    if price_input is None or price_output is None or usage.unreported:
        return "unknown"
    return round(usage.prompt_tokens / 1000 * price_input + usage.completion_tokens / 1000 * price_output, 6)
