"""Turn-taking from two-channel recordings (the Talking Turns protocol): voice activity per
channel, inter-pausal units, backchannels, and the floor-state machine that turns both channels
into the 40 ms `events` and `turns` the `turn_taking_agreement` metric module takes.

The floor rules live in the data layer, where the dataset build's duplex labels also come from:
`ihbench.dataset.ipus` (IPUs by the 200 ms rule; backchannels by words, or the short-IPU
heuristic) and `ihbench.dataset.floor` (the floor-state machine: intervals -> events, turns,
end_times). This package finds the intervals in audio and reports on them:

    audio.py        stereo file or pair of mono files -> 16 kHz channels (A the AI, B the user)
    vad.py          silero-vad speech segments per channel, both channels batched
    boundaries.py   each segment's start and end measured on frame energy (not the detector's hangover)
    transcripts.py  the --transcripts file (word timings per recording and channel)
    stats.py        Section 3.1 corpus statistics and the timing figures
    judge.py        the `TurnTakingJudge` interface and the --judge-likelihoods file formats
    smart_turn_judge.py  --judge smart-turn: Smart Turn v3.2 at each pause (speak_up, convey_turn only)
    plot.py         the timeline PNG
    run.py          `run_turns`: the whole command; `analyze_intervals` for known intervals

The command `ihbench turns` (its options and output lines) is `ihbench/cli/turns.py`.

summary.json (`ihbench.summaries.TurnsSummary`; read by `ihbench report`; keys marked * are part
of that contract)::

    {
      "kind": "turns",                                  *
      "model_name": str | null,                         *  --model-name
      "recordings": int,                                *  number of recordings
      "timing": {                                       *  pooled over recordings
        "response_latency_s": {"mean", "median", "ci_low", "ci_high", "n"},   *  seconds
        "stop_latency_s":     {"mean", "median", "ci_low", "ci_high", "n"},   *  seconds
        "turn_over_rate":     {"value", "ci_low", "ci_high", "n"},            *  share in [0, 1]
        "talk_overs":         int                                              *  barge-ins the AI talked over
      },
      "statistics": {                                   *
        "duration_s": float,
        "speakers": {"ai": S, "user": S},  "both": S,
            S = {kind: {"count", "per_minute", "duration_s", "share", "mean_s"}}
            for kind in ipu, pause, gap, overlap, backchannel
      },
      "agreement": null | {                             *  with --judge-likelihoods or --judge
        "judge", "metric", "metric_version", "n_recordings", "n_chunks",
        "metrics": {speak_up | backchannel | interrupt | convey_turn | handle_interruption:
                    the metric module's result: {"metric", "threshold", "n_instances",
                    CLASS: {"agreement", "n", "ci_low", "ci_high"}, ...}
                    or, for a metric the judge does not cover: {"metric", "not_covered": reason}},
        "single_label": {"labels", "confusion_matrix", "confusion_matrix_row_normalized",
                         "f1", "macro_f1", "n_chunks"} or {"not_covered": reason},
        "judge_model": {"judge", "threshold", "model_file", "sha256", "pipecat_ai", "verified",
                        "threads", "sampling_rate", "asked"}    only with --judge smart-turn
      },
      "duration_s", "seconds", "real_time_factor",         processing cost
      "channels", "vad", "transcripts", "per_recording", "notes", "ihbench_version", "command",
      "sealed": {"figures", "figures_sha256", "files_sha256"}   `summaries.seal`: digests of timing,
                                                 statistics and agreement and of each events.json; the
                                                 report refuses an output edited after it was written
    }

With --judge smart-turn each events.json also has "turn_end": {"judge", "threshold", "pauses":
[{"speaker", "speech_end", "time", "segment_start", "first_row", "last_row", "probability"}]}, the
pauses the model was asked at (`smart_turn_judge.PauseQuery`), drawn under the timeline.

A barge-in ends in a yield (the AI stops while the user still holds it: within 200 ms of the
user's last speech of it, pauses of up to 1 s included) or a talk-over; stop latency and the turn-over rate's successes are the yields,
`talk_overs` the rest (`ihbench.dataset.floor.barge_ins`). format_version is 2 (`TURNS_FORMAT`):
version 1 counted a talk-over as a yield when the user spoke again after the AI finished.
Every mean, median and bound is null when n = 0; the latency interval is null below n = 2.
Latency intervals are 1000-resample percentile bootstraps of the mean (seed 0); the rate's is
the 95 % Wilson interval. Definitions: `stats.py`.
"""
# Nothing is imported here (the package costs nothing to import): `run_turns` lives in `.run`, `TurnTakingJudge` in `.judge`.
