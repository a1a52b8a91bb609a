"""Name -> loader class registry; families register themselves with `@register("name")`.

Family modules are imported on first lookup, so `import loaders` stays cheap and a family
whose optional dependency is missing does not break the others.
"""
from __future__ import annotations

import importlib
from typing import Callable, TypeVar

from ihbench_dataset.errors import UnknownNameError, UsageError

T = TypeVar("T")
_REGISTRY: dict[str, type] = {}
FAMILY_MODULES = ("qwen2_audio", "phi4_multimodal", "gemma4", "gemma3n", "voxtral", "qwen2_5_omni", "qwen3_omni",
                  "kimi_audio", "openai_compat")


def register(name: str) -> Callable[[T], T]:
    def wrap(cls: T) -> T:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise UsageError(f"loader {name!r} is already registered by {_REGISTRY[name].__name__}")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return wrap


def _import_families() -> None:
    for module in FAMILY_MODULES:
        try:
            importlib.import_module(f"loaders.{module}")
        except ModuleNotFoundError as error:
            if error.name != f"loaders.{module}":
                raise


def available() -> list[str]:
    _import_families()
    return sorted(_REGISTRY)


def get(name: str) -> type:
    _import_families()
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none registered"
        raise UnknownNameError(f"unknown loader {name!r}; available: {known}")
    return _REGISTRY[name]


def create(name: str, model_path: str, **options):
    """The loader `name` for `model_path`; an option it does not take is named, with the ones it does."""
    cls = get(name)
    accepted = cls.option_names()
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise UsageError(f"--option {unknown[0]}: not an option of the {name} loader; "
                         f"its options: {', '.join(accepted) or 'none'}")
    return cls(model_path, **options)
