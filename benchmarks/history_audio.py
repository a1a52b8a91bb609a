"""How each family's processor handles the audio of a deep interruption point's history.

Run: .venv/bin/python benchmarks/history_audio.py [--data DIR] [--families a,b]
Per tiny family (real processor classes with the real checkpoints' feature-extractor settings):
what a second of audio costs (prompt tokens, or feature frames where a clip costs a fixed number
of tokens), where a clip stops being taken whole, and what the deepest point of the data costs:
its number of user clips, their total seconds, the longest clip, and the prompt length the
processor makes of it. Whether that fits is the model's context (`ihbench run` records an item
that does not fit as an error, never a silent cut; `--history-audio last:K` is the way out).
Last line per family: key=value pairs.
"""
from __future__ import annotations

import argparse

from _data import dataset_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", help="built dataset directory (default: data/ihbench-dev or a small build)")
    parser.add_argument("--families", help="comma-separated tiny families (default: all)")
    args = parser.parse_args()

    import tempfile
    from pathlib import Path

    from ihbench.dataset import load_items
    from ihbench.loaders import get
    from ihbench.loaders.limits import measure_clip_handling
    from ihbench.loaders.tiny import AUDIO_FAMILIES, loader_name, make_tiny_model

    from ihbench.protocol import build_model_input

    items = load_items(dataset_dir(args.data))
    deepest = max(items, key=lambda item: sum(m.role == "user" for m in item.history))
    conversation = build_model_input(deepest, "audio")
    clips = [len(clip) / conversation.sampling_rate for clip in conversation.audio_clips]
    print(f"deepest point {deepest.id}: {len(clips)} user clips, {sum(clips):.1f} s of audio, "
          f"longest {max(clips):.1f} s")
    work = Path(tempfile.mkdtemp(prefix="ihbench-bench-history-"))
    for family in (args.families.split(",") if args.families else AUDIO_FAMILIES):
        loader = get(loader_name(family))(str(make_tiny_model(family, work / family)), device="cpu")
        measured = measure_clip_handling(loader)
        prompt = int(loader.inputs([conversation])["input_ids"].shape[1])
        print(f"family={family} unit={measured['unit'].replace(' ', '_')} per_second={measured['per_second']} "
              f"clip_cap_s={measured['clip_cap_seconds']} declared_cap_s={loader.max_clip_seconds} "
              f"deepest_prompt_tokens={prompt}", flush=True)


if __name__ == "__main__":
    main()
