"""The one text-LLM client: judging, review and generation (and ConversationBench's judge) ask
through it.

    backends.py   `TextLLM` (the contract), `OpenAICompatibleLLM`, `TransformersLLM`
    answers.py    `InvalidAnswer` (an item failure), `extract_json` (tolerant JSON reading)
    cache.py      `LLMCache` (sqlite), `cache_key`, `cache_info`, `prune_cache`
    ask.py        `ask_structured`: key, cache get, call with retries, re-ask, cache put;
                  `concurrently`: many asks at once, the rest cancelled when one raises

The retry policy is `ihbench.loaders.retry` (the `openai` model loader's too); `TransportError`
is re-exported here. Nothing heavy is imported until a backend is made.
"""
from ihbench.loaders.retry import TransportError

from .answers import InvalidAnswer, extract_json
from .ask import Answer, ask_structured, concurrently
from .backends import OpenAICompatibleLLM, PromptTooLongError, TextLLM, TransformersLLM
from .cache import LLMCache, cache_info, cache_key, default_cache_path, prune_cache

__all__ = [
    "Answer", "InvalidAnswer", "LLMCache", "OpenAICompatibleLLM", "PromptTooLongError", "TextLLM", "TransformersLLM",
    "TransportError",
    "ask_structured", "cache_info", "concurrently", "cache_key", "default_cache_path", "extract_json", "prune_cache",
]
