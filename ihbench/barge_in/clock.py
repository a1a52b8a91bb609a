"""The virtual clock of a reply: when each of its words is spoken, from our own TTS render.

The model's reply is rendered sentence by sentence in the assistant's voice (the build's renders,
cached on disk by `RenderCache`), so each sentence's start and end on the clock is the render's own.
Neither of our voices reports where its words fall inside a sentence (flite prints phone segments
without words, piper's voice has no alignment output), so inside a sentence's speech (its first to
its last loud frame, as `duplex.speech_spans` finds them) each word gets a share of the time in
proportion to its estimated syllables. That estimate is the one approximation, and it is recorded
with every cut (`METHOD`): what counts as heard is then exactly the words that end before the cut.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ihbench.dataset.audio_format import SAMPLING_RATE

METHOD = "sentence renders; words share each sentence's speech by estimated syllables"
#: a token that ends its sentence (`ihbench verify` refuses a cut there: the rule of `_check_cut`)
SENTENCE_END = re.compile(r"[.?!:]['\")\]]*$")
_RENDER_BREAK = re.compile(r"[.?!]['\")\]]*$")  # a colon does not end what is rendered as one sentence
_TOKEN = re.compile(r"\S+")
_VOWELS = re.compile(r"[aeiouy]+")


@dataclass(frozen=True)
class Word:
    text: str
    first: int  # character span in the reply
    last: int
    start_s: float
    end_s: float
    sentence: int

    def to_json(self) -> list:
        return [self.text, self.first, self.last, round(self.start_s, 4), round(self.end_s, 4), self.sentence]

    @classmethod
    def from_json(cls, data: list) -> "Word":
        return cls(*data)


@dataclass(frozen=True)
class Spoken:
    """A reply on the clock: its words with their times, and its whole length."""

    text: str
    words: list[Word]
    duration_s: float
    voice: str

    def heard_before(self, cut_s: float) -> str:
        """Exactly the words that end at or before `cut_s`, as the reply's own characters."""
        heard = [w for w in self.words if w.end_s <= cut_s]
        return self.text[:heard[-1].last] if heard else ""


def syllables(token: str) -> float:
    """A rough count of what saying `token` takes: vowel groups of its letters, a syllable per digit
    (numbers are read out), nothing for punctuation alone."""
    lower = token.lower()
    letters = re.sub(r"[^a-z]", " ", lower)
    count = sum(len(_VOWELS.findall(part)) or 1 for part in letters.split())
    if lower.endswith("e") and count > 1 and not lower.endswith(("le", "ee")):
        count -= 1  # a silent final e
    return count + sum(ch.isdigit() for ch in lower)


def sentences(text: str) -> list[list[re.Match]]:
    """The reply's tokens, grouped into the sentences they are rendered in."""
    groups: list[list[re.Match]] = [[]]
    for match in _TOKEN.finditer(text):
        groups[-1].append(match)
        if _RENDER_BREAK.search(match.group(0)):
            groups.append([])
    return [group for group in groups if group]


def speak(text: str, engine, cache) -> Spoken:
    """`text` on the clock, in `engine`'s voice (renders through `cache`)."""
    words: list[Word] = []
    offset = 0.0
    for number, group in enumerate(sentences(text)):
        sentence = text[group[0].start():group[-1].end()]
        if not any(ch.isalnum() for ch in sentence):  # nothing to say ("..."): no time on the clock
            words += [Word(m.group(0), m.start(), m.end(), offset, offset, number) for m in group]
            continue
        start, end, length = sentence_clock(sentence, engine, cache)
        weights = [syllables(m.group(0)) for m in group]
        total = sum(weights) or 1.0
        clock = offset + start
        share = (end - start) / total
        for match, weight in zip(group, weights):
            words.append(Word(match.group(0), match.start(), match.end(), clock, clock + weight * share, number))
            clock += weight * share
        offset += length
    return Spoken(text, words, offset, engine.voice_id)


def sentence_clock(sentence: str, engine, cache) -> tuple[float, float, float]:
    """(speech start, speech end, length) of the sentence's render, in seconds. Kept beside the render
    in the TTS cache, under the render's own key: a rerun neither decodes the audio nor measures it
    again (that was most of the time an on-policy round spent outside the models' calls)."""
    from ihbench.dataset.duplex import speech_spans
    from ihbench.dataset.io import write_atomic

    path = cache.directory / f"{cache.key(engine, sentence)}.clock.json"
    try:
        return tuple(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):  # not measured yet (or a damaged entry): measure it
        pass
    samples = cache.samples(engine, sentence)
    spans = speech_spans(samples)
    start, end = (spans[0][0], spans[-1][1]) if spans else (0, len(samples))
    measured = (start / SAMPLING_RATE, end / SAMPLING_RATE, len(samples) / SAMPLING_RATE)
    write_atomic(path, json.dumps(measured).encode("utf-8"))
    return measured
