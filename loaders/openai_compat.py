"""Any OpenAI-compatible chat-completions server: OpenAI audio models, or vLLM serving
Qwen2-Audio / Phi-4 on many GPUs or nodes (the scale-out path).

User audio goes as `input_audio` parts (base64 WAV). Requests run concurrently in threads
(`concurrency`), each with a timeout and the client's bounded retries.

The server applies the model's own chat template, so what the local loaders do for a family's
template has to be asked for here: `fold_system=true` sends the system prompt as (the head of) the
first user message and makes the roles alternate, which Voxtral (tokenizer v7 refuses a system
message next to audio) and Gemma 3n (user/model turns must alternate, and our agent speaks first)
need. `max_audio_clips` is the server's per-prompt clip limit (vLLM serves Voxtral with at most 5):
a prompt over it is an error on that item, said before the request, and `--history-audio auto`
keeps the most recent turns within it.
"""
from __future__ import annotations

import base64
import itertools
import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Iterator, Optional, Sequence, Union

from ihbench.dataset.argtypes import (boolean, concurrency, count, each, env_var_name, json_value, model_name, rounds,
                                      timeout_seconds, url)
from ihbench.dataset.audio import encode_wav
from ihbench.dataset.audio_format import SAMPLING_RATE
from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import redact, shortened

from .base import GenerationConfig, Loader, ModelInput, Response
from .chat import ChatReply, ToolCall, parse_arguments
from .clients import openai_client, server_text
from .extra_body import check_extra_body
from .failures import (EmptyReplyError, MalformedReplyError, UnsupportedInputError, check_not_filtered,
                       describe_failure, empty_after_thinking, ended_at_budget, error_page, invisible_only, no_text)
from .reasoning import split_reasoning
from .retry import TransportError, checked_completion, retry_sync, transport_error

#: the stop event of the batch this thread answers for (`generate_batch`): no retry once it is set
_asked = threading.local()


def to_openai_messages(conversation: ModelInput) -> list[dict]:
    messages = []
    for turn in conversation.turns:
        if turn.audio is not None:
            data = base64.b64encode(encode_wav(turn.audio, conversation.sampling_rate)).decode("ascii")
            content = [{"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}]
            if turn.text:
                content.insert(0, {"type": "text", "text": turn.text})
            messages.append({"role": turn.role, "content": content})
        else:
            messages.append({"role": turn.role, "content": turn.text})
    return messages

log = logging.getLogger("ihbench")


def _parts(content) -> list[dict]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _plain(message: dict) -> bool:
    """A message that may be merged with a neighbour of its role: no tool calls or results."""
    return message["role"] in ("user", "assistant") and not message.get("tool_calls") \
        and not message.get("tool_call_id")


def alternating(messages: list[dict]) -> list[dict]:
    """Chat messages in the shape templates without a system role take: the system prompt at the head
    of the first user message (a user message of its own when the agent speaks first, as the local
    Gemma 3n and Voxtral loaders do), an assistant turn cut before its first word left out, and what
    then meets a message of its own role merged into it (two user turns: one message holding both
    parts, in order; two assistant texts: joined). Tool calls and results are kept as they are."""
    rest = list(messages)
    system = rest.pop(0)["content"] if rest and rest[0]["role"] == "system" else None
    rest = [m for m in rest if not (m["role"] == "assistant" and _plain(m) and not (m.get("content") or "").strip())]
    if system:
        if rest and rest[0]["role"] == "user" and _plain(rest[0]):
            first = rest[0]
            content = system + "\n\n" + first["content"] if isinstance(first["content"], str) else \
                [{"type": "text", "text": system + "\n\n"}, *first["content"]]
            rest[0] = {**first, "content": content}
        else:
            rest.insert(0, {"role": "user", "content": system})
    merged: list[dict] = []
    for message in rest:
        last = merged[-1] if merged else None
        if last is not None and last["role"] == message["role"] and _plain(last) and _plain(message):
            if message["role"] == "assistant":
                merged[-1] = {**last, "content": f"{last['content']} {message['content']}"}
            elif isinstance(last["content"], str) and isinstance(message["content"], str):
                merged[-1] = {**last, "content": f"{last['content']}\n\n{message['content']}"}
            else:
                merged[-1] = {**last, "content": _parts(last["content"]) + _parts(message["content"])}
        else:
            merged.append(message)
    return merged


def _wire_message(message: dict) -> dict:
    """A chat message as the server takes it: a user turn's audio as a base64 WAV part."""
    if message.get("audio") is None:
        return {key: value for key, value in message.items() if key != "audio"}
    data = base64.b64encode(encode_wav(message["audio"], message.get("sampling_rate", SAMPLING_RATE)))
    return {"role": message["role"],
            "content": [{"type": "input_audio", "input_audio": {"data": data.decode("ascii"), "format": "wav"}}]}


#: each count's name in a Responses-style `usage` (`output_tokens`), read where the chat name is missing
_TOKEN_COUNT_ALIASES = {"completion_tokens": "output_tokens", "prompt_tokens": "input_tokens"}


def _token_count(usage, field: str) -> Optional[int]:
    """A server's token count, or None where it sends none or not a count: `usage` of any shape (a string, a
    list, null) is read as absent, never a traceback (battery 55, B4)."""
    for name in (field, _TOKEN_COUNT_ALIASES[field]):
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def _streamed_reply(chunks, started: float, budget: Optional[int] = None) -> ChatReply:
    """A streamed reply put together: text deltas joined, each tool call's pieces joined by its
    index; the time to the first text or tool delta is `ttfb_s`. A connection lost mid-stream is a
    transport failure of the item, as one lost before the first byte."""
    text, calls, ttfb, usage, finished = [], {}, None, None, None
    try:
        for chunk in chunks:
            usage = chunk.usage or usage
            for choice in chunk.choices or []:
                finished = choice.finish_reason or finished
                delta = choice.delta
                if (delta.content or delta.tool_calls) and ttfb is None:
                    ttfb = time.perf_counter() - started
                if delta.content:
                    text.append(delta.content)
                for piece in delta.tool_calls or []:
                    call = calls.setdefault(piece.index, {"id": None, "name": "", "arguments": []})
                    call["id"] = piece.id or call["id"]
                    if piece.function is not None:
                        call["name"] += piece.function.name or ""
                        call["arguments"].append(piece.function.arguments or "")
    except Exception as error:
        converted = transport_error(error)
        if converted is None:
            raise
        raise converted from None
    if finished is None:  # cut mid-stream (no finish_reason), or no stream at all (a server that ignored stream)
        response = getattr(chunks, "response", None)
        kind = str(getattr(response, "headers", {}).get("content-type", "")).split(";")[0].strip()
        if kind.startswith("text/") and kind != "text/event-stream":  # a proxy's error page (battery 58, E15)
            raise TransportError(f"the server answered with {kind}, not a stream of chat completion chunks (a "
                                 "proxy's error page?)", retryable=True)
        raise TransportError("the server's stream ended before the reply did (no finish_reason): a connection cut "
                             "mid-reply, or a server that does not stream", retryable=True)
    content, reasoning = split_reasoning(server_text("".join(text)), "<think>", "</think>")
    check_not_filtered(finished, content, _token_count(usage, "completion_tokens"), budget)
    tool_calls = []
    for index in sorted(calls):
        raw = server_text("".join(calls[index]["arguments"]))
        tool_calls.append(ToolCall(id=calls[index]["id"] or f"call_{index}", name=server_text(calls[index]["name"]),
                                   arguments=parse_arguments(raw), raw_arguments=raw))
    return ChatReply(text=content, tool_calls=tool_calls, latency_s=time.perf_counter() - started, ttfb_s=ttfb,
                     input_tokens=_token_count(usage, "prompt_tokens"),
                     output_tokens=_token_count(usage, "completion_tokens"), reasoning=reasoning,
                     ended_at_budget=ended_at_budget(finished))


def message_text(message) -> tuple[str, Optional[str]]:
    """(what the agent says, its reasoning). A server with a reasoning parser (vLLM
    `--reasoning-parser`) returns the thoughts in `reasoning_content` (or `reasoning`); one
    without it leaves `<think>...</think>` in the content, which is split off here."""
    extra = message.model_extra or {}
    reasoning = server_text(extra.get("reasoning_content") or extra.get("reasoning"))
    text, inline = split_reasoning(server_text(message.content or ""), "<think>", "</think>")
    thoughts = [part for part in (reasoning, inline) if part]
    return text, "\n\n".join(thoughts) if thoughts else None


def _reply_audio(message):
    """The samples of an audio answer (`message.audio.data`, base64 WAV), 16 kHz mono; None without one.
    A server asked for audio that answers only text is an error of the item: the clock it was asked
    for is missing."""
    from ihbench.dataset.audio import AudioError, decode_audio

    audio = getattr(message, "audio", None)
    if audio is None or not getattr(audio, "data", None):
        raise EmptyReplyError("asked for an audio answer (--option audio_voice), the server sent none")
    try:
        return decode_audio(base64.b64decode(audio.data))
    except (ValueError, AudioError) as error:
        raise EmptyReplyError(f"the server's audio answer cannot be decoded ({error})") from None


#: one chat-template control token (`<|im_end|>`, `<|eot_id|>`, `</s>`, `<end_of_turn>`, ...), or a turn's
#: header (`<|im_start|>assistant`, `<start_of_turn>model`): what a local loader strips from an answer
_SPECIAL = r"(?:<\|im_start\|>(?:system|user|assistant)|<start_of_turn>(?:user|model)|" \
    r"<\|start_header_id\|>(?:system|user|assistant)<\|end_header_id\|>|<\|[A-Za-z0-9_.:-]{1,40}\|>|</s>|<eos>" \
    r"|<end_of_turn>|<turn\|>)"
_SPECIAL_ONLY = re.compile(rf"\s*(?:{_SPECIAL}\s*)+")
#: such tokens leaked before or after the words of an answer
_SPECIAL_AROUND = re.compile(rf"^\s*(?:{_SPECIAL}\s*)+|(?:\s*{_SPECIAL})+\s*$")


class OpenAICompatLoader(Loader):
    name = "openai"
    runs_via = "server (OpenAI-compatible: OpenAI, vLLM, a vendor endpoint)"
    requires = ("openai",)
    option_types = {"base_url": each(url()), "api_key_env": env_var_name(), "concurrency": concurrency(),
                    "timeout": timeout_seconds(), "max_retries": rounds(),
                    "extra_body": json_value(dict), "stream": boolean(), "fold_system": boolean(),
                    "max_audio_clips": count(), "audio_voice": model_name()}

    @classmethod
    def check_options(cls, options: dict) -> dict:
        checked = super().check_options(options)
        check_extra_body(checked.get("extra_body") or {})
        if not checked.get("base_url") and os.environ.get("OPENAI_BASE_URL"):
            # the client would send there anyway: named as the server, so run.json records where answers came
            # from and a resume against another server through the variable is caught
            try:
                checked["base_url"] = url().convert(os.environ["OPENAI_BASE_URL"])
            except ValueError as error:
                raise UsageError(f"OPENAI_BASE_URL (the server when no --base-url is given): {error}") from None
        return checked

    @classmethod
    def check_environment(cls, options: dict) -> None:
        """No --base-url means OpenAI itself, which answers nothing without a key: refused now rather
        than as every item failing after the retries. A server of one's own (vLLM) may need no key,
        so with a --base-url the variable may be unset, unless the user named it (`api_key_env`): then
        it is meant to hold the key, and unset it is a typo that would send every request without one."""
        variable = options.get("api_key_env") or "OPENAI_API_KEY"
        if options.get("api_key_env") and not os.environ.get(variable):  # named on purpose: a typo, or not exported
            raise UsageError(f"--option api_key_env: the environment variable {variable} is not set (or empty), so "
                             "every request would go without its key; export it, or leave api_key_env out for a "
                             "server that needs no key")
        if not options.get("base_url") and not os.environ.get(variable):
            raise UsageError(f"the {cls.name} loader's default server is OpenAI and {variable} is not set; give "
                             "--base-url for a server of your own (vLLM needs no key) or set the variable")

    def __init__(self, model_path: str, *, base_url: Union[str, Sequence[str], None] = None,
                 api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 8, timeout: float = 120.0, max_retries: int = 3,
                 extra_body: Optional[dict] = None, stream: bool = False, fold_system: bool = False,
                 max_audio_clips: Optional[int] = None, audio_voice: Optional[str] = None, client=None):
        checked = self.check_options({"base_url": base_url, "api_key_env": api_key_env, "concurrency": concurrency,
                                      "timeout": timeout, "max_retries": max_retries, "extra_body": extra_body,
                                      "stream": stream, "fold_system": fold_system,
                                      "max_audio_clips": max_audio_clips, "audio_voice": audio_voice})
        # the model answers aloud (chat completions' audio output, in this voice): its reply's audio is
        # kept with the transcript, for `ihbench barge-in` to cut on
        self.audio_voice = checked["audio_voice"]
        self.stream = checked["stream"]  # tool conversations: streamed, to record the time to the first token
        self.fold_system = checked["fold_system"]
        self.max_audio_clips = checked["max_audio_clips"]
        base_url = checked["base_url"]
        shape = {"fold_system": True} if self.fold_system else {}
        if self.max_audio_clips is not None:
            shape["max_audio_clips"] = self.max_audio_clips
        if self.audio_voice is not None:
            shape["audio_voice"] = self.audio_voice
        super().__init__(model_path, base_url=base_url, concurrency=concurrency, timeout=timeout,
                         max_retries=max_retries, api_key_env=api_key_env, **shape)
        self.batch_size = concurrency
        self.extra_body = checked["extra_body"] or {}
        urls = [base_url] if base_url is None or isinstance(base_url, str) else list(base_url)
        if not urls:
            raise UsageError("base_url: give at least one server URL")
        if client is None:
            from openai import OpenAI

            # vLLM and most proxies accept any key; the key is read from the environment, never logged
            self.clients = [openai_client(OpenAI, base_url=url, api_key_env=api_key_env, timeout=timeout)
                            for url in urls]
        else:
            self.clients = [client]
        self.max_retries = max_retries
        self.served: set = set()  # the model names the server said answered (`_note_served`)
        # Several servers (vLLM data parallel, several nodes): requests go round the list, and a
        # retry goes to the next server, so a dead one costs an attempt, never a record.
        self._next = itertools.count()
        self._lock = threading.Lock()

    def _client(self, offset: int):
        return self.clients[offset % len(self.clients)]

    def _note_served(self, served) -> None:
        """The model the server says answered. Another than --model-path (a server started with another
        model, a proxy routing elsewhere) is said once per name: the answers are recorded as
        --model-path's. A dated snapshot of it ("gpt-4.1-2025-04-14" for "gpt-4.1") is the same model."""
        if not isinstance(served, str) or served in self.served:
            return
        self.served.add(served)
        if served != self.model_path and not served.startswith(self.model_path + "-"):
            log.warning("the server answered as model %r, not %r (--model-path), and its answers are recorded under "
                        "%s; check --base-url", served, self.model_path, self.model_path)

    def _complete(self, messages: list[dict], config: GenerationConfig, seed: int, **extra):
        """One chat completion, retried with the one retry policy; with several servers a retry goes
        to the next one."""
        with self._lock:
            first = next(self._next)
        attempt = itertools.count(first)

        def call():
            client = self._client(next(attempt))
            try:
                completion = client.chat.completions.create(
                    model=self.model_path,
                    messages=messages,
                    max_tokens=config.max_new_tokens,
                    temperature=config.temperature,
                    top_p=config.top_p,
                    seed=seed,
                    **extra,
                    **({"extra_body": self.extra_body} if self.extra_body else {}),
                )
                return completion if extra.get("stream") else checked_completion(completion)
            except TransportError:
                raise
            except Exception as error:
                converted = transport_error(error)
                if converted is None:
                    raise
                raise converted from None

        attempts = self.max_retries + 1 if len(self.clients) == 1 else max(self.max_retries + 1, len(self.clients))
        stop = getattr(_asked, "stop", None)
        completion, _ = retry_sync(call, attempts=attempts, base_delay=0.5 if len(self.clients) == 1 else 0.05,
                                   stopped=stop.is_set if stop is not None else None)
        if not extra.get("stream"):
            self._note_served(getattr(completion, "model", None))
        return completion

    def effective_generation(self, config: GenerationConfig) -> dict:
        """What each request sets; the server fills in the rest (vLLM: from the checkpoint's
        generation_config.json unless it is started with `--generation-config vllm`)."""
        sent = {"max_tokens": config.max_new_tokens, "temperature": config.temperature, "top_p": config.top_p,
                "seed": "per (item, epoch)"}
        return {**sent, **({"extra_body": redact(self.extra_body)} if self.extra_body else {}),
                "unset": "the server's defaults"}

    def thinks(self) -> bool:
        """Thinking asked of the server's template (`extra_body` chat_template_kwargs enable_thinking);
        a Thinking checkpoint that always thinks cannot be told from here."""
        kwargs = self.extra_body.get("chat_template_kwargs")
        return isinstance(kwargs, dict) and kwargs.get("enable_thinking") is True

    def fits(self, conversation: ModelInput, config: GenerationConfig) -> bool:
        """Within the server's clip limit, when one was given; the context is the server's to check."""
        return self.max_audio_clips is None or len(conversation.audio_clips) <= self.max_audio_clips

    def knows_limits(self) -> bool:
        return self.max_audio_clips is not None

    def _check_clips(self, clips: int, where: str, remedies: Optional[str] = None) -> None:
        if self.max_audio_clips is not None and clips > self.max_audio_clips:
            remedies = remedies or (f"--history-audio auto or last:{self.max_audio_clips} (older user turns as "
                                    "transcripts), or --modality text")
            raise UnsupportedInputError(
                f"{where}{clips} audio clips, and the server takes at most {self.max_audio_clips} per prompt "
                f"(--option max_audio_clips={self.max_audio_clips}); use {remedies}")

    def wire_messages(self, conversation: ModelInput) -> list[dict]:
        """The request's messages: the conversation as it is, or `alternating` with `fold_system`."""
        self._check_clips(len(conversation.audio_clips), f"{conversation.item_id}: ")
        messages = to_openai_messages(conversation)
        return alternating(messages) if self.fold_system else messages

    def _generate(self, conversation: ModelInput, config: GenerationConfig, seed: int) -> Response:
        started = time.perf_counter()
        spoken = {"modalities": ["text", "audio"], "audio": {"voice": self.audio_voice, "format": "wav"}} \
            if self.audio_voice else {}
        completion = self._complete(self.wire_messages(conversation), config, seed, **spoken)
        usage = completion.usage
        text, reasoning = message_text(completion.choices[0].message)
        check_not_filtered(completion.choices[0].finish_reason, text, _token_count(usage, "completion_tokens"),
                           config.max_new_tokens)
        audio = _reply_audio(completion.choices[0].message) if self.audio_voice else None
        if audio is not None and no_text(text):  # an audio answer's words are its transcript
            text = server_text(completion.choices[0].message.audio.transcript or "")
        if no_text(text):  # invisible characters only count as none, as for `ihbench verify`
            finish = completion.choices[0].finish_reason
            if reasoning:  # kept on the record with the error: what the budget was spent on
                error = empty_after_thinking(_token_count(usage, "completion_tokens"), config.max_new_tokens,
                                             None if finish in (None, "") else not ended_at_budget(finish))
                return Response(text=None, latency_s=time.perf_counter() - started, error=describe_failure(error),
                                input_tokens=_token_count(usage, "prompt_tokens"),
                                output_tokens=_token_count(usage, "completion_tokens"), reasoning=reasoning)
            refusal = getattr(completion.choices[0].message, "refusal", None)  # why, when the model refused
            said = f", only a refusal: {server_text(refusal)[:300]!r}" if isinstance(refusal, str) and refusal.strip() \
                else ""
            raise EmptyReplyError(f"the server's reply has no text (finish_reason {finish!r}){invisible_only(text)}"
                                  f"{said}")
        page = error_page(text)
        if page:  # a proxy's or server's error sent as the model's words, status 200 (battery 67, N3)
            raise MalformedReplyError(f"the server's reply is {page}, not a model's words: {shortened(text, 200)!r}")
        if _SPECIAL_ONLY.fullmatch(text):  # a template's end-of-turn token leaked: a local loader strips them
            raise EmptyReplyError(f"the server's reply is only special tokens ({text.strip()[:80]!r}): no words; the "
                                  "server did not strip them (vLLM does unless skip_special_tokens is false)")
        text = _SPECIAL_AROUND.sub("", text)  # the words only, as a local loader's answer is
        return Response(
            text=text,
            latency_s=time.perf_counter() - started,
            input_tokens=_token_count(usage, "prompt_tokens"),
            output_tokens=_token_count(usage, "completion_tokens"),
            reasoning=reasoning,
            audio=audio,
            ended_at_budget=ended_at_budget(completion.choices[0].finish_reason),
        )

    tools_unsupported = None  # the chat-completions tools API (vLLM: with its tool-call parser flags)

    def _chat(self, messages: list[dict], tools: list[dict], config: GenerationConfig, seed: int) -> ChatReply:
        started = time.perf_counter()
        self._check_clips(sum(1 for m in messages if m.get("audio") is not None), "",
                          "--modality text, or fewer turns (--only-turns)")
        wire = [_wire_message(m) for m in messages]
        if self.fold_system:
            wire = alternating(wire)
        if self.stream:
            chunks = self._complete(wire, config, seed, tools=tools, tool_choice="auto", stream=True,
                                    stream_options={"include_usage": True})
            return _streamed_reply(chunks, started, config.max_new_tokens)
        completion = self._complete(wire, config, seed, tools=tools, tool_choice="auto")
        message = completion.choices[0].message
        text, reasoning = message_text(message)
        usage = completion.usage
        check_not_filtered(completion.choices[0].finish_reason, text, _token_count(usage, "completion_tokens"),
                           config.max_new_tokens)
        calls = [ToolCall(id=call.id or f"call_{index}", name=server_text(call.function.name),
                          arguments=parse_arguments(server_text(call.function.arguments)),
                          raw_arguments=server_text(call.function.arguments or ""))
                 for index, call in enumerate(message.tool_calls or [])]
        return ChatReply(text=text, tool_calls=calls, latency_s=time.perf_counter() - started,
                         input_tokens=_token_count(usage, "prompt_tokens"),
                         output_tokens=_token_count(usage, "completion_tokens"), reasoning=reasoning,
                         ended_at_budget=ended_at_budget(completion.choices[0].finish_reason))

    def generate_batch(self, conversations: Sequence[ModelInput], config: GenerationConfig,
                       seeds: Sequence[int], stop: Optional[threading.Event] = None) -> list[Optional[Response]]:
        answered = dict(self.answers(conversations, config, seeds, stop))
        return [answered[position] for position in range(len(conversations))]

    def answers(self, conversations: Sequence[ModelInput], config: GenerationConfig, seeds: Sequence[int],
                stop: Optional[threading.Event] = None) -> Iterator[tuple[int, Optional[Response]]]:
        """Each answer as it arrives. Once `stop` is set (the Space's Stop), no request is sent and none retried:
        the requests in flight are awaited, up to the server's timeout, and a failed one is recorded as failed."""
        def answer(pair) -> Optional[Response]:
            if stop is not None and stop.is_set():
                return None
            _asked.stop = stop  # read by `_complete` in this thread
            try:
                return self.generate(pair[0], config, pair[1])
            finally:
                _asked.stop = None

        if len(conversations) <= 1:
            yield from enumerate(map(answer, zip(conversations, seeds)))
            return
        pool = ThreadPoolExecutor(max_workers=self.batch_size)
        try:
            asked = {pool.submit(answer, pair): position for position, pair in enumerate(zip(conversations, seeds))}
            for done in as_completed(asked):
                yield asked[done], done.result()
        finally:  # Ctrl-C is not held until every request in flight has spent its timeout and retries (battery
            # 45, R6): the answers still coming write nothing, and `ihbench` leaves without them
            pool.shutdown(wait=False, cancel_futures=True)
