"""One way to get pyplot for files on disk: the Agg backend (no display), quiet.

Plots are written by commands whose output users read or parse; matplotlib's font and layout
warnings and its INFO logging are noise there, so they are silenced here and nowhere else.
(It lives in the data layer so the dataset's own statistics plot can use it too.)

Names users chose (runs, models, recordings) may be Chinese or Japanese: an installed CJK font is
added as a fallback, and where none is, the glyph is drawn as a box and matplotlib's warning about
it is silenced around the drawing only (`save_figure`).

matplotlib keeps its font list in a config folder (MPLCONFIGDIR, else the XDG folders); one it cannot
write makes it create a temporary folder in every process, say so in two log lines, and leave the
folder behind when the process does not end normally. Where that would happen, the toolkit's own
cache folder (`cache_root()/matplotlib`) is given to it instead, before it is imported.
"""
from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

#: CJK fonts found on common systems, tried in this order after matplotlib's own default
CJK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR", "Source Han Sans",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN", "IPAGothic",
             "Unifont")
_GLYPH_MISSING = r"Glyph \d+ .* missing from (current )?font"


def pyplot():
    _writable_config_folder()
    # plots here are files, drawn with Agg: a backend inherited from the environment (a Jupyter kernel's
    # `module://matplotlib_inline...`, a typo) is not this process's, and matplotlib refuses to import
    # with one it cannot load
    os.environ.pop("MPLBACKEND", None)
    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module=r"matplotlib(\..*)?")
    _font_fallback(matplotlib)
    import matplotlib.pyplot as plt

    return plt


def _writable(folder: str) -> bool:
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(folder) and os.access(folder, os.W_OK)


def _writable_config_folder() -> None:
    """MPLCONFIGDIR set to the toolkit's cache when the folder matplotlib would use is not writable
    (a variable set to a folder that cannot be made, a read-only home); left alone otherwise, or when
    matplotlib is imported already (it has chosen), or when the cache is not writable either."""
    if "matplotlib" in sys.modules:
        return
    if os.environ.get("MPLCONFIGDIR"):
        folders = [os.environ["MPLCONFIGDIR"]]
    elif sys.platform.startswith(("linux", "freebsd")):
        folders = [os.path.join(os.environ.get(variable) or os.path.expanduser(default), "matplotlib")
                   for variable, default in (("XDG_CONFIG_HOME", "~/.config"), ("XDG_CACHE_HOME", "~/.cache"))]
    else:
        return
    if all(_writable(folder) for folder in folders):
        return
    from .errors import IHBenchError
    from .io import cache_root

    try:
        ours = str(cache_root() / "matplotlib")
    except IHBenchError:  # the cache is a file: matplotlib's own fallback it is
        return
    if _writable(ours):
        os.environ["MPLCONFIGDIR"] = ours


def _font_fallback(matplotlib) -> None:
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    fallbacks = [name for name in CJK_FONTS if name in installed]
    families = list(matplotlib.rcParams["font.sans-serif"])
    if fallbacks and not set(fallbacks) <= set(families):
        matplotlib.rcParams["font.sans-serif"] = families + [name for name in fallbacks if name not in families]


def save_figure(figure, path, *, tight_layout: bool = False, **options) -> Path:
    """Lay out (with `tight_layout`), write and close `figure`; a glyph no installed font has is drawn as
    a box without a warning on the user's terminal. Written beside its place and renamed over it: a
    command killed while drawing left an empty image under the plot's name."""
    import matplotlib.pyplot as plt

    path = Path(path)
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")  # same suffix: the same format
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_GLYPH_MISSING, category=UserWarning)
            if tight_layout:
                figure.tight_layout()
            figure.savefig(partial, **options)
        os.replace(partial, path)
    finally:
        plt.close(figure)
        partial.unlink(missing_ok=True)
    return path


def plot_text(text: str) -> str:
    """A user's name (a model, a run folder) as a figure shows it, as written: matplotlib hides a legend
    entry whose label starts with '_' (and warns "No artists with labels found"), and reads text between
    two '$' as mathematics."""
    text = str(text).replace("$", r"\$")
    return " " + text if text.startswith("_") else text
