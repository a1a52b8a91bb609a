"""Smart Turn v3.2 (pipecat-ai's bundled end-of-turn model) without pipecat: the model file from the
installed wheel, Whisper features in numpy, pipecat's window, and its streaming decision.

    from ihbench.smart_turn import SmartTurn, StreamingTurnDetector, decide
    SmartTurn().probabilities([samples_16k, ...])     # P(turn complete) per clip
"""
from .features import log_mel
from .model import (INSTALL, MODEL_FILE, THRESHOLD, VERIFIED_SHA256, VERIFIED_VERSION, ModelFile, SmartTurn,
                    model_file)
from .stream import (Pause, StreamSettings, StreamingTurnDetector, Trace, decide, find_pauses, silence_decision,
                     vad_events)
from .window import SAMPLING_RATE, WINDOW_SAMPLES, fixed_window, to_16k

__all__ = ["INSTALL", "MODEL_FILE", "SAMPLING_RATE", "THRESHOLD", "VERIFIED_SHA256", "VERIFIED_VERSION",
           "WINDOW_SAMPLES", "ModelFile", "Pause", "SmartTurn", "StreamSettings", "StreamingTurnDetector", "Trace",
           "decide", "find_pauses", "fixed_window", "log_mel", "model_file", "silence_decision", "to_16k",
           "vad_events"]
