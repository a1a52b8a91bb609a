"""One SID config as (references, clips) for detectors and scoring, from an imported folder, a raw
SID-Bench folder or a loaded `Dataset`; clips are decoded one at a time."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from ..audio import NotFiniteError, decode_audio, decoder_message
from ..audio_format import SAMPLING_RATE
from ..errors import UsageError
from .read import REFERENCE_FIELDS, SID_CONFIGS, SPLIT, SidFormatError, read_sid_folder


@dataclass
class SidClips(Sequence):
    """Clips decoded on demand (16 kHz mono float32): a whole split would not fit in memory.

    `sources` holds WAV paths, or a lazy view of a dataset's embedded bytes."""

    sources: Sequence[Union[str, bytes]]
    names: list[str]

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SidClips([self.sources[i] for i in range(len(self))[index]], self.names[index])
        return _decoded(self.sources[index], self.names[index])

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[index] for index in range(len(self)))


def _decoded(source: Union[str, bytes], name: str) -> np.ndarray:
    """One clip's samples; a clip that cannot be heard is one line naming it (a config imported
    before sid-import refused them, a file changed since), never the decoder's traceback from the
    middle of a run ("getFramesPlayedInRangeAudio ... No audio frames were decoded")."""
    try:
        samples = decode_audio(source, SAMPLING_RATE, where=f"clip {name}")
    except NotFiniteError as error:  # NaN or infinite samples: the clip named, not "samples: ..." for the run
        raise SidFormatError(str(error)) from None
    except Exception as error:  # noqa: BLE001 (torchcodec raises RuntimeError, ValueError, ...)
        if _no_frames(source):
            raise SidFormatError(f"clip {name}: no audio (0 samples)") from None
        raise SidFormatError(f"clip {name}: not readable audio ({decoder_message(error)})") from None
    if samples.size == 0:
        raise SidFormatError(f"clip {name}: no audio (0 samples)")
    return samples


def _no_frames(source: Union[str, bytes]) -> bool:
    import io

    import soundfile

    try:
        return soundfile.info(io.BytesIO(source) if isinstance(source, bytes) else source).frames == 0
    except Exception:  # noqa: BLE001 (not a format libsndfile reads)
        return False


class _EmbeddedAudio(Sequence):
    """One clip's bytes at a time from the Arrow table, never the whole column."""

    def __init__(self, dataset):
        import datasets

        self.dataset = dataset.select_columns(["audio"]).cast_column("audio", datasets.Audio(decode=False))

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index):
        audio = self.dataset[index]["audio"]
        return audio["bytes"] if audio["bytes"] is not None else audio["path"]


def _reference(row: dict, name: str) -> dict:
    return {"audio": name, **{field: row[field] for field in REFERENCE_FIELDS}}


def _from_dataset(dataset) -> tuple[list[dict], SidClips]:
    if "audio_file" in dataset.column_names:
        names = list(dataset["audio_file"])
    else:  # a Dataset built elsewhere: fall back on the embedded file names
        names = [PurePath(row["audio"]["path"] or "").name for row in _EmbeddedAudio(dataset).dataset]
    fields = dataset.select_columns(list(REFERENCE_FIELDS))
    references = [_reference(row, name) for row, name in zip(fields, names)]
    return references, SidClips(_EmbeddedAudio(dataset), names)


def _from_sid_folder(rows: list[dict]) -> tuple[list[dict], SidClips]:
    references = [_reference(row, PurePath(row["audio"]).name) for row in rows]
    return references, SidClips([row["audio"] for row in rows], [r["audio"] for r in references])


def sid_rows(dataset_or_dir: Any, config: str = "sid_en", *, config_flag: str = "--config",
             data_flag: Optional[str] = "--data") -> tuple[list[dict], SidClips]:
    """(references, clips) of one config, from an imported dataset directory, a raw SID-Bench folder
    or a loaded `Dataset`. References are what the fir/irl/apt modules take, plus `audio` (the file
    name) so predictions can be joined to them. `config_flag`: the option that named `config`, for
    the messages (sid's --tune-on names the tuning config); `data_flag` the one that named the folder
    (None where the message already names it)."""
    import datasets

    if isinstance(dataset_or_dir, datasets.DatasetDict):
        dataset_or_dir = dataset_or_dir[SPLIT]
    if isinstance(dataset_or_dir, datasets.Dataset):
        return _not_empty(_from_dataset(dataset_or_dir), f"config {config!r}")
    root = Path(dataset_or_dir)
    from ..load import refuse_inside_a_dataset

    refuse_inside_a_dataset(root, str(root))  # data/sid_dev_en: a config's folder, not a SID-Bench folder
    if (root / config).is_dir() and any((root / config).glob("*.parquet")) and not config.startswith("sid"):
        built = sorted(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.parquet")))
        sid = [name for name in built if name.startswith("sid")]
        raise UsageError(f"{config_flag} {config}: not a SID config of {root}; its SID configs: "
                         f"{', '.join(sid) or 'none (run ihbench sid-import or ihbench build --sid-sources)'}")
    has_files = (root / config).is_dir() and any((root / config).glob("*.parquet"))
    if has_files or _listed(root, config):  # a config the card lists is read as the card says (its files checked)
        if has_files:
            _refuse_empty_parquet(root / config, config)  # datasets would fail with "corresponds to no data"
        from ..load import load_config

        loaded = load_config(str(root.resolve()), str(root), config)  # imported sid_* or an in-house sid_dev_*
        return _not_empty(_from_dataset(loaded[SPLIT] if SPLIT in loaded else loaded[next(iter(loaded))]),
                          str(root / config))
    built = sorted(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.parquet"))) if root.is_dir() else []
    if built:  # a dataset directory without this config: say what it does have
        sid = [name for name in built if name.startswith("sid")]
        raise SidFormatError(f"{root}: the dataset has no config {config!r}; its SID configs: "
                             f"{', '.join(sid) or 'none (run ihbench sid-import or ihbench build)'}; "
                             f"all configs: {', '.join(built)}")
    if not root.is_dir():  # the folder itself first: the config cannot be judged without it
        what = "is a file" if root.is_file() else "no such folder" if not root.exists() else "is not a folder"
        local = "; a Hub dataset is read once downloaded (`ihbench sid-import` or `ihbench build`)" \
            if not root.exists() and re.fullmatch(r"[\w.-]+/[\w.-]+", str(root)) else ""  # battery 65, L11
        raise SidFormatError(f"{data_flag + ': ' if data_flag else ''}{root}: {what}; expected a local dataset "
                             f"directory with sid_* configs or a SID-Bench folder{local}")
    if config not in SID_CONFIGS:
        raise UsageError(f"{config_flag}: expected one of {', '.join(SID_CONFIGS)} or a config of the dataset "
                         f"directory, got {config!r}")
    configs = read_sid_folder(root)
    if config not in configs:
        raise SidFormatError(f"{root}: has no {config} (neither an imported {config}/ nor {SID_CONFIGS[config][0]})")
    return _not_empty(_from_sid_folder(configs[config]), f"{root}: {config}")


def _listed(root: Path, config: str) -> bool:
    """A SID config the dataset's card lists, wherever its files are (or are not)."""
    from ..builddir import BuildDir, BuildDirError

    try:
        return config.startswith("sid") and root.is_dir() and BuildDir(root).has_card() and \
            config in BuildDir(root).config_names()
    except BuildDirError:
        return False


def _refuse_empty_parquet(folder: Path, config: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 0
    for file in sorted(folder.glob("*.parquet")):
        try:
            rows += pq.ParquetFile(file).metadata.num_rows
        except (pa.ArrowException, OSError) as error:
            raise SidFormatError(f"{file}: not a readable Parquet file ({error})") from None
    if rows == 0:
        raise SidFormatError(f"{folder}: config {config!r} has no clips (its Parquet files hold no rows); "
                             "build or import it again")


def _not_empty(result: tuple[list[dict], SidClips], where: str) -> tuple[list[dict], SidClips]:
    if not result[0]:
        raise SidFormatError(f"{where}: no clips; there is nothing to detect or score")
    return result
