"""`ihbench verify`: check in-house conversation sources, and optionally ask an LLM the semantic questions."""
from __future__ import annotations

import argparse
import re
import sys

from .common import notes, said


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import (concurrency, json_path, model_name, number, path, plot_path, timeout_seconds,
                                          url)

    verify = add("verify", help="check in-house conversation sources and ConversationBench-style benchmark folders")
    verify.add_argument("paths", nargs="*", type=path(),
                        help="JSON files or folders, or benchmark folders (turns.py, ...) (default: the shipped ones)")
    verify.add_argument("--no-audio", action="store_true", help="skip checking referenced recordings")
    verify.add_argument("--judge-model", type=model_name(),
                        help="also ask this LLM the verifier's semantic questions per point "
                        "(leakage in meaning, caller knowledge, type, grounding) and the content checks (each "
                        "criterion against the scripted continuation and a blind correct reply, every agent turn's "
                        "grounding, verdicts that disagree)")
    verify.add_argument("--judge-base-url", type=url(),
                        help="OpenAI-compatible server URL of the judge (default: OpenAI)")
    verify.add_argument("--judge-batch", type=path("folder"), metavar="DIR",
                        help="ask the judge through batch files instead of live requests (OpenAI Batch API, half the "
                        "price, or `vllm run-batch` offline): the questions not yet answered are written to "
                        "DIR/requests.jsonl, the answers read from the other *.jsonl files in DIR; run again after "
                        "each batch until none waits")
    verify.add_argument("--concurrency", type=concurrency(), help="judge calls in flight (default 8)")
    verify.add_argument("--timeout", type=timeout_seconds(), help="seconds per judge call (default 60)")
    verify.add_argument("--cache", type=path("file"), help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite)")
    audio = verify.add_argument_group(
        "smart-turn on the cuts", "--audio DIR runs Smart Turn (the smart-turn extra) on the assistant audio a built "
        "dataset holds up to each interruption point and lists the cuts it hears as complete turns "
        "(P(complete) above its threshold, 0.5), with the words around the cut. A flagged cut is a candidate "
        "for review, not an error: a prefix rendered alone ends as the TTS ends any utterance, and a list or "
        "an aside can end a clause on purpose. So it exits 0 after listing them, unless --strict.")
    audio.add_argument("--audio", type=path("folder"), metavar="DIR",
                       help="a dataset folder from `ihbench build` (instead of the source checks)")
    audio.add_argument("--strict", action="store_true", help="with --audio: exit 1 when any cut is flagged")
    audio.add_argument("--audio-report", type=json_path(), metavar="FILE.json",
                       help="with --audio: write every cut's probability, the threshold, the model file's "
                            "SHA-256 and the pipecat-ai version")
    audio.add_argument("--audio-plot", type=plot_path(), metavar="FILE.png",
                       help="with --audio: a histogram of the cut probabilities with the threshold")
    # a judge's verdicts go to the cache as they come, so a rerun goes on; --audio writes only at its end
    verify.set_defaults(func=main, resumes=lambda args: args.audio is None)
    return verify


#: the options of the semantic review, and their defaults (None above: to tell whether one was given)
_REVIEW_OPTIONS = {"judge_base_url": None, "judge_batch": None, "concurrency": 8, "timeout": 60.0, "cache": None}


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.convbench.checks import verify_benchmark_folder
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.verify import verify_paths

    if args.audio is not None or args.strict or args.audio_report or args.audio_plot:
        return _verify_audio(args)
    given = [name for name in _REVIEW_OPTIONS if getattr(args, name) is not None]
    if given and not args.judge_model:  # else the user reads "OK" and believes the review ran
        option = "--" + given[0].replace("_", "-")
        raise UsageError(f"{option} is an option of the semantic review, which only --judge-model MODEL asks for; "
                         "give --judge-model too, or leave it out")
    if args.judge_batch is not None:
        from ihbench.dataset.outputs import check_output_path

        live = next((o for o, v in (("--judge-base-url", args.judge_base_url), ("--timeout", args.timeout)) if v), None)
        if live:
            raise UsageError(f"{live} is an option of a live judge; --judge-batch asks through batch files: leave "
                             "one of them out")
        check_output_path(args.judge_batch, "--judge-batch", shared=True)
    for name, default in _REVIEW_OPTIONS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    folders, paths = _benchmark_folders(args.paths)
    if args.judge_model and args.paths and not paths:  # else "OK" reads as a review that was never asked for
        raise UsageError(f"--judge-model: the semantic review reads IHBench sources (their points and criteria), and "
                         f"{folders[0]} is a ConversationBench benchmark, which it does not review; leave "
                         "--judge-model out, or give IHBench sources too")
    cache = None
    if args.judge_model:  # a wrong --cache (or IHBENCH_CACHE) is refused before "OK" is printed
        from ihbench.llm import LLMCache

        cache = LLMCache(args.cache)
    report = verify_paths(paths or None, check_audio=not args.no_audio) if paths or not args.paths else None
    checked = [verify_benchmark_folder(folder, check_audio=not args.no_audio) for folder in folders]
    problems = [*(report.problems if report else []), *(p for _, found in checked for p in found)]
    notes(args, report.notes if report else [])
    for problem in problems:  # a credential it quotes hidden, as build says the same problem (battery 63, J1)
        print(said(problem), file=sys.stderr)
    conversations = report.conversations if report else []
    points = sum(len(c.interrupted_turns) for c in conversations)
    turns = sum(len(benchmark.turns) for benchmark, _ in checked if benchmark)
    status = "OK" if not problems else f"{len(problems)} problem(s)"
    # with --judge-model the content checks come next: "OK" alone read as a pass of the review not yet made
    scope = " (form and wording; the content checks by the judge follow" + \
        (", of the IHBench sources only)" if folders else ")") if args.judge_model and conversations and not problems \
        else ""
    print(f"{status}: {len(conversations)} conversation(s), {points} interruption point(s), "
          f"{len(folders)} ConversationBench-style benchmark(s) ({turns} turns) checked{scope}")
    if problems:
        return 1
    return _verify_with_judge(args, conversations, cache) if args.judge_model and conversations else 0


def _check_replaceable(report) -> None:
    """--audio-report replaces an earlier report of its own only: any other file there (a JSON file of the
    user's) is not this command's to overwrite."""
    import json

    from ihbench.dataset.errors import UsageError

    if not report.exists():
        return
    try:
        kind = json.loads(report.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError, RecursionError):
        kind = None
    if kind != "verify_audio":
        raise UsageError(f"--audio-report: {report} exists and is not a report of `verify --audio` (no \"kind\": "
                         "\"verify_audio\"); give another name, or remove it")


def _verify_audio(args: argparse.Namespace) -> int:
    """`--audio DIR`: Smart Turn on the built dataset's cuts; refusals come before the model loads."""
    from pathlib import Path

    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.outputs import check_output_path

    if args.audio is None:
        option = next(o for o, v in (("--strict", args.strict), ("--audio-report", args.audio_report),
                                     ("--audio-plot", args.audio_plot)) if v)
        raise UsageError(f"{option} is an option of --audio DIR; give --audio too, or leave it out")
    other = next((o for o, v in (("source paths", args.paths), ("--no-audio", args.no_audio),
                                 ("--judge-model", args.judge_model)) if v), None)
    if other:
        raise UsageError(f"--audio checks a built dataset, not sources: leave out {other}, or run it separately")
    for option, value in (("--audio-report", args.audio_report), ("--audio-plot", args.audio_plot)):
        if value:
            check_output_path(value, option, file=True)
    if args.audio_report:
        _check_replaceable(Path(args.audio_report))
    from ihbench.dataset.errors import MissingDependencyError
    from ihbench.smart_turn import THRESHOLD, SmartTurn
    from ihbench.smart_turn.cuts import check_folder, in_context, load_points, plot, score_cuts, summary

    check_folder(args.audio)
    model = SmartTurn()  # a missing extra is refused here, before anything is read or written
    points = load_points(args.audio)
    cuts = score_cuts(points, model, progress=not args.quiet)
    try:
        cuts = in_context(points, cuts, model, voice=_assistant_voice(), progress=not args.quiet)
    except MissingDependencyError as error:  # the TTS is another extra: the main figure stands without it
        print(f"note: no in-context probabilities ({error})", file=sys.stderr)
    flagged = sorted((cut for cut in cuts if cut.probability > THRESHOLD), key=lambda cut: -cut.probability)
    for cut in flagged:
        context = f" (in context {cut.in_context:.2f})" if cut.in_context is not None else ""
        print(f"{cut.conversation_id} turn {cut.turn} ({cut.type}): p={cut.probability:.3f}{context}: "
              f"{cut.text()}")
    if args.audio_report:
        from ihbench.dataset.io import write_json_atomic

        write_json_atomic(args.audio_report, summary(cuts, model, args.audio))
    if args.audio_plot:
        plot(cuts, model, args.audio_plot)
    info = model.file
    print(f"smart-turn (pipecat-ai {info.pipecat_ai}, model sha256 {info.sha256}): {len(flagged)} of {len(cuts)} "
          f"cut(s) heard as complete turns (p > {THRESHOLD}); candidates to move or justify, not errors")
    return 1 if flagged and args.strict else 0


def _assistant_voice() -> str:
    from ihbench.dataset.sources import ASSISTANT_VOICE

    return ASSISTANT_VOICE


def _benchmark_folders(paths) -> tuple[list, list]:
    """(ConversationBench-style benchmark folders, other paths); with no paths, the shipped ones."""
    from ihbench.dataset.convbench.read import is_benchmark_folder
    from ihbench.dataset.convbench.rendered import shipped_folders

    if not paths:
        return shipped_folders(), []
    folders = [path for path in paths if path.is_dir() and is_benchmark_folder(path)]
    return folders, [path for path in paths if path not in folders]


def _verify_with_judge(args: argparse.Namespace, conversations, cache) -> int:
    """The verifier's semantic questions, asked of an LLM per point; non-zero on any finding."""
    import asyncio

    from ihbench.judge.content import check_content
    from ihbench.judge.review import review_conversations
    from ihbench.llm import OpenAICompatibleLLM
    from ihbench.llm.batch import BatchLLM

    backend = BatchLLM(args.judge_model, args.judge_batch) if args.judge_batch else \
        OpenAICompatibleLLM(args.judge_model, base_url=args.judge_base_url, timeout=args.timeout)

    async def review():
        try:
            reviews = await review_conversations(conversations, backend, concurrency=args.concurrency,
                                                 cache=cache,
                                                 progress=not args.quiet)
            return reviews, await check_content(conversations, backend, concurrency=args.concurrency, cache=cache,
                                                progress=not args.quiet)
        finally:
            await backend.close()

    reviews, content = asyncio.run(review())
    findings = failed = waiting = 0
    paths = {c.conversation_id: c.path for c in conversations}  # a finding names the file, as every other does
    unchecked = []
    for review in reviews:
        where = f"{paths.get(review.conversation_id, review.conversation_id)}: turn {review.turn}"
        if review.error and _waiting(review.error):
            waiting += 1
        elif review.error:
            failed += 1
            unchecked.append(f"{where}: not checked ({review.error})")
        for question in review.findings:
            findings += 1
            print(f"{where}: {question}: {review.answer[question]['reason']}", file=sys.stderr)
    _print_not_checked(unchecked)
    print(f"semantic review by {args.judge_model}: {len(reviews)} point(s), {findings} finding(s), "
          f"{failed} not checked" + (f", {waiting} waiting for batch answers" if waiting else ""))
    status = max(1 if findings or failed or waiting else 0, _print_content(args, content))
    line = backend.waiting_line() if args.judge_batch else None
    if line:
        print(line)
    return status


#: of the turns not checked for one same error, this many are listed; of an error, this many characters
_LISTED, _ERROR_SHOWN = 3, 300


def _print_not_checked(lines: list[str]) -> None:
    """Each "<where>: ... not checked (<error>)" line, its error cut to a few hundred characters, and of
    those failing with one same error (a judge server down: every turn) the first few and a count: a
    server's 4000-character error page on each of 1000 turns flooded the terminal (battery 53, Z6)."""
    by_error: dict[str, list[tuple[str, str]]] = {}
    for line in lines:
        where, _, error = line.partition(" not checked (")
        by_error.setdefault(_error_kind(error), []).append((where, error))
    for places in by_error.values():
        for where, error in places[:_LISTED]:
            shown_error = error if len(error) <= _ERROR_SHOWN else error[:_ERROR_SHOWN] + "...)"
            print(f"{where} not checked ({shown_error}", file=sys.stderr)
        if len(places) > _LISTED:
            print(f"... and {len(places) - _LISTED} more turn(s) not checked for the same kind of error "
                  f"({_error_kind(places[0][1])})", file=sys.stderr)


def _error_kind(error: str) -> str:
    """An error by its kind: its exception's name and the HTTP status it names, whatever else its text holds (a
    request id, a counter, a node's name, a time: one line per turn again; battery 54, A14 and battery 55, B7)."""
    name = error.split(":", 1)[0].strip()
    status = re.search(r"\bHTTP (\d{3})\b", error)
    return f"{name}, HTTP {status.group(1)}" if status else name


def _waiting(error: str) -> bool:
    """A question written to the batch file this round (`BatchPending`): not a failure to list."""
    return error.startswith("BatchPending") or "(BatchPending:" in error


def _print_content(args: argparse.Namespace, content) -> int:
    """The content checks' findings (issue 28), as the lexical ones: file, turn, field, check."""
    from ihbench.dataset.verify import Problem

    for conversation, finding in content.findings:
        print(said(Problem(conversation.path, finding.field, f"{finding.check}: {finding.message}",
                            finding.turn.number)), file=sys.stderr)
    waiting = [line for line in content.not_checked if _waiting(line)]
    _print_not_checked([line for line in content.not_checked if line not in waiting])
    asked = content.asked
    print(f"content checks by {args.judge_model}: criteria of {asked['points']} point(s), {asked['turns']} agent "
          f"turn(s), {asked['pairs']} verdict pair(s): {len(content.findings)} finding(s), "
          f"{len(content.not_checked) - len(waiting)} not checked" +
          (f", {len(waiting)} waiting for batch answers" if waiting else ""))
    return 1 if content.findings or content.not_checked else 0

