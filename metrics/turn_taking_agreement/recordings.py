"""Input checks of the turn_taking_agreement module: every recording's likelihoods, events,
turns and end times, validated field by field and pooled into flat arrays. Kept apart from the
arithmetic, as evaluate's own modules keep their helpers in sibling files."""
from collections.abc import Mapping

import numpy as np

JUDGE_ORDER = ("C", "NA", "I", "BC", "T")
LABELS = ("NA", "C", "T", "I", "BC")
TURNS = ("A", "B", "AB", "BA", "NA")
_EVENT_CODE = {**{name: code for code, name in enumerate(LABELS)}, "IN": LABELS.index("I")}
_TURN_CODE = {name: code for code, name in enumerate(TURNS)}
_COLUMN = {name: column for column, name in enumerate(JUDGE_ORDER)}
CHUNK_SECONDS = 0.04
GAP_TOLERANCE = 1e-6

def _is_sequence(value):
    """Strings and dicts have a length too, but are never a list of chunks or tokens here."""
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes, Mapping))


def _name_bad_chunk(row, where):
    """Slow path, only on error: find the first chunk or value that is not 5 numbers."""
    for position, chunk in enumerate(row):
        if not _is_sequence(chunk) or len(chunk) != len(JUDGE_ORDER):
            got = len(chunk) if _is_sequence(chunk) else type(chunk).__name__
            raise ValueError(f"{where}[{position}]: expected {len(JUDGE_ORDER)} likelihoods, got {got}")
        for column, value in enumerate(chunk):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"{where}[{position}][{column}]: expected a number, got {value!r}")
    raise ValueError(f"{where}: expected a list of chunks of {len(JUDGE_ORDER)} numbers")


def _likelihoods(row, index):
    """(n, 5) float array of one recording; a malformed chunk is named by its index."""
    where = f"predictions[{index}]"
    if not _is_sequence(row):
        raise ValueError(f"{where}: expected a list of chunks, got {type(row).__name__}")
    if len(row) == 0:
        return np.zeros((0, len(JUDGE_ORDER)))
    try:
        array = np.asarray(row)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype.kind not in "fiu" or array.ndim != 2 or array.shape[1] != len(JUDGE_ORDER):
        _name_bad_chunk(row, where)
    array = array.astype(np.float64, copy=False)
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        position, column = bad[0]
        raise ValueError(f"{where}[{position}][{column}]: likelihood of {JUDGE_ORDER[column]} is "
                         f"{array[position, column]}, expected a finite number")
    outside = np.argwhere((array < 0) | (array > 1))  # logits or percentages would change every score, unsaid
    if outside.size:
        position, column = outside[0]
        percent = 1 < array.max() <= 100 and array.min() >= 0
        raise ValueError(f"{where}[{position}][{column}]: likelihood of {JUDGE_ORDER[column]} is "
                         f"{array[position, column]:g}, outside [0, 1]"
                         + ("; percentages? give them divided by 100" if percent else
                            "; logits? give the probabilities (a sigmoid of them)"))
    return array


def _codes(values, table, where, what, n_chunks):
    """Integer codes of a list of tokens, checked against the recording's chunk count."""
    if not _is_sequence(values):
        raise ValueError(f"{where}: expected a list of strings, got {type(values).__name__}")
    if len(values) != n_chunks:
        raise ValueError(f"{where}: length {len(values)} differs from the {n_chunks} chunks of its predictions")
    codes = [table.get(value, -1) if isinstance(value, str) else -1 for value in values]
    array = np.asarray(codes, dtype=np.int64)
    bad = np.flatnonzero(array < 0)
    if bad.size:
        expected = ", ".join(name for name in table if not (what == "event" and name == "IN"))
        raise ValueError(f"{where}[{bad[0]}]: unknown {what} {values[bad[0]]!r}; expected one of {expected}"
                         + (" (IN is read as I)" if what == "event" else ""))
    return array


def _breaks(end_times, where, n_chunks):
    """True where a chunk does not directly follow the previous one (the first chunk, a gap)."""
    breaks = np.zeros(n_chunks, dtype=bool)
    if n_chunks:
        breaks[0] = True
    if not _is_sequence(end_times):
        raise ValueError(f"{where}: expected a list of floats, got {type(end_times).__name__}")
    if len(end_times) == 0:
        return breaks
    if len(end_times) != n_chunks:
        raise ValueError(f"{where}: length {len(end_times)} differs from the {n_chunks} chunks of its "
                         f"predictions (use [] for contiguous chunks)")
    try:
        times = np.asarray(end_times, dtype=np.float64)
    except (TypeError, ValueError):
        times = None
    if times is None or times.ndim != 1:
        for position, value in enumerate(end_times):
            try:
                float(value)
            except (TypeError, ValueError):
                raise ValueError(f"{where}[{position}]: expected a number, got {value!r}") from None
        raise ValueError(f"{where}: expected numbers")
    bad = np.flatnonzero(~np.isfinite(times))
    if bad.size:
        raise ValueError(f"{where}[{bad[0]}]: end time is {times[bad[0]]}, expected a finite number")
    steps = np.diff(times)
    bad = np.flatnonzero(steps <= 0)
    if bad.size:
        raise ValueError(f"{where}[{bad[0] + 1}]: end time {times[bad[0] + 1]} does not follow "
                         f"{times[bad[0]]}; end times must increase")
    breaks[1:] = np.abs(steps - CHUNK_SECONDS) > GAP_TOLERANCE
    return breaks


def _reference(reference, index, n_chunks):
    where = f"references[{index}]"
    if not isinstance(reference, Mapping):
        raise ValueError(f"{where}: expected a dict with events, turns and end_times, got {type(reference).__name__}")
    for key in ("events", "turns", "end_times"):
        if key not in reference:
            raise ValueError(f"{where}: missing key {key!r}")
    extra = sorted(str(key) for key in reference if key not in ("events", "turns", "end_times"))
    if extra:
        raise ValueError(f"{where}: unexpected key {extra[0]!r}; expected events, turns and end_times")
    events = _codes(reference["events"], _EVENT_CODE, f"{where}['events']", "event", n_chunks)
    turns = _codes(reference["turns"], _TURN_CODE, f"{where}['turns']", "turn", n_chunks)
    breaks = _breaks(reference["end_times"], f"{where}['end_times']", n_chunks)
    return events, turns, breaks


def parse_recordings(predictions, references):
    """Validate and pool all recordings into flat arrays.

    Returns (likelihoods (N, 5), events (N,), turns (N,), reach (N,)), where reach[k] is how many
    chunks directly precede chunk k in its recording without a gap: a look-back of depth d at k
    is allowed only when reach[k] >= d, which is what keeps look-backs inside one recording.
    """
    for name, value in (("predictions", predictions), ("references", references)):
        if value is None:
            raise ValueError(f"{name}: required")
        if not _is_sequence(value):
            raise ValueError(f"{name}: expected a list with one entry per recording, got {type(value).__name__}")
    if len(predictions) == 0:
        raise ValueError("predictions: empty input; at least one recording is needed")
    if len(references) != len(predictions):
        raise ValueError(f"references: {len(references)} recordings, but predictions has {len(predictions)}")
    parts = []
    for index, (row, reference) in enumerate(zip(predictions, references)):
        likelihoods = _likelihoods(row, index)
        parts.append((likelihoods, *_reference(reference, index, len(likelihoods))))
    likelihoods, events, turns, breaks = (np.concatenate(column) for column in zip(*parts))
    if len(likelihoods) == 0:
        raise ValueError("predictions: empty input; no recording has a chunk")
    position = np.arange(len(breaks))
    last_break = np.maximum.accumulate(np.where(breaks, position, 0))
    return likelihoods, events, turns, position - last_break
