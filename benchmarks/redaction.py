"""Redaction of a server's message: time against length must be linear, whatever the message holds.

Every message a server sends back is judged for keys before it is recorded or printed. Two patterns
once made that time grow with the square of the length: a URL scheme read from every word of a long
dashed run (`ab12-cd34-...`), and a file extension read from every `.` of a dotted one. A 1 MB error
page then took 40 s an item. Messages are now cut to 4000 characters first (`shortened`), so this
times `redact_text`, `credential_in` (a name's check), `credential_in_data` (every text a dataset or prompt copies)
and `hide_secrets_in_use` (every model or judge answer, whole) on worst-case shapes at 100 and 200 KB in one run,
with an environment secret set as a user's shell would have one: doubling the length must about double the time.

Run: .venv/bin/python benchmarks/redaction.py
Target: for every shape, time(200 KB) / time(100 KB) <= 2.5. Last line: key=value pairs.
"""
from __future__ import annotations

import random
import time

_DRAW = random.Random(52)
#: one repeat of each shape; long runs of them are the worst cases found for the key rule and URL patterns
SHAPES = {
    "dashed hex": lambda: f"{_DRAW.getrandbits(32):08x}-",
    "dotted": lambda: "a.",
    "schemes": lambda: "a://",
    "nested URLs": lambda: "http://x/",
    "base64 parts": lambda: "Ab1/",
    "mixed groups": lambda: "aB3-",
    "query values": lambda: "?a=b&",
    "words": lambda: "error happened here ",
    "one-case groups": lambda: "abcd-",
    "labelled groups": lambda: "ab12-cd34-run-",
    "labels only": lambda: "eval-v2-",
    # a secret word glued after CamelCase words once backtracked without end on a name of one capital repeated
    # (`CCCC...CCC.sqlite`: CI hung); and the other patterns of battery 54 and 55's rules
    "capitals": lambda: "C",
    "camel secret words": lambda: "ApiKey",
    "glued hex": lambda: "Key0a1b",
    "system folders": lambda: "/var/folders/ab/abcd0000gn/T",
    "systemd units": lambda: f"/tmp/systemd-private-{_DRAW.getrandbits(128):032x}-a.",
    # one hex repeated, joined by `_`: every copy was judged against every part (battery 57, D8)
    "one hex repeated": lambda: "0a1b2c3d4e5f60718293a4b5c6d7e8f9_",
}


def _text(shape, characters: int) -> str:
    """Whole repeats up to `characters`: both lengths end alike (a cut part ends a run another way)."""
    parts, length = [], 0
    while length < characters:
        part = shape()
        parts.append(part)
        length += len(part)
    return "".join(parts)


def main() -> None:
    import os

    from ihbench.dataset.redaction import credential_in, credential_in_data, hide_secrets_in_use, redact_text

    os.environ.setdefault("BENCH_SERVICE_TOKEN", "Tq8WzL3nV6pR2xK9")  # the environment-secret pass has one to look for
    ratios = {}
    # a message recorded; a name or path given (checked whole); a dataset's text; an answer as written
    for check in (redact_text, credential_in, credential_in_data, hide_secrets_in_use):
        for name, shape in SHAPES.items():
            seconds = {}
            for kilobytes in (100, 200):
                text = _text(shape, kilobytes * 1000)
                runs = []
                for _ in range(5):  # the fastest of five: a busy machine adds time, never removes it
                    started = time.perf_counter()
                    check(text)
                    runs.append(time.perf_counter() - started)
                seconds[kilobytes] = min(runs)
            label = f"{check.__name__} {name}"
            ratios[label] = seconds[200] / seconds[100]
            print(f"{label:30s} 100 KB {seconds[100]:.3f} s, 200 KB {seconds[200]:.3f} s: ratio {ratios[label]:.2f}")
    worst = max(ratios, key=ratios.get)
    print(f"worst_shape={worst.replace(' ', '_')} worst_ratio={ratios[worst]:.2f} target=2.5 "
          f"within={ratios[worst] <= 2.5}")


if __name__ == "__main__":
    main()
