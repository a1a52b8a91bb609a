"""`ihbench publish-space`: the Gradio Space staged and pushed to the Hub."""
from __future__ import annotations

import argparse

from .common import print_plan


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, path

    publish_space = add("publish-space", help="stage the Gradio Space (app, toolkit, data) and push it to the Hub")
    publish_space.add_argument("--repo", required=True, help="Hub Space id, NAMESPACE/NAME")
    publish_space.add_argument("--data", type=data_source(),
                               help="a Hub dataset id (set as the Space variable IHBENCH_DATA) or a built "
                               "folder (copied into the Space); without it the Space asks for IHBENCH_DATA")
    publish_space.add_argument("--private", action="store_true", help="create the Space as private")
    publish_space.add_argument("--dry-run", action="store_true", help="stage and list, upload nothing")
    publish_space.add_argument("--staging-dir", type=path("folder"),
                               help="empty folder to stage the Space in (default: a temporary folder)")
    publish_space.set_defaults(func=main)
    return publish_space


def main(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_space

    plan = publish_space(args.repo, data=args.data, private=args.private, dry_run=args.dry_run,
                         staging_dir=args.staging_dir, progress=not args.quiet)
    print_plan(plan, args.dry_run)
    if not args.dry_run:
        print(f"done: https://huggingface.co/spaces/{plan.repo_id}")
    return 0

