"""Helpers several commands share: loader and detector options, notes, publish plans."""
from __future__ import annotations

import argparse


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
