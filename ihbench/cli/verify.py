"""`ihbench verify`: check in-house conversation sources, and optionally ask an LLM the semantic questions."""
from __future__ import annotations

import argparse
import sys

from .common import notes


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import number, path, url, whole, model_name

    verify = add("verify", help="check in-house conversation sources and ConversationBench-style benchmark folders")
    verify.add_argument("paths", nargs="*", type=path(),
                        help="JSON files or folders, or benchmark folders (turns.py, ...) (default: the shipped ones)")
    verify.add_argument("--no-audio", action="store_true", help="skip checking referenced recordings")
    verify.add_argument("--judge-model", type=model_name(),
                        help="also ask this LLM the verifier's semantic questions per point "
                        "(leakage in meaning, caller knowledge, type, grounding)")
    verify.add_argument("--judge-base-url", type=url(),
                        help="OpenAI-compatible server URL of the judge (default: OpenAI)")
    verify.add_argument("--concurrency", type=whole(min=1), help="judge calls in flight (default 8)")
    verify.add_argument("--timeout", type=number(min=0, min_open=True), help="seconds per judge call (default 60)")
    verify.add_argument("--cache", type=path("file"), help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite)")
    verify.set_defaults(func=main)
    return verify


#: the options of the semantic review, and their defaults (None above: to tell whether one was given)
_REVIEW_OPTIONS = {"judge_base_url": None, "concurrency": 8, "timeout": 60.0, "cache": None}


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.convbench.checks import verify_benchmark_folder
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.verify import verify_paths

    given = [name for name in _REVIEW_OPTIONS if getattr(args, name) is not None]
    if given and not args.judge_model:  # else the user reads "OK" and believes the review ran
        option = "--" + given[0].replace("_", "-")
        raise UsageError(f"{option} is an option of the semantic review, which only --judge-model MODEL asks for; "
                         "give --judge-model too, or leave it out")
    for name, default in _REVIEW_OPTIONS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    cache = None
    if args.judge_model and args.cache:  # a wrong --cache is refused before "OK" is printed
        from ihbench.llm import LLMCache

        cache = LLMCache(args.cache)
    folders, paths = _benchmark_folders(args.paths)
    report = verify_paths(paths or None, check_audio=not args.no_audio) if paths or not args.paths else None
    checked = [verify_benchmark_folder(folder) for folder in folders]
    problems = [*(report.problems if report else []), *(p for _, found in checked for p in found)]
    notes(args, report.notes if report else [])
    for problem in problems:
        print(problem, file=sys.stderr)
    conversations = report.conversations if report else []
    points = sum(len(c.interrupted_turns) for c in conversations)
    turns = sum(len(benchmark.turns) for benchmark, _ in checked if benchmark)
    status = "OK" if not problems else f"{len(problems)} problem(s)"
    print(f"{status}: {len(conversations)} conversation(s), {points} interruption point(s), "
          f"{len(folders)} ConversationBench-style benchmark(s) ({turns} turns) checked")
    if problems:
        return 1
    return _verify_with_judge(args, conversations, cache) if args.judge_model and conversations else 0


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

    from ihbench.judge.review import review_conversations
    from ihbench.llm import OpenAICompatibleLLM

    backend = OpenAICompatibleLLM(args.judge_model, base_url=args.judge_base_url, timeout=args.timeout)

    async def review():
        try:
            return await review_conversations(conversations, backend, concurrency=args.concurrency,
                                              cache=cache,
                                              progress=not args.quiet)
        finally:
            await backend.close()

    reviews = asyncio.run(review())
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

