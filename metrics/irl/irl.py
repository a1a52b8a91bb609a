"""SID-Bench Interruption Response Latency (IRL), as an `evaluate` metric module."""
import evaluate

from .sid_scoring import CITATION
from .sid_scoring import KWARGS_DESCRIPTION
from .sid_scoring import SidMetric

_CITATION = CITATION

_DESCRIPTION = """\
IRL: how late, in seconds, a detector fires after the true interruption cue (lower is better). From SID-Bench (semantic interruption detection): each clip is a user utterance
that may or may not contain a real bid for the floor; a detector outputs whether and when it
would interrupt. The module returns FIR, IRL and APT together with the outcome counts; `irl` is
the one this module is named after. Configs: `notebook` (default; the reference notebook's rule,
which reproduces the published numbers) and `readme` (the README's wording of FIR and IRL).
"""

_KWARGS_DESCRIPTION = KWARGS_DESCRIPTION.replace("{name}", "irl")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Irl(SidMetric, evaluate.Metric):
    description = _DESCRIPTION
    citation = _CITATION
    kwargs_description = _KWARGS_DESCRIPTION
