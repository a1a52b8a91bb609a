"""The virtual clock of a reply: when each of its words is spoken, from our own TTS render.

The model's reply is rendered sentence by sentence in the assistant's voice (the build's renders,
cached on disk by `RenderCache`), so each sentence's start and end on the clock is the render's own.
Inside a sentence, each word (a whitespace-separated token of the reply, as the cut counts words)
is measured: flite's own utterance of the sentence gives the start of its first phone and the end
of its last (`flite_times`), taken only when that utterance is exactly as long as the cached render
(it is the same synthesis: flite is deterministic). This is `MEASURED`, recorded with every cut.

Where a sentence cannot be measured (a voice that reports no times, piper's; libflite missing; a
sentence flite read as other tokens than the reply's, or whose utterance is not the render's
length), its words share its speech (first to last loud frame, as `duplex.speech_spans` finds it)
in proportion to their estimated syllables: `ESTIMATED`, recorded with the reason for that reply.
Either way, what counts as heard is then exactly the words that end before the cut.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ihbench.dataset.audio_format import SAMPLING_RATE

MEASURED = ("measured: each word from the start of its first phone to the end of its last in flite's own utterance "
            "of the sentence's render (libflite's Token, Word and Segment relations), that utterance checked to be "
            "the render's length")
ESTIMATED = "estimated: words share each sentence's speech (its render's first to last loud frame) by estimated syllables"
#: how far flite's utterance and the cached render may differ in length (one resampled sample and rounding)
SAME_LENGTH_S = 0.002
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
    """A reply on the clock: its words with their times, its whole length, and how its words were timed."""

    text: str
    words: list[Word]
    duration_s: float
    voice: str
    method: str = MEASURED

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


#: the most words rendered as one sentence: a render is one call into flite that nothing interrupts
#: (Ctrl-C waited for a run-on sentence of thousands of words); a longer one is rendered in parts
#: of this many words, a few seconds each (the cut's rules read the reply's text, not these parts)
MAX_RENDERED_WORDS = 60


def sentences(text: str) -> list[list[re.Match]]:
    """The reply's tokens, grouped into the sentences they are rendered in."""
    groups: list[list[re.Match]] = [[]]
    for match in _TOKEN.finditer(text):
        groups[-1].append(match)
        if _RENDER_BREAK.search(match.group(0)) or len(groups[-1]) >= MAX_RENDERED_WORDS:
            groups.append([])
    return [group for group in groups if group]


def method(engine) -> str:
    """How `engine`'s words are timed (run.json records it): `MEASURED`, or `ESTIMATED` and why not."""
    from . import flite_times

    family, _, voice = engine.voice_id.partition(":")
    if family != "flite":
        return f"{ESTIMATED} ({engine.voice_id} reports no word or phone times)"
    try:
        flite_times.check(voice)
    except flite_times.Unavailable as error:
        return f"{ESTIMATED} ({error})"
    return MEASURED


#: how many of a reply's words go on the clock: about two minutes of speech, past where any caller
#: would have cut in. A reply longer than that (a reasoning model's --max-new-tokens 4096) took
#: flite minutes to time (about 45 ms a word); its cut falls in these.
MAX_TIMED_WORDS = 300


def speak(text: str, engine, cache) -> Spoken:
    """`text` on the clock, in `engine`'s voice (renders through `cache`); its first MAX_TIMED_WORDS
    words, the rest never spoken before a cut."""
    words: list[Word] = []
    offset = 0.0
    reasons: list[str] = []
    for number, group in enumerate(sentences(text)):
        if len(words) >= MAX_TIMED_WORDS:
            break
        group = group[:MAX_TIMED_WORDS - len(words)]
        sentence = text[group[0].start():group[-1].end()]
        if not any(ch.isalnum() for ch in sentence):  # nothing to say ("..."): no time on the clock
            words += [Word(m.group(0), m.start(), m.end(), offset, offset, number) for m in group]
            continue
        measured = sentence_times(sentence, engine, cache)
        if "times" in measured:
            times, length = measured["times"], measured["length"]
        else:
            reasons.append(measured["unmeasured"])
            times, length = _estimate(sentence, group, engine, cache)
        words += [Word(m.group(0), m.start(), m.end(), offset + start, offset + end, number)
                  for m, (start, end) in zip(group, times)]
        offset += length
    how = MEASURED if not reasons else f"{ESTIMATED} ({reasons[0]})"
    return Spoken(text, words, offset, engine.voice_id, how)


def _estimate(sentence: str, group: list[re.Match], engine, cache) -> tuple[list[tuple[float, float]], float]:
    """The fallback: the sentence's words share its speech by estimated syllables."""
    start, end, length = sentence_clock(sentence, engine, cache)
    return share_by_syllables(start, end, [m.group(0) for m in group]), length


def share_by_syllables(start: float, end: float, texts: list[str]) -> list[tuple[float, float]]:
    """[start, end] cut into one span per text, each as long as its estimated syllables say."""
    weights = [syllables(text) for text in texts]
    share = (end - start) / (sum(weights) or 1.0)
    times, clock = [], start
    for weight in weights:
        times.append((clock, clock + weight * share))
        clock += weight * share
    return times


def sentence_times(sentence: str, engine, cache) -> dict:
    """{"times": [(start s, end s) per token of the sentence], "length": s} measured from flite's own
    utterance of the render, or {"unmeasured": why}. Kept beside the render in the TTS cache, under
    the render's own key (`.words.json`): a rerun neither synthesises nor decodes anything."""
    from ihbench.dataset.io import write_atomic

    from . import flite_times

    path = cache.directory / f"{cache.key(engine, sentence)}.words.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and ("unmeasured" in kept or "times" in kept):
            return kept
    except (OSError, ValueError):  # not measured yet (or a damaged entry): measure it
        pass
    family, _, voice = engine.voice_id.partition(":")
    if family != "flite":
        return {"unmeasured": f"{engine.voice_id} reports no word or phone times"}  # nothing to keep
    try:
        length, tokens = flite_times.token_times(sentence, voice)
    except flite_times.Unavailable as error:
        return {"unmeasured": str(error)}  # the library may be installed later: not kept
    ours = _TOKEN.findall(sentence)
    render = len(cache.samples(engine, sentence)) / SAMPLING_RATE
    if not _same_tokens([spelled for spelled, _, _ in tokens], ours):
        measured = {"unmeasured": f"flite read {sentence[:40]!r} as other tokens than the reply's"}
    elif abs(length - render) > SAME_LENGTH_S:
        measured = {"unmeasured": f"flite's utterance of {sentence[:40]!r} is {length:.3f} s, its render "
                                  f"{render:.3f} s"}
    else:
        times, previous = [], 0.0
        for _, start, end in tokens:
            if start is None:  # read as nothing (a dash): no time, where the speech is
                start = end = previous
            times.append((round(start, 5), round(end, 5)))
            previous = end
        measured = {"times": times, "length": render}
    write_atomic(path, json.dumps(measured).encode("utf-8"))
    return measured


def _same_tokens(flite: list[str], ours: list[str]) -> bool:
    """flite read the sentence as the reply's tokens, in order (it may drop a closing mark of the text:
    "Mr." at the end is read as the token "Mr")."""
    return len(flite) == len(ours) and all(
        a == b or (a and b.startswith(a) and not any(ch.isalnum() for ch in b[len(a):])) for a, b in zip(flite, ours))


def sentence_clock(sentence: str, engine, cache) -> tuple[float, float, float]:
    """(speech start, speech end, length) of the sentence's render, in seconds, for the estimate.
    Kept beside the render in the TTS cache, under the render's own key: a rerun neither decodes
    the audio nor measures it again."""
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
