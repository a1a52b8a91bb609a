"""The clock of a reply the model spoke itself: its words timed in its own audio.

A model that answers with audio (the openai loader's `audio_voice` option: the audio output of
OpenAI's and vLLM's chat completions) is cut where its own voice is, not where ours would be. Its
words are found in its audio by forced alignment: pocketsphinx (CMU Sphinx) aligns the reply's text
to the audio with the US English acoustic model that ships inside its wheel, giving each word its
first and last 10 ms frame. Numbers are aligned as the words they are read as, codes letter by
letter, and a word its dictionary lacks (a name) by a rough reading of its letters; a token with
no letters or digits shares the time between its neighbours. How many words were read by rule is
recorded with the cut (`ALIGNED`). Audio the aligner cannot align to the text (another
language, a transcript that is not what was said) spreads every word over the audio's speech by
syllables, and says so (`SPREAD`). Audio in which silero-vad hears no speech (silence, noise, a
few milliseconds of a cut-off file) holds none of the words: the round fails (`NoSpeechInAudio`) and
is played again, never cut on words that were not said. What counts as heard is then exactly the
words that end before the cut, as with our own renders (`clock`).
"""
from __future__ import annotations

import re
import threading

import numpy as np

from ihbench.dataset.audio_format import SAMPLING_RATE
from ihbench.dataset.errors import IHBenchError, MissingDependencyError

from .clock import Spoken, Word, sentences, share_by_syllables

ALIGNED = ("aligned: each word from its first to its last frame in the model's own audio, by pocketsphinx forced "
           "alignment of the reply's text (US English acoustic model)")
SPREAD = "spread: words share the model's own audio's speech by estimated syllables"
FRAMES_PER_S = 100
_FILLERS = {"<s>", "</s>", "<sil>", "[noise]", "<noise>"}


class NoSpeechInAudio(IHBenchError):
    """The model's audio answer holds no speech to time its words on."""


def check_speech(audio: np.ndarray) -> None:
    """silero-vad (a dependency, its weights in its wheel) over the whole answer, at its own defaults;
    one model, used by one thread at a time (it keeps state between its windows)."""
    import torch
    from silero_vad import get_speech_timestamps

    from ihbench.silero import load_silero

    samples = np.ascontiguousarray(audio, dtype=np.float32)
    with _VAD_LOCK:
        if not _VAD:
            _VAD.append(load_silero())
        found = get_speech_timestamps(torch.from_numpy(samples), _VAD[0], sampling_rate=SAMPLING_RATE)
    if not found:
        raise NoSpeechInAudio(f"its {len(samples) / SAMPLING_RATE:.3f} s of audio hold no speech (silero-vad found "
                              "none: silence, noise, or cut off)")


_VAD: list = []  # loaded at the first spoken answer
_VAD_LOCK = threading.Lock()


def aligner():
    """A pocketsphinx decoder for 16 kHz audio, quiet; the extra is named when it is missing."""
    try:
        from pocketsphinx import Decoder
    except ImportError:
        raise MissingDependencyError("timing the model's own audio needs pocketsphinx: pip install 'ihbench[align]'") \
            from None
    return Decoder(samprate=SAMPLING_RATE, loglevel="FATAL", bestpath=False)


def spoken_from_audio(text: str, audio: np.ndarray, voice: str) -> Spoken:
    """`text` on the clock of `audio` (16 kHz mono float32: what the model said)."""
    check_speech(audio)
    tokens = [(number, match) for number, group in enumerate(sentences(text)) for match in group]
    duration = len(audio) / SAMPLING_RATE
    decoder = aligner()
    spelled = [_spelling(match.group(0)) for _, match in tokens]
    guessed = sorted({w for words in spelled for w in words if decoder.lookup_word(w) is None})
    for number, word in enumerate(guessed, start=1):  # a name, a made-up word: its letters' sounds, so the
        # audio it takes is its own (the dictionary updated once, with the last)
        decoder.add_word(word, " ".join(_letter_sounds(word)), number == len(guessed))
    known = [i for i, words in enumerate(spelled) if words]
    times = _align(decoder, audio, [spelled[i] for i in known]) if known else None
    if times is None:
        start, end = _speech(audio)
        spans = share_by_syllables(start, end, [match.group(0) for _, match in tokens])
        return Spoken(text, [Word(m.group(0), m.start(), m.end(), a, b, n) for (n, m), (a, b) in zip(tokens, spans)],
                      duration, voice, f"{SPREAD} (the aligner found no path through the audio for the reply's words)")
    spans: list = [None] * len(tokens)
    for index, span in zip(known, times):
        spans[index] = span
    _fill_between(spans, [match.group(0) for _, match in tokens], duration)
    missing = len(tokens) - len(known)
    how = ALIGNED + "".join([f"; {len(guessed)} word(s) not in its dictionary said by letter-to-sound rules"] * bool(guessed)
                            + [f"; {missing} token(s) with no letters or digits timed between their neighbours"]
                            * bool(missing))
    return Spoken(text, [Word(m.group(0), m.start(), m.end(), a, b, n) for (n, m), (a, b) in zip(tokens, spans)],
                  duration, voice, how)


def _spelling(token: str) -> list[str]:
    """The words a token is said as, spelled as the aligner's dictionary spells them: a word in lower
    case, a number in words ("40" forty, "9:15" nine fifteen), a code letter by letter and digit by
    digit ("QX7ZL2")."""
    token = token.lower().strip(".,;:!?\"()[]{}")
    if re.fullmatch(r"[a-z]+(?:'[a-z]+)*", token):
        return [token]
    if re.fullmatch(r"\d{1,2}:\d\d", token):  # a time of day
        hours, minutes = token.split(":")
        return _number(int(hours)) + ([] if minutes == "00" else (["oh"] if minutes[0] == "0" else [])
                                      + _number(int(minutes)))
    if re.fullmatch(r"\$?\d{1,4}", token):
        return _number(int(token.lstrip("$"))) + (["dollars"] if token.startswith("$") else [])
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", token):  # a code: a number part as a number, the rest by character
        return [word for part in token.split("-") for word in (
            _number(int(part)) if re.fullmatch(r"\d{1,4}", part) and "-" in token else
            [_DIGITS[int(ch)] if ch.isdigit() else ch for ch in part])]
    return []


#: letters (and pairs of them) to the aligner's phones: a rough reading of a word it does not know
_SOUNDS = {"ch": "CH", "sh": "SH", "th": "TH", "ph": "F", "ck": "K", "ng": "NG", "qu": "K W", "ee": "IY", "ea": "IY",
           "oo": "UW", "ou": "AW", "ai": "EY", "ay": "EY", "oa": "OW", "a": "AE", "b": "B", "c": "K", "d": "D",
           "e": "EH", "f": "F", "g": "G", "h": "HH", "i": "IH", "j": "JH", "k": "K", "l": "L", "m": "M", "n": "N",
           "o": "AA", "p": "P", "q": "K", "r": "R", "s": "S", "t": "T", "u": "AH", "v": "V", "w": "W", "x": "K S",
           "y": "Y", "z": "Z"}


def _letter_sounds(word: str) -> list[str]:
    phones, at = [], 0
    letters = re.sub(r"[^a-z]", "", word)
    while at < len(letters):
        pair = letters[at:at + 2]
        if len(pair) == 2 and pair in _SOUNDS:
            phones += _SOUNDS[pair].split()
            at += 2
        else:
            phones += _SOUNDS[letters[at]].split()
            at += 1
    return phones or ["AH"]


_DIGITS = "zero one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _number(n: int) -> list[str]:
    """An integer below ten thousand in words, as the voices read one."""
    if n < 10:
        return [_DIGITS[n]]
    if n < 20:
        return [_TEENS[n - 10]]
    if n < 100:
        return [_TENS[n // 10]] + ([_DIGITS[n % 10]] if n % 10 else [])
    if n < 1000:
        return [_DIGITS[n // 100], "hundred"] + (_number(n % 100) if n % 100 else [])
    return _number(n // 1000) + ["thousand"] + (_number(n % 1000) if n % 1000 else [])


def _align(decoder, audio: np.ndarray, words: list[list[str]]):
    """[(start s, end s)] per token (its words together), or None when the alignment does not cover
    every word."""
    flat = [word for token in words for word in token]
    pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
    try:
        decoder.set_align_text(" ".join(flat))
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        segments = [s for s in decoder.seg() or [] if s.word.lower() not in _FILLERS]  # None: no path found
    except RuntimeError:  # pocketsphinx raises it when no alignment reaches the end of the audio
        return None
    if [re.sub(r"\(\d+\)$", "", s.word) for s in segments] != flat:
        return None
    spans, at = [], 0
    for token in words:
        first, last = segments[at], segments[at + len(token) - 1]
        spans.append((first.start_frame / FRAMES_PER_S, (last.end_frame + 1) / FRAMES_PER_S))
        at += len(token)
    return spans


def _fill_between(spans: list, texts: list[str], duration: float) -> None:
    """Give each run of unaligned words the time between the aligned words around it, by syllables."""
    index = 0
    while index < len(spans):
        if spans[index] is not None:
            index += 1
            continue
        end_run = index
        while end_run < len(spans) and spans[end_run] is None:
            end_run += 1
        start = spans[index - 1][1] if index > 0 else 0.0
        end = spans[end_run][0] if end_run < len(spans) else duration
        spans[index:end_run] = share_by_syllables(start, max(start, end), texts[index:end_run])
        index = end_run


def _speech(audio: np.ndarray) -> tuple[float, float]:
    """From the first to the last speech of the audio (`duplex.speech_spans`; all of it when silent)."""
    from ihbench.dataset.duplex import speech_spans

    spans = speech_spans(np.asarray(audio, dtype=np.float32))
    if not spans:
        return 0.0, len(audio) / SAMPLING_RATE
    return spans[0][0] / SAMPLING_RATE, spans[-1][1] / SAMPLING_RATE
