"""IHBench data: the `EvalItem` contract, readers of the official wide schema, the in-house build.

Heavy libraries (datasets, torchcodec, piper) are imported where they are used, so importing
this package is instant.
"""
from .load import DataSourceError, load_items
from .schema import (
    INTERRUPTION_TYPES,
    AudioClip,
    EvalItem,
    Interrupted,
    Message,
    Rubric,
    Utterance,
    canonical_interruption_type,
    depth_bin,
)
from .wide import SchemaError

__all__ = [
    "INTERRUPTION_TYPES",
    "AudioClip",
    "DataSourceError",
    "EvalItem",
    "Interrupted",
    "Message",
    "Rubric",
    "SchemaError",
    "Utterance",
    "canonical_interruption_type",
    "depth_bin",
    "load_items",
]
