"""STAND-INS for the two LLMs of `ihbench barge-in`, served by the local OpenAI-compatible test server:
the model under test (`ModelScript`) and the simulator's agents (`SimulatorScript`, keyed by the
agent tag on the first line of each system prompt). Both append to one `events` list, so a test can
check the order of requests across the two servers.

The model's message of round N is one long sentence that ends with a reference code of that round
(QX-44NN): never heard by a caller who cut in (a cut leaves three words unheard), so a "leaky"
caller who names it is leaking the unheard part, and the live leak check must refuse it.
"""
from __future__ import annotations

import json
import threading
from typing import Optional

from openai_test_server import Reply

from ihbench.generate.prompts import agent_of, payload_of

TOPICS = ["balance", "payment plan", "down payment", "due dates", "late rule", "autopay option", "agreement",
          "plan number", "mailing copy", "next steps", "final notes", "reminder"]
CLEAN = "Hold on, can you say that part again more slowly?"


def model_message(number: int) -> str:
    return (f"Right, this is step {number} for you, and next we will go over the {TOPICS[(number - 1) % len(TOPICS)]} "
            f"in detail together, along with the reference code QX-44{number:02d}.")


def round_of(body: dict) -> int:
    """The round a model request is for: one more than the assistant messages it already holds."""
    return 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")


class _Script:
    def __init__(self, events: list, lock: threading.Lock, delay: float = 0.0):
        self.events, self.lock, self.delay = events, lock, delay


class ModelScript(_Script):
    """`short`: rounds whose message is too short to cut (three words)."""

    def __init__(self, events, lock, delay: float = 0.0, short: tuple = ()):
        super().__init__(events, lock, delay)
        self.short = set(short)

    def __call__(self, body: dict) -> Reply:
        number = round_of(body)
        with self.lock:
            self.events.append(("model", number))
        text = "Okay, noted, thanks." if number in self.short else model_message(number)
        return Reply(content=text, delay=self.delay)


class SimulatorScript(_Script):
    """`leaky`: the first interjection of each cut names the unheard code, then a clean one when re-asked."""

    def __init__(self, events, lock, delay: float = 0.0, leaky: bool = False):
        super().__init__(events, lock, delay)
        self.leaky = leaky
        self.payloads: list[tuple[str, dict]] = []

    def __call__(self, body: dict) -> Reply:
        messages = body["messages"]
        agent, payload = agent_of(messages), payload_of(messages)
        reask = len(messages) > 2
        with self.lock:
            self.events.append(("sim", agent))
            self.payloads.append((agent, payload))
        answer = self.answer(agent, payload, reask)
        return Reply(content=json.dumps(answer), delay=self.delay)

    def answer(self, agent: str, payload: dict, reask: bool) -> dict:
        if agent == "planner":
            names = [s["name"] for s in payload["knowledge_base"]["workflow_stages"]]
            suggestion, number = payload["seeded_suggestion"], payload["round"]
            stage = names[min((number - 1) // 3, len(names) - 1)]
            return {"stage": stage, "assistant_action": "Explain the next step.",
                    "user_action": "React as the caller would.", "interrupt": suggestion["interrupt"],
                    "type": suggestion["type"] if suggestion["interrupt"] else None,
                    "cut_hint": "while the agent explains" if suggestion["interrupt"] else "",
                    "end": number >= payload["rounds"]["maximum"]}
        if agent == "user_normal":
            return {"utterance": "Okay, that works for me."}
        if agent == "user_barging_in":
            if self.leaky and not reask:
                number = len(payload["call_so_far"]) + 1
                return {"utterance": f"Wait, what is QX-44{number:02d} for?"}
            return {"utterance": CLEAN}
        if agent == "rubric":
            return {"tf_rubric": "Answer the caller and carry on with the current step.",
                    "rq_rubrics": ["Responds to what the caller said.", "Continues the step that was cut off."]}
        if agent == "baseline":
            return {"response": "Sure. Let me carry on with the next step of your plan."}
        raise AssertionError(f"unscripted agent {agent!r}")


def scripts(delay: float = 0.0, *, leaky: bool = False, short: tuple = (), events: Optional[list] = None):
    """(model script, simulator script) sharing one event log."""
    events = [] if events is None else events
    lock = threading.Lock()
    return ModelScript(events, lock, delay, short), SimulatorScript(events, lock, delay, leaky)
