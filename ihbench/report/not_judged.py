"""Why answers of a run have no verdict yet, as facts: the judge's record of what it asked
(`ihbench.judge.asked`), the damaged lines of the judgments file, or no judgments file at all.
Never a cause guessed from what the file lacks: where nothing says why, the report says so."""
from __future__ import annotations

from pathlib import Path

from ihbench.dataset.errors import command_line
from ihbench.dataset.io import holder, lock_file_for

from ..judge.asked import asked_path, read_asked, warn_once
from ..records import AXES, JudgmentRecord, ResponseRecord


def not_judged_why(run: Path, responses: list[ResponseRecord], judgments: list[JudgmentRecord],
                   damaged: list[int], path: Path) -> dict:
    """{axis: [{"n", "why", "then"}]}: for each axis with answers that have no judgment of it, how
    many have each cause, and the command that judges them. `path` is the judgments file (which
    may not exist: a judge whose every question waits in a batch writes none)."""
    judged = {axis: {(j.id, j.epoch) for j in judgments if j.axis == axis} for axis in AXES}
    missing = {axis: [r for r in responses if r.answered and r.key not in judged[axis]] for axis in AXES}
    asked = read_asked(path)
    if asked is not None and not _of_this_run(asked, responses, path):
        asked = None
    why = {}
    for axis, answers in missing.items():
        if not answers:
            continue
        causes: dict[tuple[str, str], int] = {}
        for answer in answers:
            cause = _cause(run, answer, axis, path, damaged, asked)
            causes[cause] = causes.get(cause, 0) + 1
        why[axis] = [{"n": n, "why": text, "then": then} for (text, then), n in causes.items()]
    return why


def _of_this_run(asked, responses: list[ResponseRecord], path: Path) -> bool:
    """A question said to wait that is no answer of this run, or an axis no judge has: the record
    was edited or copied from another run, and none of its causes can be trusted (said once)."""
    keys = {(r.id, r.epoch) for r in responses}
    strange = [key for key in asked.waiting
               if not (isinstance(key, list) and len(key) == 3 and tuple(key[:2]) in keys and key[2] in AXES)]
    strange += [axis for axis in asked.axes if axis not in AXES]
    if strange:
        shown = ", ".join("/".join(map(str, key)) if isinstance(key, list) else repr(key) for key in strange[:3])
        warn_once(f"{asked_path(path)}: it names {shown}{', ...' if len(strange) > 3 else ''}, not a question about "
                  "an answer of this run (edited by hand, or copied from another run?); the causes of answers "
                  "without a verdict are not known from it (the next `ihbench judge` writes it again)")
    return not strange


def _cause(run: Path, answer: ResponseRecord, axis: str, path: Path, damaged: list[int], asked) -> tuple[str, str]:
    judge = f"`{command_line('ihbench', 'judge', run)}` judges only those"
    if asked is None and not path.exists():
        return "the run was not judged", judge
    lines = ", ".join(map(str, damaged[:5])) + (", ..." if len(damaged) > 5 else "")
    left_out = f"{path} has {len(damaged)} damaged line(s) ({lines}), left out"
    if asked is None and damaged:  # nothing else known: theirs may be among the lines left out
        return left_out, judge
    if asked is None:
        record = asked_path(path)
        state = "cannot be read (see the warning above)" if record.exists() else \
            "is missing beside it (it was removed, the judgments file was copied here without it, or an older " \
            "version judged)"  # a copied file named too (battery 65, L6)
        return f"{record.name} {state}, so what the last judge asked is not known", judge
    if asked.unfinished and axis in asked.axes and not asked.waits((answer.id, answer.epoch, axis)):
        writer = holder(lock_file_for(path))
        if writer:  # a judge at work, not one that stopped: its verdicts are still coming
            return f"a judge is writing this run's judgments now ({writer})", "report again when it ends"
        also = f"; {left_out}" if damaged else ""  # a line it was writing when killed: both said (battery 62, I7)
        return f"the last `ihbench judge` stopped before it finished (killed, or ended by an error){also}", \
            f"`{command_line('ihbench', 'judge', run)}` goes on from where it stopped"
    if asked.waits((answer.id, answer.epoch, axis)):
        batch = Path(asked.batch) if asked.batch else None
        unusable = (f"; {asked.unusable} of the judge's questions had a batch answer that could not be used and "
                    "were asked again") if asked.unusable else ""
        again = f"`{command_line('ihbench', 'judge', run, '--judge-model', asked.judge_model, '--judge-batch', batch)}`"
        if batch is None or not (batch / "requests.jsonl").is_file():  # moved or removed since
            return (f"the last judge wrote their questions to the batch folder {batch}{unusable}, and its "
                    "requests.jsonl is no longer there", f"{again} writes them again")
        return f"their questions wait in the batch folder {batch}{unusable}", \
            f"answer {batch / 'requests.jsonl'} and run {again} again"
    if damaged:  # theirs may be among the lines left out (an earlier judge's too); a judge that stopped or
        return left_out, judge  # waits is said as such above (battery 61, H7: a killed judge said as a damaged line)
    if not asked.saw(answer.digest):
        return "answered after the last `ihbench judge`", judge
    if axis not in asked.axes:
        return f"the last judge ran with --axes {','.join(asked.axes)}", f"`{command_line('ihbench', 'judge', run, '--axes', axis)}` judges only those"
    held = f"{path} holds no judgment of them (cut or edited since)" if path.exists() else \
        f"{path} is not there (removed since)"
    return f"the last judge's record says it judged them, but {held}", judge
