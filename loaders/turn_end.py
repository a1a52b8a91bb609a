"""Where an answer ends: at the token the chat template closes a model turn with, which generation must
stop at and may not forbid. `doctor` reports it as a check and `run` refuses a checkpoint that fails it,
before any weights load: an edited `eos_token_id` of ordinary tokens cut every answer after one token,
and `suppress_tokens` holding the end token kept the model from ever ending its turn, both kept and scored
(battery 54, A4).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .base import InputTurn, ModelFolderError, ModelInput

#: a model turn the template closes, between two user turns: what follows the answer is the turn's end
_SAID = "Fine, thanks."
_PROBE = ModelInput("doctor/turns", "text", [
    InputTurn("system", "You are a phone agent."), InputTurn("user", "Hello."), InputTurn("assistant", _SAID),
    InputTurn("user", "Goodbye.")])
#: generation_config.json fields that forbid tokens: an end token among them is one the model cannot end on
#: (a sequence of more than one token in bad_words_ids forbids only that sequence). `begin_suppress_tokens`
#: forbids them at the first token only (Whisper's holds its end token): no empty answer, an end from the
#: second token on (battery 56, C10: refused as "could never end its turn")
_FORBIDDING = ("suppress_tokens", "bad_words_ids")


def closing_token(loader) -> Optional[int]:
    """The first token the template writes after a model turn, or None if it writes nothing there. The
    template's own error (an audio-only template fails on text) is left to the caller."""
    prompt = loader.prompt(_PROBE)
    after = prompt.partition(_SAID)[2].partition("Goodbye.")[0]
    ids = loader.text_ids(after) if after else []
    return ids[0] if ids else None


def token_names(loader, ids) -> str:
    tokenizer = loader.processor.tokenizer
    return ", ".join(sorted(str(tokenizer.convert_ids_to_tokens(token)) for token in ids)) or "none"


def check_turn_end(loader) -> None:
    """Refuses a checkpoint whose generation would not end an answer where the template ends a model turn,
    naming the file and field. A template that fails on text, or writes nothing after a turn, is not judged
    here (`doctor` says so; the load probe meets a failing template)."""
    ends = loader.end_tokens()
    source = _generation_file(loader)
    for name in _FORBIDDING:
        value = getattr(loader.generation_config, name, None) or []
        forbidden = {entry[0] if isinstance(entry, list) and len(entry) == 1 else entry for entry in value
                     if not isinstance(entry, list) or len(entry) == 1}
        held = sorted(token for token in forbidden & ends if isinstance(token, int))
        if held:
            raise ModelFolderError(f"{source}: {name} holds {held[0]} ({token_names(loader, held[:1])}), a stop "
                                   "token: the model could never end its turn; remove it from the list")
    special = _special_ids(loader.processor.tokenizer)
    ordinary = sorted(token for token in ends if isinstance(token, int) and special and token not in special)
    if ordinary:  # battery 55, B8: `[<|im_end|>, 10]` ended every answer at its first '+', kept and scored
        raise ModelFolderError(f"{source}: eos_token_id holds {ordinary[0]} ({token_names(loader, ordinary[:1])}), an "
                               "ordinary token of the vocabulary, not a special one: answers would end at the first "
                               "one they write; remove it")
    try:
        closing = closing_token(loader)
    except Exception:  # noqa: BLE001 - the template's own failure, met and named by the load probe
        return
    if closing is not None and closing not in ends and special and closing not in special:
        # battery 55, B15: the template edited, its turn end no special token; adding it to the end ids (as the
        # message for generation_config.json said) would cut every answer at its first such character
        raise ModelFolderError(f"{_template_file(loader)}: the chat template ends a model turn with "
                               f"{token_names(loader, [closing])} ({closing}), an ordinary token of the vocabulary, not "
                               "a special one such as the tokenizer's end of turn: edited, or of another model; restore "
                               "the template")
    if closing is not None and closing not in ends:
        raise ModelFolderError(f"{source}: eos_token_id is {_ids(loader.generation_config.eos_token_id)}, without "
                               f"{token_names(loader, [closing])} ({closing}), the token the chat template ends a "
                               "model turn with: answers would not end where a turn ends (they stop at another token, "
                               "or run on to --max-new-tokens); set it to that token's id")


def _special_ids(tokenizer) -> set:
    """The ids of the tokenizer's special and added tokens (`<|im_end|>`, `<eos>`): those an answer may end at.
    Empty for a tokenizer that lists none, which is then not judged."""
    ids: set = set()
    for name in ("all_special_ids", "added_tokens_decoder"):
        try:  # a method, or one that raises, in some tokenizers (Mistral's)
            listed = getattr(tokenizer, name, None)
            listed = listed() if callable(listed) else listed
        except NotImplementedError:
            continue
        if isinstance(listed, (list, tuple, set, dict)):
            ids |= set(listed)
    return {token for token in ids if isinstance(token, int)}


def _generation_file(loader) -> Path:
    path = Path(loader.path) / "generation_config.json"
    return path if path.is_file() else Path(loader.path) / "config.json"


def _template_file(loader) -> Path:
    """Where the checkpoint keeps its chat template: its own file, or inside the tokenizer's config."""
    folder = Path(loader.path)
    return next((folder / name for name in ("chat_template.jinja", "chat_template.json") if (folder / name).is_file()),
                folder / "tokenizer_config.json")


def _ids(value) -> str:
    return "null" if value is None else str(value)
