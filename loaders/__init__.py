"""Model loaders: one file per model family, registered by name.

    from loaders import create, available, build_conversation
    loader = create("qwen2-audio", "path/to/model", dtype="bfloat16")
    response = loader.generate(build_conversation(item, "audio"), GenerationConfig(), seed=0)
"""
from .base import (
    Conversation,
    EmptyAudioError,
    GenerationConfig,
    Loader,
    ModelFolderError,
    ModelNotFoundError,
    Response,
    Turn,
    build_conversation,
    parse_history_audio,
    resolve_model_path,
)
from .registry import available, create, get, register

__all__ = [
    "Conversation",
    "EmptyAudioError",
    "GenerationConfig",
    "Loader",
    "ModelFolderError",
    "ModelNotFoundError",
    "Response",
    "Turn",
    "available",
    "build_conversation",
    "create",
    "get",
    "parse_history_audio",
    "register",
    "resolve_model_path",
]
