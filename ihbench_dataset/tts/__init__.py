"""Text-to-speech behind one small interface, so other engines can plug in.

`get_engine("piper:joe")` returns an engine; `RenderCache` keeps renders keyed by
(engine, voice, engine version, text) so a rebuild re-synthesises nothing.
"""
from .base import ENGINES, TTSEngine, available_engines, get_engine
from .cache import RenderCache, default_cache_dir

__all__ = ["ENGINES", "TTSEngine", "RenderCache", "available_engines", "default_cache_dir", "get_engine"]
