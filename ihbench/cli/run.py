"""`ihbench run`: a model over interruption points into a resumable run directory."""
from __future__ import annotations

import argparse
import sys


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import key_value, names, path, url, whole, model_name
    from ihbench.dataset.schema import INTERRUPTION_TYPES, canonical_interruption_type
    from ihbench.loaders.base import GENERATION_TYPES as GENERATION

    run = add("run", help="run a model over interruption points into a resumable run directory")
    run.add_argument("--model", required=True, help="loader name (see `ihbench models`)")
    run.add_argument("--model-path", required=True, type=model_name(),
                     help="local model directory, cached hub id, or served model name")
    run.add_argument("--data", required=True, help="dataset directory or hub id")
    run.add_argument("--config", help="conversations (default) or interruptions")
    run.add_argument("--split", help="split (default: the only one, or test/dev)")
    run.add_argument("--epochs", type=whole(min=1), default=3,
                     help="responses per interruption point (default 3, as the paper)")
    run.add_argument("--out", required=True, type=path("folder"), help="run directory (resumed when it exists)")
    run.add_argument("--limit", type=whole(min=1), help="first N interruption points (after --types)")
    run.add_argument("--types", type=names(INTERRUPTION_TYPES, canonical_interruption_type),
                     help="comma-separated interruption types, e.g. filler,pushback")
    run.add_argument("--modality", choices=("audio", "text"), default="audio", help="text: transcripts replace audio")
    run.add_argument("--history-audio", metavar="all|last:K", default="all",
                     help="last:K keeps the audio of the last K user turns (the interruption included) and gives "
                     "older ones as transcripts, for models whose context cannot hold a deep point's history; "
                     "recorded in run.json (default all)")
    run.add_argument("--max-new-tokens", type=GENERATION["max_new_tokens"], default=256,
                     help="length limit of each response (default 256)")
    run.add_argument("--temperature", type=GENERATION["temperature"], default=0.0, help="0 = greedy (default)")
    run.add_argument("--top-p", type=GENERATION["top_p"], default=1.0,
                     help="nucleus sampling mass when sampling (default 1.0)")
    run.add_argument("--seed", type=whole(min=0), default=0,
                     help="base seed; each (item, epoch) derives its own (default 0)")
    run.add_argument("--base-url", action="append", type=url(), help="openai loader: server URL, e.g. "
                     "http://gpu-node:8000/v1 (vLLM); give it several times to spread requests over several servers")
    run.add_argument("--concurrency", type=whole(min=1), help="openai loader: requests in flight")
    run.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                     help="other loader options (device, dtype, ...)")
    run.add_argument("--allow-endpoint-change", action="store_true",
                     help="resume a run whose --base-url changed (only when the new server serves the same model)")
    run.set_defaults(func=main)
    return run


def main(args: argparse.Namespace) -> int:
    from ihbench.cli.common import incomplete
    from ihbench.dataset.outputs import check_output_path
    from ihbench.loaders import check_options
    from ihbench.protocol import parse_history_audio
    from ihbench.runner import RunSpec, run

    check_output_path(args.out, "--out", may_be=("run",))
    generation = {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_p": args.top_p}
    options = dict(args.option or ())
    if args.base_url:  # several servers: requests are spread over them, a retry goes to the next
        options["base_url"] = args.base_url[0] if len(args.base_url) == 1 else args.base_url
    if args.concurrency is not None:
        options["concurrency"] = args.concurrency
    # before the run directory exists: a bad option names itself, as the user typed it
    options = check_options(args.model, options, flags={"base_url": "--base-url", "concurrency": "--concurrency"})
    spec = RunSpec(
        loader=args.model, model_path=args.model_path, data=args.data, out=args.out, config=args.config,
        split=args.split, epochs=args.epochs, limit=args.limit,
        types=args.types, modality=args.modality,
        history_audio=parse_history_audio(args.history_audio), generation=generation, seed=args.seed,
        loader_options=options, command=["ihbench", *sys.argv[1:]],
        allow_endpoint_change=args.allow_endpoint_change,
    )
    summary = run(spec, progress=not args.quiet)
    print(f"{summary.out}: {summary.written} response(s) written, {summary.skipped} already done, "
          f"{summary.errors} error(s), {summary.planned} planned ({summary.seconds:.1f} s)")
    return incomplete("run", summary.errors, summary.planned, "response(s)", f"{summary.out}/responses.jsonl")

