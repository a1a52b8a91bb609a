"""SID-Bench (Semantic Interruption Detection) as three configs of a local HF dataset.

SID-Bench ships as a folder of WAVs plus one ground-truth jsonl per split
(`test_wavs/{en_test_lines,zh_test_lines,silence_noise_test}.jsonl`). Importing it into the same
kind of directory `ihbench build` writes lets every tool open it with `load_dataset(dir, "sid_en")`
offline, and lets detectors run on the very clips the scores refer to.

Quirks kept as they are in the source files, because the published numbers were computed on them:
non-break rows carry `break_time == duration` (predictions use -1), most non-break texts still end
in `<break>`, and 31 rows of the English split hold Mandarin clips.
"""
from .clips import SidClips, sid_rows
from .importing import import_sid, sid_features, update_readme_configs
from .read import (
    FIELDS,
    PREDICTION_FIELDS,
    REFERENCE_FIELDS,
    SID_CONFIGS,
    SPLIT,
    SidConfigs,
    SidFormatError,
    checked_jsonl,
    read_sid_annotations,
    read_sid_folder,
    row_problem,
)

__all__ = ["FIELDS", "PREDICTION_FIELDS", "REFERENCE_FIELDS", "SID_CONFIGS", "SPLIT", "SidClips", "SidConfigs",
           "SidFormatError", "checked_jsonl", "import_sid", "read_sid_annotations", "read_sid_folder", "row_problem",
           "sid_features", "sid_rows", "update_readme_configs"]
