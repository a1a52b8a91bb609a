"""The `ihbench generate` command: its options and the function the CLI calls."""
from __future__ import annotations

import argparse
import sys


def add_parser(add) -> argparse.ArgumentParser:
    """`add(name, **kw)`: the CLI's subcommand factory (it adds the common options such as --quiet)."""
    from ihbench.dataset.argtypes import (concurrency, count, model_name, number, path, rounds, seed, sentence,
                                          temperature, timeout_seconds, tokens, url)

    p = add("generate", help="write a private interruption suite with an LLM (the paper's generation pipeline)")
    p.add_argument("--domain", help="one of the ten domains, e.g. telecom or government (or use --workflow)")
    p.add_argument("--goal", type=sentence(), help="what the agent's workflow achieves, e.g. \"Port the caller's number\"")
    p.add_argument("--description", type=sentence(),
                   help="one sentence describing the organisation's line (default: the LLM writes it)")
    p.add_argument("--workflow", type=path("file"), help="YAML with domain, goal, stages, knowledge_base and policies, "
                   "instead of --domain/--goal (see the README)")
    p.add_argument("--intents", type=count(), default=3, help="caller intent profiles per goal (default 3)")
    p.add_argument("--conversations", type=count(), default=5,
                   help="calls to generate; a rerun with a larger number adds the missing ones (default 5)")
    p.add_argument("--llm-model", required=True, type=model_name(),
                   help="model name on the server, or a local path (transformers)")
    p.add_argument("--llm-base-url", type=url(),
                   help="OpenAI-compatible server URL, e.g. http://localhost:8000/v1 (default: OpenAI)")
    p.add_argument("--llm-backend", choices=("openai", "transformers"), default="openai",
                   help="openai: any OpenAI-compatible server (default); transformers: a local text model")
    p.add_argument("--temperature", type=temperature(), default=0.7, help="sampling temperature of the openai backend "
                   "(default 0.7); part of the cache key")
    p.add_argument("--max-new-tokens", type=tokens(), default=4096,
                   help="transformers backend: length limit of each answer (default 4096)")
    p.add_argument("--no-json-schema", action="store_true", help="for servers without response_format support")
    p.add_argument("--timeout", type=timeout_seconds(), default=300.0,
                   help="seconds per LLM call (default 300)")
    p.add_argument("--concurrency", type=concurrency(), default=4, help="calls generated at the same time (default 4)")
    p.add_argument("--seed", type=seed(), default=0, help="base seed; each call derives its own (default 0)")
    p.add_argument("--max-reasks", type=rounds(), default=2,
                   help="re-asks of an agent whose answer is unusable before its call counts as failed (default 2)")
    p.add_argument("--max-fix-rounds", type=rounds(), default=3,
                   help="verify-modify rounds before a call with findings left is discarded (default 3)")
    p.add_argument("--retry-discarded", action="store_true", help="generate again the calls an earlier run discarded")
    p.add_argument("--price-per-1k-input", type=number(min=0),
                   help="US dollars per 1k prompt tokens, for the cost estimate")
    p.add_argument("--price-per-1k-output", type=number(min=0),
                   help="US dollars per 1k completion tokens, for the cost estimate")
    p.add_argument("--cache", type=path("file"),
                   help="sqlite cache of LLM answers (default ~/.cache/ihbench/judge_cache.sqlite)")
    p.add_argument("--out", required=True, type=path("folder"), help="output folder (resumed when it exists)")
    p.set_defaults(func=main, resumes=True)
    return p


def _backend(args):
    from ihbench.llm import OpenAICompatibleLLM, TransformersLLM

    if args.llm_backend == "transformers":
        return TransformersLLM(args.llm_model, max_new_tokens=args.max_new_tokens)
    return OpenAICompatibleLLM(args.llm_model, base_url=args.llm_base_url, timeout=args.timeout,
                              structured=not args.no_json_schema, temperature=args.temperature)


def main(args: argparse.Namespace) -> int:
    import asyncio

    from ihbench.cli.common import incomplete, server_only
    from ihbench.generate.run import GenerateSpec, check_spec, generate
    from ihbench.dataset.outputs import check_output_path
    from ihbench.llm import LLMCache

    server_only("--llm-backend", args.llm_backend, {"--llm-base-url": args.llm_base_url,
                                                    "--no-json-schema": args.no_json_schema})
    check_output_path(args.out, "--out", may_be=("generated",))
    spec = GenerateSpec(out=args.out, domain=args.domain, goal=args.goal, description=args.description,
                        workflow=args.workflow, intents=args.intents, conversations=args.conversations,
                        seed=args.seed, concurrency=args.concurrency, max_reasks=args.max_reasks,
                        max_fix_rounds=args.max_fix_rounds, retry_discarded=args.retry_discarded,
                        price_input=args.price_per_1k_input, price_output=args.price_per_1k_output,
                        command=["ihbench", *sys.argv[1:]])
    check_spec(spec)  # a bad option, workflow file or cache fails before a model is loaded
    cache = LLMCache(args.cache)  # a wrong --cache (or IHBENCH_CACHE) fails before any call
    backend = _backend(args)

    async def run():
        try:
            return await generate(spec, backend, cache=cache,
                                  progress=not args.quiet)
        finally:
            await backend.close()

    s = asyncio.run(run())
    cost = "unknown" if s.cost == "unknown" else f"${s.cost:.4f}"
    kept = f", {s.kept_out} discarded earlier (--retry-discarded to redo)" if s.kept_out else ""
    print(f"{s.out}: {s.written} conversation(s) written, {s.skipped} already done, {s.discarded} discarded, "
          f"{s.failed} failed{kept}; {s.usage.calls} LLM request(s), {s.usage.cached} answer(s) from cache, "
          f"{s.usage.total_tokens} tokens, cost {cost} ({s.seconds:.1f} s)")
    if s.failed:
        for failure in s.failures[:5]:
            print(f"ihbench generate: failed: {failure}", file=sys.stderr)
    return incomplete("generate", s.failed, s.planned, "conversation(s)", f"{s.out}/discarded.jsonl")
