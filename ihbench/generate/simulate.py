"""Round by round: the planner decides, the assistant speaks, the user replies or cuts in, and the
rubric is written right after each cut-in, before any response to it exists.

The seed draws the call's target length and, per round, a suggestion (cut in or not, and the type
from the intent's probabilities). The planner may overrule a suggestion that does not fit (a
correction needs something the caller said before), so the types follow the profile where the
call allows, and two calls of one intent differ.
"""
from __future__ import annotations

import random

from ihbench.dataset.schema import INTERRUPTION_TYPES
from ihbench.dataset.verify import MAX_TURNS, MIN_TURNS

from . import agents as a
from .usage import Usage

INTERRUPT_SHARE = 0.6  # about the paper's rate: 428 cut-ins over 45 calls of ~15 rounds
TARGET_ROUNDS = (10, 16)


def suggestions(seed: int, probabilities: dict) -> tuple[int, list[dict]]:
    rng = random.Random(seed)
    target = rng.randint(*TARGET_ROUNDS)
    weights = [probabilities[t] for t in INTERRUPTION_TYPES]
    rounds = [{"interrupt": rng.random() < INTERRUPT_SHARE, "type": rng.choices(INTERRUPTION_TYPES, weights)[0]}
              for _ in range(MAX_TURNS)]
    return target, rounds


async def simulate(agents: a.Agents, usage: Usage, prereq: dict, intent: dict, seed: int) -> list[dict]:
    """The turns of one call, in source format (baselines come after verification)."""
    target, suggested = suggestions(seed, intent["interruption_probabilities"])
    rounds = {"minimum": MIN_TURNS, "target": target, "maximum": MAX_TURNS}
    turns: list[dict] = []
    while len(turns) < MAX_TURNS:
        plan = await a.plan_round(agents, usage, prereq, intent, turns, suggestion=suggested[len(turns)],
                                  rounds=rounds, variation=seed)
        message = await a.assistant_turn(agents, usage, prereq, turns, plan)
        reply = await a.user_turn(agents, usage, prereq, turns, plan, message)
        turn = {"stage": plan["stage"], "assistant": message}
        if plan["interrupt"]:
            turn.update(delivered=reply["delivered"], user=reply["user"])
            rubric = await a.write_rubric(agents, usage, prereq, turns, turn, plan["type"])
            turn["interruption"] = {"type": plan["type"], **rubric}
        else:
            turn["user"] = reply["user"]
        turns.append(turn)
        if plan["end"]:
            break
    return turns
