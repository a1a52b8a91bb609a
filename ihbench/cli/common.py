"""Helpers several commands share: notes, publish plans.

What an option's value may be is said where the option is added, with a type of
`ihbench.dataset.argtypes` (the loaders check their `--option` values with the same types)."""
from __future__ import annotations

import argparse


def notes(args: argparse.Namespace, lines) -> None:
    """What a command noticed but did not stop for, one `note:` line each; --quiet hides them."""
    if not args.quiet:
        for note in lines:
            print(f"note: {note}")


def print_plan(plan, dry_run: bool) -> None:
    """One publish plan: where it goes, the files, and the Space variables it sets."""
    verb = "would upload" if dry_run else "uploaded"
    shown = ", ".join(plan.files[:8]) + (f", ... ({len(plan.files)} files)" if len(plan.files) > 8 else "")
    print(f"{plan.repo_id} ({plan.repo_type}): {verb} {shown}  (from {plan.staged})")
    for key, value in plan.variables.items():
        print(f"{plan.repo_id}: {'would set' if dry_run else 'set'} Space variable {key}={value}")
