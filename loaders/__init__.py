"""Model loaders: one file per model family, registered by name.

    from loaders import get, available, build_conversation
    loader = get("qwen2-audio")("path/to/model")
    response = loader.generate(build_conversation(item, "audio"), GenerationConfig(), seed=0)
"""
from .base import (
    Conversation,
    EmptyAudioError,
    GenerationConfig,
    Loader,
    ModelNotFoundError,
    Response,
    Turn,
    build_conversation,
    resolve_model_path,
)
from .registry import available, get, register

__all__ = [
    "Conversation",
    "EmptyAudioError",
    "GenerationConfig",
    "Loader",
    "ModelNotFoundError",
    "Response",
    "Turn",
    "available",
    "build_conversation",
    "get",
    "register",
    "resolve_model_path",
]
