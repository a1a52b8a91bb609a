"""A scripted judge for `ihbench verify --judge-model`'s content checks: answers each prompt kind
(review, blind reply, criteria, agent-turn grounding, verdict consistency) by its system message,
clean unless the request holds a planted marker. Shared by the tests of the content checks and of
the review, which run the same command."""
import json
import re

from openai_test_server import Reply

from ihbench.judge.content_prompts import BLIND_SYSTEM, CONSISTENCY_SYSTEM, CRITERIA_SYSTEM, GROUNDING_SYSTEM

BLIND_REPLY = "Of course. Let me take care of that for you right away."
#: a criterion holding UNGROUNDED fails the reference; OVERSTRICT fails the blind reply
UNGROUNDED, OVERSTRICT = "Zephyrine", "Quillmoor"
#: an agent message holding this is ungrounded; a criterion holding it is judged inconsistent
INVENTED, INCONSISTENT = "Marrowgate", "Thistlewick"


def kind(body) -> str:
    system = body["messages"][0]["content"]
    return {BLIND_SYSTEM: "blind", CRITERIA_SYSTEM: "criteria", GROUNDING_SYSTEM: "grounding",
            CONSISTENCY_SYSTEM: "consistency"}.get(system, "review")


def criteria_answer(user: str, blind_correct: bool = True) -> dict:
    recovery = user.split("Recovery (pass/fail):\n", 1)[1].split("\n\n## Instructions", 1)[0]
    rq = []
    for line in re.findall(r"^\d+\. (.*)$", recovery, re.MULTILINE):
        reference, blind = UNGROUNDED not in line, OVERSTRICT not in line
        problem = "ungrounded" if not reference else "over_strict" if not blind else "none"
        rq.append({"reference_met": reference, "blind_met": blind, "problem": problem,
                   "reason": f"scripted: {problem}"})
    return {"blind_correct": {"correct": blind_correct, "reason": "scripted"},
            "tf": {"reference_met": True, "problem": "none", "reason": "scripted"}, "rq": rq}


def content_answer(body, blind_correct: bool = True):
    """The scripted answer to one of the content prompts, or None for the review prompt."""
    user = body["messages"][1]["content"]
    which = kind(body)
    if which == "blind":
        return json.dumps({"reply": BLIND_REPLY})
    if which == "criteria":
        return json.dumps(criteria_answer(user, blind_correct))
    if which == "grounding":
        message = user.split("## The agent's message to audit\n", 1)[1].split("\n\n## Instructions", 1)[0]
        problems = [{"claim": INVENTED, "kind": "fact", "reason": "scripted: not in the knowledge base"}] \
            if INVENTED in message else []
        return json.dumps({"problems": problems})
    if which == "consistency":
        return json.dumps({"inconsistent": INCONSISTENT in user, "reason": "scripted"})
    return None


def clean_review():
    return json.dumps({q: {"problem": False, "reason": "fine"} for q in ("leakage", "user_knowledge", "type", "grounding")})


def scripted(body, blind_correct: bool = True) -> Reply:
    return Reply(content=content_answer(body, blind_correct) or clean_review())
