"""Model loaders: one file per model family, registered by name.

    from ihbench.loaders import create, available
    from ihbench.protocol import build_model_input
    loader = create("qwen2-audio", "path/to/model", dtype="bfloat16")
    response = loader.generate(build_model_input(item, "audio"), GenerationConfig(), seed=0)
"""
from .base import (
    EmptyAudioError,
    GenerationConfig,
    InputTurn,
    Loader,
    ModelFolderError,
    ModelInput,
    ModelNotFoundError,
    Response,
    resolve_model_path,
)
from .registry import LOADERS, available, check_options, create, get

__all__ = [
    "LOADERS",
    "ModelInput",
    "EmptyAudioError",
    "GenerationConfig",
    "Loader",
    "ModelFolderError",
    "ModelNotFoundError",
    "Response",
    "InputTurn",
    "available",
    "check_options",
    "create",
    "get",
    "resolve_model_path",
]
