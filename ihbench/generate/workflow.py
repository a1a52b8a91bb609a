"""`--workflow FILE`: bring your own workflow (YAML), so the generated calls walk your stages,
use your knowledge and obey your policies.

```yaml
domain: telecom                      # one of the ten domains of the source format
goal: Port the caller's number to a new postpaid line
description: Mobile carrier customer care line        # optional, one sentence
stages:                              # ordered; name and description required
  - name: verify_identity
    description: Confirm the account holder with the account PIN
    skip_conditions: [Verified by the app less than 15 minutes ago]   # optional
    failure_handling: Offer a store visit with photo ID                # optional
    termination_conditions: [The caller is not the account holder]   # optional
knowledge_base:                      # optional: facts, as a list or a mapping
  Porting time: one business day
policies:                            # optional: rules the agent must follow
  - Never read out the full account number
```

What the file gives is kept verbatim; the pipeline writes only what is missing (stage
conditions left out, the caller's data, intents). Problems name the file and the field.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ihbench.dataset.errors import MissingFileError, UsageError
from ihbench.dataset.sources import DOMAINS

FIELDS = ("domain", "goal", "description", "stages", "knowledge_base", "policies")
STAGE_FIELDS = ("name", "description", "skip_conditions", "failure_handling", "termination_conditions")
MIN_STAGES, MAX_STAGES = 2, 12
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class _File:
    def __init__(self, path: Path):
        self.path = path

    def error(self, field: str, problem: str) -> UsageError:
        return UsageError(f"{self.path}: {field}: {problem}")

    def text(self, value: Any, field: str, *, one_line: bool = False) -> str:
        """A field's text; `one_line` for those said as a sentence on the command line (--goal, --description),
        held to the same rule (battery 61, H19: a zero-width space generated every conversation, then discarded
        them all for it)."""
        from ihbench.dataset.characters import name_problem
        from ihbench.dataset.checks.words import has_visible

        if not isinstance(value, str) or not value.strip():
            raise self.error(field, "must be a non-empty string")
        if not has_visible(value):
            raise self.error(field, "must be a non-empty string: it holds only invisible characters")
        problem = name_problem(value.strip()) if one_line else None
        if problem:
            raise self.error(field, f"must be one sentence on one line, as --{field} is: it holds {problem}")
        return value.strip()

    def texts(self, value: Any, field: str) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.error(field, "must be a list of strings")
        return [self.text(v, f"{field}[{i}]") for i, v in enumerate(value)]


def _unique_keys_loader():
    """YAML's safe loader, refusing a key given twice in one mapping (it keeps the last silently,
    dropping the stages, facts or goal written first), at the line of the second."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is given twice (YAML keeps "
                                                            "only the last)", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys


def load_workflow(path) -> dict:
    import yaml

    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"--workflow: {path}: no such file")
    file = _File(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_unique_keys_loader())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "top level"
        raise file.error(where, f"not valid YAML ({getattr(error, 'problem', None) or error})") from None
    except UnicodeDecodeError as error:
        from ihbench.dataset.io.json_object import not_utf8

        raise file.error("top level", not_utf8(error)) from None
    if not isinstance(data, dict):
        raise file.error("top level", "must be a mapping with " + ", ".join(FIELDS))
    unknown = sorted(set(map(str, data)) - set(FIELDS))
    if unknown:
        raise file.error(unknown[0], f"unknown field; expected {', '.join(FIELDS)}")
    domain = file.text(data.get("domain"), "domain")
    if domain not in DOMAINS:
        raise file.error("domain", f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    description = data.get("description")
    workflow = {
        "domain": domain,
        "goal": file.text(data.get("goal"), "goal", one_line=True),
        "description": file.text(description, "description", one_line=True) if description is not None else None,
        "stages": _stages(file, data.get("stages")),
        "knowledge_base": _knowledge(file, data.get("knowledge_base")),
        "policies": file.texts(data["policies"], "policies") if data.get("policies") is not None else [],
    }
    return workflow


def _stages(file: _File, value: Any) -> list[dict]:
    if not isinstance(value, list) or not MIN_STAGES <= len(value) <= MAX_STAGES:
        raise file.error("stages", f"must be a list of {MIN_STAGES}-{MAX_STAGES} stages")
    stages, seen = [], set()
    for i, entry in enumerate(value):
        where = f"stages[{i}]"
        if not isinstance(entry, dict):
            raise file.error(where, "must be a mapping with name and description")
        unknown = sorted(set(map(str, entry)) - set(STAGE_FIELDS))
        if unknown:
            raise file.error(f"{where}.{unknown[0]}", f"unknown field; expected {', '.join(STAGE_FIELDS)}")
        name = file.text(entry.get("name"), f"{where}.name")
        if not _NAME.match(name):
            raise file.error(f"{where}.name", f"{name!r} must be snake_case (lowercase letters, digits, _)")
        if name in seen:
            raise file.error(f"{where}.name", f"{name!r} repeats")
        seen.add(name)
        stage = {"name": name, "description": file.text(entry.get("description"), f"{where}.description")}
        for key in ("skip_conditions", "termination_conditions"):
            if entry.get(key) is not None:
                stage[key] = file.texts(entry[key], f"{where}.{key}")
        if entry.get("failure_handling") is not None:
            stage["failure_handling"] = file.text(entry["failure_handling"], f"{where}.failure_handling")
        stages.append(stage)
    return stages


def _knowledge(file: _File, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        facts = []
        for key, fact in value.items():
            if isinstance(fact, (dict, list)) or fact is None or not str(key).strip():
                raise file.error(f"knowledge_base.{key}", "must be a fact: a name with a text or number value")
            facts.append(f"{str(key).strip()}: {str(fact).strip()}")
        return facts
    return file.texts(value, "knowledge_base")


def merge(workflow: dict, written: dict) -> dict:
    """The prerequisites agent's knowledge base, with everything the file states taking precedence."""
    by_name = {s["name"]: s for s in written["knowledge_base"]["workflow_stages"]}
    stages = [{**by_name[s["name"]], **s} for s in workflow["stages"]]
    given = workflow["policies"] + workflow["knowledge_base"]
    guidelines = given or written["knowledge_base"]["guidelines"]
    return {**written["knowledge_base"], "workflow_stages": stages, "guidelines": guidelines}
