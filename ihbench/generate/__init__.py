"""`ihbench generate`: the paper's multi-agent pipeline (prerequisites, round planner, assistant and
user simulators, rubric generator, verifier and modifier) with a pluggable LLM, writing private
interruption suites in the source format that `ihbench verify` checks and `ihbench build` builds.

The public names are imported on first use: building the CLI's parser imports `generate.cli`,
which must not pull in the LLM client and its HTTP stack.
"""
from importlib import import_module

_EXPORTS = {
    "AgentFailure": ".agents", "PROMPT_VERSION": ".prompts", "prompt_hash": ".prompts",
    "PIPELINE_VERSION": ".run", "GenerateSpec": ".run", "GenerateSummary": ".run", "generate": ".run",
    "load_workflow": ".workflow",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name], __name__), name)
