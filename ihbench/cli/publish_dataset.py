"""`ihbench publish-dataset`: a built dataset folder as a Hub dataset repository."""
from __future__ import annotations

import argparse

from .common import print_plan


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source

    publish_data = add("publish-dataset", help="push a built dataset folder to the Hub as a dataset repository")
    publish_data.add_argument("data", type=data_source(),
                              help="folder written by `ihbench build` (checked readable, every clip decoded, before upload)")
    publish_data.add_argument("--repo", required=True, help="Hub dataset id, NAMESPACE/NAME")
    publish_data.add_argument("--private", action="store_true", help="create the repository as private")
    publish_data.add_argument("--dry-run", action="store_true", help="check and list, upload nothing")
    publish_data.set_defaults(func=main)
    return publish_data


def main(args: argparse.Namespace) -> int:
    from ihbench.publish import publish_dataset

    plan = publish_dataset(args.data, args.repo, private=args.private, dry_run=args.dry_run,
                           progress=not args.quiet)
    print_plan(plan, args.dry_run)
    if not args.dry_run:
        from ihbench.dataset.builddir import BuildDir

        names = BuildDir(args.data).config_names() or ["default"]
        first = "interruptions" if "interruptions" in names else names[0]
        print(f'done: load_dataset("{plan.repo_id}", "{first}") now works for anyone with access')
    return 0

