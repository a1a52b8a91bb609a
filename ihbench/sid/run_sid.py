"""`ihbench sid`: a detector (or a prediction file) over a SID config into a run folder.

    OUT/predictions.jsonl   SID-Bench's own prediction format, one line per clip
    OUT/summary.json        FIR / IRL / APT under both definitions, counts, cost, real-time factor,
                            sealed (`summaries.seal`: the report reads the figures, checked unedited)
    OUT/timing_errors.png   where detections land relative to the true break

A smart-turn sweep (`thresholds`) also writes

    OUT/sweep.png           FIR against APT over thresholds and VAD-only timeouts, operating points ringed
    OUT/report.md           the operating points beside silero-vad and energy on the same clips

and its predictions and scores are those of the operating point, chosen on the tuning clips
(`tune_config`/`tune_clips`, never overlapping the reported ones) or, untuned, the `threshold`
option (pipecat's 0.5).

The folder is a `RunDir`: locked for the life of the command (a second `ihbench sid` on it fails
at once), with its summary where every run keeps it.
"""
from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from ihbench.dataset.argtypes import count, number
from ihbench.dataset.errors import IHBenchError, UsageError
from ihbench.dataset.io import write_json_atomic
from ihbench.dataset.redaction import redact

from ..rundir import RunDir
from ..summaries import SEALED_FIGURES, SidScore, SidSummary, seal


class SidClipsFailed(IHBenchError):
    """Model calls failed on some clips: nothing is scored (a clip whose answer is unknown is not a
    "no"); the clips answered are kept, and the same command asks only the failed ones again."""

    def __init__(self, failed: int, total: int, first: str, kept: int = 0):
        what = (f"the {kept} answered clip(s) are kept, and the same command asks only the failed ones again when "
                "the model answers") if kept else "run the same command again when the model answers"
        super().__init__(f"{failed} of {total} clip(s) have model calls that failed (first: {first}); nothing was "
                         f"scored; {what}")
        self.failed, self.total = failed, total


#: seconds either side of the true break that count as exact: SID-Bench uses 0.05; a tolerance as long
#: as its clips would count every prediction a hit, "no break" ones too (their -1 lies within it)
TOLERANCE = number(min=0, max=2)

SWEEP_FLAGS = ("thresholds", "timeouts", "tune_config", "tune_clips", "tune_data")


def run_sid(data: str, config: str, out: Path, *, detector: Optional[str] = None, predictions_file: Optional[Path] = None,
            options: Optional[dict] = None, limit: Optional[int] = None, tolerance: float = 0.05,
            progress: bool = True, clips: Optional[str] = None, thresholds: Optional[list] = None,
            timeouts: Optional[list] = None, tune_data: Optional[str] = None, tune_config: Optional[str] = None,
            tune_clips: Optional[str] = None) -> dict:
    """`clips`: only the clips whose file name matches this glob. `thresholds` (smart-turn only):
    sweep them and the VAD-only `timeouts`; `tune_config`/`tune_clips`/`tune_data`: the clips the
    operating point is chosen on (default: --data and --config), which must not overlap the
    reported ones."""
    from ihbench.dataset.sid import sid_rows

    from .detectors import check_detector_options, get_detector, run_detector
    from .predictions import align, read_predictions

    if (detector is None) == (predictions_file is None):
        raise UsageError("give either --detector or --predictions")
    if limit is not None:  # -1 would silently drop the last clip; 0 would score nothing
        count().check("--limit", limit)
    TOLERANCE.check("--tolerance", tolerance)
    sweeping = _check_sweep(detector, thresholds=thresholds, timeouts=timeouts, tune_data=tune_data,
                            tune_config=tune_config, tune_clips=tune_clips)
    if detector is not None:  # a bad option is refused before any clip is read
        options = check_detector_options(detector, options or {})
    if detector == "smart-turn":  # a missing or moved model file is named before any clip is read
        from ihbench.smart_turn import model_file

        model_file()
    references, all_clips = sid_rows(data, config)
    indices = _selected(references, clips, "--clips", config)
    if limit is not None:
        indices = indices[:limit]
    references = [references[i] for i in indices]
    names = [r["audio"] for r in references]
    tuning = None
    if sweeping and (tune_config or tune_clips or tune_data):
        tuning = _tuning_set(data, config, references, tune_data=tune_data, tune_config=tune_config,
                             tune_clips=tune_clips)
    seconds, calls, description, extra = None, None, {"predictions_file": str(predictions_file)}, {}
    if predictions_file is not None:
        predictions = align(read_predictions(predictions_file, references), references)
    else:
        model = get_detector(detector, **(options or {}))
        if sweeping:
            model.stream.timeouts = tuple(timeouts)
        tuned = None
        if tuning is not None:
            tune_references, tune_audio = tuning
            run_detector(model, tune_audio, [r["audio"] for r in tune_references], progress=progress)
            tuned = _sweep(model, tune_references, thresholds, timeouts, tolerance)
            model.traces, model.calls, model.calls_per_clip = [], 0, []
        subset = all_clips if len(indices) == len(all_clips) else _Subset(all_clips, indices)
        description = redact(model.describe())
        if not sweeping:  # clip by clip into the output folder: a stopped run goes on from its clips
            return _detect_and_write(model, subset, names, references, out, data, config, description, detector,
                                     tolerance, {"clips": clips}, progress)
        started = time.perf_counter()
        predictions = run_detector(model, subset, names, progress=progress)
        seconds = time.perf_counter() - started
        if getattr(model, "failed_clips", 0):  # an unanswered clip scored as "no interruption" would be a guess
            raise SidClipsFailed(model.failed_clips, len(names), model.errors[0])
        calls = model.calls
        if sweeping:
            predictions, extra = _operating_point(model, references, subset, thresholds, timeouts, tolerance, tuned,
                                                  tuning_label=_label(tuning, tune_data or data, tune_config or config,
                                                                      tune_clips),
                                                  progress=progress)
            description["threshold"] = extra["operating_point"]["smart_turn"]["threshold"]
        extra["clips"] = clips
    run = RunDir(out)
    if run.path.exists() and not run.path.is_dir():
        raise UsageError(f"--out: {run.path} is a file, not a run folder")
    with run.writing():
        return _write_run(run, data, config, predictions, references, description, calls, seconds, detector, tolerance,
                          extra)


def _detect_and_write(model, clips, names, references, out, data, config, description, detector, tolerance, extra,
                      progress) -> dict:
    """A detector over the clips, each recorded as it is made (`progress.ClipLog`); scored and written
    once every clip has an answer. Clips whose model calls failed are kept as failed, and the same
    command asks only those again."""
    from ihbench.dataset.load import recorded_source

    from .progress import ClipLog, identity_of

    run = RunDir(out)
    if run.path.exists() and not run.path.is_dir():
        raise UsageError(f"--out: {run.path} is a file, not a run folder")
    with run.writing():
        log = ClipLog(run.path, identity_of(description, recorded_source(data), config))
        predictions, totals = log.detect(model, clips, names, progress=progress)
        if totals["failed"]:  # an unanswered clip scored as "no interruption" would be a guess
            raise SidClipsFailed(totals["failed"], len(names), totals["errors"][0],
                                 kept=len(names) - totals["failed"])
        return _write_run(run, data, config, predictions, references, description, totals["calls"],
                          totals["seconds"], detector, tolerance, extra)


def _check_sweep(detector, **flags) -> bool:
    """Whether this is a smart-turn sweep; a sweep flag with another detector is refused by name."""
    given = [name for name, value in flags.items() if value is not None]
    if given and detector != "smart-turn":
        flag = "--" + given[0].replace("_config", "_on").replace("_", "-")
        raise UsageError(f"{flag}: only for --detector smart-turn"
                         + (f", not {detector}" if detector else " (a prediction file has no model)"))
    if given and flags.get("thresholds") is None:
        flag = "--" + given[0].replace("_config", "_on").replace("_", "-")
        raise UsageError(f"{flag}: needs --thresholds (the sweep it tunes or extends)")
    return bool(given)


def _selected(references: list[dict], pattern: Optional[str], flag: str, config: str) -> list[int]:
    if pattern is None:
        return list(range(len(references)))
    indices = [i for i, r in enumerate(references) if fnmatch.fnmatchcase(r["audio"], pattern)]
    if not indices:
        examples = ", ".join(r["audio"] for r in references[:3])
        raise UsageError(f"{flag} {pattern!r}: no clip of {config} matches (its clips are named like {examples})")
    return indices


def _tuning_set(data, config, reported, *, tune_data, tune_config, tune_clips):
    """(references, decoded clips) the operating point is chosen on, checked before any clip is
    heard: read from --tune-data (default --data) and --tune-on (default --config), with clips that
    can be read and at least one break; refused when it shares a clip with the reported set
    (`reported`: their references), even from another copy of the same clips. Every refusal names
    the option that chose the tuning set, --tune-data and its path first."""
    from ihbench.dataset.audio import audio_duration
    from ihbench.dataset.sid import sid_rows

    given = f"--tune-data {tune_data}" if tune_data is not None else None
    tune_data, tune_config = tune_data or data, tune_config or config

    def refuse(why: str) -> UsageError:
        return UsageError(f"{given}: {why}" if given else why)

    try:
        references, clips = sid_rows(tune_data, tune_config, data_flag=None if given else "--data",
                                     config_flag="--tune-on" if tune_config != config else "--config")
        indices = _selected(references, tune_clips, "--tune-clips", tune_config)
    except IHBenchError as error:
        raise refuse(str(error)) from None
    same = Path(str(tune_data)).resolve() == Path(str(data)).resolve() and tune_config == config
    if same and given and tune_clips is None:
        raise refuse(f"the same dataset as --data and the same config ({config}): the operating point would be chosen "
                     "on the clips it is reported on; give --tune-data another dataset, --tune-on another config, or "
                     "split the clips with --clips and --tune-clips")
    mine = {_clip_key(r) for r in reported}
    shared = sorted(references[i]["audio"] for i in indices if _clip_key(references[i]) in mine)
    if shared:
        copy = "" if same else f" (the same clips as in {data}:{config}: names, breaks and durations)"
        flag = given or "--tune-on"
        raise UsageError(f"{flag}: the tuning clips include {len(shared)} of the reported ones (e.g. {shared[0]})"
                         f"{copy}; an operating point is reported on other clips than it was chosen on: split them "
                         "with --clips and --tune-clips, or tune on another config")
    where = f"{tune_config}" + (f" clips {tune_clips}" if tune_clips else "")
    if all(references[i]["total_nonbreak"] for i in indices):
        raise refuse(f"{where}: none of its {len(indices)} clip(s) has a break; the operating point trades false "
                     "cut-ins against the time to a true break, so it is chosen on clips with breaks (sid_en, "
                     "sid_dev_en), not only on non-break ones")
    subset = _Subset(clips, indices)
    for index in indices:  # headers only: a clip that cannot be read fails now, not mid-sweep
        try:
            audio_duration(clips.sources[index])
        except Exception as error:  # noqa: BLE001 (libsndfile's and FFmpeg's errors, whatever their type)
            said = (str(error).strip().splitlines() or [type(error).__name__])[-1]
            raise refuse(f"{where}: clip {references[index]['audio']} is not readable audio ({said})") from None
    return [references[i] for i in indices], subset


def _clip_key(reference: dict) -> tuple:
    """What makes two rows the same clip: its file name, break and duration (an imported sid_en and the
    SID-Bench folder it came from hold the same clips at different paths)."""
    return (reference["audio"], bool(reference["total_nonbreak"]), float(reference["break_time"]),
            float(reference["duration"]))


class _Subset(Sequence):
    """Some clips of a config, still decoded one at a time (a whole split does not fit in memory)."""

    def __init__(self, clips, indices: list[int]):
        self.clips, self.indices = clips, list(indices)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index):
        return self.clips[self.indices[index]]


def _label(tuning, data, config, clips) -> Optional[str]:
    if tuning is None:
        return None
    return f"{Path(str(data)).name}:{config}" + (f" clips {clips}" if clips else "")


def _sweep(model, references, thresholds, timeouts, tolerance) -> dict:
    from .sweep import sweep

    return sweep(model.traces, references, thresholds=thresholds, timeouts=timeouts, settings=model.settings,
                 tolerance=tolerance)


def _operating_point(model, references, audio, thresholds, timeouts, tolerance, tuned, *, tuning_label,
                     progress) -> tuple[list, dict]:
    """Predictions at the operating point, and the summary's sweep, operating points and baselines."""
    from .detectors import get_detector, run_detector
    from .evaluate_sid import score_both
    from .sweep import choose, row_at, threshold_predictions

    default = model.settings.threshold
    if tuned is None:  # the untuned operating point must be a point of the sweep
        thresholds = list(dict.fromkeys([*thresholds, default]))
    result = _sweep(model, references, thresholds, timeouts, tolerance)
    if tuned is not None:
        threshold = choose(tuned["smart_turn"])["threshold"]
        timeout = choose(tuned["vad_only"])["timeout"]
        how = f"lowest APT (notebook) on {tuning_label}"
    else:
        threshold, timeout = default, None
        how = "not tuned: the threshold option (pipecat's default 0.5)"
    operating = {"chosen_by": how, "tuned_on": tuning_label,
                 "smart_turn": {**row_at(result["smart_turn"], "threshold", threshold),
                                "label": f"smart-turn > {threshold:g}"}}
    if timeout is not None:
        operating["vad_only"] = {**row_at(result["vad_only"], "timeout", timeout), "label": f"VAD only {timeout:g} s"}
    names = [r["audio"] for r in references]
    baselines = {}
    for name in ("silero-vad", "energy"):
        baseline = get_detector(name)
        baselines[name] = {k: {m: v.get(m) for m in ("fir", "irl", "apt", "false_alarms", "misses")}
                           for k, v in score_both(run_detector(baseline, audio, names, progress=progress), references,
                                                  tolerance=tolerance).items()}
    extra = {"sweep": result, "operating_point": operating, "baselines": baselines,
             "tuning": None if tuned is None else {"set": tuning_label, "sweep": tuned}}
    return threshold_predictions(model.traces, names, threshold), extra


def _write_run(run: RunDir, data, config, predictions, references, description, calls, seconds, detector,
               tolerance, extra: Optional[dict] = None) -> dict:
    from ihbench.dataset.outputs import claim_output

    from .evaluate_sid import plot_timing_histogram, score_both, timing_errors
    from .predictions import write_predictions

    out = claim_output(run.path, "sid")  # stopped before its summary, the same command writes it again
    write_predictions(predictions, out / "predictions.jsonl")
    audio_seconds = sum(r["duration"] for r in references)
    errors = timing_errors(predictions, references)
    plot_timing_histogram(errors, out / "timing_errors.png", tolerance=tolerance, title=f"{detector or 'predictions'} on {config}")
    scores = score_both(predictions, references, tolerance=tolerance)
    summary = SidSummary(
        data=str(data), config=config, detector=description, n_clips=len(references), tolerance=tolerance,
        scores={name: SidScore.from_json(result, f"scores.{name}") for name, result in scores.items()},
        model_calls=calls, model_calls_per_clip=None if calls is None else calls / len(references),
        seconds=seconds, audio_seconds=audio_seconds,
        real_time_factor=None if seconds is None else seconds / audio_seconds,
        timing_errors={"n": len(errors), "median": sorted(errors)[len(errors) // 2] if errors else None},
        extra={k: v for k, v in (extra or {}).items() if v is not None},
    ).to_json()
    if (extra or {}).get("sweep"):
        _write_sweep(out, config, extra, len(references))
    summary = seal(json.loads(json.dumps(summary, default=str)), out, SEALED_FIGURES["sid"], ["predictions.jsonl"])
    write_json_atomic(run.summary_path, summary)
    return summary


def _write_sweep(out: Path, config: str, extra: dict, n_clips: int) -> None:
    from ihbench.dataset.io import write_atomic

    from .sweep import plot_sweep, report_table

    operating = extra["operating_point"]
    plot_sweep(extra["sweep"], out / "sweep.png", operating=operating,
               title=f"{config}: FIR against APT ({n_clips} clips)\noperating point: {operating['chosen_by']}")
    rows = [("smart-turn", f"threshold > {operating['smart_turn']['threshold']:g}", operating["smart_turn"])]
    if "vad_only" in operating:
        rows.append(("VAD only", f"silence {operating['vad_only']['timeout']:g} s", operating["vad_only"]))
    rows += [(name, "defaults", scores) for name, scores in extra["baselines"].items()]
    subset = f" ({extra['clips']})" if extra.get("clips") else ""
    text = (f"# smart-turn on {config}\n\n{n_clips} clips{subset}. Operating point: {operating['chosen_by']}.\n\n"
            f"{report_table(rows)}\n\n"
            "FIR, IRL: SID-Bench's notebook definitions (its published numbers); README: its README's. "
            "The whole sweep is in summary.json (`sweep`) and sweep.png.\n")
    write_atomic(out / "report.md", text.encode("utf-8"))
