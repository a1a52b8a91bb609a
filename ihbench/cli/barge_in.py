"""`ihbench barge-in`: on-policy interruption points (the model's own sentence cut) into a run folder."""
from __future__ import annotations

import argparse
import sys


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import (concurrency, count, data_source, key_value, model_name, path, rounds, seed,
                                          temperature, timeout_seconds, url)
    from ihbench.dataset.sources import USER_VOICES
    from ihbench.loaders.base import GENERATION_TYPES as GENERATION

    p = add("barge-in", help="play each conversation of a suite on-policy: the model writes every turn, a simulated "
                             "caller cuts into its own sentences at the suite's points, and each point gets its rubric "
                             "and baseline before the model recovers (resumable run folder)")
    p.add_argument("--data", type=data_source(), required=True, help="dataset directory or hub id (an IHBench suite)")
    p.add_argument("--config", type=model_name(), help="conversations (the default and only one)")
    p.add_argument("--split", help="split (default: the only one, or test/dev)")
    p.add_argument("--model", required=True, help="loader name of the model under test (see `ihbench models`)")
    p.add_argument("--model-path", required=True, type=model_name(),
                   help="local model directory, cached hub id, or served model name")
    p.add_argument("--base-url", action="append", type=url(), help="openai loader: server URL of the model under test")
    p.add_argument("--concurrency", type=concurrency(),
                   help="conversations played at once (default 4 for a served model, 1 for a local one)")
    p.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                   help="other loader options (device, dtype, ...)")
    p.add_argument("--modality", choices=("audio", "text"), default="audio",
                   help="audio: the caller's turns rendered as speech (default); text: as transcripts")
    p.add_argument("--max-new-tokens", type=GENERATION["max_new_tokens"], default=256,
                   help="length limit of each of the model's messages (default 256)")
    p.add_argument("--temperature", type=GENERATION["temperature"], default=0.0, help="0 = greedy (default)")
    p.add_argument("--top-p", type=GENERATION["top_p"], default=1.0, help="nucleus sampling mass (default 1.0)")
    p.add_argument("--sim-model", required=True, type=model_name(),
                   help="the user simulator's, rubric generator's and baseline writer's LLM (model name on the server)")
    p.add_argument("--sim-base-url", type=url(),
                   help="its OpenAI-compatible server, e.g. http://localhost:8000/v1 (default: OpenAI)")
    p.add_argument("--sim-temperature", type=temperature(), default=0.7,
                   help="the simulator's sampling temperature (default 0.7); part of the cache key")
    p.add_argument("--sim-timeout", type=timeout_seconds(), default=300.0,
                   help="seconds per simulator call (default 300)")
    p.add_argument("--max-reasks", type=rounds(), default=2,
                   help="re-asks of an agent whose answer is unusable (or leaks what the caller did not hear) "
                        "before its round counts as failed (default 2)")
    p.add_argument("--cache", type=path("file"),
                   help="sqlite cache of the simulator's answers (default ~/.cache/ihbench/judge_cache.sqlite)")
    p.add_argument("--user-voice", choices=USER_VOICES,
                   help="voice the caller's turns are rendered in, with --modality audio (default flite:slt)")
    p.add_argument("--limit", type=count(), help="first N conversations that have interruption points")
    p.add_argument("--seed", type=seed(), default=0, help="base seed; each round derives its own (default 0)")
    p.add_argument("--out", required=True, type=path("folder"), help="run directory (resumed when it exists)")
    p.add_argument("--allow-endpoint-change", action="store_true",
                   help="resume a run whose --base-url changed (only when the new server serves the same model)")
    p.set_defaults(func=main, resumes=True,  # a conversation's rounds count once its closing record is written
                   stopped="the conversations played to their end are kept, and the same command plays the others "
                           "(those stopped midway from their start)")
    return p


def main(args: argparse.Namespace) -> int:
    from ihbench.barge_in import BargeInSpec, run_barge_in
    from ihbench.cli.common import incomplete, print_budget_note, servers, set_by_flag
    from ihbench.dataset.outputs import check_output_path
    from ihbench.loaders import check_options

    from ihbench.dataset.errors import UsageError

    if args.modality == "text" and args.user_voice is not None:  # nothing is rendered, yet it would be the identity
        raise UsageError("--user-voice renders the caller's turns as audio; with --modality text none is: leave it out")
    check_output_path(args.out, "--out", may_be=("run",))
    options = dict(args.option or ())
    set_by_flag(options, "base_url", "--base-url", servers(args.base_url))
    options = check_options(args.model, options, flags={"base_url": "--base-url"})
    if options.get("stream"):  # the loader streams only a ConversationBench config's tool-using turns
        raise UsageError("--option stream: only for a ConversationBench config of `ihbench run`; barge-in asks for "
                         "whole replies")
    spec = BargeInSpec(
        loader=args.model, model_path=args.model_path, data=args.data, out=args.out, config=args.config,
        split=args.split, limit=args.limit, concurrency=args.concurrency, modality=args.modality,
        user_voice=args.user_voice or "flite:slt",
        generation={"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_p": args.top_p},
        seed=args.seed, loader_options=options, sim_model=args.sim_model, sim_base_url=args.sim_base_url,
        sim_temperature=args.sim_temperature, sim_timeout=args.sim_timeout, max_reasks=args.max_reasks,
        cache=args.cache, command=["ihbench", *sys.argv[1:]], allow_endpoint_change=args.allow_endpoint_change)
    s = run_barge_in(spec, progress=not args.quiet)
    print(f"{s.out}: {s.conversations} conversation(s), {s.rounds} round(s) played, {s.skipped} already done; "
          f"{s.placed} cut(s) placed, {s.unplaced} planned cut(s) could not be placed; {s.sim_calls} simulator "
          f"request(s) ({s.seconds:.1f} s)")
    print_budget_note(s.at_budget, args.max_new_tokens, "reply(ies)")
    return incomplete("barge-in", s.errors, s.conversations, "conversation(s)", f"{s.out}/barge_in.jsonl")
