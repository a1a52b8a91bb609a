"""A scripted LLM for `ihbench generate`: the local OpenAI-compatible test server answering each
agent (named on the first line of its system prompt) from its JSON input.

Behaviour is keyed by the caller intents' profiles, which the scripted prerequisites agent writes
from `profiles`; the planner passes markers on to the other agents, as a real planner passes on
what the caller will do:
- "cooperative": clean on the first try;
- "leaky": the first cut-in quotes a code from the unheard part (the verifier flags it as fixable,
  the modifier rewrites the utterance);
- "unfixable": the verifier reports a finding no edit can fix;
- "malformed": the planner's round 3 answer is not JSON once, then fine when re-asked;
- "badcut": the first cut-in's delivered text is not a prefix of the message, then fine;
- "hopeless": the planner never answers with JSON;
- "quoting": the first cut-in's second criterion quotes the unheard reference code, which the model
  under test never sees (`ihbench verify`'s content check `quotes_unheard`); the verifier agent
  does not notice, the modifier rewrites the criteria it is shown;
- "sloppy": each guard of `ihbench verify` met once, then fine when re-asked: a system message far
  over its length limit, a reply of zero-width spaces, a cut that leaves only the final period
  unheard, a lower-case placeholder criterion, and a baseline that re-reads the interrupted message.
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Optional

from openai_test_server import Reply

from ihbench.generate.prompts import agent_of, payload_of

STAGES = ["verify_owner", "review_balance", "set_terms", "confirm_plan"]
TYPES = ["pushback", "impatient", "filler", "normal", "topic_switch", "correction"]
CLEAN = {
    "normal": "By the way, I need this done by noon.",
    "impatient": "Okay, okay, can we skip ahead please?",
    "correction": "Wait, the date I gave you before was wrong, it is the fifth.",
    "topic_switch": "Oh, also, can you check my other bill too?",
    "filler": "Mm-hm.",
    "pushback": "That does not sound right to me at all.",
}
TOPICS = ["balance", "payment plan", "down payment", "due dates", "late rule", "autopay option", "agreement",
          "plan number", "mailing copy", "next steps", "final notes", "reminder"]


def agent_message(number: int) -> str:
    return (f"Right, this is step {number} for you. Then we will go over the {TOPICS[(number - 1) % len(TOPICS)]} "
            f"in detail, along with the reference code QX-44{number:02d} that comes with it.")


def cut(message: str) -> str:
    return message.split(" in detail", 1)[0]


def prerequisites(payload: dict, profiles: list[str]) -> dict:
    workflow = payload.get("workflow")
    names = [s["name"] for s in workflow["stages"]] if workflow else STAGES
    return {
        "domain_description": "Property tax phone line of the Harlow County Treasurer",
        "caller_voice": "female",
        "knowledge_base": {
            "workflow_stages": [{"name": name, "description": f"Do the {name.replace('_', ' ')} step.",
                                 "skip_conditions": ["Already done earlier in the call"],
                                 "failure_handling": "Offer to call back.",
                                 "termination_conditions": ["The caller hangs up"]} for name in names],
            "guidelines": ["Plans run at most twenty-four months.", "Never ask for a Social Security number."],
            "user_data": [{"field": "Caller", "value": "Odessa Marchetti"},
                          {"field": "Parcel number", "value": "51-730-2288"},
                          {"field": "Payoff", "value": "$2,410.18"}],
        },
        "intents": [{"profile": profiles[i % len(profiles)],
                     "interruption_probabilities": {"normal": 0.15, "impatient": 0.2, "correction": 0.1,
                                                    "topic_switch": 0.15, "filler": 0.15, "pushback": 0.25},
                     "hidden_info": ["Her hours were cut in March."]} for i in range(payload["intents"])],
    }


SYSTEM_MESSAGE = ("You are Jordan, a clerk on the property tax line of the Harlow County Treasurer. Callers hear you "
                  "over the phone, so speak in short sentences and ask one question at a time. Verify the owner with "
                  "the parcel number, review the balance and the payoff, set the payment terms of an installment plan "
                  "of at most twenty-four months, and confirm the plan. Never ask for a Social Security number. Be "
                  "steady, respectful and practical.")


def plan(payload: dict) -> Optional[dict]:
    number, profile = payload["round"], payload["caller_intent"]["profile"]
    names = [s["name"] for s in payload["knowledge_base"]["workflow_stages"]]
    interrupt = number % 2 == 0
    kind = TYPES[(number // 2 - 1) % len(TYPES)] if interrupt else None
    markers = ""
    if interrupt and number == 2:
        markers += " (leak)" if "leaky" in profile else ""
        markers += " (badcut)" if "badcut" in profile else ""
    return {"stage": names[min((number - 1) // 2, len(names) - 1)], "assistant_action": "Explain the next step.",
            "user_action": f"React as the caller would.{markers}", "interrupt": interrupt, "type": kind,
            "cut_hint": "while the agent explains" if interrupt else "", "end": number >= payload["rounds"]["minimum"]}


def findings(payload: dict) -> list[dict]:
    if "unfixable" in payload["caller_intent"]["profile"]:
        return [{"turn": 1, "field": "assistant", "check": "state_consistency",
                 "problem": "The agent states two different payoffs.", "fixable": False}]
    return [{"turn": t["turn"], "field": "user", "check": "leakage", "problem": "The caller quotes the unheard code.",
             "fixable": True} for t in payload["turns"] if "QX-44" in t.get("user", "")]


def edits(payload: dict) -> list[dict]:
    turns = {t["turn"]: t for t in payload["turns"]}
    fixed = sorted({f["turn"] for f in payload["findings"] if f["field"] == "user"})
    criteria = sorted({f["turn"] for f in payload["findings"] if f["field"] == "rq_rubrics"})
    return [{"turn": n, "field": "user", "text": CLEAN[turns[n]["type"]], "criteria": []} for n in fixed] + [
        {"turn": n, "field": "rq_rubrics", "text": "", "criteria": RUBRIC} for n in criteria]


RUBRIC = ["Responds to what the caller said.", "Continues the step that was cut off."]


class GenerationScript:
    """`OpenAITestServer(respond=GenerationScript([...]))`; counts requests per agent."""

    def __init__(self, profiles: list[str], delay: float = 0.0):
        self.profiles = profiles
        self.delay = delay
        self.requests = Counter()
        self.reasks = Counter()  # requests that were re-asks, per agent
        self.log: list[tuple[str, dict]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        messages = body["messages"]
        agent, payload = agent_of(messages), payload_of(messages)
        reask = len(messages) > 2
        with self._lock:
            self.requests[agent] += 1
            self.reasks[agent] += reask
            self.log.append((agent, payload))
        answer = self.answer(agent, payload, reask)
        return Reply(content=answer if isinstance(answer, str) else json.dumps(answer), delay=self.delay)

    def answer(self, agent: str, payload: dict, reask: bool):
        if agent == "prerequisites":
            return prerequisites(payload, self.profiles)
        sloppy = "sloppy" in self.profiles[0] and not reask
        if agent == "system_writer":
            return {"system_message": SYSTEM_MESSAGE + (" Be kind." * 2000 if sloppy else "")}
        if agent == "planner":
            profile = payload["caller_intent"]["profile"]
            if "hopeless" in profile:
                return "I would rather describe the plan in prose."
            if "malformed" in profile and payload["round"] == 3 and not reask:
                return '{"stage": "review_balance", "assistant_action": '
            return plan(payload)
        if agent == "assistant_normal":
            return {"message": agent_message(len(payload["call_so_far"]) + 1)}
        if agent == "assistant_after_interruption":
            return {"message": agent_message(len(payload["call_so_far"]) + 2)}
        if agent == "user_normal":
            return {"utterance": "\u200b\u200b" if sloppy else "Okay, that works for me."}
        if agent == "user_interrupting":
            message, action = payload["agent_message_full"], payload["planner_action"]
            if "(badcut)" in action and not reask:
                return {"delivered": "Right, this is the step where", "utterance": CLEAN[payload["interruption_type"]]}
            if sloppy:
                return {"delivered": message.rstrip("."), "utterance": CLEAN[payload["interruption_type"]]}
            code = message.split("reference code ", 1)[1].split(" ", 1)[0]
            words = f"Hold on, what is {code} for?" if "(leak)" in action else CLEAN[payload["interruption_type"]]
            return {"delivered": cut(message), "utterance": words}
        if agent == "rubric":
            if "quoting" in self.profiles[0] and len(payload["call_so_far"]) == 1:  # the first cut-in (round 2)
                planned = payload["interrupted_message"]["planned"]
                unheard = planned.split("reference code ", 1)[1].split(" ", 1)[0].rstrip(".")
                return {"tf_rubric": "Answer the caller and carry on with the current step.",
                        "rq_rubrics": [RUBRIC[0], f"Gives the caller the code '{unheard}' it was about to read."]}
            return {"tf_rubric": "Answer the caller and carry on with the current step.",
                    "rq_rubrics": [RUBRIC[0], "[criterion]" if sloppy else RUBRIC[1]]}
        if agent == "baseline":
            if sloppy:
                return {"response": payload["your_message_as_delivered"] + " in detail, along with the reference code "
                                    "that comes with it."}
            return {"response": "Sure. Let me carry on with the next step of your plan."}
        if agent == "verifier":
            return {"findings": findings(payload)}
        if agent == "modifier":
            return {"edits": edits(payload)}
        raise AssertionError(f"unscripted agent {agent!r}")
