"""`ihbench space`: the Gradio Space served locally."""
from __future__ import annotations

import argparse


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, whole

    space = add("space", help="serve the Gradio Space locally (Browse, Evaluate, Detect, Turns, ConversationBench, Metrics, Leaderboard)")
    space.add_argument("--data", type=data_source(),
                       help="dataset folder or Hub id (default: $IHBENCH_DATA, else ./data/ihbench-dev)")
    space.add_argument("--port", type=whole(min=1, max=65535), default=7860, help="port (default 7860)")
    space.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                       "every interface)")
    # a server, not a batch: what its visitors made stays (their runs in the runs folder)
    space.set_defaults(func=main, stopped="the server stopped; the runs its visitors made stay in the runs folder")
    return space


def main(args: argparse.Namespace) -> int:
    import os
    import runpy

    from ihbench.resources import space_dir

    data = args.data if args.data else _data_from_environment()
    if data:
        _checked(data, "--data" if args.data else "$IHBENCH_DATA")
    from ihbench.ui import check_owner_endpoint, check_runs_dir

    check_runs_dir()  # where the Evaluate tab writes its runs
    check_owner_endpoint()
    _check_address(args.host, args.port)
    if args.data:
        os.environ["IHBENCH_DATA"] = args.data
    os.environ["GRADIO_SERVER_PORT"] = str(args.port)
    os.environ["GRADIO_SERVER_NAME"] = args.host
    runpy.run_path(str(space_dir() / "app.py"), run_name="__main__")  # the very file a Space runs
    return 0


def _data_from_environment():
    """$IHBENCH_DATA, --data's default, is checked as --data is (set but blank is refused too: it
    would silently fall back to ./data/ihbench-dev)."""
    import os

    from ihbench.dataset.argtypes import data_source

    value = os.environ.get("IHBENCH_DATA")
    return None if value is None else data_source().check("$IHBENCH_DATA (--data's default)", value)


def _checked(data: str, name: str) -> None:
    """A file, a run folder, a missing folder or an empty config is refused now, not shown as a page
    that cannot load; said with the option or the variable it came from."""
    from ihbench.dataset.errors import IHBenchError, UsageError
    from ihbench.dataset.load import check_source

    try:
        check_source(data)
    except IHBenchError as error:
        if name == "--data":
            raise
        raise UsageError(f"$IHBENCH_DATA (--data's default): {error}") from None


def _check_address(host: str, port: int) -> None:
    """--host and --port checked by binding them once, so a typo or a port in use is named as the
    option it is, not as gradio's advice about GRADIO_SERVER_PORT and launch()."""
    import errno
    import socket

    from ihbench.dataset.errors import UsageError

    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UsageError(f"--host: {host!r} is not an address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)") \
            from None
    ipv4 = [entry for entry in found if entry[0] == socket.AF_INET]
    if not ipv4:  # gradio looks for a free port on IPv4 only, and then says no port is free
        raise UsageError(f"--host: {host} is an IPv6 address; the Space's server (gradio) listens on IPv4 ones: "
                         "127.0.0.1, or 0.0.0.0 for every interface")
    family, kind, proto, _, address = ipv4[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise UsageError(f"--port: {port} is in use on {host}; give another --port") from None
            raise UsageError(f"--host: {host} is not an address of this machine ({error.strerror})") from None

