"""Putting what users built on the Hub: metric modules, a built dataset, the Space.

Each command stages a self-contained folder first (what `--dry-run` stops at and a test can
inspect), then uploads that folder. The upload is the only step that needs the network.
"""
from .dataset import publish_dataset
from .hub import PublishPlan
from .metrics import publish_metrics, stage_metric
from .space import publish_space, stage_space

__all__ = ["PublishPlan", "publish_dataset", "publish_metrics", "publish_space", "stage_metric", "stage_space"]
