"""`ihbench cache info|prune`: the LLM answer cache shared by judge, verify --judge-model and generate."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    """`add(name, **kw)`: the CLI's subcommand factory (it adds the common options such as --quiet)."""
    from ihbench.dataset.argtypes import count, number, path

    cache = add("cache", help="show or prune the cache of LLM answers (judge, verify --judge-model, generate)")
    cache.add_argument("action", choices=("info", "prune"),
                       help="info: entries, size and last use; prune: remove entries (--older-than, --max-entries)")
    cache.add_argument("--cache", type=path("file"), help="sqlite cache (default ~/.cache/ihbench/judge_cache.sqlite, "
                       "or $IHBENCH_CACHE/judge_cache.sqlite)")
    cache.add_argument("--older-than", type=number(min=0), metavar="DAYS",
                       help="prune: remove entries not used for more than DAYS days")
    cache.add_argument("--max-entries", type=count(min=0), metavar="N",
                       help="prune: then keep only the N most recently used entries")
    cache.set_defaults(func=main)
    return cache


def _size(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _summary(info: dict) -> str:
    if not info["exists"]:
        from ihbench.dataset.io.regular import absent

        linked = absent(info["path"])  # a link to nothing is said, as judge says it, not taken for no cache
        return f"{info['path']}: {linked}" if linked.startswith("a link") else f"{info['path']}: no cache yet"
    if info["empty"]:
        what = "an empty file" if not info["bytes"] else "an SQLite database with no tables"
        return f"{info['path']}: {what}, no cache yet (nothing was written to it)"
    used = f"; last used {info['oldest_use']} .. {info['newest_use']}" if info["oldest_use"] else \
        "; last use not recorded" if info["entries"] else ""  # an older cache, or times damaged by hand
    unreadable = (f", {info['unreadable']} of them unreadable (damaged or edited by hand: asked again when met)"
                  if info.get("unreadable") else "")
    return f"{info['path']}: {info['entries']} answer(s){unreadable}, {_size(info['bytes'])} on disk{used}"


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.errors import UsageError
    from ihbench.llm import cache_info, prune_cache

    if args.action == "info":
        if args.older_than is not None or args.max_entries is not None:
            raise UsageError("--older-than and --max-entries are options of `ihbench cache prune`")
        print(_summary(cache_info(args.cache)))
        return 0
    removed = prune_cache(args.cache, older_than_days=args.older_than, max_entries=args.max_entries)
    print(f"{removed} answer(s) removed; {_summary(cache_info(args.cache))}")
    return 0
