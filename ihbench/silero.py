"""The silero-vad model, loaded one way for everything that needs a VAD (the SID detector, `ihbench
turns`, the smart-turn pause finder): its weights ship inside the `silero-vad` package, so nothing
is fetched at run time. It sits below the packages that use it, so none of them imports another
only to reach the weights."""
from __future__ import annotations

import warnings


def load_silero(*, onnx: bool = False):
    try:
        from silero_vad import load_silero_vad
    except ImportError as error:
        raise ImportError("a silero-vad VAD needs the silero-vad package: pip install silero-vad") from error
    with warnings.catch_warnings():  # its loader uses APIs torch and importlib now call deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        return load_silero_vad(onnx=onnx)
