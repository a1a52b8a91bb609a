"""Pluggable parts by name (model loaders, SID detectors, TTS engines), written down once.

A registry knows its names without importing anything and imports a part's module only when that
part is asked for: listing the model families is instant, and a family whose optional dependency
is missing does not break the others. The table is plain data, so the modules it names never
import the registry back to announce themselves (no circle between a contract and its plug-ins).
"""
from __future__ import annotations

import importlib
from typing import Any

from .errors import UnknownNameError


class Registry:
    def __init__(self, kind: str, entries: dict[str, str]):
        """`entries`: name -> "package.module:attribute"."""
        self.kind = kind
        self._entries = dict(entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> Any:
        if name not in self._entries:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}")
        module, _, attribute = self._entries[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
