"""`ihbench doctor`: a real checkpoint checked in seconds, before GPU hours are spent on it.

Only what is small is loaded: config.json, the tokenizer, the processor and the chat template;
never the weights. Each check says one thing the loader assumes of the checkpoint, and whether it
holds: the format is the one the loader reads; the template writes one audio placeholder per clip;
the thinking switch changes the prompt; the token that ends a model turn stops generation; the
deepest point of the data fits the context with the chosen `--history-audio`; the processor keeps
as much of a clip as the loader declares. Tiny random-weight checkpoints pass them all, so a failure
on a real one is a difference between the real checkpoint and what the loader was built against.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Union

import numpy as np
from ihbench.dataset.errors import IHBenchError, UsageError

STATUSES = ("ok", "warn", "fail", "skip")


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # one of STATUSES: only "fail" makes the command fail
    detail: str

    def line(self) -> str:
        return f"{self.status:4s} {self.name}: {self.detail}"


def checks(family: str, model_path: str, options: dict, *, data: Optional[str] = None, config: Optional[str] = None,
           split: Optional[str] = None, history_audio: Union[int, str, None] = None,
           max_new_tokens: int = 256) -> Iterator[Check]:
    """The checks of `model_path` as a `family` checkpoint, one at a time (the caller prints each as
    it comes). A check that the next ones need (the format, the processor) stops them when it fails."""
    from ihbench.loaders import check_options, get, resolve_model_path
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.transformers_base import TransformersLoader

    cls = get(family)
    if not issubclass(cls, TransformersLoader):
        raise UsageError(f"--model {family}: doctor checks local transformers checkpoints; {family} runs via "
                         f"{cls.runs_via}, which loads its model its own way")
    options = check_options(family, options)
    item = _deepest(data, config, split) if data else None  # --data (folder, config, split) before any check runs
    path = resolve_model_path(model_path, revision=options.get("revision"))
    try:
        model_type = cls.check_format(path)
    except ModelFolderError as error:
        yield Check("format", "fail", str(error))
        return
    yield Check("format", "ok", f"model_type {model_type}, a {family} checkpoint in the format the loader reads")
    try:
        loader = cls.without_weights(model_path, **options)
    except IHBenchError as error:
        yield Check("processor", "fail", str(error))
        return
    processor, tokenizer = loader.processor, loader.processor.tokenizer
    yield Check("processor", "ok", f"{type(processor).__name__} with {type(tokenizer).__name__} "
                                   f"({len(tokenizer)} tokens); no weights loaded")
    template = _template(loader, item)
    yield template
    yield _thinking(loader, max_new_tokens)
    yield _stop_tokens(loader)
    if template.status == "fail":  # both encode audio prompts, which the processor then refuses
        for name in ("context", "clips"):
            yield Check(name, "skip", "needs a chat template that places the audio (see the template check)")
        return
    yield _context(loader, item, history_audio, max_new_tokens)
    yield _clips(loader)


def _deepest(data: str, config: Optional[str], split: Optional[str]):
    """The data's deepest point: the most user turns, then the most seconds of audio."""
    from ihbench.dataset import load_items

    items = load_items(data, config=config, split=split)
    if not items:
        raise UsageError(f"--data: {data} holds no interruption points")

    def depth(item):
        clips = [m.audio for m in item.history if m.role == "user"] + [item.interruption.audio]
        return sum(m.role == "user" for m in item.history), sum(len(getattr(c, "bytes", None) or b"") for c in clips
                                                                 if c is not None)

    return max(items, key=depth)


def _noise(seconds: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(16000 * seconds)) * 0.1).astype(np.float32)


def _sample_conversation():
    """Without --data: the shape of a point (the agent speaks first, two user clips)."""
    from ihbench.loaders.base import InputTurn, ModelInput

    return ModelInput("doctor/sample", "audio", [
        InputTurn("system", "You are the airline's phone agent. Keep answers short."),
        InputTurn("assistant", "Welcome, how can I"), InputTurn("user", audio=_noise(1.5, 1)),
        InputTurn("assistant", "Sure. The next flight leaves at"), InputTurn("user", audio=_noise(0.8, 2))])


def _template(loader, item) -> Check:
    from ihbench.protocol import build_model_input

    conversation = build_model_input(item, "audio") if item is not None else _sample_conversation()
    where = item.id if item is not None else "a sample point (give --data for a real one)"
    clips = len(conversation.audio_clips)
    try:
        prompt = loader.prompt(conversation)
    except IHBenchError as error:  # the family's own placeholder check (`checked_prompt`)
        return Check("template", "fail", f"{where}: {error}; the processor would pair clips and placeholders wrongly")
    except Exception as error:  # a template that breaks on our messages: the checkpoint's, said in one line
        return Check("template", "fail", f"{where}: the chat template fails ({type(error).__name__}: "
                                         f"{str(error).splitlines()[0][:200]})")
    found = loader.audio_placeholders(prompt)
    if found != clips:
        return Check("template", "fail", f"{where}: the chat template wrote {found} audio placeholder(s) for {clips} "
                                         "clip(s); the processor would pair clips and placeholders wrongly")
    return Check("template", "ok", f"{where}: one audio placeholder per clip ({clips} clips)")


def _thinking(loader, max_new_tokens: int) -> Check:
    from ihbench.loaders.reasoning import budget_warning
    from ihbench.loaders.transformers_base import THINKING_IGNORED

    effect = loader.thinking_effect()
    if effect is None:
        return Check("thinking", "skip", f"the {loader.name} loader has no thinking switch")
    if effect == THINKING_IGNORED:
        if loader.template_options()["enable_thinking"]:
            return Check("thinking", "fail", "--option thinking=true changes nothing: the chat template renders the "
                                             "same prompt with enable_thinking on and off, so the checkpoint decides")
        return Check("thinking", "warn", "the chat template ignores enable_thinking: the checkpoint decides whether it "
                                         "thinks, and run.json records it so (fine for a checkpoint that never thinks)")
    warning = budget_warning(loader, max_new_tokens)
    if warning:
        return Check("thinking", "warn", warning)
    return Check("thinking", "ok", f"enable_thinking changes the prompt as the loader assumes; thinking {effect}")


def _stop_tokens(loader) -> Check:
    """The token the template closes a model turn with must be one generation stops at, and none the
    generation config forbids: otherwise answers end elsewhere (`loaders.turn_end`, which `run` applies)."""
    from ihbench.loaders.base import ModelFolderError
    from ihbench.loaders.turn_end import check_turn_end, closing_token, token_names

    names = token_names(loader, loader.end_tokens())
    try:
        closing = closing_token(loader)
    except Exception as error:
        return Check("stop tokens", "fail", f"the chat template fails on a text conversation ({type(error).__name__}: "
                                            f"{str(error).splitlines()[0][:200]})")
    try:
        check_turn_end(loader)
    except ModelFolderError as error:
        return Check("stop tokens", "fail", str(error))
    if closing is None:
        return Check("stop tokens", "warn", f"the template writes nothing after a model turn; stop tokens: {names}")
    return Check("stop tokens", "ok", f"a model turn ends with {token_names(loader, [closing])}, a stop token "
                                      f"(stop tokens: {names})")


def _context(loader, item, history_audio, max_new_tokens: int) -> Check:
    from ihbench.loaders import GenerationConfig
    from ihbench.protocol import AUTO, build_model_input, fitting_model_input, history_audio_label

    if item is None:
        return _sample_context(loader, max_new_tokens)
    context = loader.context_tokens()
    config = GenerationConfig(max_new_tokens=max_new_tokens)
    setting = history_audio_label(history_audio) or "all"
    if history_audio == AUTO:
        conversation = fitting_model_input(item, lambda c: loader.fits(c, config))
    else:
        conversation = build_model_input(item, "audio", history_audio=history_audio)
    users = sum(m.role == "user" for m in item.history) + 1
    heard = len(conversation.audio_clips)
    try:
        tokens = int(loader.inputs([conversation])["input_ids"].shape[1])
    except IHBenchError as error:  # a clip longer than the processor takes whole
        return Check("context", "fail", f"{item.id}: {error}")
    where = f"the deepest point {item.id} ({users} user turns, {heard} heard as audio with --history-audio {setting})"
    if context is None:
        return Check("context", "warn", f"{where} is {tokens} tokens; the config states no context to check it against")
    if tokens + max_new_tokens <= context:
        return Check("context", "ok", f"{where} is {tokens} tokens + {max_new_tokens} new, within the {context}-token "
                                      "context")
    advice = ""
    if history_audio != AUTO:
        fitted = fitting_model_input(item, lambda c: loader.fits(c, config))
        if loader.fits(fitted, config):
            advice = f"; --history-audio auto would hear {len(fitted.audio_clips)} of {users} as audio"
    return Check("context", "fail", f"{where} is {tokens} tokens + {max_new_tokens} new, beyond the {context}-token "
                                    f"context: such points fail{advice}")


def _sample_context(loader, max_new_tokens: int) -> Check:
    """Without --data, the sample point against the context: a max_position_embeddings too small for
    any point is said here, not only by `run`'s probe (battery 46, S1)."""
    context = loader.context_tokens()
    tokens = int(loader.inputs([_sample_conversation()])["input_ids"].shape[1])
    where = f"a sample point (two short clips) is {tokens} tokens + {max_new_tokens} new"
    if context is None:
        return Check("context", "warn", f"{where}; the config states no context to check it against")
    if tokens + max_new_tokens > context:
        return Check("context", "fail", f"{where}, beyond the {context}-token context (config.json's "
                                        "max_position_embeddings): no point of the data would fit")
    return Check("context", "ok", f"{where}, within the {context}-token context; give --data (the dev set) to check "
                                  "its deepest point")


def _clips(loader) -> Check:
    from ihbench.loaders.limits import measure_clip_handling

    declared = loader.max_clip_seconds
    measured = measure_clip_handling(loader)["clip_cap_seconds"]
    said = f"{declared:g} s" if declared is not None else "no cap"
    if measured == declared:
        kept = f"keeps {measured:g} s of a clip" if measured is not None else "takes clips whole at every length tried"
        return Check("clips", "ok", f"the processor {kept}, as the loader declares ({said})")
    if measured is not None and (declared is None or measured < declared):
        return Check("clips", "fail", f"the processor keeps only {measured:g} s of a clip and the loader declares "
                                      f"{said}: a longer clip would lose its end silently")
    kept = f"{measured:g} s" if measured else "clips of every length tried"
    return Check("clips", "warn", f"the processor keeps {kept}, more than the {said} the loader declares: longer clips "
                                  "are refused though the processor would take them")
