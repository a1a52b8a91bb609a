"""Model families by name. Each family's module is imported only when it is asked for, so
`ihbench models` is instant and a family whose optional dependency is missing does not break the
others. A new family: a module with a `Loader` subclass whose `name` is its key here."""
from __future__ import annotations

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


def create(name: str, model_path: str, **options):
    """The loader `name` for `model_path`; an option it does not take is named, with the ones it does."""
    cls = get(name)
    accepted = cls.option_names()
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise UsageError(f"--option {unknown[0]}: not an option of the {name} loader; "
                         f"its options: {', '.join(accepted) or 'none'}")
    return cls(model_path, **options)
