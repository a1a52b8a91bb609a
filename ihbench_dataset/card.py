"""Renders `dataset_card.md` (repository root) into the built dataset's README.md."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Sequence


TEMPLATE = Path(__file__).with_name("dataset_card.md")


def config_entries(configs, split: str, files: Optional[dict] = None) -> list[dict]:
    """The card's `configs:` metadata (what `load_dataset(dir, name)` reads); the first is the default.

    `files` names each config's file exactly: `datasets` keys a local folder's cache on these
    paths, so a build whose file names change with their bytes is never read from a stale cache."""
    files = files or {}
    return [{"config_name": name, **({"default": True} if index == 0 else {}),
             "data_files": [{"split": split, "path": files.get(name, f"{name}/{split}-*")}]}
            for index, name in enumerate(configs)]


def _type_name(feature) -> str:
    from datasets import Audio, List, Value

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, Audio):
        channels = getattr(feature, "num_channels", None)  # datasets >= 4.4
        return f"Audio({feature.sampling_rate} Hz{f', {channels} channels' if channels else ''})"
    if isinstance(feature, List):
        return f"list<{_type_name(feature.feature)}>"
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"
    return type(feature).__name__


def _features_markdown(features: dict) -> str:
    """One table per config; the per-turn columns are shown once with N in place of the number."""
    parts = ["## Features"]
    for config, config_features in features.items():
        rows, seen = [], set()
        for column, feature in config_features.items():
            generic = re.sub(r"_(\d+)_", "_N_", column)
            if generic in seen:
                continue
            seen.add(generic)
            rows.append(f"| `{generic}` | {_type_name(feature)} |")
        parts += ["", f"### `{config}`", "", "| column | type |", "|---|---|", *rows]
    return "\n".join(parts)


GENERATED_BY = "ihbench generate"
IN_HOUSE_BLOCK = re.compile(r"<!-- in-house provenance -->\n.*?<!-- end in-house provenance -->\n", re.S)


def _distinct(values) -> list[str]:
    return sorted({v for v in values if v})


def generated_provenance(provenances: Sequence[Optional[dict]]) -> Optional[str]:
    """How the generated conversations among the sources were made, from their own provenance
    (None when there are none): a suite made by `ihbench generate` must not be described as the
    hand-written dev set."""
    made = [p for p in provenances if p and str(p.get("author", "")).startswith(GENERATED_BY)]
    if not made:
        return None
    lines = [f"{len(made)} conversation(s) were generated with `{GENERATED_BY}`, the toolkit's version of the "
             "IHBench paper's pipeline (prerequisites, round planner, branched assistant and user simulators, "
             "rubric generator, verifier and modifier), all by one LLM:", ""]
    for label, key in (("Pipeline", "author"), ("LLM", "llm"), ("Checks", "review"), ("Baselines", "baselines"),
                       ("Prerequisites", "prerequisites")):
        for value in _distinct(p.get(key) for p in made):
            lines.append(f"- **{label}**: {value}")
    lines += ["", "Seeds, token counts and cost estimates are in each source file's `provenance`:", ""]
    lines += [f"- {p.get('seed', '?')}: {p.get('tokens', '?')}; cost {p.get('cost_estimate', 'unknown')}"
              for p in made]
    return "\n".join(lines) + "\n"


BASELINES_BLOCK = re.compile(r"(<!-- baselines by type[^\n]*-->\n)(.*?)(<!-- end baselines by type -->\n)", re.S)
_BASELINE_ROW = re.compile(r"^\| (\w+) \| (\d\.\d\d) \[[^\]]*\] \(n=(\d+)\) \|", re.M)
OTHER_BASELINES = ("The toolkit's card compares the shipped dev set's hand-written baselines with the paper's "
                   "baseline, type by type; this build's points or their baseline verdicts are not the ones that "
                   "table was computed from, so it is left out here. This build's baseline RQ pass rate per type "
                   "is in the statistics above.\n")


def _baselines_block(text: str, statistics: dict) -> str:
    """Keeps the template's table of the dev set's baselines by type only when it is this build's.

    The table is computed from the shipped sources with the metric module's interval (a test keeps the
    template true to them); a build of other sources, or of sources edited since, has other numbers,
    and its card must not state the dev set's as its own. Compared, not recomputed: the build's own
    statistics hold each type's point count and baseline pass rate."""
    match = BASELINES_BLOCK.search(text)
    if not match:
        return text
    rows = {kind: (float(rate), int(n)) for kind, rate, n in _BASELINE_ROW.findall(match.group(2))}
    built = statistics.get("baseline_rq_pass_rate") or {}
    counts = statistics.get("interruption_types") or {}
    same = bool(rows) and rows.keys() == {k for k, n in counts.items() if n} and all(
        counts.get(kind) == n and (built.get("per_type") or {}).get(kind) is not None
        and abs(built["per_type"][kind] - rate) < 0.006 for kind, (rate, n) in rows.items())
    if same:
        return text
    return text[:match.start(2)] + OTHER_BASELINES + text[match.end(2):]


def render_card(*, statistics: dict, features: dict, voices: dict, split: str, configs,
                provenances: Sequence[Optional[dict]] = (), files: Optional[dict] = None) -> str:
    from .stats import statistics_markdown

    voice_lines = "\n".join(f"  - `{voice_id}` ({engine.version}): {engine.license}" for voice_id, engine in voices.items())
    replacements = {
        "split": split,
        "features": _features_markdown(features),
        "statistics": statistics_markdown(statistics),
        "voices": voice_lines,
    }
    text = TEMPLATE.read_text(encoding="utf-8")
    for key, value in replacements.items():
        text = text.replace("{{" + key + "}}", value)
    text = _baselines_block(text, statistics)
    generated = generated_provenance(provenances)
    if generated and all(p and str(p.get("author", "")).startswith(GENERATED_BY) for p in provenances):
        text = IN_HOUSE_BLOCK.sub(lambda _: generated, text)
        text = text.replace("IHBench in-house dev set", "IHBench-format suite made with ihbench generate")
    elif generated:
        text = text.replace("<!-- end in-house provenance -->\n",
                            "<!-- end in-house provenance -->\n" + generated + "\n", 1)
    leftover = re.findall(r"\{\{\w+\}\}", text)
    if leftover:
        raise RuntimeError(f"{TEMPLATE}: unfilled placeholders {leftover}")  # our template and filler disagree: a bug
    from huggingface_hub import DatasetCard

    card = DatasetCard(text)
    card.data.configs = config_entries(configs, split, files)
    return str(card)
