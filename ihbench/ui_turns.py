"""The Space's Turns tab: `ihbench turns` on one two-channel recording, as plain functions.

A recording of the dataset's `duplex` config comes with its ground truth, so the page shows how
far the analysis of the audio agrees with what the renders placed; an uploaded stereo call
(channel 0 the AI, channel 1 the user) gets the same timeline and timing figures without it.
Each analysis is a real `ihbench turns` run directory under the Space's runs folder.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ihbench.ui import UserError, data_dir, masked, new_run_folder, refuse_oversize_upload


@lru_cache(maxsize=4)
def _duplex(data: Optional[str]):
    """The data's duplex config with audio left as bytes, or None when it has none."""
    import datasets

    from ihbench.dataset.duplex import DUPLEX_CONFIG

    if not data:
        return None
    try:
        loaded = datasets.load_dataset(data, DUPLEX_CONFIG)
    except (ValueError, FileNotFoundError):  # no such config in this dataset
        return None
    split = loaded[next(iter(loaded))]
    return split.cast_column("audio", datasets.Audio(decode=False))


def recording_choices() -> list[str]:
    duplex = _duplex(data_dir())
    return list(duplex["conversation_id"]) if duplex is not None else []


def analyze_recording(recording_id: Optional[str], upload: Optional[str], smart_turn: bool = False):
    """(timeline PNG path, timing rows, summary markdown) for a duplex recording or an upload. With
    `smart_turn` the run is `ihbench turns --judge smart-turn`: the timeline gains Smart Turn's
    P(turn end) at each pause with its threshold, and the summary its agreement (what it covers)."""
    from ihbench.dataset.errors import IHBenchError, MissingDependencyError, MissingFileError
    from ihbench.turns.run import run_turns

    judge = None
    if smart_turn:
        from ihbench.turns.smart_turn_judge import SmartTurnJudge

        try:
            judge = SmartTurnJudge()
        except (MissingDependencyError, MissingFileError) as error:  # written for users: what to install
            raise UserError(f"Smart Turn is not available on this server: {error}") from None
    out = new_run_folder("turns")
    truth = None
    if upload:
        refuse_oversize_upload(upload)
        audio = Path(upload)
        _refuse_a_key_for_a_name(audio.name)
    elif recording_id:
        row = _row(recording_id)
        out.mkdir(parents=True)
        audio = out / f"{recording_id}.flac"
        audio.write_bytes(row["audio"]["bytes"])
        truth = row
    else:
        raise UserError("pick a recording of the dataset or upload a stereo file")
    if upload:
        _check_stereo(audio)
    try:
        summary = run_turns([audio], out, progress=False, model_name="space", judge=judge)
    except IHBenchError as error:  # the page shows the file's name, never the server's path
        raise UserError(f"that file cannot be analysed: {masked(str(error).replace(str(audio), audio.name))}") from None
    recording = summary["per_recording"][0]
    events = json.loads((out / recording["events"]).read_text(encoding="utf-8"))
    return str(out / recording["timeline"]), timing_rows(summary["timing"]), _summary(summary, events, truth)


def _refuse_a_key_for_a_name(name: str) -> None:
    """An upload's name becomes the name of its folder and its entry in summary.json, as on the command
    line: one shaped like a key is refused there, and so here (battery 52, Y7)."""
    from ihbench.dataset.redaction import credential_in

    found = credential_in(name)
    if found:
        raise UserError(f"the uploaded file's name holds {found} (a credential; not shown); rename the file and "
                        "upload it again")


def _check_stereo(audio: Path) -> None:
    """An upload of other than two channels, said in the page's terms (the command line's `--pair` for two
    mono files is not the Space's); a file no decoder reads is left to `run_turns` to name."""
    from ihbench.dataset.audio import audio_channels

    try:
        channels = audio_channels(audio)
    except Exception:  # noqa: BLE001 (not audio at all: said by the analysis, in its words)
        return
    if channels != 2:
        raise UserError(f"{audio.name} has {channels} channel(s); upload one stereo file (the AI on the left "
                        "channel, the user on the right)")


def _row(recording_id: str) -> dict:
    duplex = _duplex(data_dir())
    if duplex is None or recording_id not in duplex["conversation_id"]:
        raise UserError(f"no recording {recording_id!r} in this dataset")
    return duplex[duplex["conversation_id"].index(recording_id)]


def timing_rows(timing: dict) -> list[list]:
    """[figure, value, CI low, CI high, n]; the talk-over row is a count of the n barge-ins."""
    rows = []
    for key, label in (("response_latency_s", "response latency (s)"), ("stop_latency_s", "stop latency (s)")):
        figure = timing[key]
        rows.append([label, _round(figure["mean"]), _round(figure["ci_low"]), _round(figure["ci_high"]), figure["n"]])
    rate = timing["turn_over_rate"]
    rows.append(["turn-over rate on barge-ins", _round(rate["value"]), _round(rate["ci_low"]), _round(rate["ci_high"]),
                 rate["n"]])
    if timing.get("talk_overs") is not None:  # absent from summaries written before talk-overs were counted
        rows.append(["talk-overs (barge-ins the AI talked over)", timing["talk_overs"], None, None, rate["n"]])
    return rows


def _round(value) -> Optional[float]:
    return None if value is None else round(float(value), 3)


def _summary(summary: dict, events: dict, truth: Optional[dict]) -> str:
    both = summary["statistics"]["both"]
    lines = [f"**{summary['duration_s']:.1f} s** analysed in {summary['seconds']:.1f} s; "
             f"{both['overlap']['count']} overlaps, {both['gap']['count']} gaps, "
             f"{both['backchannel']['count']} backchannel(s)."]
    if truth is not None:
        n = min(len(events["events"]), len(truth["events"]))
        same = sum(a == b for a, b in zip(events["events"][:n], truth["events"][:n]))
        placed = [i["stop_latency"] for i in truth["interruptions"] if i["stop_latency"] is not None]
        talked_over = sum(i.get("outcome") == "talk_over" for i in truth["interruptions"])
        lines.append(f"Agreement with the rendered ground truth: **{same / n:.3f}** of {n} chunks of 40 ms "
                     f"have the same event label.")
        if placed:
            lines.append(f"Stop latency placed by the render: {sum(placed) / len(placed):.3f} s on average "
                         f"over {len(placed)} yields; {talked_over} barge-in(s) talked over.")
    if summary["agreement"]:
        from ihbench.turns.run import agreement_lines

        lines.append("Talking Turns agreement (bottom row of the timeline: P(turn end) at each pause):\n\n"
                     + "\n".join(f"- {line}" for line in agreement_lines(summary["agreement"])))
    return "\n\n".join(lines)
