"""A judged run for tests: a run over the in-house subset judged by a misbehaving local server."""
import asyncio
import hashlib
import json
import re

from openai_test_server import OpenAITestServer, Reply

from ihbench.judge import judge_run
from ihbench.judge.prompts import RQ_SYSTEM, TF_SYSTEM
from ihbench.llm import LLMCache, OpenAICompatibleLLM
from ihbench.runner import RunSpec, run


class ScriptedJudge:
    """Answers like a judge; on about 30 % of first attempts it misbehaves (malformed JSON, 429 with
    Retry-After, 500, or a reply slower than the client's timeout); some requests stay malformed
    even after the re-ask, and must end as judge_error."""

    def __init__(self, faults: bool = True):
        self.faults = faults  # False: a well-behaved judge
        self.attempts = {}
        self.always_broken = set()
        self.broken_requests = 0  # each broken task asks twice (the question, then the re-ask)

    def __call__(self, body):
        original = json.dumps(body["messages"][:2], sort_keys=True)
        key = int(hashlib.sha256(original.encode()).hexdigest(), 16)
        attempt = self.attempts[original] = self.attempts.get(original, 0) + 1
        if self.faults and key % 23 == 0:
            self.always_broken.add(original)
            self.broken_requests += 1
            return Reply(content="I refuse to use JSON today.")
        if self.faults and attempt == 1 and key % 10 < 3:
            fault = key % 4
            if fault == 0:
                return Reply(content='{"winner": "A", "loser_deficiency": ')
            if fault == 1:
                return Reply(status=429, headers={"Retry-After": "0.05"})
            if fault == 2:
                return Reply(status=500)
            return Reply(delay=1.0, content="{}")
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        if system == TF_SYSTEM:
            a = user.split("## Response A\n", 1)[1].split("\n\n## Response B", 1)[0]
            winner = "A" if a.startswith("heard ") else "B"  # the model's canned text always wins
            return Reply(content="```json\n" + json.dumps({"winner": winner, "loser_deficiency":
                         "It repeats the part of the sentence the user already heard", "reasoning": "r"}) + "\n```")
        assert system == RQ_SYSTEM
        count = len(re.findall(r"^\d+\. ", user.split("## Criteria", 1)[1], re.MULTILINE))
        return Reply(content=json.dumps({"criteria": [{"index": n + 1, "met": n > 0, "reason": "because"}
                                                      for n in range(count)]}))


class FixedJudge:
    """A judge (a `TextLLM`, no server) that always does the same thing: raise `error`, or answer `text`."""

    def __init__(self, error=None, text="", model="judge-x"):
        self.model, self.error, self.text, self.calls = model, error, text, 0

    def describe(self):
        return {"backend": "fixed", "model": self.model, "error": repr(self.error), "text": self.text}

    async def complete(self, messages, schema_name, schema):
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.text, {}

    async def close(self):
        pass


def make_judged_run(built, root):
    """Run 3 epochs with the canned model server, then judge three times: fresh, again into the
    same file (nothing to do), and into a new file (served from the cache)."""
    with OpenAITestServer() as model_server:
        run(RunSpec(loader="openai", model_path="m", data=str(built), out=root / "run", epochs=3,
                    loader_options={"base_url": model_server.base_url, "concurrency": 4}), progress=False)
    script = ScriptedJudge()
    with OpenAITestServer(respond=script) as judge_server:
        async def go(out=None):
            backend = OpenAICompatibleLLM("judge-x", base_url=judge_server.base_url, timeout=0.5)
            try:
                return await judge_run(root / "run", backend, concurrency=8, cache=LLMCache(root / "cache.sqlite"),
                                       out=out, progress=False)
            finally:
                await backend.close()

        first = asyncio.run(go())
        requests_after_first, broken_after_first = len(judge_server.requests), script.broken_requests
        again = asyncio.run(go())
        requests_after_again = len(judge_server.requests)
        other = asyncio.run(go(out=root / "run" / "judgments-again.jsonl"))
        requests_after_other = len(judge_server.requests)
    return dict(root=root, first=first, broken_after_first=broken_after_first, again=again, other=other,
                script=script, requests=(requests_after_first, requests_after_again, requests_after_other))
