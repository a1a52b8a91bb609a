"""One function per agent of the pipeline: what it is shown, and how its answer is checked.

Every call goes through `ihbench.llm.ask_structured`: the sqlite cache (a rerun with the same
inputs sends nothing), transport retries, and re-asks with the validation error, bounded. An agent
that still answers unusably raises `AgentFailure`, which fails its conversation: a bad answer is
never written as data. What each agent sees is deliberate: the user simulators hear only what
was said (never the unheard part of a cut message, never the raw intent), the baseline writer
sees what an evaluated model sees and never the rubric.
"""
from __future__ import annotations

import functools

from typing import Callable, Optional

from ihbench.dataset.errors import ItemFailure
from ihbench.loaders.failures import describe_failure, is_item_failure
from ihbench.loaders.retry import TransportError

from ..llm import InvalidAnswer, LLMCache, TextLLM, ask_structured
from . import validate
from .prompts import SCHEMAS, messages, prompt_hash
from .usage import Usage


class AgentFailure(ItemFailure, RuntimeError):
    """An agent gave no usable answer within the bounds (re-asks, transport retries): its
    conversation fails and is tried again by the next run."""

    def __init__(self, agent: str, reason: str):
        super().__init__(f"{agent}: {reason}")
        self.agent = agent


class Agents:
    def __init__(self, backend: TextLLM, cache: LLMCache, *, reasks: int = 2, run_usage: Optional[Usage] = None):
        self.backend, self.cache, self.reasks = backend, cache, reasks
        self.run_usage = run_usage if run_usage is not None else Usage()

    async def ask(self, agent: str, payload: dict, task: str, parse: Callable[[str], object], usage: Usage):
        try:
            answer = await ask_structured(self.backend, messages(agent, payload, task), schema_name=agent,
                                          schema=SCHEMAS[agent], parse=parse, cache=self.cache,
                                          prompt_hash=prompt_hash(), task=f"generate/{agent}",
                                          max_reasks=self.reasks, cache_usage=True)
        except Exception as error:
            if not is_item_failure(error):  # a bug: stops the run with its traceback
                raise
            usage.add(error.usage)
            self.run_usage.add(error.usage)
            raise AgentFailure(agent, _reason(error)) from None
        usage.add(answer.usage)  # a call's cost is what making it took, however often it is reused
        if answer.cached:
            self.run_usage.cached += 1  # a run counts only what it spent
        else:
            self.run_usage.add(answer.usage)
        return answer.value


def _reason(error: BaseException) -> str:
    if isinstance(error, InvalidAnswer):
        return str(error)
    if isinstance(error, TransportError):
        return f"{error} (after {getattr(error, 'attempts', '?')} attempt(s))"
    return describe_failure(error)


# --- what each side knows ---------------------------------------------------------------------

def heard(turns: list[dict]) -> list[dict]:
    """The call as the caller heard it; also what an evaluated model is given."""
    return [{"agent": t.get("delivered", t["assistant"]), "caller": t["user"]} for t in turns]


def planner_view(turns: list[dict]) -> list[dict]:
    return [{"round": n, "stage": t["stage"], "agent_full_message": t["assistant"],
             "heard_by_caller": t.get("delivered", t["assistant"]), "caller": t["user"],
             "interruption": t["interruption"]["type"] if "interruption" in t else None}
            for n, t in enumerate(turns, start=1)]


def stage_names(prereq: dict) -> list[str]:
    return [s["name"] for s in prereq["knowledge_base"]["workflow_stages"]]


# --- the agents -------------------------------------------------------------------------------

async def write_prerequisites(agents: Agents, usage: Usage, *, domain: str, goal: str, description: Optional[str],
                              workflow: Optional[dict], intents: int) -> dict:
    payload = {"domain": domain, "domain_description": description, "goal": goal, "intents": intents,
               "workflow": workflow}
    given = [s["name"] for s in workflow["stages"]] if workflow else None
    return await agents.ask("prerequisites", payload, "Write the knowledge base and the callers' intents.",
                            lambda raw: validate.prerequisites(raw, intents, given), usage)


async def write_system_message(agents: Agents, usage: Usage, *, domain: dict, goal: str, knowledge_base: dict) -> str:
    payload = {"domain": domain, "goal": goal, "knowledge_base": knowledge_base}
    return await agents.ask("system_writer", payload, "Write the agent's operating instructions.",
                            validate.system_message, usage)


async def plan_round(agents: Agents, usage: Usage, prereq: dict, intent: dict, turns: list[dict], *,
                     suggestion: dict, rounds: dict, variation: int) -> dict:
    number = len(turns) + 1
    payload = {"domain": prereq["domain"], "goal": prereq["goal"], "knowledge_base": prereq["knowledge_base"],
               "caller_intent": intent, "round": number, "rounds": rounds, "seeded_suggestion": suggestion,
               "variation": variation, "call_so_far": planner_view(turns)}
    return await agents.ask("planner", payload, f"Plan round {number}.",
                            lambda raw: validate.plan(raw, stage_names(prereq), number, rounds["minimum"],
                                                      rounds["maximum"]), usage)


async def assistant_turn(agents: Agents, usage: Usage, prereq: dict, turns: list[dict], plan: dict) -> str:
    """Two separate branches: after a cut-in the agent is told what was and was not heard; in a
    normal round it sees the call as plain speech and never reads a word about interruptions."""
    after = bool(turns) and "interruption" in turns[-1]
    payload = {"operating_instructions": prereq["system_message"], "stage": plan["stage"],
               "planner_action": plan["assistant_action"]}
    if after:
        last = turns[-1]
        payload["call_so_far"] = heard(turns[:-1])
        payload["your_cut_message"] = {"heard": last["delivered"],
                                       "never_said": last["assistant"][len(last["delivered"]):].strip(),
                                       "caller_cut_in": last["user"]}
        agent = "assistant_after_interruption"
    else:
        payload["call_so_far"] = heard(turns)
        agent = "assistant_normal"
    return await agents.ask(agent, payload, "Write your next message.",
                            lambda raw: validate.assistant_message(raw, to_be_cut=plan["interrupt"]), usage)


async def user_turn(agents: Agents, usage: Usage, prereq: dict, turns: list[dict], plan: dict, message: str) -> dict:
    """{"user": ..., and for a cut-in "delivered": ...}. The interrupting branch sees the whole
    planned message only to choose the cut; the normal branch has no notion of cutting in."""
    payload = {"your_own_data": prereq["knowledge_base"]["user_data"], "call_so_far": heard(turns),
               "planner_action": plan["user_action"]}
    if plan["interrupt"]:
        payload.update(agent_message_full=message, interruption_type=plan["type"], cut_hint=plan["cut_hint"])
        cut = await agents.ask("user_interrupting", payload, "Cut in on the agent's message.",
                               lambda raw: validate.interruption(raw, message), usage)
        return {"delivered": cut["delivered"], "user": cut["utterance"]}
    payload["agent_message"] = message
    return {"user": await agents.ask("user_normal", payload, "Reply to the agent.", validate.utterance, usage)}


async def write_rubric(agents: Agents, usage: Usage, prereq: dict, turns: list[dict], turn: dict, kind: str) -> dict:
    payload = {"operating_instructions": prereq["system_message"], "call_so_far": heard(turns),
               "interrupted_message": {"planned": turn["assistant"], "heard_by_caller": turn["delivered"]},
               "caller_cut_in": turn["user"], "interruption_type": kind}
    return await agents.ask("rubric", payload, "Write the criteria for the agent's next message.",
                            validate.rubric, usage)


async def write_baseline(agents: Agents, usage: Usage, prereq: dict, turns: list[dict], index: int) -> str:
    """Exactly what the evaluated model is given (system prompt, history as heard, the delivered
    part, the cut-in); no type label, no rubric, no unheard text."""
    turn = turns[index]
    payload = {"operating_instructions": prereq["system_message"], "call_so_far": heard(turns[:index]),
               "your_message_as_delivered": turn["delivered"], "caller_said": turn["user"]}
    check = functools.partial(validate.baseline, message=turn["assistant"], delivered=turn["delivered"])
    return await agents.ask("baseline", payload, "Write your next message.", check, usage)


def _verifier_view(turns: list[dict]) -> list[dict]:
    view = []
    for number, t in enumerate(turns, start=1):
        entry = {"turn": number, "stage": t["stage"], "assistant": t["assistant"]}
        if "interruption" in t:
            entry.update(delivered=t["delivered"], not_heard=t["assistant"][len(t["delivered"]):].strip(),
                         user=t["user"], **{k: t["interruption"][k] for k in ("type", "tf_rubric", "rq_rubrics")})
        else:
            entry["user"] = t["user"]
        view.append(entry)
    return view


async def verify(agents: Agents, usage: Usage, prereq: dict, intent: dict, turns: list[dict]) -> list[dict]:
    payload = {"operating_instructions": prereq["system_message"], "knowledge_base": prereq["knowledge_base"],
               "caller_intent": intent, "turns": _verifier_view(turns)}
    return await agents.ask("verifier", payload, "Check the call.", lambda raw: validate.findings(raw, turns), usage)


async def modify(agents: Agents, usage: Usage, prereq: dict, intent: dict, turns: list[dict],
                 found: list[dict]) -> list[dict]:
    payload = {"operating_instructions": prereq["system_message"], "knowledge_base": prereq["knowledge_base"],
               "caller_intent": intent, "turns": _verifier_view(turns), "findings": found}
    return await agents.ask("modifier", payload, "Fix the findings with minimal edits.",
                            lambda raw: validate.edits(raw, turns, stage_names(prereq)), usage)
