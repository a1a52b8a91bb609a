"""SID detectors on the in-house split: real-time factor (seconds of compute per second of audio) and
FIR/IRL/APT per config; Smart Turn beside pipecat's own analyzer on the same windows.

Run: .venv/bin/python benchmarks/sid.py [--data DIR] [--configs sid_dev_en,sid_dev_noise] [--peer-limit N]
Targets: silero-vad RTF <= 0.02 on 2 cores (issue 6); smart-turn (issue 26), one thread: the
probabilities of every window it scored equal LocalSmartTurnAnalyzerV3._predict_endpoint's within
1e-5, and our wall time over pipecat's <= 1.0 on those windows (timed in alternating chunks, so load
from other jobs falls on both). Last line: key=value pairs.
"""
from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # both sides' numpy on one thread
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time  # noqa: E402

from _data import dataset_dir  # noqa: E402

CHUNK = 16  # windows per timed chunk: the sides alternate chunk by chunk


def _figures(scores: dict) -> str:
    notebook, readme = scores["notebook"], scores["readme"]
    irl = "–" if notebook["irl"] is None else f"{notebook['irl']:.3f}"
    fir_readme = "–" if readme["fir"] is None else f"{readme['fir']:.3f}"
    return f"FIR {notebook['fir']:.3f} IRL {irl} APT {notebook['apt']:.3f} (README FIR {fir_readme})"


def _peer(segments, threads: int):
    """Our probabilities and pipecat's for the same windows, with the wall time of each side."""
    import numpy as np
    from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3

    from ihbench.smart_turn import SmartTurn

    ours_model = SmartTurn(threads=threads)
    theirs_model = LocalSmartTurnAnalyzerV3(cpu_count=threads)
    theirs_model.set_sample_rate(16_000)
    ours_model.probabilities(segments[:1]), theirs_model._predict_endpoint(segments[0])  # warm-up
    ours, theirs, ours_s, theirs_s = [], [], 0.0, 0.0
    for index, first in enumerate(range(0, len(segments), CHUNK)):
        chunk = segments[first:first + CHUNK]
        for side in ((0, 1) if index % 2 == 0 else (1, 0)):
            started = time.perf_counter()
            if side == 0:
                ours.extend(ours_model.probabilities(chunk))
                ours_s += time.perf_counter() - started
            else:
                theirs.extend(theirs_model._predict_endpoint(clip)["probability"] for clip in chunk)
                theirs_s += time.perf_counter() - started
    return np.asarray(ours, np.float64), np.asarray(theirs, np.float64), ours_s, theirs_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--config", help="one config only (the former interface)")
    parser.add_argument("--configs", default="sid_dev_en,sid_dev_noise")
    parser.add_argument("--peer-limit", type=int, help="compare with pipecat on the first N windows only")
    args = parser.parse_args()
    import logging

    import torch
    from loguru import logger

    logger.remove()  # pipecat's analyzer logs every load at DEBUG
    logging.getLogger("pipecat").setLevel(logging.WARNING)
    from ihbench.dataset.sid import sid_rows
    from ihbench.sid.detectors import get_detector
    from ihbench.sid.evaluate_sid import score_both

    data = dataset_dir(args.data)
    configs = [args.config] if args.config else args.configs.split(",")
    results, segments, smart_seconds, all_audio = {}, [], 0.0, 0.0
    for config in configs:
        references, clips = sid_rows(data, config)
        audio = [clips[i] for i in range(len(references))]  # decoded up front: only detection is timed
        names = [r["audio"] for r in references]
        seconds_of_audio = sum(len(a) for a in audio) / 16000
        for name in ("silero-vad", "energy", "smart-turn"):
            torch.set_num_threads(1 if name == "smart-turn" else 2)
            detector = get_detector(name, **({"threads": 1} if name == "smart-turn" else {}))
            detector.detect(audio[0], 16000)  # warm-up (model load, JIT)
            if name == "smart-turn":
                detector.traces, detector.calls = [], 0
            started = time.perf_counter()
            predictions = [{"audio": n, **detector.detect(samples, 16000)} for n, samples in zip(names, audio)]
            elapsed = time.perf_counter() - started
            rtf = elapsed / seconds_of_audio
            scores = score_both(predictions, references)
            results[(config, name)] = (rtf, scores)
            print(f"{config:13s} {name:10s} RTF {rtf:.4f}  {_figures(scores)}  ({len(audio)} clips, "
                  f"{seconds_of_audio:.0f} s of audio)")
            if name == "smart-turn":
                smart_seconds, all_audio = smart_seconds + elapsed, all_audio + seconds_of_audio
                segments += [detector.stream.segment(_stream(samples, detector), pause)
                             for samples, trace in zip(audio, detector.traces) for pause in trace.pauses]
    segments = segments[: args.peer_limit] if args.peer_limit else segments
    ours, theirs, ours_s, theirs_s = _peer(segments, threads=1)
    difference = float(abs(ours - theirs).max()) if len(segments) else 0.0
    print(f"smart-turn vs pipecat's LocalSmartTurnAnalyzerV3 on the same {len(segments)} windows, one thread: "
          f"max |p - p_pipecat| {difference:.2e} (of 1e-5); wall {ours_s:.1f} s vs {theirs_s:.1f} s, "
          f"ratio {ours_s / theirs_s:.3f} (of 1.0)")
    first = configs[0]
    print(" ".join([f"silero_vad_rtf={results[(first, 'silero-vad')][0]:.4f}",
                    f"energy_rtf={results[(first, 'energy')][0]:.5f}",
                    f"silero_over_target={results[(first, 'silero-vad')][0] / 0.02:.3f}",
                    f"smart_turn_rtf={smart_seconds / all_audio:.4f}",
                    f"smart_turn_apt={results[(first, 'smart-turn')][1]['notebook']['apt']:.3f}",
                    f"peer_max_abs_diff={difference:.2e}", f"peer_diff_over_target={difference / 1e-5:.3f}",
                    f"wall_ratio_vs_pipecat={ours_s / theirs_s:.3f}", f"windows={len(segments)}"]))


def _stream(samples, detector):
    """The clip as the detector streamed it: followed by its silent tail."""
    import numpy as np

    tail = int(round(detector.settings.tail_s(detector.stream.timeouts) * 16000))
    return np.concatenate([np.asarray(samples, np.float32), np.zeros(tail, np.float32)])


if __name__ == "__main__":
    main()
