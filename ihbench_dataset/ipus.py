"""Inter-pausal units and backchannels of one channel.

An IPU (Talking Turns, Section 3.1) is a stretch of one speaker's speech delimited by more than
200 ms of silence on both sides: voice-activity segments closer than that are one IPU.

A backchannel ("mm-hm", "right") is a short listener response that does not take the turn. Two
ways to find them, both over IPUs:

- from words (`--transcripts`): an IPU is a backchannel when the words spoken in it, lower-cased
  and stripped of punctuation, form one of the one- or two-word phrases in `BACKCHANNEL_PHRASES`
  (Talking Turns follows Wang et al. and uses the most common isolated one- and two-word phrases
  of Switchboard; this list is the toolkit's own, of that kind);
- without words, a heuristic: an IPU of at most `MAX_BACKCHANNEL_S` seconds whose start and end
  both fall inside the other speaker's turn (the other's IPUs with pauses of up to
  `MAX_BACKCHANNEL_S` bridged), i.e. said while the other speaker kept the floor, unless it is
  not isolated: the speaker goes on within `MAX_BACKCHANNEL_S`, the other starting nothing in
  between, and the other has stopped by then ("Yeah, ... email's fine" opens a turn) or the
  speaker goes on over it with more speech (a barge-in that opens with a short phrase). It misses backchannels said after the other stopped and takes a short interruption that
  the other talks over ("wait-") for a backchannel; transcripts avoid both.
"""
from __future__ import annotations

import re
from typing import Sequence

from .floor import Interval

MIN_SILENCE_S = 0.2
MAX_BACKCHANNEL_S = 1.0

BACKCHANNEL_PHRASES = frozenset({
    "yeah", "yes", "yep", "yup", "yeah yeah", "oh yeah", "uh huh", "uh-huh", "mhm", "mm hm", "mm-hm", "mm", "hm",
    "hmm", "um hum", "um-hum", "right", "right right", "that's right", "thats right", "okay", "ok", "oh okay",
    "okay okay", "alright", "all right", "sure", "oh sure", "i see", "oh i see", "oh", "oh really", "really", "wow",
    "oh wow", "huh", "exactly", "true", "got it", "i know", "cool", "nice", "good", "great", "uh", "um", "ah",
})
_TOKEN = re.compile(r"[a-z]+(?:['-][a-z]+)*")


def merge_ipus(segments: Sequence[Interval], min_silence: float = MIN_SILENCE_S) -> list[Interval]:
    """Join segments separated by `min_silence` seconds or less (the 200 ms rule)."""
    merged: list[list[float]] = []
    for start, end in sorted(segments):
        if merged and start - merged[-1][1] <= min_silence:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(round(s, 6), round(e, 6)) for s, e in merged]


def is_backchannel_phrase(words: Sequence[str]) -> bool:
    """One or two words ("Mm-hm." and "uh-huh" are one) that together are a listed phrase."""
    tokens = [token for word in words for token in _TOKEN.findall(word.lower().replace("’", "'"))]
    return 1 <= len(tokens) <= 2 and " ".join(tokens) in BACKCHANNEL_PHRASES


def backchannels_from_words(ipus: Sequence[Interval], words: Sequence[dict]) -> list[Interval]:
    """IPUs whose words (assigned by their midpoint) form a backchannel phrase; an IPU without
    any word (noise the VAD took for speech) is not a backchannel."""
    found = []
    for start, end in ipus:
        said = [w["word"] for w in words if start <= (w["start"] + w["end"]) / 2 <= end]
        if said and is_backchannel_phrase(said):
            found.append((start, end))
    return found


def _inside(t: float, intervals: Sequence[Interval]) -> bool:
    return any(s < t < e for s, e in intervals)


def _opens_a_turn(end: float, following, following_is_speech: bool, other_ipus: Sequence[Interval],
                  max_seconds: float) -> bool:
    """This speaker goes on at most `max_seconds` after `end` (the IPU starting at `following`),
    the other speaker starting nothing in between, and either the other has stopped by then (it
    yielded to the short IPU: "Yeah, ... email's fine") or the speaker goes on over it with speech
    that is no backchannel ("That was my son. He set it up—" while the other talks on): either
    way the short IPU was not an isolated listener response but the start of a turn or barge-in."""
    if following is None or following - end > max_seconds or any(end <= s < following for s, _ in other_ipus):
        return False
    stop = max((e for s, e in other_ipus if s < end), default=end)
    return stop <= following or following_is_speech


def backchannels_by_heuristic(ipus: Sequence[Interval], other_ipus: Sequence[Interval],
                              max_seconds: float = MAX_BACKCHANNEL_S) -> list[Interval]:
    """Short IPUs said while the other speaker held the floor at both their start and their end;
    a listener's "mm-hm" often lands in the speaker's breath pause, so such pauses are bridged.
    Talking Turns' backchannels are isolated phrases: a short IPU that opens a turn or a longer
    barge-in (`_opens_a_turn`) is speech. Without that, a turn opened by "Yeah," before a pause
    just over 200 ms lost its barge-in once speech boundaries stopped carrying the detector's
    hangover, and a barge-in starting with a short phrase was taken for a backchannel."""
    turns = merge_ipus(other_ipus, max_seconds)
    ordered = sorted(ipus)
    found: list[Interval] = []
    following_is_speech = False
    for index in range(len(ordered) - 1, -1, -1):  # last first: whether the next IPU is speech is known
        s, e = ordered[index]
        following = ordered[index + 1][0] if index + 1 < len(ordered) else None
        backchannel = e - s <= max_seconds and _inside(s, turns) and _inside(e, turns) \
            and not _opens_a_turn(e, following, following_is_speech, other_ipus, max_seconds)
        if backchannel:
            found.append((s, e))
        following_is_speech = not backchannel
    return found[::-1]


def split_backchannels(ipus: Sequence[Interval], backchannels: Sequence[Interval]) -> list[Interval]:
    """The IPUs that are speech proper (not backchannels): what `floor_labels` takes as speech."""
    marked = set(backchannels)
    return [ipu for ipu in ipus if ipu not in marked]
