"""`ihbench judge`: judge a run's responses."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import DATA_AUDIO, held_back_why

#: seconds a judge request may take on a server (--timeout)
DEFAULT_TIMEOUT = 60.0


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import (concurrency, data_source, model_name, names, path, timeout_seconds, tokens,
                                          url)
    from ihbench.records import AXES

    from ihbench.convbench.judge import CONTEXT_PARTS

    judge = add("judge", help="judge a run's responses (IHBench: TF against the baseline, RQ criteria; "
                              "ConversationBench: every turn on the benchmark's dimensions)")
    judge.add_argument("run", type=path("folder"), help="run directory")
    judge.add_argument("--judge-model", required=True, type=model_name(),
                       help="model name on the server, or a local path (transformers)")
    judge.add_argument("--judge-base-url", type=url(), help="OpenAI-compatible server URL (default: OpenAI)")
    judge.add_argument("--judge-backend", choices=("openai", "transformers"), default="openai",
                       help="openai: any OpenAI-compatible server (default); transformers: a local text model")
    judge.add_argument("--axes", type=names(AXES), help="IHBench runs: the axes to judge, tf and/or rq "
                                                        "(comma-separated; default: both)")
    judge.add_argument("--judge-context", type=names(CONTEXT_PARTS), default=[],
                       help="ConversationBench runs: also show the judge the knowledge base (kb) and the results the "
                            "tools returned (tool-results), as the successor's judge does; off by default, as in the "
                            "original")
    judge.add_argument("--judge-context-tokens", type=tokens(min=1000),
                       help="ConversationBench runs: the judge's context in tokens; a conversation that does not fit "
                            "is judged in overlapping windows (default: a local judge's own limit, else 128000)")
    judge.add_argument("--judge-batch", type=path("folder"), metavar="DIR",
                       help="IHBench runs: ask the judge through OpenAI Batch API files instead of live requests (half "
                            "the price; `vllm run-batch` answers them offline): questions not yet answered go to "
                            "DIR/requests.jsonl, answers are read from the other *.jsonl files in DIR; run again after "
                            "each batch")
    judge.add_argument("--concurrency", type=concurrency(), default=16, help="judge calls in flight (default 16)")
    judge.add_argument("--timeout", type=timeout_seconds(), default=None,
                       help="seconds per call (default 60)")
    judge.add_argument("--out", type=path("file"),
                       help="judgments file (default RUN/judgments.jsonl); one per judge model")
    judge.add_argument("--cache", type=path("file"), help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite)")
    judge.add_argument("--data", type=data_source(),
                       help="a ConversationBench run of the reference harness (a folder with transcript.jsonl): the "
                            "dataset holding the benchmark it played (recorded with the judgments); an IHBench run "
                            "whose dataset moved: where it is now (checked to hold the items the run answered)")
    judge.add_argument("--config", type=model_name(), help="with --data: the ConversationBench config it played")
    judge.add_argument("--no-json-schema", action="store_true", help="for servers without response_format support")
    judge.set_defaults(func=main, resumes=True)
    return judge


def main(args: argparse.Namespace) -> int:
    import asyncio

    from ihbench.cli.common import INCOMPLETE, incomplete, server_only
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_output_path
    from ihbench.judge import judge_run
    from ihbench.llm import LLMCache, OpenAICompatibleLLM, TransformersLLM
    from ihbench.records import AXES
    from ihbench.convbench.judge.source import is_convbench_run

    server_only("--judge-backend", args.judge_backend, {"--judge-base-url": args.judge_base_url,
                                                        "--no-json-schema": args.no_json_schema,
                                                        "--timeout": args.timeout})
    if args.timeout is None:  # a request's time limit: a server's only (given with a local model, refused above)
        args.timeout = DEFAULT_TIMEOUT
    if args.out is not None:  # a judgments file goes into its run's folder itself

        run_folder = Path(args.run).resolve()
        if run_folder in Path(args.out).resolve().parent.parents:  # in a folder of its own inside the run
            raise UsageError(f"--out: {args.out} is in a folder inside the run; `ihbench report` reads judgments "
                             f"from the run's folder itself: give a name there, such as "
                             f"{Path(args.run) / 'judgments-MODEL.jsonl'}")
        _refuse_another_runs_folder(args.out, args.run)  # before any probe of that folder (battery 62, I14)
        check_output_path(args.out, "--out", may_be=("run", "reference_run"), file=True)
        _check_judgments_path(args.out, args.run)
    convbench = is_convbench_run(args.run)
    if not convbench and args.config:
        raise UsageError("--config: only for a ConversationBench run of the reference harness "
                         "(a folder with transcript.jsonl)")
    if convbench and args.axes:
        raise UsageError(f"--axes: {args.run} is a ConversationBench run; its judge scores every turn on the "
                         "benchmark's dimensions (no TF or RQ axes)")
    if not convbench and (args.judge_context or args.judge_context_tokens):
        raise UsageError("--judge-context and --judge-context-tokens are for ConversationBench runs; "
                         f"{args.run} is not one")
    if args.judge_batch is not None:
        if convbench:
            raise UsageError(f"--judge-batch: {args.run} is a ConversationBench run, judged live only")
        if args.judge_backend != "openai" or args.judge_base_url:
            raise UsageError("--judge-batch asks through batch files: leave out "
                             + ("--judge-base-url" if args.judge_base_url else "--judge-backend transformers"))
        check_output_path(args.judge_batch, "--judge-batch", shared=True)
    cache = LLMCache(args.cache)  # a wrong --cache (or IHBENCH_CACHE) fails before a model is loaded
    if args.judge_batch is not None:
        from ihbench.llm.batch import BatchLLM

        backend = BatchLLM(args.judge_model, args.judge_batch, structured=not args.no_json_schema)
    elif args.judge_backend == "transformers":
        backend = TransformersLLM(args.judge_model)
    else:
        backend = OpenAICompatibleLLM(args.judge_model, base_url=args.judge_base_url, timeout=args.timeout,
                                      structured=not args.no_json_schema)
    if convbench:
        return _judge_convbench(args, backend, cache)
    axes = args.axes or AXES

    async def judge_all():
        try:
            return await judge_run(args.run, backend, axes=axes, concurrency=args.concurrency,
                                   cache=cache, out=args.out, data=args.data,
                                   progress=not args.quiet)
        finally:
            await backend.close()

    s = asyncio.run(judge_all())
    retried = f", {s.retried} earlier judge_error(s) retried" if s.retried else ""
    where = s.path if Path(s.path).exists() else f"{s.path} (not made: nothing to write)"
    print(f"{where}: {s.written} judgment(s) written ({s.judged} judged, {s.judge_errors} judge_error), "
          f"{s.skipped} already done{retried}, {s.calls} judge call(s), {s.cached} from cache ({s.seconds:.1f} s)")
    if s.unanswered:
        print(f"note: {s.unanswered} {s.failed_unit} failed in the run and have no answer to judge; {s.rerun} tries "
              "them again")
    if s.unfinished:
        from ihbench.rundir import RunDir

        writer = RunDir(args.run).writer()
        then = (f"a run is writing it now ({writer}); judge again when it ends, and" if writer
                else f"{s.rerun} goes on, and")
        failed = (f" ({s.unfinished[0] - s.unanswered} answered, {s.unanswered} failed)"
                  if s.unanswered and s.failed_unit == "response(s)" else "")
        print(f"note: {args.run} is unfinished: {s.unfinished[0]} of {s.unfinished[1]} planned response(s) are in "
              f"it{failed}, and the answered ones were judged; {then} `ihbench judge` then judges only the new ones")
    if s.held_back:
        print(f"note: {s.held_back} conversation(s) of this barge-in run are left out and not judged: "
              f"{held_back_why(args.run)}")
    line = backend.waiting_line() if args.judge_batch is not None else None
    if line:
        print(line)
    status = incomplete("judge", s.judge_errors, s.written, "judgment(s)", s.path)
    return status or (INCOMPLETE if s.waiting else 0)


def _judge_convbench(args, backend, cache) -> int:
    import asyncio

    from ihbench.cli.common import incomplete
    from ihbench.convbench.judge import judge_convbench_run

    async def judge_all():
        try:
            return await judge_convbench_run(args.run, backend, parts=args.judge_context,
                                             context_tokens=args.judge_context_tokens, concurrency=args.concurrency,
                                             cache=cache, out=args.out, data=args.data, config=args.config,
                                             progress=not args.quiet)
        finally:
            await backend.close()

    s = asyncio.run(judge_all())
    print(f"{s.path}: {s.judged} conversation(s) judged, {s.judge_errors} judge_error, {s.skipped} already done; "
          f"{s.written} turn record(s) written, {s.calls} judge call(s), {s.cached} from cache ({s.seconds:.1f} s)")
    for plan in sorted(set(s.plans)):
        print(f"  {plan}")
    if s.note:
        print(f"note: {s.note}")
    from ihbench.rundir import RunDir

    writer = RunDir(args.run).writer() if s.unfinished else None
    if writer:  # the run is still playing them: nothing failed
        print(f"note: {s.unfinished} conversation(s) are not finished yet and are not judged: the run is being "
              f"played now ({writer}); judge again when it ends")
    elif s.unfinished and s.unfinished == s.on_data_audio:  # a rerun cannot help: the data's clip is the fault
        print(f"note: {s.unfinished} conversation(s) stopped on a failed turn and are not judged; {DATA_AUDIO}")
    elif s.unfinished:
        print(f"note: {s.unfinished} conversation(s) stopped before their end (a failed turn, or the run was "
              "stopped) and are not judged; `ihbench run` with "
              "the same options plays them again"
              + (f" ({s.on_data_audio} of them: {DATA_AUDIO})" if s.on_data_audio else ""))
    return incomplete("judge", s.judge_errors, s.judged + s.judge_errors, "conversation(s)", s.path)


def _refuse_another_runs_folder(out, run) -> None:
    """Not inside another run's folder: that run's judge and report would read them as its own."""
    from ihbench.dataset.outputs import OutputPathError
    from ihbench.rundir import RUN_JSON

    folder = Path(out).resolve().parent
    if (folder / RUN_JSON).is_file() and folder != Path(run).resolve():
        raise OutputPathError(f"--out: {out} is inside another run's folder ({folder}), not {run}'s: its judge and "
                              "report would take these judgments for its own")


def _check_judgments_path(out, run) -> None:
    """In the run's own folder, named as `ihbench report` looks for judgments, and not one of the
    run's own files (its records would be mixed with judgments); nor anywhere else (nothing would read them; another
    run's folder: `_refuse_another_runs_folder`)."""
    import fnmatch

    from ihbench.dataset.outputs import OutputPathError
    from ihbench.rundir import RESPONSES, RUN_JSON, SUMMARY

    out, run = Path(out), Path(run)
    if out.name in (RESPONSES, RUN_JSON, SUMMARY, "report.md"):
        raise OutputPathError(f"--out: {out} is a run's own {out.name}; give a judgments file name such as "
                              "judgments-MODEL.jsonl")
    folder = out.resolve().parent
    if folder != run.resolve():  # nothing would read it: the report would then call the run unjudged
        raise OutputPathError(f"--out: {out} is outside the run's folder ({run}), and `ihbench report` reads a "
                              "run's judgments only from its own folder (judgments*.jsonl); give a name there, "
                              f"such as {run / 'judgments-MODEL.jsonl'}")
    if not fnmatch.fnmatch(out.name, "judgments*.jsonl"):
        raise OutputPathError(f"--out: {out} is in the run's folder, where `ihbench report` reads the judgments "
                              "files named judgments*.jsonl; name it so (judgments-MODEL.jsonl, say)")
