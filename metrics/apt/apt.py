"""SID-Bench Average Penalty Time (APT), as an `evaluate` metric module."""
import evaluate

from .sid_scoring import CITATION
from .sid_scoring import KWARGS_DESCRIPTION
from .sid_scoring import SidMetric

_CITATION = CITATION

_DESCRIPTION = """\
APT: one number in seconds that charges false alarms, misses and late detections (lower is better). From SID-Bench (semantic interruption detection): each clip is a user utterance
that may or may not contain a real bid for the floor; a detector outputs whether and when it
would interrupt. The module returns FIR, IRL and APT together with the outcome counts; `apt` is
the one this module is named after. Configs: `notebook` (default; the reference notebook's rule,
which reproduces the published numbers) and `readme` (the README's wording of FIR and IRL).
"""

_KWARGS_DESCRIPTION = KWARGS_DESCRIPTION.replace("{name}", "apt")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Apt(SidMetric, evaluate.Metric):
    description = _DESCRIPTION
    citation = _CITATION
    kwargs_description = _KWARGS_DESCRIPTION
