"""`ihbench turns`: two-channel recordings -> events, statistics, timing and (with a judge) agreement.

    OUT/summary.json              pooled statistics, timing figures, agreement or null (schema in
                                  `ihbench/turns/__init__.py`)
    OUT/<recording>/events.json   events, turns, end_times, the intervals they came from, and the
                                  recording's own statistics and timing events
    OUT/<recording>/timeline.png  both channels with IPUs, backchannels, overlaps and events

Per recording: silero-vad on both channels (`vad.py`), each segment's start and end measured on
the frame energy (`boundaries.py`), IPUs by the 200 ms rule and backchannels
by words or heuristic (`ipus.py`), the floor-state machine (`floor.py`), statistics and timing
(`stats.py`). Agreement goes through the `turn_taking_agreement` metric module, loaded with
`evaluate.load` exactly as users load it, so nothing here re-implements its arithmetic. OUT is
locked for the life of the command (one writer per directory).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from ihbench.dataset.outputs import TURNS_MARKER
from ihbench.dataset.errors import UsageError
from ihbench.dataset.floor import FloorLabels, Interval, floor_labels
from ihbench.dataset.io import write_json_atomic
from ihbench.dataset.ipus import (
    MAX_BACKCHANNEL_S,
    backchannels_by_heuristic,
    backchannels_from_words,
    merge_ipus,
    split_backchannels,
)
from ihbench.dataset.redaction import redact

from ..resources import load_metric
from ..rundir import RunDir
from ..summaries import SEALED_FIGURES, TURNS_FORMAT, TurnsSummary, seal
from .audio import TwoChannel, plan_recordings, read_recording
from .boundaries import DESCRIPTION as BOUNDARIES
from .boundaries import speech_boundaries
from .judge import TurnTakingJudge, check_likelihood_file, likelihoods_for, read_likelihood_file, run_judge
from .smart_turn_judge import SmartTurnJudge
from .stats import event_totals, pool_totals, statistics, timing_events, timing_summary

log = logging.getLogger("ihbench")

AGREEMENT_METRICS = ("speak_up", "backchannel", "interrupt", "convey_turn", "handle_interruption")
CHANNELS = ("A", "B")


@dataclass
class Analysis:
    """Everything `ihbench turns` derives from one recording; `events_json()` is its events.json."""

    name: str
    duration: float
    vad: tuple[list[Interval], list[Interval]]
    ipus: tuple[list[Interval], list[Interval]]
    backchannels: tuple[list[Interval], list[Interval]]
    speech: tuple[list[Interval], list[Interval]]
    backchannel_method: tuple[str, str]
    labels: FloorLabels
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def totals(self) -> dict:
        return event_totals(*self.ipus, *self.backchannels)

    @property
    def timing(self) -> dict:
        return timing_events(*self.speech)

    def events_json(self) -> dict:
        def spans(intervals):
            return [[round(s, 4), round(e, 4)] for s, e in intervals]

        channels = {}
        for index, role in enumerate(CHANNELS):
            channels[role] = {"speaker": ("ai", "user")[index], "vad": spans(self.vad[index]),
                              "ipus": spans(self.ipus[index]), "speech": spans(self.speech[index]),
                              "backchannels": spans(self.backchannels[index]),
                              "backchannel_method": self.backchannel_method[index]}
        return {"recording": self.name, "sources": list(self.sources), "duration_s": round(self.duration, 6),
                **self.labels.to_reference(), "intervals": channels,
                "statistics": statistics(self.totals, self.duration), "timing": self.timing,
                "notes": list(self.notes)}


def analyze_intervals(name: str, duration: float, vad: Sequence[Sequence[Interval]], *,
                      words: Optional[Mapping[str, list]] = None, sources: Sequence[str] = (),
                      notes: Sequence[str] = ()) -> Analysis:
    """From each channel's voice-activity segments (and optional words per channel A/B) on:
    the part of the analysis that needs no audio, so ground-truth intervals go through it too."""
    ipus = (merge_ipus(vad[0]), merge_ipus(vad[1]))
    backchannels, methods, notes = [], [], list(notes)
    for index, role in enumerate(CHANNELS):
        if words is not None and role in words:
            backchannels.append(backchannels_from_words(ipus[index], words[role]))
            methods.append("words")
            notes.extend(_unworded_channel(name, role, ipus[index], words[role]))
        else:
            backchannels.append(backchannels_by_heuristic(ipus[index], ipus[1 - index]))
            methods.append(f"heuristic (<= {MAX_BACKCHANNEL_S:g} s inside the other's speech)")
    speech = (split_backchannels(ipus[0], backchannels[0]), split_backchannels(ipus[1], backchannels[1]))
    labels = floor_labels(speech[0], speech[1], duration, a_backchannels=backchannels[0], b_backchannels=backchannels[1])
    return Analysis(name, duration, (list(vad[0]), list(vad[1])), ipus, (backchannels[0], backchannels[1]), speech,
                    (methods[0], methods[1]), labels, tuple(sources), tuple(notes))


def _unworded_channel(name: str, role: str, ipus: Sequence[Interval], words: Sequence[dict]) -> list[str]:
    """A transcript line makes its words the only judge of that channel's backchannels; one
    whose words fall in none of the channel's speech (the wrong recording's line, times shifted
    by an offset) silently found none, and the scores changed without a word. Said, not refused:
    the line may be right and the speech detector wrong."""
    if not ipus or any(start <= (w["start"] + w["end"]) / 2 <= end for start, end in ipus for w in words):
        return []
    return [f"{name}: channel {role}'s transcript has no word inside any of its {len(ipus)} speech stretch(es) "
            f"({len(words)} word(s) in all), so no backchannel is found on it; check that the line belongs to "
            "this recording and that its times are seconds from the recording's start"]


def analyze(recording: TwoChannel, vad, *, words: Optional[Mapping[str, list]] = None) -> Analysis:
    """One recording through silero-vad (`vad` is a `ChannelVad`), `speech_boundaries` (the
    detector's hangover is not speech) and `analyze_intervals`."""
    channels = (recording.a, recording.b)
    segments = [speech_boundaries(x, found) for x, found in zip(channels, vad.speech(list(channels)))]
    return analyze_intervals(recording.name, recording.duration, segments, words=words,
                             sources=recording.sources, notes=recording.notes)


def agreement(analyses: Sequence[Analysis], likelihoods: Mapping[str, object], *, source: str, judge=None) -> dict:
    """The five agreement metrics and the single-label evaluation, all recordings pooled. A judge
    that speaks to only some of them (`covers`, e.g. `SmartTurnJudge`) gets those computed, with
    its `thresholds()`, and the others entered as not covered with the reason, never as a number."""
    from ..resources import metric_version

    predictions = [likelihoods[a.name].tolist() for a in analyses]
    references = [a.labels.to_reference() for a in analyses]
    covers = getattr(judge, "covers", AGREEMENT_METRICS)
    options = {"thresholds": judge.thresholds()} if hasattr(judge, "thresholds") else {}
    module = load_metric("turn_taking_agreement", "default")
    metrics = {name: module.compute(predictions=predictions, references=references, metric=name, **options)
               if name in covers else {"metric": name, "not_covered": judge.not_covered[name]}
               for name in AGREEMENT_METRICS}
    if getattr(judge, "single_label_not_covered", None):
        single = {"not_covered": judge.single_label_not_covered}
    else:
        single = load_metric("turn_taking_agreement", "single_label").compute(predictions=predictions,
                                                                              references=references)
    result = {"judge": source, "metric": "turn_taking_agreement", "metric_version": metric_version("turn_taking_agreement"),
              "n_recordings": len(analyses), "n_chunks": sum(len(a.labels.events) for a in analyses),
              "metrics": metrics, "single_label": single}
    if hasattr(judge, "describe"):
        result["judge_model"] = judge.describe()
    return result


def agreement_lines(agreement: dict) -> list[str]:
    """One line per metric; one a judge does not cover says so (never a number), as does the
    single-label line. The CLI prints them; the Space and the report show them."""
    lines = []
    judge = agreement.get("judge_model")
    if judge:
        lines.append(f"judge {judge['judge']} (P(turn end) > {judge['threshold']:g}; pipecat-ai {judge['pipecat_ai']}, "
                     f"model sha256 {judge['sha256'][:12]})")
    for name, result in agreement["metrics"].items():
        if "not_covered" in result:
            lines.append(f"agreement {name}: not covered ({result['not_covered']})")
            continue
        classes = [f"{k} {v['agreement']:.3f} (n={v['n']})" if v["agreement"] is not None else f"{k} - (n=0)"
                   for k, v in result.items() if isinstance(v, dict)]
        lines.append(f"agreement {name}: {', '.join(classes)}")
    single = agreement["single_label"]
    if "not_covered" in single:
        lines.append(f"single-label evaluation: not covered ({single['not_covered']})")
    elif single["macro_f1"] is not None:
        lines.append(f"single-label macro F1 {single['macro_f1']:.3f} over {single['n_chunks']} chunks")
    return lines


def _words_by_recording(transcripts: Optional[Path]) -> Optional[dict]:
    if transcripts is None:
        return None
    from .transcripts import read_transcripts

    grouped: dict[str, dict] = {}
    for (recording, channel), words in read_transcripts(transcripts).items():
        grouped.setdefault(recording, {})[channel] = words
    return grouped


def _check_word_times(words: dict, plan, transcripts) -> None:
    """A word said after its recording ends is not of it: times in milliseconds (as many ASR tools give
    them) would otherwise silently count no backchannel at all. Said before any audio is analysed."""
    from ihbench.dataset.audio import audio_duration

    for name, files in plan:
        channels = words.get(name) or {}
        latest = max((w["end"] for said in channels.values() for w in said), default=0.0)
        if not latest:
            continue
        try:
            duration = max(audio_duration(path) for path in files)
        except Exception:  # noqa: BLE001 (a header that cannot be read fails properly when the file is decoded)
            continue
        if latest > duration + 1.0:
            raise UsageError(f"--transcripts: {transcripts}: recording {name!r} has a word ending at {latest:g} s, "
                             f"past its {duration:.1f} s of audio (times are seconds; milliseconds?)")


def _planned_seconds(plan) -> float:
    from ihbench.dataset.audio import audio_duration

    try:
        return sum(max(audio_duration(path) for path in files) for _, files in plan)
    except Exception:  # a header that cannot be read fails properly when the file is decoded
        return 0.0


def _warm_up() -> None:
    """Import the decoder and the plotting library before the clock starts: one-off costs of a
    few seconds that would otherwise be billed to the first recording's real-time factor."""
    import importlib

    from ihbench.dataset.plotting import pyplot

    importlib.import_module("torchcodec.decoders")
    pyplot()


def run_turns(audio: Sequence, out, *, pair: bool = False, swap: bool = False, transcripts=None,
              judge_likelihoods=None, judge: Union[TurnTakingJudge, SmartTurnJudge, str, None] = None,
              model_name: Optional[str] = None,
              progress: bool = True, vad_options: Optional[dict] = None, seed: int = 0,
              command: Optional[Sequence[str]] = None) -> dict:
    """Analyse every recording into OUT and return summary.json's content.

    Inputs are checked before any audio is decoded: the files exist and name distinct
    recordings, the transcripts parse, and a likelihoods file has rows of five numbers for every
    recording (how many rows is checked as soon as a recording's length is known, before its
    files are written). Agreement needs `judge_likelihoods` (a file, see `judge.py`) or a
    `judge`: a `TurnTakingJudge`, or "smart-turn" (`smart_turn_judge.py`: the model, loaded
    before the output folder is made, so a missing extra is refused first, scores each pause, and
    only the metrics it covers are computed); without either it is null.
    """
    from tqdm.auto import tqdm

    from ihbench import __version__

    from .plot import plot_timeline
    from .vad import ChannelVad

    if judge_likelihoods is not None and judge is not None:
        raise UsageError("give judge likelihoods or a judge, not both")
    if isinstance(judge, str):
        if judge != SmartTurnJudge.name:
            raise UsageError(f"--judge: unknown judge {judge!r}; expected {SmartTurnJudge.name}")
        judge = SmartTurnJudge()
    plan = plan_recordings(audio, pair=pair)
    _refuse_repeated_audio(plan)
    words = _words_by_recording(Path(transcripts) if transcripts else None)
    raw_likelihoods = read_likelihood_file(judge_likelihoods) if judge_likelihoods is not None else None
    if raw_likelihoods is not None:  # its shape, before any audio is analysed or the output folder made
        check_likelihood_file(raw_likelihoods, judge_likelihoods, [name for name, _ in plan])
    notes = []
    if words is not None and not words:  # an empty file: the heuristic without words, said (battery 57, D9)
        log.warning("%s: holds no transcript lines; backchannels are found without words", transcripts)
    if words is not None:
        unknown = sorted(set(words) - {name for name, _ in plan})
        if unknown:
            # a warning, --quiet or not, as a likelihoods file for the wrong recording is an error: a typo in
            # a name silently falls back on the heuristic
            log.warning("%s: no recording named %s; those lines are unused (the recordings are %s)", transcripts,
                        ", ".join(map(repr, unknown[:5])), ", ".join(repr(name) for name, _ in plan[:5]))
        _check_word_times(words, plan, transcripts)
    run = RunDir(out)
    if run.path.exists() and not run.path.is_dir():
        raise UsageError(f"--out: {run.path} is a file, not a folder")
    vad = ChannelVad(**(vad_options or {}))
    _warm_up()
    # every recording read (decoded, its channels and samples checked) before any is analysed: a damaged second
    # file left the first one's files in --out, and no summary; one recording alone is kept (read once), and its
    # error comes before any progress bar
    read_first = {plan[0][0]: read_recording(plan[0][1], swap=swap)} if len(plan) == 1 else {}
    if len(plan) > 1:
        for _, files in tqdm(plan, desc="checking the recordings", unit="recording", disable=not progress):
            read_recording(files, swap=swap)
    analyses, judged, rows, silent = [], {}, [], []
    pauses = isinstance(judge, SmartTurnJudge)
    started = time.perf_counter()
    with run.writing():
        with tqdm(total=round(_planned_seconds(plan), 1) or None, unit="s", desc="turns", disable=not progress,
                  bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt} s of audio [{elapsed}<{remaining}]") as bar, \
                tqdm(total=0, unit="pause", desc=judge.name if pauses else "", position=1,
                     disable=not (progress and pauses)) as pause_bar:
            for name, files in plan:
                recording = read_first.pop(name, None) or read_recording(files, swap=swap)
                analysis = analyze(recording, vad, words=(words or {}).get(name))
                if not any(analysis.speech) and not any(analysis.backchannels):  # a muted pair, a wrong file
                    log.warning("%s: no speech found on either channel (AI, user); left out of the summary (check "
                                "the file, and --swap/--pair)", name)
                    silent.append(name)
                    bar.update(round(analysis.duration, 1))
                    continue
                if raw_likelihoods is not None:  # its rows, now that the length is known: before its files
                    likelihoods_for(raw_likelihoods, judge_likelihoods, {name: len(analysis.labels.events)})
                turn_end = None
                if pauses:
                    judged[name], asked = judge.judge(recording, analysis, pause_bar)
                    turn_end = {"judge": judge.name, "threshold": judge.threshold,
                                "pauses": [q.to_json() for q in asked]}
                elif judge is not None:
                    judged[name] = run_judge(judge, recording)
                (run.path / TURNS_MARKER).touch()  # stopped before its summary, the folder is still known as ours
                folder = run.path / name
                folder.mkdir(parents=True, exist_ok=True)
                events = analysis.events_json()
                if turn_end is not None:
                    events["turn_end"] = turn_end
                write_json_atomic(folder / "events.json", events)
                plot_timeline(folder / "timeline.png", name, analysis.duration, analysis.labels,
                              speech=analysis.speech, backchannels=analysis.backchannels,
                              channels=(recording.a, recording.b), barge_ins=events["timing"]["barge_ins"],
                              turn_end=turn_end)
                analyses.append(analysis)
                notes.extend(analysis.notes)
                rows.append({"recording": name, "sources": list(recording.sources),
                             "duration_s": round(analysis.duration, 6), "n_chunks": len(analysis.labels.events),
                             "events": f"{name}/events.json", "timeline": f"{name}/timeline.png",
                             "responses": len(events["timing"]["responses"]),
                             "barge_ins": len(events["timing"]["barge_ins"]),
                             "talk_overs": sum(b["outcome"] == "talk_over" for b in events["timing"]["barge_ins"])})
                bar.update(round(analysis.duration, 1))
        if not analyses:
            raise UsageError(f"no speech found in any of the {len(silent)} recording(s) ({', '.join(silent[:5])}); "
                             "nothing was written")
        seconds = time.perf_counter() - started
        result = None
        if raw_likelihoods is not None:
            chunks = {a.name: len(a.labels.events) for a in analyses}
            result = agreement(analyses, likelihoods_for(raw_likelihoods, judge_likelihoods, chunks),
                               source=str(judge_likelihoods))
        elif judge is not None:
            result = agreement(analyses, judged, source=f"judge {getattr(judge, 'name', type(judge).__name__)}",
                               judge=judge)
        duration = sum(a.duration for a in analyses)
        summary = TurnsSummary.from_json({  # checked by the type its readers read it with
            "model_name": model_name, "recordings": len(analyses),
            "timing": timing_summary([a.timing for a in analyses], seed=seed),
            "statistics": statistics(pool_totals([a.totals for a in analyses]), duration),
            "agreement": result,
            "duration_s": round(duration, 6), "seconds": round(seconds, 3),
            "real_time_factor": seconds / duration if duration else None,
            "channels": {"A": "ai", "B": "user", "swap": swap, "pair": pair},
            "vad": {**vad.describe(), "boundaries": BOUNDARIES}, "transcripts": str(transcripts) if transcripts else None,
            "per_recording": rows, "notes": notes, "ihbench_version": __version__,
            "command": redact(list(command)) if command else None, "format_version": TURNS_FORMAT,
        }).to_json()
        summary = seal(json.loads(json.dumps(summary)), run.path, SEALED_FIGURES["turns"],
                       [row["events"] for row in rows])
        write_json_atomic(run.summary_path, summary)
        _remove_stale_recordings(run.path, {row["recording"] for row in rows})
    return summary


def _refuse_repeated_audio(plan) -> None:
    """One call given twice (a copy under another name) would count its turns twice, and narrow every
    interval as if it were more evidence: refused, naming both, before any audio is decoded."""
    import hashlib

    seen: dict[str, str] = {}
    for name, files in plan:
        digest = hashlib.sha256(b"".join(hashlib.sha256(Path(f).read_bytes()).digest() for f in files)).hexdigest()
        if digest in seen:
            shown = " + ".join(Path(f).name for f in files)
            raise UsageError(f"AUDIO: {shown} holds the same audio as recording {seen[digest]!r} (the same call "
                             "twice?); give each recording once")
        seen[digest] = name


def _remove_stale_recordings(out: Path, current: set) -> None:
    """An earlier `turns` into the same folder left recordings this summary does not list; their
    folders (events.json and timeline.png, nothing else) would be read as part of this output."""
    import shutil

    for folder in out.iterdir():
        if folder.is_dir() and folder.name not in current and (folder / "events.json").is_file() \
                and {p.name for p in folder.iterdir()} <= {"events.json", "timeline.png"}:
            shutil.rmtree(folder)
