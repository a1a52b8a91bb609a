"""Name -> loader class registry; families register themselves with `@register("name")`."""
from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")
_REGISTRY: dict[str, type] = {}


def register(name: str) -> Callable[[T], T]:
    def wrap(cls: T) -> T:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"loader {name!r} is already registered by {_REGISTRY[name].__name__}")
        _REGISTRY[name] = cls
        return cls

    return wrap


def available() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> type:
    if name not in _REGISTRY:
        known = ", ".join(available()) or "none registered yet"
        raise KeyError(f"unknown loader {name!r}; available: {known}")
    return _REGISTRY[name]
