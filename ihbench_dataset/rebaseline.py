"""A built dataset with its baseline responses replaced (the paper's protocol: a fixed real model's
responses, e.g. GPT-4o Audio's, as the anchor of the TF win rate).

The copy is written next to the target and renamed into place only when complete. The old
baselines' RQ verdicts are dropped (they judged other responses); the card says where the new
baselines came from.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from .builddir import BuildDir
from .errors import UsageError
from .io import staging_folder
from .load import BASELINE_CONFIG
from .long import INTERRUPTIONS_CONFIG


def _with_columns(parquet: Path, columns: Mapping[str, list]):
    """A writer for `BuildDir.rewrite_file`: the file's table with these columns replaced."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    for name, values in columns.items():
        index = table.schema.get_field_index(name)
        field = table.schema.field(index)
        table = table.set_column(index, field, pa.array(values, type=field.type))
    return lambda staged: pq.write_table(table, staged)  # schema metadata (the datasets features) travels with it


def replace_baselines(data_dir, out_dir, responses: Mapping[str, str], provenance: str) -> Path:
    """`responses`: {item id "conversation/turn": text} for every interruption point of the data."""
    import pyarrow.parquet as pq

    data, out = BuildDir(Path(data_dir).resolve()), Path(out_dir).resolve()
    if out.exists():
        raise UsageError(f"--out: {out} exists; choose a new folder (the original data stays as it is)")
    if not data.config_files(BASELINE_CONFIG):
        raise UsageError(f"{data.path}: no {BASELINE_CONFIG} config; expected a folder written by `ihbench build`")
    info = data.info()  # a folder that is not a build is refused before anything is written
    with BuildDir(out).writing():
        with staging_folder(out) as work:
            data.copy_to(work)
            copy = BuildDir(work)
            wanted = set()
            for parquet in copy.config_files(BASELINE_CONFIG):
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
                                     f"{', '.join(missing[:3])}; the run must cover every point of {data.path}")
                copy.rewrite_file(parquet, _with_columns(parquet, {k: v for k, v in columns.items() if k in rows[0]}))
            for parquet in copy.config_files(INTERRUPTIONS_CONFIG):
                ids = pq.read_table(parquet, columns=["id"]).column("id").to_pylist()
                copy.rewrite_file(parquet, _with_columns(parquet, {"baseline_response": [responses[i] for i in ids],
                                                                   "baseline_rq_verdicts": [None] * len(ids)}))
            card = _without_baseline_statistics(copy.card_path.read_text(encoding="utf-8"), provenance)
            copy.card_path.write_text(card + f"\n## Baselines replaced\n\n{provenance}\n"
                                      "The baselines' RQ verdicts shipped with the original build judged other "
                                      "responses and were removed.\n", encoding="utf-8")
            copy.write_info(replace(info, baselines=provenance))
    return out


_STATISTICS = re.compile(r"<!-- baselines by type.*?-->.*?<!-- end baselines by type -->", re.DOTALL)


def _without_baseline_statistics(card: str, provenance: str) -> str:
    """The card with the original baselines' pass rates taken out: they were measured on the responses
    this copy replaced, from verdicts it no longer holds, and published with it they would describe
    baselines it does not have."""
    return _STATISTICS.sub("<!-- baselines by type: not measured for this copy -->\nThis copy's baselines are "
                           f"another model's responses ({provenance.strip()}); the pass rates of the original "
                           "baselines were measured on the responses they replaced and are not shown. Judge the "
                           "baseline model's own run for its RQ by type.\n<!-- end baselines by type -->", card)
