"""What every transformers-backed loader shares: device and dtype choice, seeding, greedy or
sampled generation, left-padded batches, decoding only the new tokens, and a tool-using chat
(ConversationBench) for a family whose chat template takes tools. Families subclass it and say
how a conversation becomes processor inputs."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, ClassVar, Optional, Sequence

import numpy as np
from ihbench.dataset.argtypes import ArgType, choice, count, device as device_type
from ihbench.dataset.audio_format import SAMPLING_RATE
from ihbench.dataset.errors import IHBenchError, UsageError

from .base import GenerationConfig, InputTurn, Loader, ModelFolderError, ModelInput, Response, resolve_model_path
from .chat import ChatReply, assistant_turns, template_messages
from .checkpoint_checks import (check_feature_extractor_files, check_feature_rate, check_feature_size,
                                check_generation_config, check_is_processor, check_sliding_window, check_token_ids_known)
from .failures import (EmptyReplyError, NonFiniteScoresError, describe_failure, empty_after_thinking, invisible_only,
                       is_item_failure, no_text)
from .limits import AudioTooLongError, check_clips, check_context
from .turn_end import check_turn_end

DTYPES = ("float32", "float16", "bfloat16")


class DeviceMap(ArgType):
    """How accelerate spreads a model too big for one GPU (`device_map` of `from_pretrained`)."""

    choices = ("auto", "balanced", "balanced_low_0", "sequential")
    expected = "one of auto, balanced, balanced_low_0, sequential"

    def convert(self, value: Any) -> str:
        if not isinstance(value, str) or value.strip() not in self.choices:
            raise self.refuse(value)
        return value.strip()


#: off inside `TransformersLoader.without_weights`: everything is loaded but the model
_WITH_WEIGHTS: ContextVar[bool] = ContextVar("ihbench_loader_with_weights", default=True)


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if index >= count:
            have = f"{count} CUDA device(s)" if count else \
                f"no CUDA device (torch {torch.__version__}{'' if torch.version.cuda else ', built without CUDA'})"
            raise UsageError(f"--option device: {device} is not available here: {have}; use cpu or auto")
    elif device == "mps" and not torch.backends.mps.is_available():
        raise UsageError("--option device: mps is not available here (no Apple GPU, or torch without MPS); use cpu "
                         "or auto")
    return device


def resolve_dtype(dtype: str, device: str):
    """bfloat16 on GPUs (what the checkpoints ship in), float32 on CPU (bfloat16 matmuls are slow there)."""
    import torch

    if dtype == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    if dtype not in DTYPES:
        raise UsageError(f"dtype: expected auto or one of {', '.join(DTYPES)}, got {dtype!r}")
    return getattr(torch, dtype)


def sampling_options(config: GenerationConfig) -> dict:
    """Greedy at temperature 0; sampling knobs only when sampling, so transformers does not warn."""
    if config.temperature == 0:
        return {"do_sample": False, "max_new_tokens": config.max_new_tokens}
    return {"do_sample": True, "temperature": config.temperature, "top_p": config.top_p,
            "max_new_tokens": config.max_new_tokens}


def checked_pretrained(model_class, path: str, **options):
    """`model_class.from_pretrained(path, **options)`, refused in one line naming the folder when the
    weights do not cover the model: a tensor missing or of another shape would be filled with random
    values by transformers (a damaged file, or a checkpoint of another architecture) and every answer
    scored; one left unused means config.json describes a smaller model than the weights hold."""
    import torch

    _check_config_fits_weights(model_class, path)
    try:
        with _without_load_report():
            model, info = model_class.from_pretrained(path, output_loading_info=True, **options)
    except (MemoryError, torch.OutOfMemoryError):  # the machine's limit, not the folder's
        raise
    except ImportError as error:  # a quantized checkpoint's library (bitsandbytes) not installed: battery 48, U6
        if not _quantized(path):  # an optional extra of ours: said by the command line as such
            raise
        raise ModelFolderError(f"{path}: config.json's quantization_config needs a library that is not installed "
                               f"({first_line(error)})") from None
    except (RuntimeError, ValueError, AssertionError, TypeError, KeyError, IndexError, ZeroDivisionError,
            AttributeError) as error:  # ZeroDivisionError: num_attention_heads 0 (battery 44, Q3)
        # config.json and the weights disagree (a size edited, a vocabulary of another model): transformers
        # printed a traceback ending "look at the above report!" with no report shown (battery 43, N10)
        raise ModelFolderError(f"{path}: transformers cannot build {model_class.__name__} from this "
                               f"folder's config.json and weights ({first_line(error)}); the checkpoint is "
                               "damaged, edited, or of another model") from None
    missing, mismatched = info.get("missing_keys") or [], info.get("mismatched_keys") or []
    if missing or mismatched:
        example = sorted(missing)[0] if missing else str(mismatched[0])
        raise ModelFolderError(
            f"{path}: the weights do not fit {model_class.__name__} ({len(missing)} tensor(s) missing, "
            f"{len(mismatched)} of another shape, e.g. {example}); the checkpoint is damaged or of another "
            "model, and transformers would fill them with random values")
    # Tensors a checkpoint carries on purpose for parts this class leaves out (the Omni talker, Gemma 3n's
    # vision tower) are named by the class's own `_keys_to_ignore_on_load_unexpected`, which transformers has
    # already taken out of this list: what is left is weights the model was built too small for (a layer
    # count edited down, battery 44, Q6), and it would answer without them.
    unused = info.get("unexpected_keys") or []
    if unused:
        raise ModelFolderError(
            f"{path}: {len(unused)} tensor(s) in the weights have no place in {model_class.__name__} as "
            f"config.json describes it (e.g. {sorted(unused)[0]}); config.json asks for a smaller model than "
            "the weights hold (edited, or of another checkpoint), and the model would answer without them")
    return model


#: how much larger than its weights a model config.json describes may be before it is refused unbuilt
#: (tied or left-out tensors make a model somewhat larger than what its file holds; never twice)
_LARGER_THAN_WEIGHTS = 2
_SMALL_MODEL = 10_000_000


def _check_config_fits_weights(model_class, path) -> None:
    """config.json describing a far larger model than the weights hold (a sub-config set to null, so
    transformers' full-size defaults; a size edited up) was built whole before the weights were found not
    to fit: 22 GB, and the kernel's OOM killer ended `run` without a word (battery 50, W9). The model is
    counted on the meta device, which allocates nothing (a 12-billion-parameter one in a tenth of a second)."""
    import torch
    from safetensors import safe_open
    from transformers import AutoConfig

    files = sorted(Path(path).glob("*.safetensors"))
    if not files or _quantized(path):  # packed quantized weights hold fewer numbers than parameters
        return
    held = 0
    try:
        for file in files:
            with safe_open(str(file), "pt") as weights:
                held += sum(int(np.prod(weights.get_slice(name).get_shape())) for name in weights.keys())
    except Exception:  # noqa: BLE001 (a damaged file: the load names it)
        return
    try:
        config = AutoConfig.from_pretrained(path)
        build = getattr(model_class, "from_config", None) or model_class._from_config
        with torch.device("meta"):
            wanted = sum(parameter.numel() for parameter in build(config).parameters())
    except Exception:  # noqa: BLE001 (what the load itself then says, in one line)
        return
    if wanted > _LARGER_THAN_WEIGHTS * held + _SMALL_MODEL:
        raise ModelFolderError(
            f"{Path(path) / 'config.json'}: describes a model of {wanted:,} parameters and the weights hold "
            f"{held:,}; config.json was edited (a part set to null takes transformers' full-size defaults) or "
            "is of another checkpoint, and loading would build the larger model")


def _quantized(path) -> bool:
    import json

    try:
        return "quantization_config" in json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False


def _finite_logits(output) -> bool:
    """A forward pass's logits hold only numbers (True when it returned none to look at)."""
    import torch

    logits = getattr(output, "logits", None)
    return not isinstance(logits, torch.Tensor) or bool(torch.isfinite(logits).all())


@contextmanager
def scores_watched(model):
    """Generation inside it that met logits which are not numbers (NaN weights, rope_theta 0, an
    overflow in half precision) raises `NonFiniteScoresError` once it ends: what was generated is one
    token repeated, never an answer. Shared by the audio loaders and the local text judge."""
    finite: list[bool] = []  # each forward pass's: its logits hold only numbers
    scored = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft's
    watch = scored.register_forward_hook(lambda module, args, output: finite.append(_finite_logits(output)))
    try:
        yield
    finally:
        watch.remove()
    if not all(finite):
        raise NonFiniteScoresError("the model's scores were not numbers (NaN or infinite logits) as it answered; "
                                   "what it generated is not an answer")


@contextmanager
def _without_load_report():
    """transformers' table of missing, unused and mis-shaped tensors (a warning of 20 lines and more)
    is left out: `checked_pretrained` refuses each of those cases in one line of its own."""
    import logging

    def keep(record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in str(record.msg)

    logger = logging.getLogger("transformers.modeling_utils")
    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


class TransformersLoader(Loader):
    """A transformers model + processor; subclasses load them and build the prompt."""

    runs_via = "transformers"
    requires = ("torch", "transformers")
    #: the longest clip the family's processor takes whole (None: no per-clip cap). A longer clip
    #: is an error on that item, never a silent cut; tests check it against the processor.
    max_clip_seconds: Optional[float] = None
    option_types = {"batch_size": count(), "device": device_type(), "device_map": DeviceMap(),
                    "dtype": choice(("auto", *DTYPES))}

    def __init__(self, model_path: str, *, device: str = "auto", dtype: str = "auto",
                 revision: Optional[str] = None, batch_size: int = 1, device_map: Optional[str] = None,
                 **options: Any):
        checked = self.check_options({"batch_size": batch_size, "device": device, "device_map": device_map,
                                      "dtype": dtype})
        device, self.device_map = checked["device"], checked["device_map"]
        spread = {"device_map": self.device_map} if self.device_map else {}
        super().__init__(model_path, device=device, dtype=dtype, revision=revision, **spread, **options)
        self.path = resolve_model_path(model_path, revision=revision)  # before any slow import
        self.check_model_type()
        self._checked_config()
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.processor = self._checked_processor()
        self.processor.tokenizer.padding_side = "left"  # a batch's prompts must end where generation starts
        self.model = None  # the generation config read from its files: checked before the weights load
        if _WITH_WEIGHTS.get():
            check_turn_end(self)  # doctor reports it as its own check
            self.model = self._loaded_model()
        if self.model is not None:
            self._answers_a_probe()

    @classmethod
    def without_weights(cls, model_path: str, **options: Any) -> "TransformersLoader":
        """The loader with its config, tokenizer, processor and chat template but no model: what
        `ihbench doctor` checks in seconds on a CPU, before GPU hours are spent on the weights."""
        token = _WITH_WEIGHTS.set(False)
        try:
            return cls(model_path, **options)
        finally:
            _WITH_WEIGHTS.reset(token)

    def _loaded_model(self):
        """The model on its device, or spread over the GPUs by `device_map` (accelerate places the
        layers; the inputs then go where its first layer is)."""
        model = self.load_model()
        if self.device_map is None:
            model = model.to(self.device)
        else:
            self.device = str(next(model.parameters()).device)
        self.adjust_generation(model.generation_config)
        return model.eval()

    def _answers_a_probe(self) -> None:
        """One token for a one-second clip, before any item: files that each read well can still disagree
        with one another (a processor's feature size edited against the audio encoder, a chat template that
        fails), which otherwise ended the first item in a traceback and left a run folder behind. Item
        failures (an empty one-token answer) are answers here; only an error that every item would meet
        refuses the checkpoint, and so do scores that are not numbers (`_new_tokens` watches them). --traceback
        shows where it arose."""
        clip = (0.1 * np.sin(2 * np.pi * 440 * np.arange(SAMPLING_RATE) / SAMPLING_RATE)).astype(np.float32)
        user = InputTurn("user", audio=clip) if "audio" in self.modalities else InputTurn("user", text="Hello.")
        probe = ModelInput("load probe", "audio" if user.audio is not None else "text",
                           [InputTurn("system", text="You are a helpful assistant."), user])
        try:
            self._generate(probe, GenerationConfig(max_new_tokens=1), seed=0)
        except AudioTooLongError:  # a context too short for a greeting: no item could fit
            raise ModelFolderError(f"{self.path}: the model's context of {self.context_tokens()} tokens cannot hold "
                                   "a one-second probe and a token of answer: config.json's max_position_embeddings "
                                   "is edited or not this model's") from None
        except NonFiniteScoresError:  # NaN weights, rope_theta 0: no item could be answered
            raise ModelFolderError(f"{self.path}: the model's scores for a one-second probe are not numbers (NaN or "
                                   "infinite logits): its weights or config.json (rope_theta, rms_norm_eps) are "
                                   "damaged or edited, and every answer would be one token repeated") from None
        except Exception as error:
            if not is_item_failure(error):
                raise ModelFolderError(f"{self.path}: the model fails on a one-second probe before any item "
                                       f"({first_line(error)}): its files disagree with one another (edited, or "
                                       "from different checkpoints), or this is a bug: the command line's "
                                       "--traceback shows where") \
                    from error

    def adjust_generation(self, generation) -> None:
        """Fix the checkpoint's generation config where the family needs it (the Omni end token)."""

    @property
    def generation_config(self):
        """The generation config `generate` starts from: the model's, or without weights the
        checkpoint's generation_config.json (its config.json's when there is none), adjusted alike."""
        if self.model is not None:
            return self.model.generation_config
        if not hasattr(self, "_generation_config"):
            from transformers import AutoConfig, GenerationConfig as HFGenerationConfig

            try:
                generation = HFGenerationConfig.from_pretrained(self.path)
            except OSError:
                generation = HFGenerationConfig.from_model_config(AutoConfig.from_pretrained(self.path))
            self.adjust_generation(generation)
            self._generation_config = generation
        return self._generation_config

    def effective_generation(self, config: GenerationConfig) -> dict:
        """What `generate` runs with: the checkpoint's generation config with ours applied over it, as
        transformers merges them (a repetition penalty or top-k of the checkpoint's stays in force
        unless ours replaces it). Sampling knobs are left out when decoding is greedy: transformers
        ignores them then."""
        import copy

        generation = copy.deepcopy(self.generation_config)
        generation.update(**sampling_options(config))
        keys = ("do_sample", "max_new_tokens", "num_beams", "temperature", "top_p", "top_k", "min_p", "typical_p",
                "repetition_penalty", "no_repeat_ngram_size", "length_penalty", "eos_token_id", "pad_token_id",
                "bos_token_id")
        settings = {key: getattr(generation, key, None) for key in keys}
        settings.update({key: value for key, value in generation.to_diff_dict().items()
                         if key not in ("transformers_version", "_from_model_config")})
        if not settings.get("do_sample"):
            for key in ("temperature", "top_p", "top_k", "min_p", "typical_p"):
                settings.pop(key, None)
        return {key: value for key, value in sorted(settings.items()) if value is not None}

    #: the checkpoint `model_type`s this family loads (empty: the family checks it itself, as Gemma 4)
    model_types: tuple[str, ...] = ()
    #: what to do when a checkpoint has one of these other `model_type`s (an old format, say)
    model_type_hints: ClassVar[dict] = {}

    def check_model_type(self) -> None:
        """A checkpoint of another family is refused by its config.json, in one line, before
        transformers meets it with an AttributeError or an import of a vision package."""
        self.check_format(self.path)

    @classmethod
    def check_format(cls, path: str) -> str:
        """The checkpoint's model_type, when it is one this family loads; otherwise a ModelFolderError
        naming config.json, what was expected, and what to do (an old format: which revision)."""
        import json

        config = Path(path) / "config.json"
        try:
            model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            raise ModelFolderError(f"{config}: not a readable JSON object") from None
        if cls.model_types and model_type not in cls.model_types:
            hint = cls.model_type_hints.get(model_type) or "`ihbench models` lists the families"
            raise ModelFolderError(f"{config}: model_type {model_type!r} is not a {cls.name} checkpoint (expected "
                                   f"{' or '.join(cls.model_types)}); {hint}")
        return model_type

    def _checked_config(self) -> None:
        """config.json as transformers reads it, or one line naming it: a value its config class refuses
        (num_hidden_layers that disagrees with layer_types) surfaced as two chained tracebacks from the
        processor, in `run` and in `doctor` (battery 43, N11)."""
        from huggingface_hub.errors import StrictDataclassError  # a config class's validators: no ValueError

        try:
            config = self._read_config()
        except (StrictDataclassError, ValueError, TypeError, KeyError, AssertionError, AttributeError) as error:
            # AttributeError: a dtype torch has not ("float99"), looked up by name (battery 44, Q4)
            raise ModelFolderError(f"{Path(self.path) / 'config.json'}: transformers cannot read it as a "
                                   f"{self.name} config ({first_line(error)})") from None
        check_sliding_window(Path(self.path) / "config.json", config)
        generation = Path(self.path) / "generation_config.json"
        if generation.is_file():  # its values are checked when the model loads, and were blamed on config.json
            from transformers import GenerationConfig as HFGenerationConfig

            from transformers.utils import logging as transformers_logging

            level = transformers_logging.get_verbosity()
            transformers_logging.set_verbosity_error()  # "flags are not valid, may be ignored": said below in one line
            try:
                read = HFGenerationConfig.from_pretrained(self.path)
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                raise ModelFolderError(f"{generation}: transformers cannot read it as a generation config "
                                       f"({first_line(error)})") from None
            finally:
                transformers_logging.set_verbosity(level)
            check_generation_config(generation, read)
            self._generation_read = read  # its token ids are checked against the tokenizer once loaded

    def _refuse_unknown_audio_token(self, token: str, tokenizer) -> None:
        """A processor file that sets an audio token the tokenizer lacks is that file's edit, not damaged
        tokenizer files (battery 58, E3): name it, and the token config.json's id says is meant."""
        named = self._file_naming_audio_token(token)
        meant = next((f"; config.json's {key} {given} is {tokenizer.convert_ids_to_tokens(given)} (edited: restore it)"
                      for key, given in self._config_audio_token_ids()
                      if 0 <= given < len(tokenizer)
                      and tokenizer.convert_ids_to_tokens(given) in tokenizer.all_special_tokens), "")
        if named is None or not meant:  # the tokenizer lost the token the model's config names: its files are the fault
            raise ModelFolderError(f"{self.path}: the tokenizer has no {token} token, which the processor puts in "
                                   "every audio prompt; its tokenizer files are missing or of another model")
        raise ModelFolderError(f"{named}: audio_token is {token}, which the tokenizer does not have; the processor "
                               f"puts it in every audio prompt{meant}")

    def _config_audio_token_ids(self) -> list:
        """(key, id) of each audio token id config.json gives, at the top or in thinker_config."""
        import json

        config = json.loads((Path(self.path) / "config.json").read_text(encoding="utf-8"))
        found = []
        for where, values in (("", config), ("thinker_config.", config.get("thinker_config") or {})):
            for key in ("audio_token_index", "audio_token_id"):
                given = values.get(key) if isinstance(values, dict) else None
                if isinstance(given, int) and not isinstance(given, bool):
                    found.append((where + key, given))
        return found

    def _check_audio_token_id(self, token: str, token_id: int, tokenizer) -> None:
        """The model finds a prompt's audio by the id config.json gives its audio token; one that is not
        the tokenizer's id for it found no audio, and the first item ended in an 89-line traceback inside
        transformers (battery 44, Q5). Read where each family keeps it: at the top, or in thinker_config.
        When a processor file names the audio token and config.json's id is another special token's, that
        file was edited, and is the one named (battery 56, C13: config.json was blamed)."""
        for key, given in self._config_audio_token_ids():
            if given != token_id:
                named = self._file_naming_audio_token(token)
                meant = tokenizer.convert_ids_to_tokens(given) if 0 <= given < len(tokenizer) else None
                if named is not None and meant in tokenizer.all_special_tokens:
                    raise ModelFolderError(f"{named}: audio_token is {token} ({token_id}), but config.json's "
                                           f"{key} {given} is {meant}; the model would find no audio in a "
                                           f"prompt (edited: restore {meant})")
                raise ModelFolderError(f"{Path(self.path) / 'config.json'}: {key} is {given}, but the "
                                       f"tokenizer's {token} is {token_id}; the model would find no audio in a "
                                       "prompt (config and tokenizer of different checkpoints, or edited)")

    def _file_naming_audio_token(self, token: str) -> Optional[Path]:
        """The processor file that sets the processor's audio token to `token`, if one does."""
        import json

        for name in ("processor_config.json", "tokenizer_config.json", "preprocessor_config.json"):
            file = Path(self.path) / name
            try:
                values = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(values, dict) and values.get("audio_token") == token:
                return file
        return None

    def _checked_processor(self):
        """The family's processor, or one line naming the folder: tokenizer files that are missing,
        garbage or of another model otherwise surface as a traceback at load, or as an audio-token
        mismatch on every item."""
        import json

        check_feature_extractor_files(Path(self.path))
        try:
            processor = self.load_processor()
        except IHBenchError:  # the family said what is wrong (Gemma 4: another architecture's checkpoint)
            raise
        except (OSError, ValueError, TypeError, KeyError, IndexError, AssertionError, json.JSONDecodeError) as error:
            # AssertionError, IndexError: a tokenizer file's own checks (Voxtral's tekken.json with no vocab,
            # battery 48, U9)
            raise ModelFolderError(f"{self.path}: the processor or tokenizer cannot be loaded "
                                   f"({type(error).__name__}: {str(error).splitlines()[0][:200]})") from None
        check_is_processor(Path(self.path), processor)
        tokenizer = getattr(processor, "tokenizer", None)
        token = getattr(processor, "audio_token", None)
        if tokenizer is not None and isinstance(token, str) and token not in tokenizer.get_vocab():
            self._refuse_unknown_audio_token(token, tokenizer)
        if tokenizer is not None and isinstance(token, str):
            self._check_audio_token_id(token, tokenizer.convert_tokens_to_ids(token), tokenizer)
        if tokenizer is not None and getattr(self, "_generation_read", None) is not None:
            check_token_ids_known(Path(self.path) / "generation_config.json", self._generation_read, len(tokenizer))
        check_feature_rate(Path(self.path), processor, SAMPLING_RATE)
        check_feature_size(Path(self.path), processor)
        return processor

    # -- what a family provides ---------------------------------------------------------------
    def load_processor(self):
        from transformers import AutoProcessor

        return AutoProcessor.from_pretrained(self.path)

    def load_model(self):
        raise NotImplementedError

    def pretrained(self, model_class):
        """`model_class` from the checkpoint on this loader's dtype and devices (`checked_pretrained`)."""
        spread = {"device_map": self.device_map} if self.device_map else {}
        return checked_pretrained(model_class, self.path, dtype=self.dtype, **spread)

    def prompt(self, conversation: ModelInput) -> str:
        raise NotImplementedError

    def model_for(self, audio: bool):
        """The module that generates; a family may switch adapters by modality here."""
        return self.model

    def template_options(self) -> dict:
        """Keyword arguments the family's chat template reads (Qwen3's `enable_thinking`)."""
        return {}

    def rendered(self, messages: list[dict], tools: Optional[list[dict]] = None) -> str:
        """`messages` through the checkpoint's own chat template, ending with the generation prompt."""
        options = {"tools": tools} if tools else {}
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **options,
                                                  **self.template_options())

    def audio_placeholders(self, prompt: str) -> int:
        """How many clips a rendered prompt makes room for (one audio token each, before the processor
        expands it)."""
        return prompt.count(self.processor.audio_token)

    def text_ids(self, text: str) -> list[int]:
        """The ids of rendered template text, its special tokens read as such."""
        return self.processor.tokenizer(text, add_special_tokens=False)["input_ids"]

    def checked_prompt(self, text: str, clips: int, token: str) -> str:
        """`text` when the chat template wrote one audio `token` per clip: otherwise clips and
        placeholders would pair up wrongly inside the processor, silently."""
        if text.count(token) != clips:
            raise UsageError(f"the chat template wrote {text.count(token)} {token} for {clips} clip(s)")
        return text

    def thinking_effect(self) -> Optional[str]:
        """What the checkpoint's chat template does with the family's thinking switch (`enable_thinking`):
        None when the family has none; "on" or "off" when the template changes the prompt with it;
        `THINKING_IGNORED` when it renders the same prompt either way, so the checkpoint thinks or not
        as it was trained, whatever the option says (recorded so, never as the option's value)."""
        options = self.template_options()
        if "enable_thinking" not in options:
            return None
        if not hasattr(self, "_thinking_effect"):
            on, off = (self.processor.apply_chat_template(PROBE_MESSAGES, add_generation_prompt=True, tokenize=False,
                                                          enable_thinking=flag) for flag in (True, False))
            self._thinking_effect = THINKING_IGNORED if on == off else "switched"
        if self._thinking_effect == THINKING_IGNORED:
            return THINKING_IGNORED
        return "on" if options["enable_thinking"] else "off"

    def thinks(self) -> bool:
        effect = self.thinking_effect()
        return effect == "on" or (effect == THINKING_IGNORED and bool(self.template_options()["enable_thinking"]))

    def split_reasoning(self, raw: str) -> tuple[str, Optional[str]]:
        """(what the agent says, its reasoning) from the decoded text with special tokens kept.
        Families with a thinking mode override this (see `loaders.reasoning`)."""
        return raw, None

    def model_config(self):
        """The config of the model that generates (loaded, or read from the checkpoint without weights)."""
        if self.model is not None:
            return self.model.config
        return self._read_config()

    def _read_config(self):
        from transformers import AutoConfig
        from transformers.utils import logging as transformers_logging

        level = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # its notes on the sub-configs of a whole Omni checkpoint
        try:
            return AutoConfig.from_pretrained(self.path)
        finally:
            transformers_logging.set_verbosity(level)

    def context_tokens(self) -> Optional[int]:
        """How many tokens the model's positions cover (None: not stated in its config)."""
        config = self.model_config()
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        return getattr(text, "max_position_embeddings", None)

    def fits(self, conversation: ModelInput, config: GenerationConfig) -> bool:
        """Every clip within the processor's per-clip cap, and the prompt with `config`'s answer within
        the context, counted with the processor itself (what `_run` checks, without raising)."""
        rate = conversation.sampling_rate
        if self.max_clip_seconds is not None and \
                any(len(clip) / rate > self.max_clip_seconds + 1e-6 for clip in conversation.audio_clips):
            return False
        context = self.context_tokens()
        if context is None:
            return True
        return self.inputs([conversation])["input_ids"].shape[1] + config.max_new_tokens <= context

    def knows_limits(self) -> bool:
        return True

    # -- shared -------------------------------------------------------------------------------
    @property
    def sampling_rate(self) -> int:
        extractor = getattr(self.processor, "feature_extractor", None) or self.processor.audio_processor
        return int(extractor.sampling_rate)

    def clips(self, conversation: ModelInput) -> list[np.ndarray]:
        """Our clips at the feature extractor's rate (both are 16 kHz for the shipped families)."""
        from ihbench.dataset.audio import resample

        return [resample(clip, conversation.sampling_rate, self.sampling_rate) for clip in conversation.audio_clips]

    def inputs(self, conversations: Sequence[ModelInput]):
        """Tokenised prompts (left-padded) and, only when there is audio, the audio features."""
        texts = [self.prompt(c) for c in conversations]
        for conversation in conversations:
            check_clips(conversation, self.name, self.max_clip_seconds)
        return self.encode(texts, [clip for c in conversations for clip in self.clips(c)])

    def encode(self, texts: list[str], clips: list[np.ndarray]):
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True}
        if clips:
            kwargs.update(audio=clips, sampling_rate=self.sampling_rate)
        return self.processor(**kwargs).to(self.device)

    def _run(self, conversations: Sequence[ModelInput], config: GenerationConfig, seed: int) -> list[Response]:
        started = time.perf_counter()
        inputs = self.inputs(conversations)
        check_context(inputs["input_ids"].shape[1], config.max_new_tokens, self.context_tokens(), self.name,
                      conversations[0].item_id if len(conversations) == 1 else "",
                      max(len(c.audio_clips) for c in conversations))
        output = self._new_tokens(inputs, config, seed, self.model_for(any(c.audio_clips for c in conversations)))
        latency = (time.perf_counter() - started) / len(conversations)
        return [self._response(inputs["attention_mask"][row], output[row], latency, config)
                for row in range(len(conversations))]

    def _new_tokens(self, inputs, config: GenerationConfig, seed: int, model):
        """What `model` generates after each prompt of `inputs`, greedy or sampled (seeded)."""
        import torch

        features = {k: (v.to(self.dtype) if torch.is_floating_point(v) else v) for k, v in inputs.items()}
        torch.manual_seed(seed)
        # NonFiniteScoresError on a batch: it is retried one conversation at a time, so only the bad one fails
        with scores_watched(self.model), torch.inference_mode():
            output = model.generate(**features, **sampling_options(config))
        return output[:, inputs["input_ids"].shape[1]:]

    def _response(self, attention_mask, new_tokens, latency: float, config: GenerationConfig) -> Response:
        """The answer; one that is empty once special tokens are removed (`failures.no_text`) is an item
        error, never an empty answer for the judges: `EmptyAfterThinkingError` after a thought (the
        record keeps the reasoning), `EmptyReplyError` otherwise."""
        generated, raw = self._decoded(new_tokens)
        text, reasoning = self.split_reasoning(raw)
        spoken = self.spoken(text)
        response = Response(text=spoken, latency_s=latency, input_tokens=int(attention_mask.sum()),
                            output_tokens=len(generated), reasoning=reasoning)
        if no_text(spoken):  # only special tokens (or invisible characters): no answer, an item failure
            ended = bool(generated) and generated[-1] in self.end_tokens()
            response.text = None
            response.error = describe_failure(
                empty_after_thinking(len(generated), config.max_new_tokens, ended) if reasoning is not None else
                EmptyReplyError(f"the model's answer has no text once its special tokens are removed ({len(generated)} "
                                f"token(s) generated){invisible_only(spoken)}"))
        return response

    def _decoded(self, new_tokens) -> tuple[list[int], str]:
        """The tokens up to the end token and their text, special tokens kept (reasoning markers and
        tool-call markers are special tokens in some families)."""
        generated = self._until_end(new_tokens.tolist())
        return generated, self.processor.tokenizer.decode(generated, skip_special_tokens=False)

    def spoken(self, text: str) -> str:
        """`text` without the special tokens skip_special_tokens would have dropped."""
        for special in self.processor.tokenizer.all_special_tokens:
            text = text.replace(special, "")
        return text.strip()

    def end_tokens(self) -> set[int]:
        """The ids generation stops at (the generation config's, after the family's fixes)."""
        ends = self.generation_config.eos_token_id
        return set(ends if isinstance(ends, list) else [ends] if ends is not None else [])

    def _until_end(self, tokens: list[int]) -> list[int]:
        """Up to and including the first end token: a batch's shorter answers are padded after it."""
        ends = self.end_tokens()
        for index, token in enumerate(tokens):
            if token in ends:
                return tokens[:index + 1]
        return tokens

    def _generate(self, conversation: ModelInput, config: GenerationConfig, seed: int) -> Response:
        return self._run([conversation], config, seed)[0]

    # -- tool-using chat (ConversationBench) --------------------------------------------------
    #: the family's tool-call format, a `loaders.tool_calls` function (set with `tools_unsupported = None`)
    parse_tool_calls: ClassVar[Optional[Callable]] = None

    def chat_prompt(self, messages: list[dict], tools: list[dict]) -> str:
        """A tool conversation's prompt: the OpenAI-shaped history through the checkpoint's own chat
        template with `tools`, audio parts where the family's `prompt()` puts them."""
        clips = sum(1 for message in messages if message.get("audio") is not None)
        return self.checked_prompt(self.rendered(template_messages(messages), tools), clips, self.processor.audio_token)

    def chat_inputs(self, messages: list[dict], tools: list[dict], audio: ModelInput):
        """Processor inputs of one tool conversation; `audio` holds its user clips, in order."""
        check_clips(audio, self.name, self.max_clip_seconds)
        return self.encode([self.chat_prompt(messages, tools)], self.clips(audio))

    def check_tools(self) -> None:
        """Beyond the family's word: the checkpoint's own template must write the tools into the
        prompt. One whose template ignores `tools` would otherwise run the whole benchmark without
        them, its missing calls scored as the model's."""
        super().check_tools()
        refused = f"--model {self.name}: cannot run a tool-using conversation: the chat template of {self.path}"
        try:
            prompt = self.chat_prompt(PROBE_MESSAGES, [PROBE_TOOL])
        except Exception as error:  # a template that breaks on tools: the user's checkpoint, not our bug
            raise UsageError(f"{refused} fails on a conversation with tools ({type(error).__name__}: {error})") \
                from None
        if PROBE_TOOL["function"]["name"] not in prompt:
            raise UsageError(f"{refused} ignores `tools` (a probe tool's name never reached the prompt); use a "
                             "checkpoint whose template renders tools, or serve it with a tool template behind "
                             "vLLM and use --model openai")

    def _chat(self, messages: list[dict], tools: list[dict], config: GenerationConfig, seed: int) -> ChatReply:
        started = time.perf_counter()
        audio = chat_audio(messages)
        inputs = self.chat_inputs(messages, tools, audio)
        check_context(inputs["input_ids"].shape[1], config.max_new_tokens, self.context_tokens(), self.name,
                      audio_clips=len(audio.audio_clips))
        new_tokens = self._new_tokens(inputs, config, seed, self.model_for(bool(audio.audio_clips)))[0]
        generated, raw = self._decoded(new_tokens)
        text, reasoning = self.split_reasoning(raw)
        text, calls = self.parse_tool_calls(text, f"call_{assistant_turns(messages)}")
        return ChatReply(text=self.spoken(text), tool_calls=calls, latency_s=time.perf_counter() - started,
                         input_tokens=int(inputs["attention_mask"][0].sum()), output_tokens=len(generated),
                         reasoning=reasoning)

    def generate_batch(self, conversations: Sequence[ModelInput], config: GenerationConfig,
                       seeds: Sequence[int], stop: Optional[threading.Event] = None) -> list[Optional[Response]]:
        """One left-padded `generate` per batch: sampling is seeded by the batch's first seed and
        each response's latency is an equal share of the batch's. If the batch fails, each
        conversation is retried alone so only the bad one records an error."""
        if len(conversations) <= 1 or len({c.modality for c in conversations}) > 1:
            return super().generate_batch(conversations, config, seeds, stop)
        try:
            return self._run(conversations, config, seeds[0])
        except Exception as error:
            if not is_item_failure(error):
                raise
            return super().generate_batch(conversations, config, seeds, stop)

    def describe(self) -> dict:
        described = {**super().describe(), "resolved_path": self.path, "device": self.device,
                     "dtype": str(self.dtype).removeprefix("torch."), "batch_size": self.batch_size}
        if self.device_map and self.model is not None:  # where the layers went, not only that it was asked
            described["devices"] = sorted({str(parameter.device) for parameter in self.model.parameters()})
        effect = self.thinking_effect()
        if effect is not None:  # beside the option as given: what the checkpoint's template made of it
            described["thinking_effective"] = effect
        return described


#: what `check_tools` renders: one tool whose name no template writes unless it renders the tools
PROBE_TOOL = {"type": "function", "function": {
    "name": "ihbench_probe_tool", "description": "Checks that the chat template renders tools.",
    "parameters": {"type": "object", "properties": {"code": {"type": "string", "description": "Any code."}},
                   "required": ["code"]}}}
PROBE_MESSAGES = [{"role": "system", "content": "You are a phone agent."}, {"role": "user", "content": "Hello."}]
#: `thinking_effect` of a checkpoint whose chat template renders the same prompt with thinking on and off
THINKING_IGNORED = "decided by the checkpoint (its chat template ignores enable_thinking)"


def chat_audio(messages: list[dict]) -> ModelInput:
    """The user clips of a chat history, in order, at the toolkit's rate: what `clips` and
    `check_clips` read."""
    from ihbench.dataset.audio import resample

    turns = [InputTurn("user", audio=resample(m["audio"], m.get("sampling_rate", SAMPLING_RATE)))
             for m in messages if m.get("audio") is not None]
    return ModelInput("conversation", "audio" if turns else "text", turns)


def first_line(error: BaseException) -> str:
    """`Type: the first line of its message` (transformers' messages run to pages): of the error it was
    raised from when there is one (a config validator's own words, under "Class validation error");
    transformers' size mismatch, whose words point at a report printed above, said as what it means."""
    error = error.__cause__ or error
    if "ignore_mismatched_sizes" in str(error):
        return "tensors in the weights have other sizes than config.json gives them"
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:200]}" if lines else type(error).__name__
