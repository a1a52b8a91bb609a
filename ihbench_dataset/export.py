"""Export one conversation as readable text plus WAV files, to listen to what a model hears."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Optional, Union

from .audio import encode_wav
from .errors import UnknownNameError, UsageError
from .io import new_folders, staging_folder
from .schema import EvalItem
from .unshown import UNSHOWN
from .wide import WideConversation


#: what an export writes into a conversation's folder; anything else there is the user's
_EXPORTED = re.compile(r"^(conversation\.md|turn_\d+_(assistant|user)\.wav)$")


#: bytes of a folder name, short of the file system's 255 with room for its staging folder's name
_NAME_BYTES = 150


def folder_name(conversation_id: str) -> str:
    """A conversation's folder under --out: the id itself when it can be one folder's name; else one
    name, never a path ("/", "\\", control characters, NUL and the bidirectional controls that turn a
    listing's line around become "_"), never hidden, never "." or "..", never too long, with a digest of
    the id so that two ids never share a folder ("a/b", "a_b").
    (An id of a hand-edited dataset otherwise exported into --out itself, above it, into another id's
    folder, or ended in an OS error.)"""
    name = re.sub(f"[\t\n{UNSHOWN}/\\\\]", "_", conversation_id)
    name = f"_{name}" if not name or name.startswith(".") else name
    if name == conversation_id and len(name.encode("utf-8")) <= _NAME_BYTES:
        return name
    digest = hashlib.sha256(conversation_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    while len(name.encode("utf-8")) > _NAME_BYTES - 11:
        name = name[:-1]
    return f"{name}-{digest}"


def export_conversation(
    conversation: WideConversation,
    items: list[EvalItem],
    out: Union[str, Path],
) -> Path:
    """Writes OUT/<conversation_id>/conversation.md and turn_NN_{assistant,user}.wav.

    Written to a temporary folder and renamed, so an interrupted export leaves nothing partial (nor an
    empty OUT it made).
    """
    target = Path(out) / folder_name(conversation.conversation_id)
    foreign = sorted(p.name for p in target.iterdir() if not _EXPORTED.match(p.name)) if target.is_dir() else []
    if foreign or (target.exists() and not target.is_dir()):
        shown = ", ".join(foreign[:3]) or "a file"
        raise UsageError(f"--out: {target} holds what export did not write ({shown}); it would be replaced: move "
                         "it or give another --out")
    with new_folders(target.parent), staging_folder(target) as tmp:
        by_turn = {item.turn: item for item in items if item.conversation_id == conversation.conversation_id}
        lines = [f"# {conversation.conversation_id}", "", f"- domain: {conversation.domain}",
                 f"- goal: {conversation.goal}", f"- interruption points: {len(by_turn)}", "",
                 "## System prompt", "", conversation.system_prompt, "", "## Turns", ""]
        for turn in conversation.turns:
            stem = f"turn_{turn.number:02d}"
            for speaker, clip in (("assistant", turn.assistant_audio), ("user", turn.user_audio)):
                if clip is not None:
                    (tmp / f"{stem}_{speaker}.wav").write_bytes(encode_wav(clip.decode()))
            lines.append(f"### Turn {turn.number}")
            lines.append("")
            if turn.interruption_type is None:
                lines.append(f"**Assistant:** {turn.heard}")
            else:
                lines.append(f"**Assistant (delivered):** {turn.heard} —")
                lines.append("")
                lines.append(f"*Planned:* {turn.original}")
            lines.append("")
            label = f"User, {turn.interruption_type} interruption" if turn.interruption_type else "User"
            lines.append(f"**{label}:** {turn.user_text}  ({stem}_user.wav)")
            item = by_turn.get(turn.number)
            if item is not None:
                lines += ["", f"- TF criterion: {item.rubric.tf}"]
                lines += [f"- RQ criterion: {criterion}" for criterion in item.rubric.rq]
                if item.baseline:
                    lines.append(f"- Baseline response: {item.baseline}")
            lines.append("")
        (tmp / "conversation.md").write_text("\n".join(lines), encoding="utf-8")
    return target


def pick_conversation(conversations: list[WideConversation], conversation_id: Optional[str]) -> WideConversation:
    if conversation_id is None:
        return conversations[0]
    for conversation in conversations:
        if conversation.conversation_id == conversation_id:
            return conversation
    known = ", ".join(c.conversation_id for c in conversations)
    raise UnknownNameError(f"no conversation {conversation_id!r}; available: {known}")
