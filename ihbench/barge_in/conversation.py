"""One on-policy call as it went: the rounds so far in the generation pipeline's shape (what its
agents read), and what the model under test is shown next, built by the benchmark's protocol.

Every model input is `ihbench.protocol.build_model_input` on an `EvalItem`, the one place that
decides what a model hears: before round N the item is round N-1 (its message as the caller heard
it, cut or whole, and the caller's answer, as audio or text) with the rounds before it as history.
After a placed cut that item is the live interruption point itself, rubric and baseline included,
as the judges will read it. Only the opening round, which has no history, is the system prompt alone.
"""
from __future__ import annotations

from typing import Callable, Optional

from ihbench.dataset.schema import AudioClip, EvalItem, Interrupted, Message, Rubric, Utterance, item_id
from ihbench.loaders.base import InputTurn, ModelInput
from ihbench.protocol import build_model_input


class Call:
    def __init__(self, conversation, modality: str, user_audio: Callable[[str], bytes]):
        self.conversation, self.modality, self.user_audio = conversation, modality, user_audio
        self.turns: list[dict] = []  # pipeline shape: stage, assistant, user[, delivered, interruption]
        self._clips: list[Optional[AudioClip]] = []

    def add(self, turn: dict) -> None:
        self.turns.append(turn)
        self._clips.append(AudioClip(bytes=self.user_audio(turn["user"])) if self.modality == "audio" else None)

    def item(self, number: int) -> EvalItem:
        """Round `number` (1-based) as an interruption point (an uncut round as one whose whole
        message was delivered, with no type): the protocol's input, the judges' item."""
        c, turn = self.conversation, self.turns[number - 1]
        history: list[Message] = []
        for earlier, clip in zip(self.turns[:number - 1], self._clips):
            history += [Message("assistant", earlier.get("delivered", earlier["assistant"])),
                        Message("user", earlier["user"], clip)]
        point = turn.get("interruption") or {}
        return EvalItem(
            id=item_id(c.conversation_id, number), conversation_id=c.conversation_id, domain=c.domain, goal=c.goal,
            interruption_type=point.get("type", ""), turn=number, depth=number - 1, system_prompt=c.system_prompt,
            history=history,
            interrupted=Interrupted(original=turn["assistant"], delivered=turn.get("delivered", turn["assistant"])),
            interruption=Utterance(turn["user"], self._clips[number - 1]),
            rubric=Rubric(point.get("tf_rubric", ""), list(point.get("rq_rubrics", []))),
            baseline=point.get("baseline"))

    def model_input(self) -> ModelInput:
        """What the model is shown for its next message."""
        c = self.conversation
        if not self.turns:
            return ModelInput(item_id(c.conversation_id, 1), self.modality, [InputTurn("system", c.system_prompt)])
        return build_model_input(self.item(len(self.turns)), self.modality)
