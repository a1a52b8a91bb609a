"""`ihbench publish-metrics`: the metric modules as evaluate Spaces on the Hub."""
from __future__ import annotations

import argparse

from .common import print_plan


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import path

    publish = add("publish-metrics", help="push the metric modules to the Hub as evaluate Spaces")
    publish.add_argument("--namespace", required=True, help="Hub user or organization")
    publish.add_argument("names", nargs="*", help="metric folders (default: all)")
    publish.add_argument("--dry-run", action="store_true", help="stage and list, upload nothing")
    publish.add_argument("--staging-dir", type=path("folder"), help="where to stage the self-contained folders")
    publish.set_defaults(func=main)
    return publish


def main(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_metrics

    plans = publish_metrics(args.namespace, args.names or None, dry_run=args.dry_run, staging_dir=args.staging_dir)
    for plan in plans:
        print_plan(plan, args.dry_run)
    if not args.dry_run:
        names = ", ".join(f'evaluate.load("{p.repo_id}")' for p in plans[:2])
        print(f"done: {names} ... now work for anyone")
    return 0

