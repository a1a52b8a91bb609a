"""`ihbench space`: the Gradio Space served locally."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import whole

    space = add("space", help="serve the Gradio Space locally (Browse, Evaluate, Detect, Metrics, Leaderboard)")
    space.add_argument("--data", help="dataset folder or Hub id (default: $IHBENCH_DATA, else ./data/ihbench-dev)")
    space.add_argument("--port", type=whole(min=1, max=65535), default=7860, help="port (default 7860)")
    space.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                       "every interface)")
    space.set_defaults(func=main)
    return space


def main(args: argparse.Namespace) -> int:
    import os
    import runpy

    from ihbench.dataset.load import resolve_source
    from ihbench.resources import space_dir

    if args.data:
        resolve_source(args.data)  # a file or a run folder is refused now, not as a page that cannot load
        os.environ["IHBENCH_DATA"] = args.data
    os.environ["GRADIO_SERVER_PORT"] = str(args.port)
    os.environ["GRADIO_SERVER_NAME"] = args.host
    runpy.run_path(str(space_dir() / "app.py"), run_name="__main__")  # the very file a Space runs
    return 0

