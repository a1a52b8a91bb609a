"""Real-time factor of each SID detector on the in-house split (seconds of compute per second of audio).

Run: .venv/bin/python benchmarks/sid.py [--data DIR] [--config sid_dev_en]
Target (issue 6): silero-vad RTF <= 0.02 on 2 cores. Last line: key=value pairs.
"""
from __future__ import annotations

import argparse
import time

from _data import dataset_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--config", default="sid_dev_en")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(2)
    from ihbench.dataset.sid import sid_rows

    from ihbench.sid.detectors import get_detector

    references, clips = sid_rows(dataset_dir(args.data), args.config)
    audio = [clips[i] for i in range(len(references))]  # decoded up front: only detection is timed
    seconds_of_audio = sum(len(a) for a in audio) / 16000
    results = {}
    for name in ("silero-vad", "energy"):
        detector = get_detector(name)
        detector.detect(audio[0], 16000)  # warm-up (model load, JIT)
        started = time.perf_counter()
        for samples in audio:
            detector.detect(samples, 16000)
        results[name] = (time.perf_counter() - started) / seconds_of_audio
        print(f"{name:10s} RTF {results[name]:.4f} over {len(audio)} clips, {seconds_of_audio:.0f} s of audio")
    print(" ".join([f"silero_vad_rtf={results['silero-vad']:.4f}", f"energy_rtf={results['energy']:.5f}",
                    f"silero_over_target={results['silero-vad'] / 0.02:.3f}", f"clips={len(audio)}"]))


if __name__ == "__main__":
    main()
