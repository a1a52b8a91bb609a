"""The contract every model backend implements, and the conversation it is given.

A backend sees one `ModelInput` (built from an `EvalItem` by `ihbench.protocol`) and returns
a `Response`: the text, latency and token counts, or the error that stopped it. Backends never
see the wide schema, rubrics or baselines: only what a deployed voice agent would have heard.
"""
from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Iterator, Literal, Optional, Sequence

import numpy as np
from ihbench.dataset.argtypes import check_all, expand_home, number, temperature, tokens
from ihbench.dataset.errors import IHBenchError, ItemFailure, UsageError
from ihbench.dataset.redaction import redact
from ihbench.dataset.schema import SAMPLING_RATE

from .failures import checked_answer, describe_failure, is_item_failure

Modality = Literal["audio", "text"]


@dataclass(frozen=True)
class InputTurn:
    role: Literal["system", "user", "assistant"]
    text: Optional[str] = None
    audio: Optional[np.ndarray] = None  # 16 kHz mono float32, user turns in audio mode only

    def __post_init__(self):
        if self.text is None and self.audio is None:
            raise ValueError(f"a {self.role} turn needs text or audio")  # built by ihbench.protocol only


@dataclass(frozen=True)
class ModelInput:
    item_id: str
    modality: Modality
    turns: list[InputTurn]
    sampling_rate: int = SAMPLING_RATE

    @property
    def audio_clips(self) -> list[np.ndarray]:
        return [t.audio for t in self.turns if t.audio is not None]


class EmptyAudioError(ItemFailure, ValueError):
    pass


class DamagedAudioError(ItemFailure, ValueError):
    """A clip of the data that is no audio (bytes no decoder reads, NaN samples): the points that hear
    it cannot be asked; recorded on each, naming the cell, as an empty clip is, and the run goes on."""


def audio_part_messages(turns) -> list[dict]:
    """Chat-template messages in the form most audio processors take: each user turn a list with
    one audio part (or a text part in text mode), every other turn plain text."""
    messages = []
    for turn in turns:
        if turn.role == "user":
            part = {"type": "audio", "audio": turn.audio} if turn.audio is not None else \
                {"type": "text", "text": turn.text}
            messages.append({"role": "user", "content": [part]})
        else:
            messages.append({"role": turn.role, "content": turn.text})
    return messages


#: what each generation setting may be (also the `type=` of `ihbench run`'s options of the same name)
GENERATION_TYPES = {"max_new_tokens": tokens(), "temperature": temperature(),
                    "top_p": number(min=0, max=1, min_open=True)}


@dataclass(frozen=True)
class GenerationConfig:
    max_new_tokens: int = 256
    temperature: float = 0.0  # 0 = greedy: the default, so reruns are reproducible
    top_p: float = 1.0

    def __post_init__(self):
        """Checked before any work, named as the command line spells them: a bad value would otherwise
        fail every item, one error string at a time. The ranges are `GENERATION_TYPES`, the very
        types `ihbench run` parses these options with."""
        for name, kind in GENERATION_TYPES.items():
            kind.check(f"--{name.replace('_', '-')}", getattr(self, name))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Response:
    text: Optional[str]
    latency_s: float
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    error: Optional[str] = None
    #: a thinking model's reasoning, kept apart from `text` so judges see only what the agent says
    reasoning: Optional[str] = None
    #: what the model said aloud (16 kHz mono float32), when it answers with audio: `text` is its
    #: transcript, and `ihbench barge-in` cuts it on this audio's clock
    audio: Optional[np.ndarray] = None
    #: the server said the token budget ended it (finish_reason `length`), whether or not it counted the tokens
    ended_at_budget: bool = False

    @classmethod
    def failure(cls, error: BaseException, started: float) -> "Response":
        return cls(text=None, latency_s=time.perf_counter() - started, error=describe_failure(error))


class ModelNotFoundError(IHBenchError, FileNotFoundError):
    """A local path that does not exist, or a hub id while the hub is unreachable: said at once."""


class ModelFolderError(IHBenchError, ValueError):
    """A local model folder that cannot be loaded (a missing config, a truncated or foreign weights file)."""


_MAX_HEADER = 100_000_000  # the safetensors format's own limit on its JSON header


def check_model_folder(path) -> None:
    """Fail at once, naming the file, before transformers touches the folder: without config.json
    it guesses (and once grew to 24 GB before the kernel killed it); a truncated safetensors file, or
    one that is not safetensors at all, otherwise surfaces as a raw SafetensorError mid-load."""
    import json
    import struct
    from pathlib import Path

    folder = Path(path)
    config = folder / "config.json"
    if not config.is_file() and (config.exists() or config.is_symlink()):  # battery 52, Y3: "no config.json"
        raise ModelFolderError(f"{config}: not a regular file (a {_kind_of(config)}); give the file itself")
    if not config.is_file():
        raise ModelFolderError(f"{folder}: no config.json; this is not a transformers model folder (give the "
                               "folder that holds config.json and the weights)")  # --model-path, --llm-model, ...
    for file in sorted([*folder.glob("*.json"), *folder.glob("*.safetensors"), *folder.glob("*.bin")]):
        if not file.is_file():  # a pipe would be waited on for ever (battery 51, X7), a folder fails mid-load
            raise ModelFolderError(f"{file}: not a regular file (a {_kind_of(file)}); give the file itself")
    for file in sorted(folder.glob("*.json")):
        _check_json_object(file)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (ValueError, KeyError, TypeError) as error:
            raise ModelFolderError(f"{index}: not a valid safetensors index ({type(error).__name__})") from None
        missing = [name for name in shards if not (folder / name).is_file()]
        if missing:
            raise ModelFolderError(f"{folder}: weights listed in {index.name} are missing: {', '.join(missing)}")
    weights = sorted(folder.glob("*.safetensors"))
    if not weights and not any(folder.glob("*.bin")):
        raise ModelFolderError(f"{folder}: no weights (*.safetensors or *.bin)")
    for file in weights:
        size = file.stat().st_size
        with file.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise ModelFolderError(f"{file}: not a safetensors file ({size} bytes, too short to hold a header)")
            (length,) = struct.unpack("<Q", head)
            if not 2 <= length <= _MAX_HEADER or handle.read(1) != b"{":  # random bytes, another format
                raise ModelFolderError(f"{file}: not a safetensors file (its header is not valid)")
            if length > size - 8:
                raise ModelFolderError(f"{file}: truncated (header says {length} bytes, file has {size}); "
                                       "download or copy it again")
            try:
                header = json.loads(b"{" + handle.read(length - 1))
                end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
            except (ValueError, AttributeError, KeyError, TypeError, IndexError):
                raise ModelFolderError(f"{file}: not a safetensors file (its header is not valid)") from None
        if size < 8 + length + end:
            raise ModelFolderError(f"{file}: truncated ({size} bytes, the header describes {8 + length + end}); "
                                   "download or copy it again")
        problem = _header_problem(header)
        if problem:  # what safetensors refuses mid-load with a traceback (battery 47, T5)
            raise ModelFolderError(f"{file}: its header is damaged ({problem}); download or copy it again")


#: bytes per element of safetensors' dtypes (sub-byte ones, F4 and F6, are not checked)
_DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "F8_E4M3FNUZ": 1,
                "F8_E5M2FNUZ": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8,
                "U64": 8, "F64": 8, "C64": 8}
_SUB_BYTE_DTYPES = ("F4", "F6_E2M3", "F6_E3M2")


def _header_problem(header: dict) -> str:
    """Whether each tensor's dtype and shape fill its bytes exactly, and the tensors' bytes follow one
    another from the start, as safetensors requires; what is wrong, naming the tensor, or ""."""
    import math

    metadata = header.get("__metadata__")
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        return "its __metadata__ is not an object of texts"  # battery 48, U10
    entries = []
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        shape, (begin, end) = tensor.get("shape"), tensor["data_offsets"]
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            return f"tensor {name!r} has no valid shape"
        width = _DTYPE_BYTES.get(tensor.get("dtype"))
        if width is None and tensor.get("dtype") not in _SUB_BYTE_DTYPES:  # battery 50, W10: a traceback
            return f"tensor {name!r} has dtype {tensor.get('dtype')!r}, which safetensors does not know"
        if width is not None and math.prod(shape) * width != end - begin:
            return (f"tensor {name!r} is given as {tensor['dtype']} {shape}, {math.prod(shape) * width} bytes, "
                    f"and its offsets hold {end - begin}")
        entries.append((begin, end, name))
    position = 0
    for begin, end, name in sorted(entries):
        if begin != position:
            return f"the bytes of tensor {name!r} start at {begin}, where {position} was expected"
        position = end
    return ""


def _kind_of(path) -> str:
    import stat

    import errno

    try:
        mode = path.stat().st_mode
    except OSError as error:  # a loop was said "a link to nothing" (battery 65, L13)
        return "symlink loop: its links point at each other" if error.errno == errno.ELOOP else "link to nothing"
    return ("folder" if stat.S_ISDIR(mode) else "named pipe" if stat.S_ISFIFO(mode) else
            "socket" if stat.S_ISSOCK(mode) else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")


def _check_json_object(file) -> None:
    """transformers reads some of a folder's JSON files only if it can: a generation_config.json that
    is not JSON is skipped without a word, and the model then generates with defaults its makers
    did not choose (other end tokens, other sampling). So every JSON file of the folder is read
    here once, by the same rule, and a damaged one is named."""
    from ihbench.dataset.io import read_json_object

    read_json_object(file, ModelFolderError, hint="copy it again")
    with open(file, "rb") as handle:
        if handle.read(3) == b"\xef\xbb\xbf":  # read above; transformers' json.load refuses it (battery 47, T10)
            raise ModelFolderError(f"{file}: begins with a byte-order mark (saved by a Windows editor?), which "
                                   "transformers cannot read; save it as UTF-8 without one")


class Loader(ABC):
    """One model backend. A subclass sets `name` (its key in `registry.LOADERS`) and implements `_generate`."""

    name: ClassVar[str] = ""
    modalities: ClassVar[tuple[str, ...]] = ("audio", "text")
    #: how the family runs, for `ihbench models`: "transformers", "own package", or "server"
    runs_via: ClassVar[str] = "transformers"
    #: Python modules it needs at run time (checked, not imported, by `ihbench models`)
    requires: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def missing(cls) -> list[str]:
        """Which of `requires` this environment lacks."""
        import importlib.util

        return [module for module in cls.requires if importlib.util.find_spec(module) is None]
    #: how many conversations `generate_batch` handles at once (1 = no batching)
    batch_size: int = 1

    def __init__(self, model_path: str, **options: Any):
        self.model_path = model_path
        self.options = options

    #: how the value of each option is checked (name -> an `ihbench.dataset.argtypes` type);
    #: a subclass adds its own, and `check_options` applies them all before a model is touched
    option_types: ClassVar[dict] = {}

    @classmethod
    def check_options(cls, options: dict) -> dict:
        """`options` with each value checked and converted; the first bad one is named, with what it may be."""
        types = {}
        for klass in reversed(cls.__mro__):
            types.update(klass.__dict__.get("option_types", {}))
        return check_all(types, options)

    @classmethod
    def check_environment(cls, options: dict) -> None:
        """What the loader needs from the machine with these (checked) options, said before any work
        starts (a UsageError); nothing is loaded or called. Most need nothing they cannot say later."""

    @classmethod
    def option_names(cls) -> list[str]:
        """The keyword options this loader takes (for --option KEY=VALUE), from its constructors."""
        import inspect

        names = set()
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            for parameter in list(inspect.signature(init).parameters.values())[1:]:
                if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) \
                        and parameter.name not in ("model_path", "api", "client"):
                    names.add(parameter.name)
        return sorted(names)

    def check_modality(self, modality: Modality) -> None:
        if modality not in self.modalities:
            raise UsageError(f"loader {self.name!r} does not take {modality} input; it takes {', '.join(self.modalities)}")

    def generate(self, conversation: ModelInput, config: GenerationConfig, seed: int) -> Response:
        """An item-level failure (see `failures`) is the response, so a run goes on; anything
        else is a bug in the loader and propagates with its traceback. An answer with no text
        (`failures.no_text`) is such a failure, whichever family gave it."""
        started = time.perf_counter()
        try:
            response = self._generate(conversation, config, seed)
            if response.error is None:
                checked_answer(response.text)
            return response
        except Exception as error:
            if not is_item_failure(error):
                raise
            return Response.failure(error, started)

    def generate_batch(self, conversations: Sequence[ModelInput], config: GenerationConfig,
                       seeds: Sequence[int], stop: Optional[threading.Event] = None) -> list[Optional[Response]]:
        """None for a conversation not asked because `stop` was set first (a rerun asks it)."""
        return [None if stop is not None and stop.is_set() else self.generate(c, config, s)
                for c, s in zip(conversations, seeds)]

    def answers(self, conversations: Sequence[ModelInput], config: GenerationConfig, seeds: Sequence[int],
                stop: Optional[threading.Event] = None) -> Iterator[tuple[int, Optional[Response]]]:
        """(position, answer) pairs as the answers come, for the runner to write each when it arrives: a loader
        that asks a server several at once yields each on arrival (an answer received is not lost with a
        request still in flight when the run is stopped; battery 54, A13); one batch of a local model, at once."""
        yield from enumerate(self.generate_batch(conversations, config, seeds, stop))

    @abstractmethod
    def _generate(self, conversation: ModelInput, config: GenerationConfig, seed: int) -> Response: ...

    #: new tokens a thinking answer of this family should be allowed (below it `ihbench run` warns at
    #: start): a starting point for a short spoken reply after a thought, not a measured need
    thinking_tokens: ClassVar[int] = 2048

    def effective_generation(self, config: GenerationConfig) -> Optional[dict]:
        """The generation settings the model runs with, for run.json (None: the loader cannot tell)."""
        return None

    def thinks(self) -> bool:
        """Whether answers come after a thought (thinking asked for, and not ignored by the template)."""
        return False

    def fits(self, conversation: ModelInput, config: GenerationConfig) -> bool:
        """Whether `conversation` is within what the model takes (its context with room for `config`'s
        answer, its clip limits): `--history-audio auto` keeps the most recent user turns as audio
        while it is. True where the loader cannot tell (then auto hears every turn)."""
        return True

    #: the most audio clips one prompt may hold (a server's per-prompt limit), when the loader knows it:
    #: commands whose prompts grow by a clip a turn check it against their longest prompt before any work
    max_audio_clips: Optional[int] = None

    def knows_limits(self) -> bool:
        """Whether `fits` can say no: otherwise `--history-audio auto` is every turn as audio, and the
        run says so at start."""
        return False

    #: why this family cannot run a tool-using conversation (None: it can, through `_chat`)
    tools_unsupported: ClassVar[Optional[str]] = "its loader does not pass tools to the model or parse tool calls"

    @classmethod
    def check_tool_support(cls) -> None:
        """Before a ConversationBench run loads anything: a family that cannot call tools says why, in one line."""
        if cls.tools_unsupported:
            raise UsageError(f"--model {cls.name}: cannot run a tool-using conversation: {cls.tools_unsupported}")

    def check_tools(self) -> None:
        """Once loaded, before the first turn: the family's word, and whatever the loaded model can check."""
        self.check_tool_support()

    def chat(self, messages: list[dict], tools: list[dict], config: GenerationConfig, seed: int):
        """One model reply (`loaders.chat.ChatReply`) to the whole history with `tools` offered. An
        item failure propagates as such (the session records it on the turn and stops there)."""
        return self._chat(messages, tools, config, seed)

    def _chat(self, messages: list[dict], tools: list[dict], config: GenerationConfig, seed: int):
        raise NotImplementedError(f"{self.name}: {self.tools_unsupported}")  # check_tools refuses it first

    def describe(self) -> dict:
        """What run.json records about the model: path, revision, dtype, device, options (a secret's
        value never: `ihbench.dataset.redaction`)."""
        return redact({"loader": self.name, "model_path": self.model_path, **self.options})


def resolve_model_path(model_path: str, *, revision: Optional[str] = None) -> str:
    """A local directory, or a hub id (only the local cache when HF_HUB_OFFLINE=1); a missing
    path fails at once, naming it."""
    import errno
    import os
    import re
    from pathlib import Path

    path = expand_home(model_path)
    if path.exists():
        if revision is not None:  # it would be recorded in run.json as if it had chosen the weights
            raise UsageError(f"--option revision={revision}: a revision picks a Hub model's branch, tag or commit, "
                             f"and {model_path} is a local folder; leave the option out, or give the Hub id")
        if not path.is_dir():
            raise ModelNotFoundError(f"{model_path}: expected a model directory, got a file")
        check_model_folder(path)
        return str(path.resolve())
    if path.is_symlink():  # a link to nothing, or links that point at each other: said as what they are
        try:
            path.resolve(strict=True)
        except RuntimeError:  # pathlib's "Symlink loop from ..." (Python < 3.13)
            raise ModelNotFoundError(f"{model_path}: a symlink loop: its links point at each other") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise ModelNotFoundError(f"{model_path}: a symlink loop: its links point at each other") from None
            raise ModelNotFoundError(f"{model_path}: a symlink to {os.readlink(path)}, which does not exist") from None
    if model_path.startswith((".", "/", "~")) or not re.fullmatch(r"[\w.-]+/[\w.-]+", model_path):
        raise ModelNotFoundError(f"{model_path}: no such model directory")
    from huggingface_hub import snapshot_download

    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    try:
        # offline: only the local cache, so a missing model fails at once instead of after DNS waits
        return snapshot_download(model_path, revision=revision, local_files_only=offline)
    except Exception as error:
        hint = "HF_HUB_OFFLINE is set and it is not in the local cache" if offline else \
            "could not download it from the hub"
        raise ModelNotFoundError(f"{model_path}: {hint} ({type(error).__name__}: {error})") from None
