"""The one text-LLM client (`ihbench.llm`): ask_structured's cache, retries and re-asks, what
is an item failure and what is a bug, and the cache's maintenance (info, prune)."""
import asyncio
import json
import sqlite3

import pytest

from ihbench.judge import InvalidJudgment
from ihbench.llm import (
    InvalidAnswer,
    LLMCache,
    TransportError,
    ask_structured,
    cache_info,
    cache_key,
    extract_json,
    prune_cache,
)
from ihbench.loaders.failures import is_item_failure

MESSAGES = [{"role": "system", "content": "Answer with JSON."}, {"role": "user", "content": "x?"}]
DAY = 86400.0


class ScriptedLLM:
    """A TextLLM whose answers are given in advance: text, or an exception to raise. Asking more
    often than scripted fails the test."""

    model = "scripted"

    def __init__(self, *answers, usage=None):
        self.answers = list(answers)
        self.seen = []
        self.usage = {"prompt_tokens": 10, "completion_tokens": 2} if usage is None else usage

    def describe(self) -> dict:
        return {"backend": "scripted", "model": self.model}

    async def complete(self, messages, schema_name, schema):
        self.seen.append(messages)
        assert self.answers, "asked more often than scripted"
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer, dict(self.usage)

    async def close(self):
        pass


def ask(llm, cache=None, **options):
    options = {"schema_name": "s", "schema": {}, "parse": extract_json, "prompt_hash": "h", "task": "t",
               "cache": cache, **options}
    return asyncio.run(ask_structured(llm, MESSAGES, **options))


# --- ask_structured --------------------------------------------------------------------------

def test_a_cache_hit_sends_no_call(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    first = ask(ScriptedLLM('{"x": 1}'), cache)
    assert (first.value, first.cached, first.calls) == ({"x": 1}, False, 1)
    again = ask(ScriptedLLM(), cache)  # no answer scripted: any call would fail
    assert (again.value, again.cached, again.calls, again.usage) == ({"x": 1}, True, 0, {})
    # another task, epoch, prompt or LLM is another question
    for changed in ({"task": "u"}, {"epoch": 1}, {"prompt_hash": "g"}):
        assert ask(ScriptedLLM('{"x": 2}'), cache, **changed).value == {"x": 2}


def test_a_hit_reports_what_making_the_answer_cost_when_asked_to_keep_it(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    made = ask(ScriptedLLM("no JSON", '{"x": 1}'), cache, cache_usage=True)
    assert made.usage == {"calls": 2, "prompt_tokens": 20, "completion_tokens": 4}
    reused = ask(ScriptedLLM(), cache, cache_usage=True)
    assert reused.cached and reused.calls == 0 and reused.usage == made.usage


def test_an_invalid_answer_is_reasked_with_what_was_wrong_then_accepted():
    llm = ScriptedLLM("Sure! It is x=1.", '```json\n{"x": 1}\n```')
    answer = ask(llm)
    assert answer.value == {"x": 1} and answer.calls == 2
    assert llm.seen[0] == MESSAGES
    assert llm.seen[1] == MESSAGES + [
        {"role": "assistant", "content": "Sure! It is x=1."},
        {"role": "user", "content": "That answer could not be used: no JSON object found in the answer. "
                                    "Answer again with JSON only."}]


def test_an_answer_still_invalid_after_the_reasks_is_an_item_failure_and_not_cached(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    with pytest.raises(InvalidAnswer, match="^invalid after a re-ask: no JSON object") as caught:
        ask(ScriptedLLM("no", "still no"), cache)
    assert is_item_failure(caught.value) and caught.value.usage["calls"] == 2
    with pytest.raises(InvalidJudgment, match="^invalid after 2 re-asks: ") as caught:
        ask(ScriptedLLM("a", "b", "c"), cache, max_reasks=2, invalid=InvalidJudgment)
    assert cache_info(tmp_path / "c.sqlite")["entries"] == 0


def test_transport_errors_are_retried_by_the_one_policy():
    llm = ScriptedLLM(TransportError("HTTP 429", retryable=True, retry_after=0.0),
                      TransportError("HTTP 500", retryable=True, retry_after=0.0), '{"x": 1}')
    answer = ask(llm)
    assert answer.value == {"x": 1} and answer.calls == 3 and len(llm.seen) == 3
    with pytest.raises(TransportError) as caught:
        ask(ScriptedLLM(TransportError("HTTP 400", retryable=False)))
    assert caught.value.attempts == 1 and caught.value.usage == {"calls": 1} and is_item_failure(caught.value)


@pytest.mark.parametrize("bug", [KeyError("choices"), AttributeError("'NoneType' object has no attribute 'content'")])
def test_a_bug_in_a_backend_propagates_unchanged_and_is_not_retried(bug):
    llm = ScriptedLLM(bug, '{"x": 1}')
    with pytest.raises(type(bug)) as caught:
        ask(llm)
    assert caught.value is bug and len(llm.seen) == 1 and not is_item_failure(bug)


def test_a_bug_in_a_parse_function_propagates_and_is_not_reasked():
    def parse(text):
        return extract_json(text)["missing"]  # KeyError: a bug, not an invalid answer

    llm = ScriptedLLM('{"x": 1}', '{"missing": 1}')
    with pytest.raises(KeyError):
        ask(llm, parse=parse)
    assert len(llm.seen) == 1


# --- the cache -------------------------------------------------------------------------------

def test_the_cache_key_is_unchanged():
    """Existing caches keep their hits only while the key is computed exactly as before."""
    key = cache_key({"backend": "openai", "model": "m", "base_url": None, "structured": True, "temperature": 0.0},
                    "518ecfe69066", "tf", MESSAGES, 0)
    assert key == "79e7f00c9734417cdfa327a2b5977491cf9a902f81328b8a79db446a415e8550"


def test_a_cache_written_before_last_use_was_recorded_keeps_its_hits(tmp_path):
    path = tmp_path / "judge_cache.sqlite"
    db = sqlite3.connect(path)  # the format every earlier version wrote
    db.execute("CREATE TABLE judgments (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    key = cache_key(ScriptedLLM().describe(), "h", "t", MESSAGES, 0)
    db.execute("INSERT INTO judgments VALUES (?, ?)", (key, json.dumps({"x": "old"})))
    db.commit()
    db.close()
    assert ask(ScriptedLLM(), LLMCache(path)).value == {"x": "old"}
    info = cache_info(path)
    assert info["entries"] == 1 and info["oldest_use"] is not None


def test_cache_info_counts_entries_and_last_uses(tmp_path):
    path = tmp_path / "c.sqlite"
    assert cache_info(path) == {"path": str(path), "exists": False, "entries": 0, "bytes": 0, "oldest_use": None,
                                "newest_use": None, "unreadable": 0}
    assert not path.exists()  # looking does not create it
    now = [1_000_000.0]
    cache = LLMCache(path, clock=lambda: now[0])
    cache.put("a", 1)
    now[0] += DAY
    cache.put("b", 2)
    cache.close()
    info = cache_info(path)
    assert info["entries"] == 2 and info["bytes"] > 0
    assert (info["oldest_use"], info["newest_use"]) == ("1970-01-12T13:46:40+00:00", "1970-01-13T13:46:40+00:00")


def test_prune_removes_what_was_not_used_lately_then_the_least_recently_used(tmp_path):
    path = tmp_path / "c.sqlite"
    now = [0.0]
    cache = LLMCache(path, clock=lambda: now[0])
    for n in range(6):  # entry n last used on day n
        now[0] = n * DAY
        cache.put(f"k{n}", {"n": n, "padding": "x" * 20000})
    now[0] = 6 * DAY
    assert cache.get("k0") == {"n": 0, "padding": "x" * 20000}  # a hit counts as a use
    cache.close()
    before = cache_info(path)["bytes"]
    today = lambda: 6 * DAY  # noqa: E731
    assert prune_cache(path, older_than_days=2.5, clock=today) == 3  # k1, k2, k3: unused for more than 2.5 days
    assert prune_cache(path, max_entries=2, clock=today) == 1  # k4 is the least recently used of k0, k4, k5
    cache = LLMCache(path)
    assert [cache.get(k) is not None for k in ("k0", "k1", "k2", "k3", "k4", "k5")] == [
        True, False, False, False, False, True]
    cache.close()
    assert cache_info(path)["bytes"] < before  # pruning gives the space back
    assert prune_cache(path, max_entries=10) == 0
    assert prune_cache(tmp_path / "missing.sqlite", max_entries=0) == 0 and not (tmp_path / "missing.sqlite").exists()


def test_prune_needs_a_rule():
    from ihbench.dataset.errors import UsageError

    with pytest.raises(UsageError, match="--older-than"):
        prune_cache("unused.sqlite")
    with pytest.raises(UsageError, match="--max-entries"):
        prune_cache("unused.sqlite", max_entries=-1)


def test_concurrently_cancels_the_asks_still_running_when_one_raises():
    from ihbench.llm import concurrently

    cancelled = []

    async def slow():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def buggy():
        raise KeyError("bug")

    async def main():
        with pytest.raises(KeyError):
            async with concurrently([slow(), buggy(), slow()]) as completed:
                for future in completed:
                    await future
        return list(cancelled)  # before asyncio.run's own clean-up

    assert asyncio.run(main()) == [True, True]


def test_a_new_cache_file_is_made_only_when_an_answer_is_stored(tmp_path):
    """Found by the bad-input battery: a judge refused after opening its cache (another judge's
    judgments file) left the new cache file and its folder behind."""
    from ihbench.llm import LLMCache

    path = tmp_path / "new" / "cache.sqlite"
    cache = LLMCache(path)
    assert cache.get("k") is None and not (tmp_path / "new").exists()
    cache.close()
    cache = LLMCache(path)
    cache.put("k", {"v": 1})
    cache.close()
    assert LLMCache(path).get("k") == {"v": 1}
