"""Model families by name. Each family's module is imported only when it is asked for, so
`ihbench models` is instant and a family whose optional dependency is missing does not break the
others. A new family: a module with a `Loader` subclass whose `name` is its key here."""
from __future__ import annotations

from typing import Optional

from ihbench.dataset.errors import UsageError
from ihbench.dataset.registry import Registry

LOADERS = Registry("loader", {
    "qwen2-audio": "ihbench.loaders.qwen2_audio:Qwen2AudioLoader",
    "phi4-multimodal": "ihbench.loaders.phi4_multimodal:Phi4MultimodalLoader",
    "gemma4": "ihbench.loaders.gemma4:Gemma4Loader",
    "gemma3n": "ihbench.loaders.gemma3n:Gemma3nLoader",
    "voxtral": "ihbench.loaders.voxtral:VoxtralLoader",
    "qwen2.5-omni": "ihbench.loaders.qwen2_5_omni:Qwen2_5OmniLoader",
    "qwen3-omni": "ihbench.loaders.qwen3_omni:Qwen3OmniLoader",
    "kimi-audio": "ihbench.loaders.kimi_audio:KimiAudioLoader",
    "openai": "ihbench.loaders.openai_compat:OpenAICompatLoader",
})


def available() -> list[str]:
    return LOADERS.names()


def get(name: str) -> type:
    return LOADERS.get(name)


def check_options(name: str, options: dict, flags: Optional[dict] = None) -> dict:
    """The options of loader `name` checked without loading anything (a command calls this before it
    creates a folder): an option it does not take is named, with the ones it does, and a value its
    option does not allow (`Loader.option_types`) says what it may be. Returns them converted.
    `flags` names the command-line flags that set an option (`--concurrency` for `concurrency`), so
    the message names what the user typed."""
    cls = get(name)
    accepted = cls.option_names()
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        flag = (flags or {}).get(unknown[0], f"--option {unknown[0]}")
        raise UsageError(f"{flag}: not an option of the {name} loader; "
                         f"its options: {', '.join(accepted) or 'none'}")
    try:
        checked = cls.check_options(options)
    except UsageError as error:  # a value set by a flag is named by the flag (`--base-url`, not `--option base_url`)
        for key, flag in (flags or {}).items():
            prefix = f"--option {key}: "
            if str(error).startswith(prefix):
                raise UsageError(f"{flag}: {str(error)[len(prefix):]}") from None
        raise
    cls.check_environment(checked)
    return checked


def create(name: str, model_path: str, **options):
    """The loader `name` for `model_path`, its options checked first (`check_options`)."""
    return get(name)(model_path, **check_options(name, options))
