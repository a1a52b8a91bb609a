"""A built dataset with its baseline responses replaced (the paper's protocol: a fixed real model's
responses, e.g. GPT-4o Audio's, as the anchor of the TF win rate).

The copy is written next to the target and renamed into place only when complete. The old
baselines' RQ verdicts are dropped (they judged other responses); the card says where the new
baselines came from.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Mapping

from .content_names import name_by_content
from .errors import UsageError
from .io import exclusive, lock_file_for, staging_folder, temporary_sibling

BASELINE_CONFIG, INTERRUPTIONS_CONFIG = "baseline", "interruptions"


def _rewrite(parquet: Path, columns: Mapping[str, list], card: Path) -> None:
    """The new bytes get a new name, in the folder and in the card: under the old name a folder
    made again at the same path would be read back from the datasets cache (`content_names.py`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    for name, values in columns.items():
        index = table.schema.get_field_index(name)
        field = table.schema.field(index)
        table = table.set_column(index, field, pa.array(values, type=field.type))
    staging = temporary_sibling(parquet)
    pq.write_table(table, staging)  # schema metadata (the datasets features) travels with the table
    parquet.unlink()
    renamed = name_by_content(staging, parquet.name.split("-")[0].split(".")[0])
    old, new = f"{parquet.parent.name}/{parquet.name}", f"{parquet.parent.name}/{renamed.name}"
    card.write_text(card.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def replace_baselines(data_dir, out_dir, responses: Mapping[str, str], provenance: str) -> Path:
    """`responses`: {item id "conversation/turn": text} for every interruption point of the data."""
    import pyarrow.parquet as pq

    data, out = Path(data_dir).resolve(), Path(out_dir).resolve()
    if out.exists():
        raise UsageError(f"--out: {out} exists; choose a new folder (the original data stays as it is)")
    baseline_files = sorted((data / BASELINE_CONFIG).glob("*.parquet"))
    if not baseline_files:
        raise UsageError(f"{data}: no {BASELINE_CONFIG} config; expected a folder written by `ihbench build`")
    with exclusive(lock_file_for(out), f"dataset directory {out}"):
        with staging_folder(out) as work:
            shutil.copytree(data, work, ignore=shutil.ignore_patterns(".*"), dirs_exist_ok=True)
            wanted = set()
            for parquet in sorted((work / BASELINE_CONFIG).glob("*.parquet")):
                rows = pq.read_table(parquet).to_pylist()
                columns = {}
                for name in rows[0]:
                    if name.startswith("turn_") and name.endswith("_baseline_response"):
                        number = int(name.split("_")[1])
                        ids = [f"{row['conversation_id']}/{number}" if row[name] is not None else None for row in rows]
                        wanted.update(i for i in ids if i)
                        columns[name] = [responses.get(i) if i else None for i in ids]
                        columns[f"turn_{number}_baseline_rq_verdicts"] = [None] * len(rows)
                        columns[f"turn_{number}_baseline_rq_reasons"] = [None] * len(rows)
                missing = sorted(wanted - set(responses))
                if missing:
                    raise UsageError(f"no new baseline for {len(missing)} interruption point(s), e.g. "
                                     f"{', '.join(missing[:3])}; the run must cover every point of {data}")
                _rewrite(parquet, {k: v for k, v in columns.items() if k in rows[0]}, work / "README.md")
            for parquet in sorted((work / INTERRUPTIONS_CONFIG).glob("*.parquet")):
                ids = pq.read_table(parquet, columns=["id"]).column("id").to_pylist()
                _rewrite(parquet, {"baseline_response": [responses[i] for i in ids],
                                   "baseline_rq_verdicts": [None] * len(ids)}, work / "README.md")
            card = work / "README.md"
            card.write_text(card.read_text(encoding="utf-8") + f"\n## Baselines replaced\n\n{provenance}\n"
                            "The baselines' RQ verdicts shipped with the original build judged other responses "
                            "and were removed.\n", encoding="utf-8")
            info_path = work / "build_info.json"
            info = json.loads(info_path.read_text(encoding="utf-8"))
            info["baselines"] = provenance
            info_path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return out
