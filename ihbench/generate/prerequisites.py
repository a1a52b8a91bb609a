"""Per (domain, goal): the knowledge base, the assistant's system prompt and the callers' intents,
written once to `OUT/prerequisites/<slug>.json` and reused by every call of that goal (and by a
resumed run, which must not give its later calls another caller or another workflow).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.io import read_json_object, write_json_atomic
from ihbench.dataset.redaction import quoted
from ihbench.dataset.sources import SourceError, check_setting

from . import agents as a
from .usage import Usage
from .workflow import merge

VOICES = {"male": "piper:joe", "female": "flite:slt"}


def slugify(goal: str, limit: int = 48) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", goal.lower()).strip("-")
    if len(slug) > limit:
        slug = slug[:limit].rsplit("-", 1)[0]
    return slug or "goal"


def _read(path: Path, intents: int, domain: str, goal: str) -> dict:
    prereq = read_json_object(path, UsageError, hint="delete it to write new ones")
    keys = ("domain", "goal", "knowledge_base", "system_message", "user_voice", "intents")
    missing = [k for k in keys if k not in prereq]
    if missing:
        raise UsageError(f"{path}: missing {', '.join(missing)}; delete it to write new ones")
    if not isinstance(prereq["intents"], list) or not prereq["intents"]:
        raise UsageError(f"{path}: intents: must be a non-empty list; delete it to write new ones")
    if len(prereq["intents"]) != intents:
        raise UsageError(f"{path} holds {len(prereq['intents'])} intent(s) but --intents asks for {intents}; "
                         f"give --intents {len(prereq['intents'])} to continue this suite, or another --out")
    # what every conversation of the goal is made of, checked as `ihbench verify` checks it, before a
    # call is spent on it (an edit by hand was found only after a conversation's calls, in a temporary file)
    for number, intent in enumerate(prereq["intents"]):
        try:
            check_setting({**prereq, "user_intent": intent}, path, intent=f"intents[{number}]")
        except SourceError as error:
            raise UsageError(f"{error}; correct it, or delete the file to write new ones") from None
    # the file is found by --goal's name: a goal or domain edited in it would make this goal's
    # conversations of another (and verify then finds the same caller in two goals)
    said = (("goal", prereq["goal"], goal),
            ("domain.name", prereq["domain"]["name"], domain))
    for field, there, asked in said:
        if there != asked:
            option, kind = ("--goal", "goal") if field == "goal" else ("--domain", "domain")
            raise UsageError(f"{path}: {field} is {quoted(there)}, and {option} is {quoted(asked)}: the prerequisites are of "
                             f"another {kind} (edited by hand?); correct it, or delete the file to write new ones")
    return prereq


async def prepare(agents: a.Agents, out: Path, *, domain: str, goal: str, description: Optional[str],
                  workflow: Optional[dict], intents: int) -> dict:
    """The goal's prerequisites: read back when an earlier run wrote them, else written now."""
    path = out / "prerequisites" / f"{slugify(goal)}.json"
    if path.exists():
        return _read(path, intents, domain, goal)
    usage = Usage()  # what they cost, kept with them (the run's own count is in the agents' ledger)
    written = await a.write_prerequisites(agents, usage, domain=domain, goal=goal, description=description,
                                          workflow=workflow, intents=intents)
    knowledge_base = merge(workflow, written) if workflow else written["knowledge_base"]
    domain_entry = {"name": domain, "description": description or written["domain_description"]}
    system_message = await a.write_system_message(agents, usage, domain=domain_entry, goal=goal,
                                                  knowledge_base=knowledge_base)
    prereq = {"domain": domain_entry, "goal": goal, "knowledge_base": knowledge_base, "system_message": system_message,
              "user_voice": VOICES[written["caller_voice"]], "intents": written["intents"],
              "usage": usage.as_dict()}
    write_json_atomic(path, prereq)
    return prereq
