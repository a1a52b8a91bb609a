"""`datasets.Features` of the configs the in-house build writes.

The `conversations` config is the official wide schema plus one in-house column per turn
(`assistant_turn_N_audio`, the delivered part rendered); its structs are fixed here so every
build, whatever its sources, has the same Arrow schema.
"""
from __future__ import annotations


def _string():
    from datasets import Value

    return Value("string")


def _strings():
    from datasets import List, Value

    return List(Value("string"))


def _bools():
    from datasets import List, Value

    return List(Value("bool"))


def _audio():
    from datasets import Audio

    from .audio_format import SAMPLING_RATE

    return Audio(sampling_rate=SAMPLING_RATE)


def knowledge_base_feature() -> dict:
    from datasets import List

    return {
        "workflow_stages": List({
            "name": _string(), "description": _string(), "skip_conditions": _strings(),
            "failure_handling": _string(), "termination_conditions": _strings(),
        }),
        "guidelines": _strings(),
        "user_data": List({"field": _string(), "value": _string()}),
    }


def user_intent_feature() -> dict:
    from datasets import Value

    from .schema import INTERRUPTION_TYPES

    return {
        "profile": _string(),
        "interruption_probabilities": {kind: Value("float64") for kind in INTERRUPTION_TYPES},
        "hidden_info": _strings(),
    }


def conversations_features(max_turns: int):
    from datasets import Features, Value

    features = {
        "conversation_id": _string(),
        "domain": {"name": _string(), "description": _string()},
        "goal": _string(),
        "system_message": _string(),
        "knowledge_base": knowledge_base_feature(),
        "user_intent": user_intent_feature(),
        "num_turns": Value("int64"),
    }
    for n in range(1, max_turns + 1):
        features.update({
            f"assistant_turn_{n}_transcript": _string(),
            f"assistant_turn_{n}_original": _string(),
            f"user_turn_{n}_transcript": _string(),
            f"user_turn_{n}_audio": _audio(),
            f"user_turn_{n}_interruption_type": _string(),
            f"turn_{n}_tf_rubric": _string(),
            f"turn_{n}_rq_rubrics": _strings(),
            f"assistant_turn_{n}_audio": _audio(),
        })
    return Features(features)


def baseline_features(max_turns: int):
    from datasets import Features, Value

    features = {"conversation_id": _string(), "num_turns": Value("int64")}
    for n in range(1, max_turns + 1):
        features[f"turn_{n}_baseline_response"] = _string()
        features[f"turn_{n}_baseline_rq_verdicts"] = _bools()  # the baseline judged on each RQ criterion
        features[f"turn_{n}_baseline_rq_reasons"] = _strings()
    return Features(features)


def interruptions_features():
    from datasets import Features, List, Value

    return Features({
        "id": _string(),
        "conversation_id": _string(),
        "domain": _string(),
        "goal": _string(),
        "interruption_type": _string(),
        "turn": Value("int64"),
        "depth": Value("int64"),
        "depth_bin": _string(),
        "system_prompt": _string(),
        "history": List({"role": _string(), "text": _string(), "audio": _audio()}),
        "interrupted_original": _string(),
        "interrupted_delivered": _string(),
        "interrupted_audio": _audio(),
        "interruption_transcript": _string(),
        "interruption_audio": _audio(),
        "tf_rubric": _string(),
        "rq_rubrics": _strings(),
        "baseline_response": _string(),
        "baseline_rq_verdicts": _bools(),
    })


def _intervals():
    from datasets import List, Value

    return List({"start": Value("float64"), "end": Value("float64")})


def duplex_features():
    """One two-channel recording per conversation and its ground truth (see `duplex.py`)."""
    from datasets import Audio, Features, List, Value

    from .audio_format import SAMPLING_RATE

    seconds = Value("float64")
    return Features({
        "conversation_id": _string(),
        "audio": Audio(sampling_rate=SAMPLING_RATE, num_channels=2),  # channel 0 assistant, 1 user
        "duration": seconds,
        "noise_dbfs": seconds,  # the noise floor's RMS in dBFS, null when the silences are digital zero
        "assistant_speech": _intervals(),
        "user_speech": _intervals(),
        "user_backchannels": _intervals(),
        "events": _strings(),
        "turns": _strings(),
        "end_times": List(seconds),
        "interruptions": List({
            "id": _string(), "turn": Value("int64"), "interruption_type": _string(),
            "user_start": seconds, "user_end": seconds, "cut_point": seconds, "assistant_stop": seconds,
            "stop_latency": seconds, "overlap_start": seconds, "overlap_end": seconds,
            "outcome": _string(),  # yield | talk_over | backchannel (a filler)
        }),
        "segments": List({"channel": Value("int64"), "turn": Value("int64"), "kind": _string(), "text": _string(),
                          "start": seconds, "end": seconds}),
    })
