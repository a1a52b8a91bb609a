"""`ihbench export`: one conversation as text + WAV files."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import shown


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, model_name, path

    export = add("export", help="write one conversation as text + WAV files")
    export.add_argument("data", type=data_source(), help="dataset directory or hub id")
    export.add_argument("--conversation", type=model_name(), help="conversation id (default: the first)")
    export.add_argument("--out", type=path("folder"), default=Path("demo"), help="output folder (default: demo/)")
    export.add_argument("--split", help="split (default: the only one, or test/dev)")
    export.set_defaults(func=main)
    return export


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset import load_items
    from ihbench.dataset.export import export_conversation, pick_conversation
    from ihbench.dataset.load import load_conversations
    from ihbench.dataset.outputs import check_output_path

    check_output_path(args.out, "--out", shared=True)  # one subfolder per conversation
    conversations = load_conversations(args.data, split=args.split)
    try:
        conversation = pick_conversation(conversations, args.conversation)
    except KeyError as error:
        print(shown(f"ihbench export: error: {error.args[0]}"), file=sys.stderr)
        return 2
    from ihbench.dataset.errors import UsageError
    from ihbench.dataset.keys_in_data import environment_secret_in

    found = environment_secret_in([conversation], lambda c: f"{args.data}: conversation {c.conversation_id}")
    if found:  # a new copy of it on disk (battery 62, I16)
        raise UsageError(f"{found} (a credential; not shown), which conversation.md would copy; unset the variable if "
                         "that text is no secret, or rebuild the dataset without it")
    target = export_conversation(conversation, load_items(args.data, split=args.split), args.out)
    wavs = len(list(target.glob("*.wav")))
    print(f"exported {conversation.conversation_id} to {target} (conversation.md + {wavs} WAV files)")
    return 0

