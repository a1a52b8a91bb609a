"""`ihbench barge-in`: on-policy interruption points. The model under test speaks its own turns; the
generation pipeline's caller cuts into its own sentence at a time placed on a TTS clock; the point's
rubric and blind baseline are written before the model recovers.

    clock.py         a reply's words on the clock (our TTS renders)
    flite_times.py   word times measured by flite itself (its utterance, read through libflite)
    cuts.py          the suite's points as targets; placing a cut inside a sentence, seeded
    prompts.py       the one new agent prompt: the caller who heard only the beginning
    caller.py        what the caller and planner are given: the suite's, or filled by stated rules
    simulator.py     the pipeline's agents on the live call, the leak check applied live
    conversation.py  the call so far; the model's next input through `ihbench.protocol`
    records.py       one typed, versioned record per round
    run.py           the run folder, resume, the loop

The public names are imported on first use (the LLM client and loaders are not light).
"""
from importlib import import_module

_EXPORTS = {"BargeInSpec": ".run", "BargeInSummary": ".run", "run_barge_in": ".run", "RoundRecord": ".records"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name], __name__), name)
