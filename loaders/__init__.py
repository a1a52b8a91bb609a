"""Model loaders: one file per model family, registered by name (see issue 4)."""
from .registry import available, get, register

__all__ = ["available", "get", "register"]
