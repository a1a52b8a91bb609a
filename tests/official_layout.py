"""Builds a small dataset directory in exactly the official bosonai/IHBench wide layout.

Three conversations with different `num_turns` (so columns past a row's num_turns are null),
official type spellings ("Topic Switch", "Filler"), empty type strings on ordinary turns, and a
`baseline` config in the long layout.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from ihbench.dataset.audio import encode_wav

MAX_TURNS = 5


def _tone(frequency: float, seconds: float = 0.6) -> dict:
    t = np.arange(int(16000 * seconds)) / 16000
    return {"bytes": encode_wav(0.3 * np.sin(2 * np.pi * frequency * t)), "path": f"tone_{int(frequency)}.wav"}


def _turn(n, heard, original, user, kind="", tf=None, rq=None):
    return {
        f"assistant_turn_{n}_transcript": heard,
        f"assistant_turn_{n}_original": original,
        f"user_turn_{n}_transcript": user,
        f"user_turn_{n}_audio": _tone(200 + 40 * n),
        f"user_turn_{n}_interruption_type": kind,
        f"turn_{n}_tf_rubric": tf,
        f"turn_{n}_rq_rubrics": rq,
    }


CONVERSATIONS = [
    {
        "conversation_id": "conv-a",
        "domain": {"name": "telecom", "description": "Carrier support"},
        "goal": "Move a line to a new plan",
        "system_message": "You are a telecom support agent.",
        "knowledge_base": {"stages": ["verify", "change"], "user_data": "Line 555-0142"},
        "user_intent": {"profile": "rushed", "hidden_info": "travels often"},
        "turns": [
            _turn(1, "Hi, can I have your line number?", "Hi, can I have your line number?", "It's 555-0142."),
            _turn(2, "Thanks. The Unlimited Plus plan costs", "Thanks. The Unlimited Plus plan costs forty dollars a month.",
                  "Wait, the number is 555-0143, sorry.", "Correction",
                  "Use 555-0143 and continue with the plan price.", ["Accepts 555-0143", "Does not argue"]),
            _turn(3, "Done, you're all set.", "Done, you're all set.", "Bye."),
        ],
    },
    {
        "conversation_id": "conv-b",
        "domain": {"name": "travel", "description": "Airline desk"},
        "goal": "Rebook a cancelled flight",
        "system_message": "You are an airline agent.",
        "knowledge_base": {"stages": ["find booking", "rebook"], "user_data": "PNR QX7ZL2"},
        "user_intent": {"profile": "calm", "hidden_info": "needs aisle seat"},
        "turns": [
            _turn(1, "Welcome. Before we start, could you", "Welcome. Before we start, could you spell your last name?",
                  "Oh, also, is the lounge open?", "Topic Switch",
                  "Answer about the lounge, then ask for the last name.", ["Answers the lounge question", "Returns to the name"]),
            _turn(2, "The lounge opens at six. Your last name?", "The lounge opens at six. Your last name?", "Okafor."),
            _turn(3, "I see booking QX7ZL2.", "I see booking QX7ZL2.", "Great."),
            _turn(4, "The next flight leaves at", "The next flight leaves at nine fifteen from gate B12.", "Mm-hm.", "Filler",
                  "Continue with the departure time and gate.", ["Continues from 'leaves at'", "Does not restart"]),
            _turn(5, "nine fifteen from gate B12.", "nine fifteen from gate B12.", "Thanks."),
        ],
    },
    {
        "conversation_id": "conv-c",
        "domain": {"name": "saas", "description": "Software vendor"},
        "goal": "Reset two-factor login",
        "system_message": "You are a SaaS support agent.",
        "knowledge_base": {"stages": ["verify"], "user_data": "admin@example.org"},
        "user_intent": {"profile": "polite", "hidden_info": "lost phone"},
        "turns": [
            _turn(1, "Hello, what's your admin email?", "Hello, what's your admin email?", "admin at example dot org."),
            _turn(2, "Reset sent.", "Reset sent.", "Thanks."),
        ],
    },
]

BASELINE_ROWS = [
    {"conversation_id": "conv-a", "turn": 2, "response": "No problem, I've updated it to 555-0143. The plan is forty dollars."},
    {"conversation_id": "conv-b", "turn": 1, "response": "The lounge is open. Could you spell your last name?"},
    {"conversation_id": "conv-b", "turn": 4, "response": "As I was saying, the next flight leaves at nine fifteen."},
]


def official_rows() -> list[dict]:
    rows = []
    for conversation in CONVERSATIONS:
        row = {k: v for k, v in conversation.items() if k != "turns"}
        row["num_turns"] = len(conversation["turns"])
        for n in range(1, MAX_TURNS + 1):
            if n <= len(conversation["turns"]):
                row.update(conversation["turns"][n - 1])
            else:
                row.update({k: None for k in _turn(n, "", "", "")})
        rows.append(row)
    return rows


def official_features():
    from datasets import Audio, Features, List, Value

    features = {
        "conversation_id": Value("string"),
        "domain": {"name": Value("string"), "description": Value("string")},
        "goal": Value("string"),
        "system_message": Value("string"),
        "knowledge_base": {"stages": List(Value("string")), "user_data": Value("string")},
        "user_intent": {"profile": Value("string"), "hidden_info": Value("string")},
        "num_turns": Value("int64"),
    }
    for n in range(1, MAX_TURNS + 1):
        features.update({
            f"assistant_turn_{n}_transcript": Value("string"),
            f"assistant_turn_{n}_original": Value("string"),
            f"user_turn_{n}_transcript": Value("string"),
            f"user_turn_{n}_audio": Audio(sampling_rate=16000),
            f"user_turn_{n}_interruption_type": Value("string"),
            f"turn_{n}_tf_rubric": Value("string"),
            f"turn_{n}_rq_rubrics": List(Value("string")),
        })
    return Features(features)


def write_official_layout(root: Path) -> Path:
    """`root/` with conversations/ and baseline/ Parquet and a README declaring both configs."""
    import datasets

    root.mkdir(parents=True, exist_ok=True)
    (root / "conversations").mkdir(exist_ok=True)
    (root / "baseline").mkdir(exist_ok=True)
    datasets.Dataset.from_list(official_rows(), features=official_features()).to_parquet(
        str(root / "conversations" / "test-00000-of-00001.parquet"))
    datasets.Dataset.from_list(BASELINE_ROWS).to_parquet(str(root / "baseline" / "test-00000-of-00001.parquet"))
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: conversations\n  default: true\n  data_files:\n  - split: test\n    path: conversations/test-*\n"
        "- config_name: baseline\n  data_files:\n  - split: test\n    path: baseline/test-*\n"
        "---\n# official-layout fixture\n"
    )
    return root
