"""`ihbench turns` benchmark: real-time factor and per-chunk label agreement with the ground truth.

Run: .venv/bin/python benchmarks/turns.py [--data DIR] [--conversations N]
Target (issue 16): real-time factor <= 0.05 on this machine, both channels. Agreement of the
40 ms events with the stored ground truth is reported (issue 16 asks >= 0.95 on the renders).

Recordings: the `duplex` config of a built dataset (`--data DIR`, or data/ihbench-dev when it
has one), written out as the FLAC files a user would hand to the command; otherwise N
conversations synthesised here from the dev set's texts in the build's voices, with seeded gaps,
barge-ins (the user starts before the assistant's delivered text ends) and fillers (a user
backchannel inside the assistant's speech), ground truth from the renders' energy.
The command runs once over all recordings in its own process (`--quiet`); the wall clock of that
process, start-up included, is the end-to-end figure, and summary.json's `real_time_factor`
(decode, VAD, labels, statistics, plots; model loading excluded) the processing one.
Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the synthesiser lives with the tests


def from_duplex(data: Path, folder: Path) -> dict[str, dict]:
    """Write each duplex row's FLAC bytes as <conversation_id>.flac; {name: ground truth}."""
    import pyarrow.parquet as pq

    truth = {}
    for path in sorted((data / "duplex").glob("*.parquet")):
        table = pq.read_table(path, columns=["conversation_id", "audio", "events", "turns", "end_times",
                                             "assistant_speech", "user_speech"])
        for row in table.to_pylist():
            (folder / f"{row['conversation_id']}.flac").write_bytes(row["audio"]["bytes"])
            truth[row["conversation_id"]] = {k: row[k] for k in ("events", "turns", "end_times")}
            truth[row["conversation_id"]]["speech"] = [[(d["start"], d["end"]) for d in row[key]]
                                                       for key in ("assistant_speech", "user_speech")]
    return truth


def synthesize(folder: Path, count: int, seed: int = 16) -> dict[str, dict]:
    """Dev-set conversations rendered and laid out here; {name: ground truth labels}."""
    from ihbench.dataset.sources import source_files
    from turns_synth import AI_VOICE, SyntheticCall, render, trim

    from ihbench.dataset.floor import floor_labels
    from ihbench.dataset.ipus import merge_ipus

    rng = np.random.default_rng(seed)
    truth = {}
    for path in source_files()[:count]:
        source = json.loads(path.read_text())
        placements, t = [], 0.4  # (channel, clip, start, is backchannel)
        for turn in source["turns"][:8]:
            kind = (turn.get("interruption") or {}).get("type")
            ai = trim(render(turn["delivered"] if kind and kind != "filler" else turn["assistant"], AI_VOICE))
            user = trim(render(turn["user"], source["user_voice"]))
            placements.append(("A", ai, t, False))
            ai_end = t + ai.size / 16000
            if kind == "filler":
                placements.append(("B", user, t + rng.uniform(0.4, 0.7) * ai.size / 16000, True))
                t = ai_end + rng.uniform(0.25, 1.0)
                continue
            start = ai_end - rng.uniform(0.2, 0.8) if kind else ai_end + rng.uniform(0.2, 1.2)
            placements.append(("B", user, start, False))
            t = start + user.size / 16000 + rng.uniform(0.3, 1.6)
        c = SyntheticCall(round(t + 0.5, 2))
        backchannels = []
        for channel, clip, start, is_backchannel in placements:
            before = len(c.truth[1])
            c.place(channel, clip, start)
            if is_backchannel:
                backchannels.extend(c.truth[1][before:])
                del c.truth[1][before:]
        name = source["conversation_id"]
        c.write(folder / f"{name}.wav")
        speech = [merge_ipus(c.truth[0]), merge_ipus(c.truth[1])]
        labels = floor_labels(*speech, c.duration, b_backchannels=merge_ipus(backchannels))
        truth[name] = {**labels.to_reference(), "speech": speech}
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, help="built dataset with a duplex config (default: data/ihbench-dev "
                        "when it has one, else synthesise)")
    parser.add_argument("--conversations", type=int, default=4, help="conversations to synthesise (default 4)")
    args = parser.parse_args()
    data = args.data or REPO / "data" / "ihbench-dev"
    work = Path(tempfile.mkdtemp(prefix="ihbench-bench-turns-"))
    audio = work / "audio"
    audio.mkdir()
    if (data / "duplex").is_dir():
        source, truth = f"duplex renders of {data}", from_duplex(data, audio)
    else:
        print(f"no duplex config in {data}: synthesising {args.conversations} conversations")
        source, truth = "synthesised", synthesize(audio, args.conversations)
    files = sorted(audio.iterdir())
    out = work / "out"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ihbench.cli", "turns", *map(str, files), "--quiet", "--out", str(out)],
                   check=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    summary = json.loads((out / "summary.json").read_text())
    seconds = summary["duration_s"]
    same_events = same_turns = chunks = 0
    worst, recall = 1.0, {e: [0, 0] for e in ("T", "I", "BC")}
    for name, expected in truth.items():
        found = json.loads((out / name / "events.json").read_text())
        n = min(len(found["events"]), len(expected["events"]))
        events, reference = np.array(found["events"][:n]), np.array(expected["events"][:n])
        same = int(np.sum(events == reference))
        same_events += same
        same_turns += int(np.sum(np.array(found["turns"][:n]) == np.array(expected["turns"][:n])))
        chunks += n
        worst = min(worst, same / n)
        for event in recall:  # each run of the event in the truth: found when the run +-2 chunks has it
            runs = np.flatnonzero(np.diff(np.concatenate([[0], (reference == event).astype(int), [0]])))
            for first, stop in zip(runs[::2], runs[1::2]):
                recall[event][1] += 1
                recall[event][0] += int(event in events[max(0, first - 2):stop + 2])
    agreement, turns = same_events / chunks, same_turns / chunks
    from ihbench.turns.stats import timing_events, timing_summary

    expected_timing = timing_summary([timing_events(*t["speech"]) for t in truth.values()])
    bias = {key: summary["timing"][key]["mean"] - expected_timing[key]["mean"]
            for key in ("response_latency_s", "stop_latency_s")
            if summary["timing"][key]["n"] and expected_timing[key]["n"]}
    processing = summary["real_time_factor"]
    print(f"{len(files)} recordings ({source}), {seconds / 60:.1f} min of audio, {chunks} chunks")
    print(f"real-time factor: processing {processing:.4f}, end to end {wall / seconds:.4f} "
          f"({wall:.1f} s wall, start-up included); target <= 0.05")
    print(f"per-chunk agreement with the ground truth: events {agreement:.4f} (worst recording {worst:.4f}), "
          f"floor {turns:.4f}")
    print("events (runs in the truth) found within 80 ms: " + ", ".join(f"{e} {hit}/{n}" for e, (hit, n) in recall.items()))
    for key, figure in summary["timing"].items():
        if not isinstance(figure, dict):  # a count (talk_overs)
            print(f"{key}: measured {figure}, from the true intervals {expected_timing[key]}")
            continue
        value = "mean" if "mean" in figure else "value"
        print(f"{key}: measured {figure[value]} (n={figure['n']}), from the true intervals "
              f"{expected_timing[key][value]} (n={expected_timing[key]['n']})")
    print(" ".join([f"rtf={processing:.4f}", f"rtf_end_to_end={wall / seconds:.4f}",
                    f"rtf_over_target={processing / 0.05:.3f}", f"event_agreement={agreement:.4f}",
                    f"worst_recording={worst:.4f}", f"turn_agreement={turns:.4f}",
                    *(f"{key.replace('_s', '')}_bias_s={value:+.3f}" for key, value in bias.items()), f"recordings={len(files)}",
                    f"audio_s={seconds:.0f}"]))


if __name__ == "__main__":
    main()
