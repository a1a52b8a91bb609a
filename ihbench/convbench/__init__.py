"""ConversationBench runs: one long on-policy conversation per epoch, with tools.

`run.py` plays the conversations (resumable, concurrent across epochs), `session.py` one turn
with its tool loop, `tool_results.py` the reference harness's tool results, `records.py` the
turn records, `transcript.py` the reference's own files. The data side (import, the in-house
benchmark, reading a config back) is `ihbench.dataset.convbench`.
"""
from .run import ConvRunSpec, ConvRunSummary, run_convbench

__all__ = ["ConvRunSpec", "ConvRunSummary", "run_convbench"]
