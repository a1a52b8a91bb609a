"""One way to get pyplot for files on disk: the Agg backend (no display), quiet.

Plots are written by commands whose output users read or parse; matplotlib's font and layout
warnings and its INFO logging are noise there, so they are silenced here and nowhere else.
(It lives in the data layer so the dataset's own statistics plot can use it too.)
"""
from __future__ import annotations

import logging
import warnings


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module=r"matplotlib(\..*)?")
    import matplotlib.pyplot as plt

    return plt
