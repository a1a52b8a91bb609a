"""The leak check of `ihbench verify` on one very long field: time against length must be linear.

A generator that runs away can write a megabyte into an utterance; verify must still answer in
about a second (it then refuses the field for its length). The check once sliced the text up to
every word, which made one 1 MB field cost 20 s. Timed here at 0.25, 0.5 and 1 MB in one run;
doubling the length must about double the time.

Run: .venv/bin/python benchmarks/verify.py
Target (issue 28): time(1 MB) / time(0.5 MB) <= 2.5. Last line: key=value pairs.
"""
from __future__ import annotations

import copy
import time


def main() -> None:
    from ihbench.dataset.sources import load_conversation, source_files
    from ihbench.dataset.verify import leaked_words

    conversation = load_conversation(source_files()[0])
    turn = next(t for t in conversation.turns if t.interruption is not None)
    sentence = "Well, Honestly I said the Thornbury parcel, number 51-730, and then. "
    seconds = {}
    for megabytes in (0.25, 0.5, 1.0):
        long = copy.copy(turn)
        object.__setattr__(long, "user", sentence * int(megabytes * 1_000_000 / len(sentence)))
        runs = []
        for _ in range(3):  # the fastest of three: a busy machine adds time, never removes it
            started = time.perf_counter()
            leaked_words(conversation, long)
            runs.append(time.perf_counter() - started)
        seconds[megabytes] = min(runs)
        print(f"{megabytes:4.2f} MB utterance: leak check {seconds[megabytes]:.3f} s (fastest of 3)")
    ratio = seconds[1.0] / seconds[0.5]
    print(f"seconds_1mb={seconds[1.0]:.3f} ratio_1mb_over_half={ratio:.2f} target=2.5 within={ratio <= 2.5}")


if __name__ == "__main__":
    main()
