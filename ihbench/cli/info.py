"""`ihbench info`: summary statistics of a dataset."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source

    info = add("info", help="summary statistics of a dataset (built dir or hub id)")
    info.add_argument("data", type=data_source(), help="dataset directory or hub id")
    info.add_argument("--split", help="split (default: the only one, or test/dev)")
    info.set_defaults(func=main)
    return info


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset import load_items
    from ihbench.dataset.load import load_conversations
    from ihbench.dataset.stats import dataset_statistics, statistics_markdown

    from ihbench.dataset.contents import IHBENCH_CONFIG, dataset_contents
    from ihbench.dataset.load import check_source, config_names

    path, _ = check_source(args.data)  # a local dataset's every config, its files as built (one changed is named)
    names = config_names(path, None)
    if not names:  # a Hub id that cannot be read (offline, misspelled) lists nothing: failed as run's is
        load_conversations(args.data, split=args.split)  # says why, in the words `ihbench run` uses
    if IHBENCH_CONFIG not in names:  # a ConversationBench or SID-Bench dataset alone
        print(f"data: {args.data} (no IHBench conversations; its configs:)")
        print("| config | holds | rows |\n|---|---|---|")
        for name, kind, rows in dataset_contents(args.data):
            print(f"| {name} | {kind} | {rows} |")
        return 0
    conversations = load_conversations(args.data, split=args.split)
    items = load_items(args.data, split=args.split)
    with_baseline = sum(item.baseline is not None for item in items)
    print(f"IHBench data: {args.data}")
    print(f"baseline responses: {with_baseline} of {len(items)} interruption points")
    print(statistics_markdown(dataset_statistics(conversations, items)))
    return 0

