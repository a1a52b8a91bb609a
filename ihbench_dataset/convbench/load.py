"""A ConversationBench config of a dataset (local folder or Hub id) back into a `ConvBenchmark`.

The audio stays encoded (`ConvTurn.audio`: {bytes, path}) until a model needs it, as IHBench items do.
"""
from __future__ import annotations

import json
from typing import Optional

from ..load import (DataSourceError, config_names, convbench_benchmarks, open_config, plain_rows, resolve_source,
                    setup_kind)
from .benchmark import ConvBenchmark, ConvTurn
from .importing import SETUP_SUFFIX


def load_benchmark(source, name: str, *, revision: Optional[str] = None) -> ConvBenchmark:
    """The benchmark `name` of the dataset at `source`: its turns (config `name`) and its setup
    (config `name_setup`: instruction, knowledge base, tools, mapping)."""
    path, label = resolve_source(source)
    _check_is_benchmark(path, label, name, revision)
    rows = plain_rows(open_config(path, label, name, None, revision))
    setups = plain_rows(open_config(path, label, name + SETUP_SUFFIX, None, revision))
    where = f"{label} [{name}{SETUP_SUFFIX}]"
    if len(setups) != 1:
        raise DataSourceError(f"{where}: expected one row, found {len(setups)}")
    setup = setups[0]
    try:
        tools = json.loads(setup["tools_json"])
        mapping = json.loads(setup["category_dimensions_json"])
        turns = [_turn(row) for row in rows]
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise DataSourceError(f"{label} [{name}]: not a ConversationBench config written by `ihbench "
                              f"convbench-import` ({type(error).__name__}: {error})") from None
    return ConvBenchmark(
        name=setup["name"], turns=sorted(turns, key=lambda turn: turn.index), tools=tools,
        system_instruction=setup["system_instruction"], knowledge_base=setup["knowledge_base"],
        core_dimensions=list(setup["core_dimensions"]), category_dimensions=mapping,
        description=setup.get("description") or "", hf_repo=setup.get("hf_repo"), source=setup.get("source") or "")


def _check_is_benchmark(path: str, label: str, name: str, revision: Optional[str]) -> None:
    """A config that is there but is no benchmark, said as what it is: looking for its setup would
    name a config no one wrote (`bike_bench_setup_setup`)."""
    names = config_names(path, revision)
    if name not in names or name + SETUP_SUFFIX in names:
        return  # not there (open_config lists the configs there are), or a benchmark
    played = ", ".join(convbench_benchmarks(names)) or "none"
    kind = setup_kind(name, names) or f"not a ConversationBench benchmark (it has no {name + SETUP_SUFFIX} config)"
    raise DataSourceError(f"{label}: config {name!r} is {kind}; the benchmarks there: {played}")


def _turn(row: dict) -> ConvTurn:
    def parsed(key):
        return None if row.get(key) is None else json.loads(row[key])

    return ConvTurn(
        index=int(row["turn_id"]), input=row["input_text"], golden_text=row["golden_text"],
        required_function_call=parsed("required_function_call_json"),
        function_call_response=parsed("function_call_response_json"), categories=list(row["categories"] or []),
        subcategory=row.get("subcategory"), audio_file=row.get("audio_file") or "",
        scoring_dimensions=list(row["scoring_dimensions"] or []), flexible_args=list(row.get("flexible_args") or []),
        tool_use_guidance=row.get("tool_use_guidance"), extras=parsed("extras_json") or {}, audio=row.get("audio"))


def is_convbench_config(source, name: str, *, revision: Optional[str] = None) -> bool:
    """`name` is a ConversationBench config of the dataset at `source` (it has its `_setup` sibling)."""
    path, _ = resolve_source(source)
    return name + SETUP_SUFFIX in config_names(path, revision)
