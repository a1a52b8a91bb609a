"""Phase 2: from the judge's turn-by-turn verdicts to the final scores, by rule, not by judgment.

The benchmark's rules, applied in this order:

1. Scope. A dimension outside the turn's score dimensions is null (counted as normalised when
   the judge scored it anyway). On a turn that expects no call, tool use is null unless the judge
   found an unrequested call (false), the successor's rule.
2. A missed call is charged once, to its most specific cause, on the turn that expected it:
   a forgotten state to state_tracking and an over-clarification to ambiguity_handling when the
   turn scores that dimension (tool use then passes), otherwise to tool use; an unnecessary
   confirmation fails tool use and passes instruction following.
3. Across turns (on-policy conversations only; a rehydrated turn stands alone, as in the
   successor): a call made early passes the turn that expected it and the turn where it was
   made; a call made late passes the turn where it was made (the turn that expected it keeps the
   charge of rule 2); a call no turn expects fails tool use where it was made.
4. Cascades: a turn that asks about the outcome of an earlier expected call that never ran, where
   that miss was already charged, is not charged again when the assistant honestly says it has no
   record (its state tracking, instruction following and grounding pass); a made-up outcome stays
   a failure. The reference asks that the earlier turn's charge went to state_tracking; here any
   charge counts, so a failure is counted exactly once whatever dimension carried it.
5. turn_taking comes from the recording's analysis, or passes when there is none.
6. A turn never answered, because the model had ended the session at an earlier turn, fails every
   dimension it scores, whatever the judge said and whatever rules 2-4 credited: there is no reply
   to credit (the reference's judge is only asked to fail its instruction following, and credited
   the rest).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

TOOL, IF, KB, AMB, STATE, TT = ("tool_use_correct", "instruction_following", "kb_grounding", "ambiguity_handling",
                                "state_tracking", "turn_taking")
JUDGED = (TOOL, IF, KB, AMB, STATE)
DIMENSIONS = (TT, TOOL, IF, KB, AMB, STATE)


#: noted on a turn that expects a call when the judge gave its tool use no value: the reference leaves
#: it unscored (so the turn can pass without the call); kept, and counted by the report
UNSCORED_CALL = "tool_use_correct: no value from the judge on a turn that expects a call; left unscored, as the " \
    "reference leaves it"


@dataclass
class TurnScores:
    turn: int
    scores: dict  # every dimension of DIMENSIONS: True, False or None (not scored)
    notes: list[str] = field(default_factory=list)
    normalised: list[str] = field(default_factory=list)  # dimensions the judge scored out of scope
    charged: Optional[str] = None  # where a missed call of this turn was charged
    turn_taking_issues: list[str] = field(default_factory=list)


def realign(turns, verdicts: dict, tracking: list[dict], *, rehydrated: bool = False,
            turn_taking: Optional[dict] = None, made: Optional[dict] = None,
            unanswered: Optional[dict] = None) -> dict[int, TurnScores]:
    """`turns`: the benchmark turns judged (ConvTurn: index, scoring_dimensions, required_calls);
    `verdicts`: turn -> the judge's phase-1 verdict; `tracking`: the judge's function_calls;
    `turn_taking`: turn -> issue strings from the recording, or None when none was analysed;
    `made`: turn -> the names of the calls the run recorded there. A call the judge says was made
    early or late earns credit only where the run shows it: the judge's word alone credited calls
    that were never made (a tool that does not even exist). `unanswered`: turn -> the turn whose
    end_session call ended the conversation before it (rule 6)."""
    by_index = {turn.index: turn for turn in turns}
    result = {index: _scoped(turn, verdicts[index], turn_taking) for index, turn in by_index.items()}
    saved: dict[int, dict] = {}  # what rule 2 overwrote, for an early call that undoes the charge

    def charge(index: int) -> None:
        turn, scores, cause = by_index[index], result[index].scores, verdicts[index]["missed_call_cause"]
        dims = set(turn.scoring_dimensions)
        saved[index] = dict(scores)
        if cause == "forgotten_state" and STATE in dims:
            scores.update({TOOL: True, STATE: False})
            where = STATE
        elif cause == "over_clarification" and AMB in dims:
            scores.update({TOOL: True, AMB: False})
            where = AMB
        elif cause == "unnecessary_confirmation":
            scores.update({TOOL: False, IF: True})
            where = TOOL
        else:
            scores[TOOL] = False
            where = TOOL
        result[index].charged = where
        result[index].notes.append(f"missed call ({cause.replace('_', ' ')}) charged to {where}")

    for index, turn in by_index.items():
        if turn.required_calls and verdicts[index][TOOL] is None:  # the reference keeps the null: said, and counted
            result[index].notes.append(UNSCORED_CALL)
    for index, turn in by_index.items():
        if turn.required_calls and verdicts[index][TOOL] is False and verdicts[index]["missed_call_cause"] != "none":
            charge(index)
        elif turn.required_calls and verdicts[index][TOOL] is False:
            result[index].charged = TOOL

    if rehydrated:
        for scores in result.values():
            scores.notes.append("rehydrated turn: no cross-turn realignment")
        return _fail_unanswered(result, by_index, unanswered)

    for entry in tracking:
        name, expected, actual, status = entry["name"], entry["expected_turn"], entry["actual_turn"], entry["status"]
        if status in ("early", "late") and made is not None and name not in made.get(actual, ()):
            if expected in result:
                result[expected].notes.append(f"not credited: the judge said {name} was called at turn {actual}, "
                                              "and the run shows no such call there")
            continue
        if status == "early" and _both(expected, actual, result) and actual < expected:
            if expected in saved:  # the call was there all along: the charge of rule 2 is undone
                result[expected].scores.update(saved.pop(expected))
                result[expected].notes = [n for n in result[expected].notes if not n.startswith("missed call")]
            result[expected].scores[TOOL] = True
            result[expected].charged = None
            result[expected].notes.append(f"credited: {name} was already called at turn {actual}")
            _credit_where_made(result, by_index, actual, f"{name} called here, early (expected at turn {expected})")
        elif status == "late" and _both(expected, actual, result) and actual > expected:
            _credit_where_made(result, by_index, actual, f"credited: {name} expected at turn {expected}, called here")
            if result[expected].charged is None and result[expected].scores[TOOL] is not True:
                charge(expected)
        elif status == "unexpected" and actual in result and not by_index[actual].required_calls:
            result[actual].scores[TOOL] = False
            result[actual].notes.append(f"{name} called here though no turn expects it")

    for index, turn in by_index.items():
        source = verdicts[index]["cascade_from"]
        if source is None or source not in result or result[source].charged is None:
            continue
        if verdicts[index]["honest_about_missing"]:
            dims = set(turn.scoring_dimensions)
            for name in (STATE, IF, KB):
                if name in dims and result[index].scores[name] is False:
                    result[index].scores[name] = True
            result[index].notes.append(f"cascade absorbed from turn {source}")
        else:
            result[index].notes.append(f"cascade from turn {source}: the outcome was made up, not absorbed")
    return _fail_unanswered(result, by_index, unanswered)


#: the start of the note rule 6 leaves on a turn never answered (the report counts these turns)
NEVER_ANSWERED = "never answered"


def _fail_unanswered(result: dict, by_index: dict, unanswered: Optional[dict]) -> dict:
    for index, ended_at in (unanswered or {}).items():
        if index not in result:
            continue
        scores, dims = result[index], set(by_index[index].scoring_dimensions) | {TT}
        for name in DIMENSIONS:
            if name in dims and not (name == TOOL and not by_index[index].required_calls):
                scores.scores[name] = False
        scores.charged = None
        where = "before it" if ended_at is None else f"at turn {ended_at}"
        scores.notes = [f"{NEVER_ANSWERED}: the model ended the session {where}, so every dimension this turn "
                        "scores fails by rule"]
    return result


def _both(expected, actual, result) -> bool:
    return expected in result and actual in result


def _credit_where_made(result, by_index, index: int, note: str) -> None:
    """A call that belongs to another turn passes tool use where it was made, unless that turn's own
    expected calls failed (the judge scored those)."""
    if not by_index[index].required_calls or result[index].scores[TOOL] is None:
        result[index].scores[TOOL] = True
    result[index].notes.append(note)


def _scoped(turn, verdict: dict, turn_taking: Optional[dict]) -> TurnScores:
    dims = set(turn.scoring_dimensions)
    scores, normalised = {}, []
    for name in JUDGED:
        value = verdict.get(name)
        if name not in dims:
            if value is not None:
                normalised.append(name)
            value = None
        scores[name] = value
    if not turn.required_calls and scores[TOOL] is True:
        scores[TOOL] = None  # nothing to call: only an unrequested call is scored (false)
    issues = list((turn_taking or {}).get(turn.index) or [])
    scores[TT] = not issues
    return TurnScores(turn=turn.index, scores={name: scores[name] for name in DIMENSIONS}, normalised=normalised,
                      turn_taking_issues=issues)
