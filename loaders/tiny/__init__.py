"""Tiny random-weight checkpoints of the real model families, built offline.

Nothing can be downloaded from the hub here, yet the loaders must be tested end to end. These
checkpoints keep everything but the weights real: the architecture class, the processor class,
the feature extractor, the special tokens, the chat template and the save/load round trip. The
vocabulary is the 256 byte-level symbols plus each family's special tokens (no merges), so any
text encodes and the files stay a few MB.

One module per family (`loaders/tiny/<module>.py`) with `build(out)` and `PROCESSOR` (the
processor class name the real checkpoint loads, or None for a tokenizer-only model), and
`LOADER` when the loader that serves it has another name (one loader may take several
architectures: `gemma4` reads which from the checkpoint).
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import new_folders, staging_folder, write_json_atomic
from ihbench.dataset.outputs import TINY_MODEL_JSON

# family name (as `ihbench run --model` spells it) -> builder module
MODULES = {
    "qwen2-audio": "qwen2_audio",
    "phi4-multimodal": "phi4_multimodal",
    "gemma4": "gemma4",
    "gemma4-unified": "gemma4_unified",  # Gemma 4 12B, served by the gemma4 loader
    "gemma3n": "gemma3n",
    "voxtral": "voxtral",
    "qwen2.5-omni": "qwen2_5_omni",
    "qwen3-omni": "qwen3_omni",
    "qwen2-text": "qwen2_text",  # a local judge for smoke tests, not an audio model
}
FAMILIES = tuple(name for name, module in MODULES.items() if (Path(__file__).parent / f"{module}.py").is_file())
AUDIO_FAMILIES = tuple(name for name in FAMILIES if name != "qwen2-text")


def builder(family: str):
    if family not in MODULES:
        raise UsageError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"{__name__}.{MODULES[family]}")


def processor_class(family: str):
    """The processor class name a checkpoint of `family` is loaded with (None: tokenizer only)."""
    return builder(family).PROCESSOR


def loader_name(family: str) -> str:
    """The loader (`ihbench run --model`) that serves a checkpoint of `family`."""
    return getattr(builder(family), "LOADER", family)


def make_tiny_model(family: str, out: Path, *, seed: int = 0) -> Path:
    """Write a loadable checkpoint of `family` into `out`; the same seed gives the same weights."""
    module = builder(family)
    import torch

    out = Path(out)
    _check_replaceable(out, family, seed)
    # Staged and renamed: a build that fails half way (out of disk, ^C) leaves no folder that looks
    # like a checkpoint but cannot load; a folder it made before is replaced whole.
    with new_folders(out.parent), staging_folder(out) as work, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module.build(work)
        write_json_atomic(work / TINY_MODEL_JSON, {"family": family, "seed": seed, "files": _files(work)})
    return out


def _files(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if not path.is_dir())


def _check_replaceable(out: Path, family: str, seed: int) -> None:
    """A folder this function made (its ihbench_tiny_model.json lists the files) is made again, the same
    model of the same seed (the same weights), as a rebuilt dataset replaces its own; another family or
    seed is refused: runs made with the folder would go on with other weights unnoticed (battery 59, F7).
    Anything else in it is the user's and is never deleted with it."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} is a file; give a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return
    try:
        recorded = json.loads((out / TINY_MODEL_JSON).read_text(encoding="utf-8"))
        listed = recorded["files"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        recorded, listed = {}, None
    if not isinstance(listed, list):
        held = sorted(entry.name for entry in out.iterdir())
        raise UsageError(f"--out: {out} already holds files ({', '.join(held[:3])}{', ...' if len(held) > 3 else ''}) "
                         "and is not a folder make-tiny-model wrote; give a new or empty folder")
    foreign = sorted(set(_files(out)) - set(listed) - {TINY_MODEL_JSON})
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UsageError(f"--out: {out} holds what make-tiny-model did not write ({shown}); it would be replaced: move "
                         "it or give another --out")
    if (recorded.get("family"), recorded.get("seed")) != (family, seed):
        held = (f"a tiny {recorded['family']} model of seed {recorded['seed']}" if "family" in recorded and "seed" in
                recorded else f"a tiny model whose {TINY_MODEL_JSON} no longer says its family and seed (edited?)")
        raise UsageError(f"--out: {out} holds {held}; runs made with it would go on with other weights: give another "
                         "--out (or remove it first)")


def make_tiny_speech_lora(model_dir: Path, *, seed: int = 0, subfolder: str = "speech-lora") -> Path:
    from .phi4_multimodal import make_tiny_speech_lora as make

    return make(model_dir, seed=seed, subfolder=subfolder)
