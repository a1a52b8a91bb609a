"""`ihbench doctor`: check a checkpoint against what its loader assumes, without loading its weights."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, history_audio, key_value, model_name
    from ihbench.loaders.base import GENERATION_TYPES as GENERATION

    doctor = add("doctor", help="check a local checkpoint in seconds (config, tokenizer, processor and chat template; "
                                "no weights) against what its loader assumes, one line per check")
    doctor.add_argument("--model", required=True, help="loader name (see `ihbench models`)")
    doctor.add_argument("--model-path", required=True, type=model_name(),
                        help="local model directory or cached hub id")
    doctor.add_argument("--option", action="append", type=key_value(), metavar="KEY=VALUE",
                        help="loader options as for `ihbench run` (revision, thinking, ...)")
    doctor.add_argument("--data", type=data_source(),
                        help="dataset directory: its deepest point is checked against the context "
                                       "(without it, the context check is skipped)")
    doctor.add_argument("--config", type=model_name(), help="dataset config (default conversations)")
    doctor.add_argument("--split", help="dataset split")
    doctor.add_argument("--history-audio", metavar="all|auto|last:K", type=history_audio(),
                        help="as for `ihbench run`: what the context check hears as audio (default all)")
    doctor.add_argument("--max-new-tokens", type=GENERATION["max_new_tokens"], default=256,
                        help="the answer budget the context check leaves room for (default 256, as `run`)")
    doctor.set_defaults(func=main)
    return doctor


def main(args: argparse.Namespace) -> int:
    from ihbench.doctor import checks
    from ihbench.protocol import parse_history_audio

    if args.data is None:  # they shape only the context check, which needs the data (battery 65, L10: a pass read
        from ihbench.dataset.errors import UsageError  # as if the split given had been checked)

        given = [flag for flag, value in (("--config", args.config), ("--split", args.split),
                                          ("--history-audio", args.history_audio)) if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only with --data (they shape the context check against the data's "
                             "deepest point, which is skipped without it); give --data, or leave them out")
    history_audio = parse_history_audio(args.history_audio)
    failed = total = 0
    for check in checks(args.model, args.model_path, dict(args.option or ()), data=args.data, config=args.config,
                        split=args.split, history_audio=history_audio, max_new_tokens=args.max_new_tokens):
        print(check.line(), flush=True)
        total += 1
        failed += check.status == "fail"
    if failed:
        print(f"{args.model_path}: {failed} of {total} check(s) failed")
        return 1
    print(f"{args.model_path}: every check passed ({total}); weights not loaded")
    return 0
