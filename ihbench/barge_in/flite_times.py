"""Word times of a flite render, measured by flite itself.

The flite command line prints a render's phone segments with their end times (`-psdur`) and its
words (`-pw`) but never which segments make which word, and its `-pr RELATION` prints a relation's
top level only. The library the command is built on (Debian's libflite.so.1, the same code and
voices) holds the whole utterance: each text token (`Token` relation) with the words it is read as
("$2,410" is six words), each word's syllables and segments (`SylStructure`), each segment's end
time. Synthesising the sentence through it gives, for each token of the text, the start of its
first segment and the end of its last: the times at which flite says it. flite is deterministic, so
this is the same utterance the `flite` command rendered into the cache; `token_times` returns the
utterance's length with the times, and the clock uses them only when that length is the cached
render's (`clock`).

Read through ctypes: libflite has no Python binding here. Synthesis is serialised (one lock): the
library keeps state between calls and is not documented as thread-safe.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Optional

_LOCK = threading.Lock()
_LIBRARY: Optional[ctypes.CDLL] = None
_VOICES: dict[str, int] = {}


class Unavailable(Exception):
    """libflite or the voice cannot be loaded: the clock falls back to its estimate, and says why."""


class _Wave(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char_p), ("sample_rate", ctypes.c_int), ("num_samples", ctypes.c_int),
                ("num_channels", ctypes.c_int), ("samples", ctypes.c_void_p)]


_SIGNATURES = {
    "flite_init": (ctypes.c_int, []),
    "flite_synth_text": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_void_p]),
    "utt_relation": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]),
    "utt_wave": (ctypes.POINTER(_Wave), [ctypes.c_void_p]),
    "relation_head": (ctypes.c_void_p, [ctypes.c_void_p]),
    "item_next": (ctypes.c_void_p, [ctypes.c_void_p]),
    "item_daughter": (ctypes.c_void_p, [ctypes.c_void_p]),
    "ffeature_string": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_char_p]),
    "ffeature_float": (ctypes.c_float, [ctypes.c_void_p, ctypes.c_char_p]),
    "path_to_item": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]),
    "delete_utterance": (None, [ctypes.c_void_p]),
}


def _library() -> ctypes.CDLL:
    global _LIBRARY
    if _LIBRARY is None:
        try:
            library = ctypes.CDLL("libflite.so.1")
            for name, (result, arguments) in _SIGNATURES.items():
                function = getattr(library, name)
                function.restype, function.argtypes = result, arguments
        except (OSError, AttributeError) as error:
            raise Unavailable(f"libflite cannot be loaded ({error})") from None
        library.flite_init()
        _LIBRARY = library
    return _LIBRARY


def _voice(name: str) -> int:
    if name not in _VOICES:
        _library()  # the voice's own library needs libflite's symbols loaded and initialised first
        try:
            module = ctypes.CDLL(f"libflite_cmu_us_{name}.so.1")
            register = getattr(module, f"register_cmu_us_{name}")
        except (OSError, AttributeError) as error:
            raise Unavailable(f"flite's voice {name} cannot be loaded ({error})") from None
        register.restype, register.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
        voice = register(None)
        if not voice:
            raise Unavailable(f"flite's voice {name} did not register")
        _VOICES[name] = voice
    return _VOICES[name]


def check(voice: str) -> None:
    """Raises `Unavailable` when the voice's times cannot be read here."""
    with _LOCK:
        _voice(voice)


def token_times(text: str, voice: str) -> tuple[float, list[tuple[str, Optional[float], Optional[float]]]]:
    """(the utterance's length in seconds, [(token as flite read it, with its punctuation; start s;
    end s), ...] in text order). A token whose words have no segment has no times."""
    with _LOCK:
        library, handle = _library(), _voice(voice)
        utterance = library.flite_synth_text(text.encode("utf-8"), handle)
        if not utterance:
            raise Unavailable("libflite made no utterance")
        try:
            wave = library.utt_wave(utterance)
            length = wave.contents.num_samples / wave.contents.sample_rate if wave else 0.0
            tokens = []
            token = library.relation_head(library.utt_relation(utterance, b"Token"))
            while token:
                spelled = b"".join(library.ffeature_string(token, feature) or b""
                                   for feature in (b"prepunctuation", b"name", b"punc")).decode("utf-8", "replace")
                start = end = None
                word = library.item_daughter(token)
                while word:
                    first = library.path_to_item(word, b"R:SylStructure.daughter1.daughter1.R:Segment")
                    last = library.path_to_item(word, b"R:SylStructure.daughtern.daughtern.R:Segment")
                    if first and last:
                        if start is None:
                            start = float(library.ffeature_float(first, b"p.end"))  # the segment before ends
                        end = float(library.ffeature_float(last, b"end"))
                    word = library.item_next(word)
                tokens.append((spelled, start, end))
                token = library.item_next(token)
            return length, tokens
        finally:
            library.delete_utterance(utterance)
