"""The caller's side of an on-policy call, played by the generation pipeline's own agents.

The round planner (with the conversation's intent profile and hidden information, `caller`), the normal
caller, the rubric generator and the baseline writer are `ihbench.generate.agents`, called exactly
as `ihbench generate` calls them, on the call as it went (the model's own replies). The one new
agent, the caller barging in (`prompts`), sees only the heard part of the model's reply, and its
answer passes the pipeline's checks live: `validate.utterance` and `verify.leaked_words`, the rule
`ihbench verify` applies to every interruption of the data. An interjection that uses a word of
the unheard part is refused and re-asked with the words named; the refusals are kept with the
answer (cached with it), so a resumed run records what an uninterrupted one does.

Every answer goes through the one LLM client (`ihbench.llm`): cache, retries, bounded re-asks;
each call is logged with its agent, prompt version and hash, and whether it came from the cache.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from ihbench.dataset.sources import SourceTurn
from ihbench.dataset.verify import leaked_words
from ihbench.generate import agents as pipeline
from ihbench.generate import prompts as pipeline_prompts
from ihbench.generate import validate
from ihbench.generate.usage import Usage
from ihbench.llm import InvalidAnswer, ask_structured
from ihbench.loaders.failures import is_item_failure

from . import prompts


class Simulator:
    """One conversation's caller. `calls` logs every agent answer of the current round."""

    def __init__(self, agents: pipeline.Agents, prereq: dict, intent: dict):
        self.agents, self.prereq, self.intent = agents, prereq, intent
        self.calls: list[dict] = []
        # the prompts' stamps, once: hashing every prompt text again for each call's log line adds up
        self._pipeline_stamp = (pipeline_prompts.PROMPT_VERSION, pipeline_prompts.prompt_hash())
        self._own_stamp = (prompts.PROMPT_VERSION, prompts.prompt_hash())

    def take_calls(self) -> list[dict]:
        calls, self.calls = self.calls, []
        return calls

    def _log(self, agent: str, usage: Usage, cached_before: int, version: str, digest: str) -> None:
        # the call's own usage first: its `cached` counter is the conversation's, not whether this call was
        self.calls.append({"agent": agent, "prompt_version": version, "prompt_hash": digest, **usage.as_dict(),
                           "cached": self.agents.run_usage.cached > cached_before})

    async def _pipeline(self, agent: str, function, *args, **kwargs):
        usage, before = Usage(), self.agents.run_usage.cached
        try:
            return await function(self.agents, usage, self.prereq, *args, **kwargs)
        finally:
            self._log(agent, usage, before, *self._pipeline_stamp)

    async def plan(self, turns: list[dict], *, suggestion: dict, rounds: dict, variation: int) -> dict:
        return await self._pipeline("planner", pipeline.plan_round, self.intent, turns, suggestion=suggestion,
                                    rounds=rounds, variation=variation)

    async def reply(self, turns: list[dict], plan: dict, message: str) -> str:
        normal = {**plan, "interrupt": False}  # the caller heard the whole message
        answer = await self._pipeline("user_normal", pipeline.user_turn, turns, normal, message)
        return answer["user"]

    async def rubric(self, turns: list[dict], turn: dict) -> dict:
        return await self._pipeline("rubric", pipeline.write_rubric, turns, turn, turn["interruption"]["type"])

    async def baseline(self, turns: list[dict]) -> str:
        return await self._pipeline("baseline", pipeline.write_baseline, turns, len(turns) - 1)

    async def interject(self, turns: list[dict], plan: dict, kind: str, message: str, heard: str) -> dict:
        """{"utterance", "refused": [{"utterance", "reason"}, ...]}: what the caller says on hearing
        only `heard` of `message`, after the refusals that leaked the unheard part."""
        payload = {"your_own_data": self.prereq["knowledge_base"]["user_data"], "call_so_far": pipeline.heard(turns),
                   "planner_action": plan["user_action"], "interruption_type": kind, "heard_so_far": heard}
        refused: list[dict] = []
        unheard_check = self._leak_check(turns, plan, message, heard)

        def parse(raw: str) -> dict:
            utterance = validate.utterance(raw)
            leaked = unheard_check(utterance)
            if leaked:
                reason = (f"you used {', '.join(sorted(leaked))}, which the agent had not said yet (you heard only "
                          "heard_so_far); react only to what you heard")
                refused.append({"utterance": utterance, "reason": reason})
                raise InvalidAnswer(reason)
            return {"utterance": utterance, "refused": list(refused)}

        usage, before = Usage(), self.agents.run_usage.cached
        try:
            answer = await ask_structured(
                self.agents.backend, prompts.request(payload, "Cut in on the agent now."), schema_name=prompts.AGENT,
                schema=prompts.SCHEMA, parse=parse, cache=self.agents.cache, prompt_hash=self._own_stamp[1],
                task=f"barge-in/{prompts.AGENT}", max_reasks=self.agents.reasks, cache_usage=True)
        except Exception as error:
            if not is_item_failure(error):
                raise
            usage.add(error.usage)
            self.agents.run_usage.add(error.usage)
            self._log(prompts.AGENT, usage, before, *self._own_stamp)
            raise pipeline.AgentFailure(prompts.AGENT, str(error)) from None
        usage.add(answer.usage)
        if answer.cached:
            self.agents.run_usage.cached += 1
        else:
            self.agents.run_usage.add(answer.usage)
        self._log(prompts.AGENT, usage, before, *self._own_stamp)
        return answer.value

    def _leak_check(self, turns: list[dict], plan: dict, message: str, heard: str):
        """`leaked_words` on the call so far, with this cut as its newest turn."""
        earlier = [SourceTurn(index=n, stage=t["stage"], assistant=t["assistant"], user=t["user"],
                              delivered=t.get("delivered")) for n, t in enumerate(turns)]
        call = SimpleNamespace(goal=self.prereq["goal"], user_intent=self.intent,
                               knowledge_base=self.prereq["knowledge_base"], turns=earlier)

        def check(utterance: str) -> set[str]:
            turn = SourceTurn(index=len(turns), stage=plan["stage"], assistant=message, user=utterance,
                              delivered=heard)
            return leaked_words(call, turn)

        return check


def suggestion(kind: Optional[str]) -> dict:
    """The planner's seeded suggestion for a round: the suite's own point, or no cut."""
    return {"interrupt": kind is not None, "type": kind or "normal"}
