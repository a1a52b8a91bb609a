"""IHBench: does a voice agent recover after a user interrupts it mid-sentence?

Build or open the interruption data, run an audio model over it, judge the responses, and
report scores with confidence intervals; score interruption detection (SID-Bench) too; publish
metrics, data and the Space on the Hugging Face Hub. `ihbench COMMAND --help` tells more.
"""
# The module docstring above is the top-level --help text: it is written for users.
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence


def parse_options(pairs) -> dict:
    """`--option KEY=VALUE`, each VALUE read as JSON when it is (1, true, [..]), else as text."""
    import json

    from ihbench.dataset.errors import UsageError

    options = {}
    for pair in pairs or []:
        key, equals, value = pair.partition("=")
        if not key.strip() or not equals:
            raise UsageError(f"--option expects KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _notes(args: argparse.Namespace, notes) -> None:
    if not args.quiet:
        for note in notes:
            print(f"note: {note}")


def _verify(args: argparse.Namespace) -> int:
    from ihbench.dataset.verify import verify_paths

    report = verify_paths(args.paths or None, check_audio=not args.no_audio)
    _notes(args, report.notes)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    points = sum(len(c.interrupted_turns) for c in report.conversations)
    status = "OK" if report.ok else f"{len(report.problems)} problem(s)"
    print(f"{status}: {len(report.conversations)} conversation(s), {points} interruption point(s) checked")
    if not report.ok:
        return 1
    return _verify_with_judge(args, report.conversations) if args.judge_model else 0


def _verify_with_judge(args: argparse.Namespace, conversations) -> int:
    """The verifier's semantic questions, asked of an LLM per point; non-zero on any finding."""
    import asyncio

    from ihbench.judge import JudgeCache, OpenAIJudgeBackend
    from ihbench.judge.review import review_conversations

    backend = OpenAIJudgeBackend(args.judge_model, base_url=args.judge_base_url, timeout=args.timeout)

    async def main():
        try:
            return await review_conversations(conversations, backend, concurrency=args.concurrency,
                                              cache=JudgeCache(args.cache) if args.cache else None,
                                              progress=not args.quiet)
        finally:
            await backend.close()

    reviews = asyncio.run(main())
    findings = failed = 0
    for review in reviews:
        where = f"{review.conversation_id}: turn {review.turn}"
        if review.error:
            failed += 1
            print(f"{where}: not checked ({review.error})", file=sys.stderr)
        for question in review.findings:
            findings += 1
            print(f"{where}: {question}: {review.answer[question]['reason']}", file=sys.stderr)
    print(f"semantic review by {args.judge_model}: {len(reviews)} point(s), {findings} finding(s), "
          f"{failed} not checked")
    return 1 if findings or failed else 0


def _build(args: argparse.Namespace) -> int:
    from ihbench.dataset.build import build

    result = build(args.out, args.sources or None, cache_dir=args.cache_dir, progress=not args.quiet,
                   sid=not args.no_sid, sid_sources=args.sid_sources, sid_noise_clips=args.sid_noise_clips,
                   duplex=not args.no_duplex, reuse=not args.no_reuse)
    _notes(args, result.notes)
    s = result.statistics
    reused = f"; configs of {', '.join(result.reused)} unchanged, reused" if result.reused else ""
    print(f"built {result.out}: {s['conversations']} conversations, {s['interruption_points']} interruption points "
          f"({result.renders} clips rendered, {result.cache_hits} from cache{reused})")
    return 0


def _info(args: argparse.Namespace) -> int:
    from ihbench.dataset import load_items
    from ihbench.dataset.load import load_conversations
    from ihbench.dataset.stats import dataset_statistics, statistics_markdown

    conversations = load_conversations(args.data, split=args.split)
    items = load_items(args.data, split=args.split)
    with_baseline = sum(item.baseline is not None for item in items)
    print(f"IHBench data: {args.data}")
    print(f"baseline responses: {with_baseline} of {len(items)} interruption points")
    print(statistics_markdown(dataset_statistics(conversations, items)))
    return 0


def _export(args: argparse.Namespace) -> int:
    from ihbench.dataset import load_items
    from ihbench.dataset.export import export_conversation, pick_conversation
    from ihbench.dataset.load import load_conversations

    conversations = load_conversations(args.data, split=args.split)
    try:
        conversation = pick_conversation(conversations, args.conversation)
    except KeyError as error:
        print(f"ihbench export: error: {error.args[0]}", file=sys.stderr)
        return 2
    target = export_conversation(conversation, load_items(args.data, split=args.split), args.out)
    wavs = len(list(target.glob("*.wav")))
    print(f"exported {conversation.conversation_id} to {target} (conversation.md + {wavs} WAV files)")
    return 0


def _publish_metrics(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_metrics

    plans = publish_metrics(args.namespace, args.names or None, dry_run=args.dry_run, staging_dir=args.staging_dir)
    for plan in plans:
        _print_plan(plan, args.dry_run)
    if not args.dry_run:
        names = ", ".join(f'evaluate.load("{p.repo_id}")' for p in plans[:2])
        print(f"done: {names} ... now work for anyone")
    return 0


def _print_plan(plan, dry_run: bool) -> None:
    verb = "would upload" if dry_run else "uploaded"
    shown = ", ".join(plan.files[:8]) + (f", ... ({len(plan.files)} files)" if len(plan.files) > 8 else "")
    print(f"{plan.repo_id} ({plan.repo_type}): {verb} {shown}  (from {plan.staged})")
    for key, value in plan.variables.items():
        print(f"{plan.repo_id}: {'would set' if dry_run else 'set'} Space variable {key}={value}")


def _publish_dataset(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_dataset

    plan = publish_dataset(args.data, args.repo, private=args.private, dry_run=args.dry_run)
    _print_plan(plan, args.dry_run)
    if not args.dry_run:
        print(f'done: load_dataset("{plan.repo_id}", "interruptions") now works for anyone with access')
    return 0


def _publish_space(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_space

    plan = publish_space(args.repo, data=args.data, private=args.private, dry_run=args.dry_run,
                         staging_dir=args.staging_dir)
    _print_plan(plan, args.dry_run)
    if not args.dry_run:
        print(f"done: https://huggingface.co/spaces/{plan.repo_id}")
    return 0


def _set_baseline(args: argparse.Namespace) -> int:
    from ihbench.baselines import set_baseline

    out = set_baseline(args.run, args.data, args.out, epoch=args.epoch)
    print(f"wrote {out}: the baselines are now epoch {args.epoch} of {args.run} (see its README.md)")
    return 0


def _space(args: argparse.Namespace) -> int:
    import os
    import runpy

    from ihbench.resources import space_dir

    if args.data:
        os.environ["IHBENCH_DATA"] = args.data
    os.environ["GRADIO_SERVER_PORT"] = str(args.port)
    os.environ["GRADIO_SERVER_NAME"] = args.host
    runpy.run_path(str(space_dir() / "app.py"), run_name="__main__")  # the very file a Space runs
    return 0


def _run(args: argparse.Namespace) -> int:
    from ihbench.protocol import parse_history_audio
    from ihbench.runner import RunSpec, run

    generation = {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_p": args.top_p}
    options = parse_options(args.option)
    if args.base_url:  # several servers: requests are spread over them, a retry goes to the next
        options["base_url"] = args.base_url[0] if len(args.base_url) == 1 else args.base_url
    if args.concurrency:
        options["concurrency"] = args.concurrency
    spec = RunSpec(
        loader=args.model, model_path=args.model_path, data=args.data, out=args.out, config=args.config,
        split=args.split, epochs=args.epochs, limit=args.limit,
        types=[t for t in args.types.split(",") if t] if args.types else None, modality=args.modality,
        history_audio=parse_history_audio(args.history_audio), generation=generation, seed=args.seed,
        loader_options=options, command=["ihbench", *sys.argv[1:]],
        allow_endpoint_change=args.allow_endpoint_change,
    )
    summary = run(spec, progress=not args.quiet)
    print(f"{summary.out}: {summary.written} response(s) written, {summary.skipped} already done, "
          f"{summary.errors} error(s), {summary.planned} planned ({summary.seconds:.1f} s)")
    if summary.written and summary.errors == summary.written:
        print(f"ihbench run: error: every item failed; see the error field in {summary.out}/responses.jsonl",
              file=sys.stderr)
        return 1
    return 0


def _models(args: argparse.Namespace) -> int:
    from ihbench.loaders import available, get

    print(f"{'loader':18s} {'input':11s} {'installed':10s} runs via")
    for name in available():
        loader = get(name)
        missing = loader.missing()
        state = "yes" if not missing else "no: " + ", ".join(missing)
        print(f"{name:18s} {','.join(loader.modalities):11s} {state:10s} {loader.runs_via}")
    print("Models without a loader (e.g. MiMo-Audio) run through `openai` against a server that serves them.")
    return 0


def _make_tiny_model(args: argparse.Namespace) -> int:
    from ihbench.loaders.tiny import make_tiny_model

    path = make_tiny_model(args.family, args.out, seed=args.seed)
    print(f"tiny random-weight {args.family} written to {path}")
    return 0


def _judge(args: argparse.Namespace) -> int:
    import asyncio

    from ihbench.judge import (
        JudgeCache,
        OpenAIJudgeBackend,
        TransformersJudgeBackend,
        judge_run,
    )

    if args.judge_backend == "transformers":
        backend = TransformersJudgeBackend(args.judge_model)
    else:
        backend = OpenAIJudgeBackend(args.judge_model, base_url=args.judge_base_url, timeout=args.timeout,
                                     structured=not args.no_json_schema)
    axes = [a for a in args.axes.split(",") if a]

    async def main():
        try:
            return await judge_run(args.run, backend, axes=axes, concurrency=args.concurrency,
                                   cache=JudgeCache(args.cache) if args.cache else None, out=args.out,
                                   progress=not args.quiet)
        finally:
            await backend.close()

    s = asyncio.run(main())
    retried = f", {s.retried} earlier judge_error(s) retried" if s.retried else ""
    print(f"{s.path}: {s.written} judgment(s) written ({s.judged} judged, {s.judge_errors} judge_error), "
          f"{s.skipped} already done{retried}, {s.calls} judge call(s), {s.cached} from cache ({s.seconds:.1f} s)")
    if s.judge_errors:
        print(f"ihbench judge: error: {s.judge_errors} judgment(s) failed (see the error field in {s.path}); "
              "run the same command again to retry only those", file=sys.stderr)
        return 1
    return 0


def _cross_report(args: argparse.Namespace) -> int:
    from ihbench.report.cross import cross_report
    from ihbench.report.cross_render import check_out, cross_stdout, write_cross_report

    out = args.out or Path("report")
    check_out(out, args.runs)
    report = cross_report(args.runs, model_names=args.model_name, sid_definition=args.sid_definition,
                          tost_margin=args.tost_margin, n_bootstrap=args.n_bootstrap, seed=args.seed)
    paths = write_cross_report(report, out)
    if not args.quiet:
        print("\n".join(cross_stdout(report)))
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _report(args: argparse.Namespace) -> int:
    from ihbench.report import summarize, write_report
    from ihbench.report.cross import wants_cross_report

    if wants_cross_report(args.runs, args.model_name, args.cross_benchmark):
        return _cross_report(args)
    out = args.out or (args.runs[0] if len(args.runs) == 1 else Path("report"))
    report = summarize(args.runs, tost_margin=args.tost_margin, n_bootstrap=args.n_bootstrap, seed=args.seed)
    paths = write_report(report, out)
    if args.quiet:
        return 0
    for run in report["runs"]:
        tf, rq = run.get("tf_win_rate"), run.get("rq_pass_rate")
        print(f"{run['run']}: TF win rate {tf['tf_win_rate']:.3f} [{tf['ci_low']:.3f}, {tf['ci_high']:.3f}]" if tf else
              f"{run['run']}: no TF judgments", end="")
        print(f", RQ pass rate {rq['rq_pass_rate']:.3f} [{rq['ci_low']:.3f}, {rq['ci_high']:.3f}]" if rq else
              ", no RQ judgments", end="")
        anchor = run.get("baseline_rq_pass_rate")
        print(f" (baseline RQ on the same items {anchor['rq_pass_rate']:.3f})" if anchor else "")
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _sid_import(args: argparse.Namespace) -> int:
    from ihbench.dataset.sid import import_sid

    result = import_sid(args.folder, args.out, progress=not args.quiet)
    _notes(args, result.get("notes", []))
    counts = ", ".join(f"{name} ({n} clips)" for name, n in result["configs"].items())
    print(f"imported {counts} into {result['out']}")
    return 0


def _sid(args: argparse.Namespace) -> int:
    from ihbench.sid.run_sid import run_sid

    options = parse_options(args.option)
    if args.hop is not None:
        options["hop_ms"] = args.hop
    if args.model:
        options.update(loader=args.model, model_path=args.model_path)
    summary = run_sid(args.data, args.config, args.out, detector=args.detector, predictions_file=args.predictions,
                      options=options, limit=args.limit, tolerance=args.tolerance, progress=not args.quiet)
    for definition, score in summary["scores"].items():
        irl = "–" if score["irl"] is None else f"{score['irl']:.3f} s"
        fir = "–" if score["fir"] is None else f"{score['fir']:.3f}"
        print(f"{definition:9s} FIR {fir}  IRL {irl}  APT {score['apt']:.3f} s  ({score['n_clips']} clips)")
    if summary["real_time_factor"] is not None:
        print(f"real-time factor {summary['real_time_factor']:.4f}; model calls per clip "
              f"{summary['model_calls_per_clip']:.2f}")
    print(f"wrote {args.out}/predictions.jsonl, summary.json, timing_errors.png")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from ihbench import __version__

    parser = argparse.ArgumentParser(prog="ihbench", description=__doc__.split("\n\n# ")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars and no notes; results and errors only")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = lambda name, **kw: commands.add_parser(name, parents=[common], **kw)  # noqa: E731

    verify = add("verify", help="check in-house conversation sources")
    verify.add_argument("paths", nargs="*", help="JSON files or folders (default: the shipped dev set)")
    verify.add_argument("--no-audio", action="store_true", help="skip checking referenced recordings")
    verify.add_argument("--judge-model", help="also ask this LLM the verifier's semantic questions per point "
                        "(leakage in meaning, caller knowledge, type, grounding)")
    verify.add_argument("--judge-base-url", help="OpenAI-compatible server URL of the judge (default: OpenAI)")
    verify.add_argument("--concurrency", type=int, default=8, help="judge calls in flight (default 8)")
    verify.add_argument("--timeout", type=float, default=60.0, help="seconds per judge call (default 60)")
    verify.add_argument("--cache", type=Path, help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite)")
    verify.set_defaults(func=_verify)

    build = add("build", help="render audio and write the in-house dataset directory")
    build.add_argument("--sources", nargs="*", help="JSON files or folders (default: the shipped dev set)")
    build.add_argument("--out", required=True, type=Path, help="dataset directory to (re)create")
    build.add_argument("--cache-dir", type=Path,
                       help="cache of TTS renders, duplex mixes and finished configs "
                            "(default: $IHBENCH_CACHE/tts or ~/.cache/ihbench/tts)")
    build.add_argument("--no-sid", action="store_true", help="skip the SID-style configs")
    build.add_argument("--no-duplex", action="store_true",
                       help="skip the `duplex` config (two-channel recordings with turn-taking labels)")
    build.add_argument("--no-reuse", action="store_true",
                       help="make every config again even when its inputs and the code are unchanged "
                            "(by default finished configs are reused from <cache-dir>/configs)")
    build.add_argument("--sid-sources", type=Path, help="SID utterances JSON (default: the shipped one)")
    build.add_argument("--sid-noise-clips", type=int, default=90, help="seeded noise/silence clips (default 90)")
    build.set_defaults(func=_build)

    info = add("info", help="summary statistics of a dataset (built dir or hub id)")
    info.add_argument("data", help="dataset directory or hub id")
    info.add_argument("--split", help="split (default: the only one, or test/dev)")
    info.set_defaults(func=_info)

    export = add("export", help="write one conversation as text + WAV files")
    export.add_argument("data", help="dataset directory or hub id")
    export.add_argument("--conversation", help="conversation id (default: the first)")
    export.add_argument("--out", type=Path, default=Path("demo"), help="output folder (default: demo/)")
    export.add_argument("--split", help="split (default: the only one, or test/dev)")
    export.set_defaults(func=_export)

    publish = add("publish-metrics", help="push the metric modules to the Hub as evaluate Spaces")
    publish.add_argument("--namespace", required=True, help="Hub user or organization")
    publish.add_argument("names", nargs="*", help="metric folders (default: all)")
    publish.add_argument("--dry-run", action="store_true", help="stage and list, upload nothing")
    publish.add_argument("--staging-dir", type=Path, help="where to stage the self-contained folders")
    publish.set_defaults(func=_publish_metrics)

    publish_data = add("publish-dataset", help="push a built dataset folder to the Hub as a dataset repository")
    publish_data.add_argument("data", help="folder written by `ihbench build` (checked readable before upload)")
    publish_data.add_argument("--repo", required=True, help="Hub dataset id, NAMESPACE/NAME")
    publish_data.add_argument("--private", action="store_true", help="create the repository as private")
    publish_data.add_argument("--dry-run", action="store_true", help="check and list, upload nothing")
    publish_data.set_defaults(func=_publish_dataset)

    publish_space = add("publish-space", help="stage the Gradio Space (app, toolkit, data) and push it to the Hub")
    publish_space.add_argument("--repo", required=True, help="Hub Space id, NAMESPACE/NAME")
    publish_space.add_argument("--data", help="a Hub dataset id (set as the Space variable IHBENCH_DATA) or a built "
                               "folder (copied into the Space); without it the Space asks for IHBENCH_DATA")
    publish_space.add_argument("--private", action="store_true", help="create the Space as private")
    publish_space.add_argument("--dry-run", action="store_true", help="stage and list, upload nothing")
    publish_space.add_argument("--staging-dir", type=Path, help="empty folder to stage the Space in (default: a "
                               "temporary folder)")
    publish_space.set_defaults(func=_publish_space)

    space = add("space", help="serve the Gradio Space locally (Browse, Evaluate, Detect, Metrics, Leaderboard)")
    space.add_argument("--data", help="dataset folder or Hub id (default: $IHBENCH_DATA, else ./data/ihbench-dev)")
    space.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    space.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                       "every interface)")
    space.set_defaults(func=_space)

    run = add("run", help="run a model over interruption points into a resumable run directory")
    run.add_argument("--model", required=True, help="loader name (see `ihbench models`)")
    run.add_argument("--model-path", required=True, help="local model directory, cached hub id, or served model name")
    run.add_argument("--data", required=True, help="dataset directory or hub id")
    run.add_argument("--config", help="conversations (default) or interruptions")
    run.add_argument("--split", help="split (default: the only one, or test/dev)")
    run.add_argument("--epochs", type=int, default=3, help="responses per interruption point (default 3, as the paper)")
    run.add_argument("--out", required=True, type=Path, help="run directory (resumed when it exists)")
    run.add_argument("--limit", type=int, help="first N interruption points (after --types)")
    run.add_argument("--types", help="comma-separated interruption types, e.g. filler,pushback")
    run.add_argument("--modality", choices=("audio", "text"), default="audio", help="text: transcripts replace audio")
    run.add_argument("--history-audio", metavar="all|last:K", default="all",
                     help="last:K keeps the audio of the last K user turns (the interruption included) and gives "
                     "older ones as transcripts, for models whose context cannot hold a deep point's history; "
                     "recorded in run.json (default all)")
    run.add_argument("--max-new-tokens", type=int, default=256, help="length limit of each response (default 256)")
    run.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    run.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass when sampling (default 1.0)")
    run.add_argument("--seed", type=int, default=0, help="base seed; each (item, epoch) derives its own (default 0)")
    run.add_argument("--base-url", action="append", help="openai loader: server URL, e.g. http://gpu-node:8000/v1 "
                     "(vLLM); give it several times to spread requests over several servers")
    run.add_argument("--concurrency", type=int, help="openai loader: requests in flight")
    run.add_argument("--option", action="append", metavar="KEY=VALUE", help="other loader options (device, dtype, ...)")
    run.add_argument("--allow-endpoint-change", action="store_true",
                     help="resume a run whose --base-url changed (only when the new server serves the same model)")
    run.set_defaults(func=_run)

    judge = add("judge", help="judge a run's responses (TF against the baseline, RQ criteria)")
    judge.add_argument("run", type=Path, help="run directory")
    judge.add_argument("--judge-model", required=True, help="model name on the server, or a local path (transformers)")
    judge.add_argument("--judge-base-url", help="OpenAI-compatible server URL (default: OpenAI)")
    judge.add_argument("--judge-backend", choices=("openai", "transformers"), default="openai",
                       help="openai: any OpenAI-compatible server (default); transformers: a local text model")
    judge.add_argument("--axes", default="tf,rq", help="tf, rq or both (default)")
    judge.add_argument("--concurrency", type=int, default=16, help="judge calls in flight (default 16)")
    judge.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    judge.add_argument("--out", type=Path, help="judgments file (default RUN/judgments.jsonl); one per judge model")
    judge.add_argument("--cache", type=Path, help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite)")
    judge.add_argument("--no-json-schema", action="store_true", help="for servers without response_format support")
    judge.set_defaults(func=_judge)

    rebase = add("set-baseline", help="make one epoch of a run's responses the baselines of a copy of its dataset")
    rebase.add_argument("run", type=Path, help="run directory that covered every point of --data")
    rebase.add_argument("--data", required=True, help="the built dataset folder the run used")
    rebase.add_argument("--out", required=True, type=Path, help="new dataset folder to write (must not exist)")
    rebase.add_argument("--epoch", type=int, default=0, help="which epoch's responses to use (default 0)")
    rebase.set_defaults(func=_set_baseline)

    report = add("report", help="scores, per type, depth, diagnostics, plots for judged runs; one table across "
                 "IHBench, SID-Bench and turn-taking runs")
    report.add_argument("runs", nargs="+", type=Path, help="run directories (an audio and a text run of one model "
                        "get a TOST; a run with two judgments files gets inter-judge agreement); `ihbench sid` and "
                        "`ihbench turns` output folders make it a cross-benchmark report, one row per model")
    report.add_argument("--out", type=Path, help="output folder (default: the run, or ./report for several or for a "
                        "cross-benchmark report)")
    report.add_argument("--model-name", action="append", metavar="RUN=NAME",
                        help="cross-benchmark report: the model RUN belongs to (default: the name the run records); "
                        "give it once per run")
    report.add_argument("--cross-benchmark", action="store_true",
                        help="the per-model table and Spearman correlations even when every run is an IHBench run "
                        "(automatic with SID or turns runs or --model-name)")
    report.add_argument("--sid-definition", choices=("notebook", "readme"), default="notebook",
                        help="which SID-Bench FIR/IRL the cross-benchmark table shows: notebook (the published "
                        "numbers' rule, default) or readme")
    report.add_argument("--tost-margin", type=float, default=0.05,
                        help="equivalence margin of the audio-vs-text TOST, in score units (default 0.05)")
    report.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples per CI (default 1000)")
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    report.set_defaults(func=_report)

    sid_import = add("sid-import", help="add SID-Bench (as downloaded) to a dataset directory")
    sid_import.add_argument("folder", type=Path, help="SID-Bench folder (test_wavs/*.jsonl and WAV folders)")
    sid_import.add_argument("--out", required=True, type=Path, help="dataset directory (configs sid_en/zh/noise)")
    sid_import.set_defaults(func=_sid_import)

    sid = add("sid", help="semantic interruption detection: FIR, IRL, APT")
    sid.add_argument("--data", required=True, help="dataset directory with sid_* configs, or a SID-Bench folder")
    sid.add_argument("--config", default="sid_en", help="sid_en, sid_zh, sid_noise, ... (default sid_en)")
    sid.add_argument("--out", required=True, type=Path, help="run folder for predictions.jsonl, summary.json and plots")
    source = sid.add_mutually_exclusive_group(required=True)
    source.add_argument("--detector", help="silero-vad, energy or audio-llm")
    source.add_argument("--predictions", type=Path, help="score a prediction file in SID's jsonl format")
    sid.add_argument("--hop", type=int, help="audio-llm: ms between growing prefixes")
    sid.add_argument("--model", help="audio-llm: loader name (see `ihbench models`)")
    sid.add_argument("--model-path", help="audio-llm: model path")
    sid.add_argument("--option", action="append", metavar="KEY=VALUE", help="detector options (threshold, ...)")
    sid.add_argument("--limit", type=int, help="first N clips")
    sid.add_argument("--tolerance", type=float, default=0.05,
                     help="seconds around the true break that count as exact (default 0.05, as SID-Bench)")
    sid.set_defaults(func=_sid)

    models = add("models", help="list the model loaders")
    models.set_defaults(func=_models)

    tiny = add("make-tiny-model", help="random-weight model of a real architecture, for smoke tests")
    from ihbench.loaders.tiny import FAMILIES as TINY_FAMILIES

    tiny.add_argument("family", choices=TINY_FAMILIES, metavar="FAMILY",
                      help=f"model family: {', '.join(TINY_FAMILIES)} (gemma4-unified is the 12B, run with --model gemma4)")
    tiny.add_argument("--out", required=True, type=Path, help="folder to write the model, tokenizer and processor to")
    tiny.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    tiny.set_defaults(func=_make_tiny_model)

    from ihbench.generate.cli import (
        add_parser as add_generate,  # its options live with the pipeline
    )

    add_generate(add)
    from ihbench.turns.cli import add_parser as add_turns

    add_turns(add)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    import logging

    args = build_parser().parse_args(argv)
    from ihbench.dataset.errors import IHBenchError

    # Library code reports (bad records, notes) on the "ihbench" logger; here they become one line each.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"ihbench {args.command}: warning: %(message)s"))
    logger = logging.getLogger("ihbench")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        return args.func(args)
    except IHBenchError as error:  # meant for the user: one line; anything else is a bug and keeps its traceback
        print(f"ihbench {args.command}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the machine said no: full disk, read-only folder, permission, ...
        where = f": {error.filename}" if error.filename else ""
        print(f"ihbench {args.command}: error: {error.strerror or error}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
