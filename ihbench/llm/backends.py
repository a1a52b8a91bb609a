"""Where a text-LLM call goes: any OpenAI-compatible server, or a local transformers causal LM.

`TextLLM` is the contract judging, generation and review rely on. A backend makes one call and
reports transport failures as `TransportError` (with the server's Retry-After when it sent one);
retrying is `ihbench.loaders.retry`'s job, the one policy the `openai` model loader uses too, and
caching and re-asking are `ask_structured`'s.
"""
from __future__ import annotations

import asyncio
from typing import Optional, Protocol

from ihbench.dataset.errors import IHBenchError, ItemFailure
from ihbench.dataset.redaction import redact
from ihbench.loaders.clients import openai_client, server_text
from ihbench.loaders.failures import check_whole_unbudgeted
from ihbench.loaders.retry import TransportError, checked_completion, transport_error

__all__ = ["OpenAICompatibleLLM", "PromptTooLongError", "TextLLM", "TransformersLLM", "TransportError"]


class PromptTooLongError(IHBenchError, ItemFailure, ValueError):
    """A local LM's prompt and answer past its context: what it would generate there is noise read as
    an answer (rotary models do not refuse), so that question fails, is counted and asked again later."""


class TextLLM(Protocol):
    model: str  # the name judgments and provenance record

    async def complete(self, messages: list[dict], schema_name: str, schema: dict) -> tuple[str, dict]:
        """The answer's text and the token counts the backend reported (`prompt_tokens`,
        `completion_tokens`; empty when it reported none). `schema` is the JSON schema the answer
        should follow, used where the backend can enforce it."""
        ...

    def describe(self) -> dict:
        """The backend's full identity, part of every cache key: everything that can change an answer."""
        ...

    async def close(self) -> None:
        ...


def response_format(schema_name: str, schema: dict) -> dict:
    """The structured-output request field, one shape for live calls and batch files (whose
    requests must be the bodies a live call sends)."""
    return {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema, "strict": True}}


class OpenAICompatibleLLM:
    """Chat completions with a JSON schema response format where the server supports it."""

    def __init__(self, model: str, *, base_url: Optional[str] = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60.0, structured: bool = True, temperature: float = 0.0):
        from openai import AsyncOpenAI

        self.model = model
        self.base_url = base_url
        self.structured = structured
        self.temperature = temperature
        self.client = openai_client(AsyncOpenAI, base_url=base_url, api_key_env=api_key_env, timeout=timeout)

    async def complete(self, messages: list[dict], schema_name: str, schema: dict) -> tuple[str, dict]:
        extra = {"response_format": response_format(schema_name, schema)} if self.structured else {}
        try:
            completion = checked_completion(await self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature, **extra))
        except TransportError:
            raise
        except Exception as error:  # the client's HTTP errors, or a reply that is not JSON at all
            converted = transport_error(error)
            if converted is None:
                raise
            raise converted from None
        usage = getattr(completion, "usage", None)
        counts = {key: getattr(usage, key) for key in ("prompt_tokens", "completion_tokens")
                  if isinstance(getattr(usage, key, None), int)}
        text = server_text(completion.choices[0].message.content or "")
        check_whole_unbudgeted(completion.choices[0].finish_reason, text)  # a judgment cut short is none
        return text, counts

    def describe(self) -> dict:
        return {"backend": "openai", "model": self.model, "base_url": redact(self.base_url),
                "structured": self.structured,
                "temperature": self.temperature}

    async def close(self) -> None:
        await self.client.close()


class TransformersLLM:
    """A local causal LM, for fully local judging or generation; calls run one at a time in a thread."""

    def __init__(self, model_path: str, *, max_new_tokens: int = 512, device: str = "auto"):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ihbench.loaders.base import ModelFolderError, resolve_model_path
        from ihbench.loaders.failures import NonFiniteScoresError
        from ihbench.loaders.transformers_base import checked_pretrained, first_line

        path = resolve_model_path(model_path)
        self.model = model_path
        _check_text_model(path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise ModelFolderError(f"{path}: the tokenizer cannot be loaded ({first_line(error)})") from None
        import torch

        device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        self.lm = checked_pretrained(AutoModelForCausalLM, path).to(device).eval()
        self.max_new_tokens = max_new_tokens
        self._lock = asyncio.Lock()
        try:  # one token, before any request: a chat template that fails, a model that cannot run
            self._generate([{"role": "user", "content": "Hello."}], max_new_tokens=1)
        except (MemoryError, torch.OutOfMemoryError):
            raise
        except NonFiniteScoresError:  # every judgment would be a token repeated, asked again for ever
            raise ModelFolderError(f"{path}: the model's scores for a one-token probe are not numbers (NaN or "
                                   "infinite logits): its weights or config.json (rope_theta, rms_norm_eps) are "
                                   "damaged or edited") from None
        except PromptTooLongError:
            raise ModelFolderError(f"{path}: the model's context of {self.context_tokens()} tokens cannot hold a "
                                   "greeting and a token of answer: config.json's max_position_embeddings is edited "
                                   "or not this model's") from None
        except Exception as error:
            raise ModelFolderError(f"{path}: the model fails on a one-token probe before any request "
                                   f"({first_line(error)}): its files disagree with one another (edited, or from "
                                   "different checkpoints), or this is a bug: the command line's --traceback shows "
                                   "where") from error

    def _generate(self, messages: list[dict], max_new_tokens: Optional[int] = None) -> tuple[str, dict]:
        import torch

        from ihbench.loaders.transformers_base import scores_watched

        inputs = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                    return_dict=True).to(self.lm.device)
        prompt_tokens = inputs["input_ids"].shape[1]
        new_tokens = max_new_tokens or self.max_new_tokens
        context = self.context_tokens()
        if context is not None and prompt_tokens + new_tokens > context:  # past it, answers are noise, not errors
            raise PromptTooLongError(f"the prompt is {prompt_tokens} tokens and {new_tokens} new tokens do not fit in "
                                     f"the context of {self.model} ({context} tokens); use a model with a longer "
                                     "context")
        with scores_watched(self.lm), torch.no_grad():
            output = self.lm.generate(**inputs, max_new_tokens=new_tokens, do_sample=False)
        text = self.tokenizer.decode(output[0, prompt_tokens:], skip_special_tokens=True)
        return text, {"prompt_tokens": int(prompt_tokens), "completion_tokens": int(output.shape[1] - prompt_tokens)}

    def context_tokens(self) -> Optional[int]:
        """How many tokens the model's positions cover (None: not stated in its config)."""
        config = self.lm.config
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        return getattr(text, "max_position_embeddings", None)

    async def complete(self, messages: list[dict], schema_name: str, schema: dict) -> tuple[str, dict]:
        async with self._lock:
            return await asyncio.to_thread(self._generate, messages)

    def describe(self) -> dict:
        return {"backend": "transformers", "model": self.model, "max_new_tokens": self.max_new_tokens}

    async def close(self) -> None:
        pass


def _check_text_model(path: str) -> None:
    """A judge or generator needs a text model (a causal LM); an audio model's folder is refused by
    its config.json in one line, before transformers fails on it with a traceback."""
    import json
    from pathlib import Path

    from huggingface_hub.errors import StrictDataclassError  # a config class's validators: no ValueError
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.transformers_base import first_line

    try:
        model_type = AutoConfig.from_pretrained(path).model_type
    except (StrictDataclassError, OSError, ValueError, TypeError, KeyError, AssertionError, AttributeError) as error:
        raise ModelFolderError(f"{Path(path) / 'config.json'}: transformers cannot read it as a model's config "
                               f"({first_line(error)})") from None
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        config = Path(path) / "config.json"
        known = json.loads(config.read_text(encoding="utf-8")).get("architectures") if config.is_file() else None
        raise ModelFolderError(f"{path}: model_type {model_type!r} ({', '.join(known or [])}) is not a text model "
                               "transformers can generate with (a causal LM); the judge and the generator need one, "
                               "e.g. a Qwen2.5-Instruct folder")
