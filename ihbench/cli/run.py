"""`ihbench run`: a model over interruption points into a resumable run directory."""
from __future__ import annotations

import argparse
import sys


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import (concurrency, count, data_source, epochs, history_audio, key_value, model_name,
                                          names, path, rounds, seed, url, whole_numbers)
    from ihbench.dataset.schema import INTERRUPTION_TYPES, canonical_interruption_type
    from ihbench.loaders.base import GENERATION_TYPES as GENERATION

    run = add("run", help="run a model over interruption points (or a ConversationBench config, on-policy with "
                           "tools) into a resumable run directory")
    run.add_argument("--model", required=True, help="loader name (see `ihbench models`)")
    run.add_argument("--model-path", required=True, type=model_name(),
                     help="local model directory, cached hub id, or served model name")
    run.add_argument("--data", type=data_source(), required=True, help="dataset directory or hub id")
    run.add_argument("--config", type=model_name(), help="conversations (default) or interruptions; or a ConversationBench config "
                                      "(convbench_dev, or one added by convbench-import)")
    run.add_argument("--split", help="split (default: the only one, or test/dev)")
    run.add_argument("--epochs", type=epochs(), default=3,
                     help="responses per interruption point (default 3, as the paper)")
    run.add_argument("--out", required=True, type=path("folder"), help="run directory (resumed when it exists)")
    run.add_argument("--limit", type=count(), help="first N interruption points (after --types)")
    run.add_argument("--types", type=names(INTERRUPTION_TYPES, canonical_interruption_type),
                     help="comma-separated interruption types, e.g. filler,pushback")
    run.add_argument("--modality", choices=("audio", "text"), default="audio", help="text: transcripts replace audio")
    run.add_argument("--history-audio", metavar="all|auto|last:K", type=history_audio(),
                     help="all: every user turn as audio (default, the benchmark's protocol); auto: per item, the "
                     "most recent user turns that fit the model's context (and a server's --option max_audio_clips) "
                     "as audio, older ones as transcripts; last:K: the last K (the interruption included). Recorded "
                     "in run.json, and per answer how many turns were heard as audio (the report shows it)")
    run.add_argument("--max-new-tokens", type=GENERATION["max_new_tokens"], default=256,
                     help="length limit of each response (default 256)")
    run.add_argument("--temperature", type=GENERATION["temperature"], default=0.0, help="0 = greedy (default)")
    run.add_argument("--top-p", type=GENERATION["top_p"], default=1.0,
                     help="nucleus sampling mass when sampling (default 1.0)")
    run.add_argument("--seed", type=seed(), default=0,
                     help="base seed; each (item, epoch) derives its own (default 0)")
    run.add_argument("--base-url", action="append", type=url(), help="openai loader: server URL, e.g. "
                     "http://gpu-node:8000/v1 (vLLM); give it several times to spread requests over several servers")
    run.add_argument("--concurrency", type=concurrency(), help="openai loader: requests in flight")
    run.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                     help="other loader options (device, dtype, ...)")
    bench = run.add_argument_group("ConversationBench configs")
    bench.add_argument("--tool-results", choices=("positional", "matched"),
                       help="how calls are answered: positional (the original harness, default) or matched (by name "
                            "and arguments, error payloads for wrong calls: the successor)")
    bench.add_argument("--max-tool-rounds", type=rounds(min=1),
                       help="model requests per turn before the turn ends without an answer (default 8; recorded)")
    bench.add_argument("--only-turns", type=whole_numbers(), metavar="N,N,...",
                       help="play only these turns, as one conversation, keeping their indices")
    bench.add_argument("--rehydrate", action="store_true",
                       help="play each turn alone after the golden history (user turns and golden replies)")
    run.add_argument("--allow-endpoint-change", action="store_true",
                     help="resume a run whose --base-url changed (only when the new server serves the same model)")
    run.set_defaults(func=main, resumes=True)
    return run


def main(args: argparse.Namespace) -> int:
    from ihbench.cli.common import incomplete, print_budget_note
    from ihbench.dataset.convbench.load import is_convbench_config
    from ihbench.cli.common import servers as _servers, set_by_flag
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_output_path
    from ihbench.loaders import check_options
    from ihbench.protocol import parse_history_audio
    from ihbench.runner import RunSpec, run

    if args.modality == "text" and args.history_audio is not None:  # it would do nothing, yet be the run's identity
        raise UsageError("--history-audio says which user turns are heard as audio; with --modality text none is: "
                         "leave it out")
    check_output_path(args.out, "--out", may_be=("run",))
    generation = {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_p": args.top_p}
    options = dict(args.option or ())
    # several servers: requests are spread over them, a retry goes to the next
    set_by_flag(options, "base_url", "--base-url", _servers(args.base_url))
    set_by_flag(options, "concurrency", "--concurrency", args.concurrency)
    # before the run directory exists: a bad option names itself, as the user typed it
    # (named by the flag only when the flag set it: `--option base_url=...` is named as typed)
    flags = {key: flag for key, flag, given in (("base_url", "--base-url", args.base_url),
                                                ("concurrency", "--concurrency", args.concurrency is not None)) if given}
    options = check_options(args.model, options, flags=flags)
    if args.config and is_convbench_config(args.data, args.config):
        return _run_convbench(args, generation, options)
    given = [flag for flag, value in (("--tool-results", args.tool_results),
                                      ("--max-tool-rounds", args.max_tool_rounds), ("--only-turns", args.only_turns),
                                      ("--rehydrate", args.rehydrate),
                                      ("--option stream", options.get("stream"))) if value]
    if given:  # (the loader streams only the tool-using turns of a ConversationBench config)
        raise UsageError(f"{given[0]}: only for a ConversationBench config (--config convbench_dev, or one added by "
                         f"convbench-import); {args.config or 'conversations'} is an IHBench config")
    spec = RunSpec(
        loader=args.model, model_path=args.model_path, data=args.data, out=args.out, config=args.config,
        split=args.split, epochs=args.epochs, limit=args.limit,
        types=args.types, modality=args.modality,
        history_audio=parse_history_audio(args.history_audio), generation=generation, seed=args.seed,
        loader_options=options, command=["ihbench", *sys.argv[1:]],
        allow_endpoint_change=args.allow_endpoint_change,
    )
    summary = run(spec, progress=not args.quiet)
    # answers and failures apart: a failure is a record, not a response ("12 written, 2 errors" read as 12 answers)
    print(f"{summary.out}: {summary.written - summary.errors} response(s) written, {summary.errors} failed (kept, "
          f"tried again by the next run), {summary.skipped} already done, {summary.planned} planned "
          f"({summary.seconds:.1f} s)")
    if summary.on_data_audio:  # retried in vain: the fault is the dataset's (as the report says it)
        print(f"note: {summary.on_data_audio} of the failed response(s) are on audio of the dataset that is damaged or "
              "silent (their errors name the file, row and column): they fail again until the dataset is mended or "
              "rebuilt")
    print_budget_note(summary.at_budget, args.max_new_tokens, "answer(s)")
    return incomplete("run", summary.errors, summary.planned, "response(s)", f"{summary.out}/responses.jsonl",
                      on_data=summary.on_data_audio)



def _run_convbench(args: argparse.Namespace, generation: dict, options: dict) -> int:
    """A ConversationBench config: one on-policy conversation per epoch, with tools."""
    from ihbench.cli.common import DATA_AUDIO, incomplete, print_budget_note
    from ihbench.convbench import ConvRunSpec, run_convbench
    from ihbench.dataset.errors import UsageError

    given = [flag for flag, value in (("--limit", args.limit), ("--types", args.types),
                                      ("--history-audio", args.history_audio), ("--split", args.split)) if value]
    if given:
        raise UsageError(f"{given[0]}: not for a ConversationBench config, which is one whole conversation "
                         "(--only-turns plays some of its turns)")
    spec = ConvRunSpec(
        loader=args.model, model_path=args.model_path, data=args.data, config=args.config, out=args.out,
        epochs=args.epochs, modality=args.modality, generation=generation, seed=args.seed, loader_options=options,
        tool_results=args.tool_results or "positional", max_rounds=args.max_tool_rounds or 8,
        only_turns=args.only_turns, rehydrate=args.rehydrate, concurrency=args.concurrency,
        command=["ihbench", *sys.argv[1:]], allow_endpoint_change=args.allow_endpoint_change)
    summary = run_convbench(spec, progress=not args.quiet)
    print(f"{summary.out}: {summary.conversations} conversation(s), {summary.written} turn record(s) written, "
          f"{summary.skipped} turn(s) already done, {summary.errors} stopped on a failed turn, {summary.planned} turns "
          f"planned ({summary.seconds:.1f} s)")
    if summary.on_data_audio:  # retried in vain: the fault is the dataset's
        print(f"note: {summary.on_data_audio} of them: {DATA_AUDIO}")
    print_budget_note(summary.at_budget, args.max_new_tokens, "turn(s)")
    return incomplete("run", summary.errors, summary.conversations, "conversation(s)",
                      f"{summary.out}/responses.jsonl", on_data=summary.on_data_audio)
