"""`ihbench report`: scores of judged runs, or one table across benchmarks."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ihbench.dataset.errors import command_line

from .common import DATA_AUDIO, held_back_why, notes


def add_parser(add) -> argparse.ArgumentParser:
    from ihbench.dataset.argtypes import data_source, model_name, number, path, seed, whole

    report = add("report", help="scores, per type, depth, diagnostics, plots for judged runs; one table across "
                 "IHBench, SID-Bench and turn-taking runs")
    report.add_argument("runs", nargs="+", type=path("folder"),
                        help="run directories (an audio and a text run of one model "
                        "get a TOST; a run with two judgments files gets inter-judge agreement); `ihbench sid` and "
                        "`ihbench turns` output folders make it a cross-benchmark report, one row per model")
    report.add_argument("--out", type=path("folder"),
                        help="output folder (default: the run's own folder for one IHBench run; ./report for "
                        "several runs, or for any `ihbench sid` or `ihbench turns` output: a cross-benchmark report)")
    report.add_argument("--model-name", action="append", metavar="RUN=NAME",
                        help="cross-benchmark report: the model RUN belongs to (default: the name the run records); "
                        "give it once per run")
    report.add_argument("--cross-benchmark", action="store_true",
                        help="the per-model table and Spearman correlations even when every run is an IHBench run "
                        "(automatic with SID or turns runs or --model-name)")
    report.add_argument("--sid-definition", choices=("notebook", "readme"),
                        help="which SID-Bench FIR/IRL the cross-benchmark table shows: notebook (the published "
                        "numbers' rule, default) or readme")
    report.add_argument("--tost-margin", type=number(min=0, max=1, min_open=True),
                        help="equivalence margin of the audio-vs-text TOST, in score units (default 0.05)")
    # below 10 resamples a percentile interval is one or two of them: a degenerate "CI"
    report.add_argument("--n-bootstrap", type=whole(min=10, max=100000),
                        help="bootstrap resamples per CI, 10 to 100000 (default 1000)")
    report.add_argument("--seed", type=seed(), help="bootstrap seed (default 0)")
    report.add_argument("--data", type=data_source(),
                        help="a ConversationBench run of the reference harness (transcript.jsonl): the dataset of "
                             "the benchmark it played, when its judgments do not name it; IHBench runs whose dataset "
                             "moved: where it is now (checked to hold the items each run answered)")
    report.add_argument("--config", type=model_name(), help="with --data: the ConversationBench config")
    report.add_argument("--compare-judge", type=path("file", exists=True), metavar="FILE",
                        help="one ConversationBench run: the reference judge's *_judged.jsonl of the same transcript; "
                             "the report gives per-dimension agreement and Cohen's kappa with our judge")
    # a report stopped midway removes what it had written (no half report beside an earlier one's text)
    report.set_defaults(func=main, stopped=_stopped)
    return report


def _stopped(args) -> str:
    from ihbench.report.folder import stop_said

    return stop_said(args)


def main(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import OutputPathError, check_output_path
    from ihbench.report import summarize, write_report
    from ihbench.convbench.judge.source import is_convbench_run
    from ihbench.dataset.errors import UsageError
    from ihbench.report.cross import parse_model_names, wants_cross_report

    parse_model_names(args.model_name, args.runs)  # each RUN=NAME said wrong before any run is read
    seen = {}
    for run in args.runs:
        other = seen.setdefault(Path(run).resolve(), run)
        if other is not run:
            raise OutputPathError(f"{run}: given twice (also as {other}); each run is reported once")
    _refuse_copies(args.runs)
    one_convbench = len(args.runs) == 1 and is_convbench_run(args.runs[0])
    if (args.config or args.compare_judge) and not one_convbench:  # checked before the cross report, which ignored them
        given = " and ".join(flag for flag, value in (("--config", args.config), ("--compare-judge", args.compare_judge))
                             if value)
        what = "one run" if len(args.runs) == 1 else f"{len(args.runs)} runs"
        raise UsageError(f"{given}: for one ConversationBench run, and {what} given here "
                         f"({'it is not one' if len(args.runs) == 1 else 'not one ConversationBench run'})")
    cross = wants_cross_report(args.runs, args.model_name, args.cross_benchmark)
    if args.data and not one_convbench and cross:
        raise UsageError("--data: for one ConversationBench run, or IHBench runs whose dataset moved; not a "
                         "cross-benchmark report")
    if cross:
        return _cross_report(args)
    if one_convbench:  # Wilson intervals, no bootstrap, no TOST, no SID
        _settings(args, (), "a ConversationBench run (Wilson intervals, no TOST or SID)")
        return _convbench_report(args)
    _settings(args, ("--tost-margin", "--n-bootstrap", "--seed"), "IHBench runs")
    out = args.out or (args.runs[0] if len(args.runs) == 1 else Path("report"))
    reported = {Path(run).resolve() for run in args.runs}
    if (Path(out) / "run.json").is_file() and Path(out).resolve() not in reported:  # its own report lives there
        raise OutputPathError(f"--out: {out} is another run's folder, not one of the runs reported; its summary.json "
                              "and report.md would be replaced: give a new folder or that run itself")
    if len(reported) > 1 and Path(out).resolve() in reported:  # a run's folder holds that run's own report
        raise OutputPathError(f"--out: {out} is one of the runs being reported; its own summary.json and report.md "
                              "would be replaced by a report of several runs: give a new folder")
    check_output_path(out, _out_flag(args, out), may_be=("run", "report"))  # its probe after (battery 62, I14)
    report = summarize(args.runs, tost_margin=args.tost_margin, n_bootstrap=args.n_bootstrap, seed=args.seed,
                       data=args.data)
    paths = write_report(report, out)
    if "--tost-margin" in args.given and not report.modality_tost:
        notes(args, ["--tost-margin: no audio and text run of one model on the same data among these runs, so no "
                     "audio-vs-text TOST was made"])
    for run in report.runs:
        _warn_about(run)
    for run in report.runs:  # the scores are the result: printed with --quiet too (it hides notes and bars)
        tf, rq = run.get("tf_win_rate"), run.get("rq_pass_rate")
        print(f"{run['run']}: TF win rate {tf['tf_win_rate']:.3f} [{tf['ci_low']:.3f}, {tf['ci_high']:.3f}]" if tf else
              f"{run['run']}: no TF judgments", end="")
        print(f", RQ pass rate {rq['rq_pass_rate']:.3f} [{rq['ci_low']:.3f}, {rq['ci_high']:.3f}]" if rq else
              ", no RQ judgments", end="")
        anchor = run.get("baseline_rq_pass_rate")
        print(f" (baseline RQ on the same items {anchor['rq_pass_rate']:.3f})" if anchor else "", end="")
        print("".join(f"; {part}" for part in _not_scored(run)))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _refuse_copies(runs) -> None:
    """A run folder copied (`cp -r d3 d3copy`) and given beside its original is one run twice: two rows of one model's
    same answers, and a statistics library's warning about data "nearly identical" (battery 61, H20). Known by its
    run.json, answers and judgments being the same bytes."""
    import hashlib

    from ihbench.dataset.outputs import OutputPathError

    seen = {}
    for run in runs:
        files = [Path(run) / name for name in ("run.json", "responses.jsonl")]
        if not all(file.is_file() for file in files):  # not an IHBench run with answers (an sid or turns output), or
            continue  # one its reader names (a named pipe there waited for ever: battery 62, I12)
        files += sorted(file for file in Path(run).glob("judgments*.jsonl") if file.is_file())  # judged otherwise:
        try:  # a copy judged by another judge is a comparison of judges, and reported
            key = tuple(hashlib.sha256(file.read_bytes()).hexdigest() for file in files)
        except OSError:
            continue
        other = seen.setdefault(key, run)
        if other is not run:
            raise OutputPathError(f"{run}: the same run as {other} (its run.json, answers and judgments are the same "
                                  "bytes: a copy?); each run is reported once")


def _out_flag(args, out) -> str:
    """How a message names where the report goes: the option, or the default it stood for when none was given
    (the run's own folder for one run, ./report for several: battery 58, E13)."""
    if args.out:
        return "--out"
    if Path(out) == Path("report"):
        return "the default --out ./report (where the report of several runs goes without --out)"
    return "the run's folder (where its report goes without --out)"


def _warn_about(run: dict) -> None:
    """The warnings of one IHBench run, --quiet or not: scores of an unfinished run cover part of it,
    answers without a verdict (one line per true cause) are not in the scores."""
    from ihbench.report.summary import unfinished_note

    note = unfinished_note(run, run["run"])
    if note:
        print(f"ihbench report: warning: {note}", file=sys.stderr)
    held = len((run.get("barge_in") or {}).get("held_back") or {})
    if held:  # report.md names each, with its cause
        print(f"ihbench report: warning: {run['run']}: {held} conversation(s) left out, not scored: "
              f"{held_back_why(run['run'])}", file=sys.stderr)
    for (why, then), (waiting, axes) in _by_cause(run).items():  # one line per true cause, each said once
        which = "" if len(axes) == 2 else f" {axes[0].upper()}"
        print(f"ihbench report: warning: {run['run']}: {waiting} answer(s) have no{which} judgment yet ({why}) "
              f"and are not in the scores; {then}", file=sys.stderr)


def _not_scored(run: dict) -> list[str]:
    """What of an IHBench run is counted apart, said beside its scores (failed items, judge errors)."""
    parts = []
    failed = run["generation_errors"]
    if failed:
        parts.append(f"{failed} failed {run.get('failed_unit', 'response(s)')} not scored ({run['retried_by']} tries "
                     "them again)")
        on_data = run.get("data_audio_errors")
        if on_data:  # retried in vain: the fault is the dataset's
            parts.append(f"{on_data} of them on audio of the dataset that is damaged or silent (their errors name the "
                         "file, row and column): they fail again until the dataset is mended or rebuilt")
    judge_failed = sum((run.get("judge_errors") or {}).values())  # as failed responses: said, not scored
    if judge_failed:
        parts.append(f"{judge_failed} judgment(s) failed (judge_error), not scored ({_judge_again(run)})")
    return parts


def _judge_again(run: dict) -> str:
    """The judge command that asks a run's failed judgments again: the judge that failed them, into their file (a
    bare `ihbench judge RUN` lacks --judge-model, and would write judgments.jsonl; battery 61, H5)."""
    judges = run.get("judge_errors_by") or []
    file = Path(run["judgments_file"]) if run.get("judgments_file") else None
    words = ["ihbench", "judge", run["run"]]
    if len(judges) == 1:
        words += ["--judge-model", judges[0]]
    if file is not None and file.name != "judgments.jsonl":
        words += ["--out", str(file)]
    server = " with the server it used (--judge-base-url)" if len(judges) == 1 else \
        " with the judge (--judge-model, --judge-base-url) that failed them"
    return f"`{command_line(*words)}`{server} tries them again"


def _by_cause(run: dict) -> dict:
    """{(why, what judges them): (how many, [axes])}: both axes missing for one reason are one line."""
    causes: dict = {}
    for axis, reasons in (run.get("not_judged_why") or {}).items():
        for reason in reasons:
            count, axes = causes.get((reason["why"], reason["then"]), (0, []))
            causes[reason["why"], reason["then"]] = (max(count, reason["n"]), axes + [axis])
    return causes


def _convbench_report(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path
    from ihbench.report.convbench_render import write_convbench_report
    from ihbench.report.convbench_summary import not_scored_line, summarize_convbench

    out = args.out or args.runs[0]
    check_output_path(out, _out_flag(args, out), may_be=("run", "report", "reference_run"))
    summary = summarize_convbench(args.runs[0], data=args.data, config=args.config, compare_judge=args.compare_judge)
    paths = write_convbench_report(summary, Path(out))
    scores, counts = summary["scores"], summary["conversations"]
    if scores is None:
        print(f"{summary['run']}: no judged conversation ({counts['finished']} finished); {_convbench_next(summary)}")
    else:
        cells = [f"{name} {cell['applicable']['rate']:.3f}" for name, cell in scores["per_dimension"].items()
                 if cell["applicable"]["rate"] is not None]
        rows = scores["pass_rows"]
        print(f"{summary['run']}: pass rows {rows['rate']:.3f} [{rows['ci_low']:.3f}, {rows['ci_high']:.3f}]; "
              + ", ".join(cells) + f" ({counts['judged']} conversation(s) judged)")
        if summary.get("defaulted_to_false"):
            print("ihbench report: warning: scores the judge left out count as failures, as the reference counts "
                  "them: " + ", ".join(f"{d} {n}" for d, n in sorted(summary["defaulted_to_false"].items())),
                  file=sys.stderr)
        if summary.get("round_cap_hits"):
            print(f"ihbench report: warning: {summary['round_cap_hits']} turn(s) reached the tool-round cap "
                  "(--max-tool-rounds) and ended without a final answer; they are judged as the model left them",
                  file=sys.stderr)
        if summary.get("never_answered"):
            print(f"ihbench report: warning: {summary['never_answered']} turn(s) were never answered: the model ended "
                  "the session before them, so they fail every dimension they score", file=sys.stderr)
        if summary.get("unscored_expected_calls"):
            print(f"ihbench report: warning: {summary['unscored_expected_calls']} turn(s) that expect a call have no "
                  "tool use verdict from the judge and are left unscored on it, as the reference leaves them",
                  file=sys.stderr)
        for name, cell in ((summary.get("reference_judge") or {}).get("per_dimension") or {}).items():
            if cell:
                kappa = "–" if cell["cohen_kappa"] is None else f"{cell['cohen_kappa']:.3f}"
                print(f"  vs the reference judge, {name}: agreement {cell['agreement']:.3f}, kappa {kappa} "
                      f"(n={cell['n']})")
    left = not_scored_line(summary)
    if left:
        print(f"ihbench report: warning: {left}", file=sys.stderr)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _convbench_next(summary: dict) -> str:
    """What to run when no conversation is scored, from why: the judge's errors are retried by the
    judge, but a conversation that stopped in the run has nothing to judge until the run plays it again."""
    counts, run = summary["conversations"], summary["run"]
    steps = []
    if counts["unfinished"] and summary.get("being_played_by"):
        steps.append(f"{counts['unfinished']} not finished yet: the run is being played now "
                     f"({summary['being_played_by']}); judge and report it when it ends")
    elif counts["unfinished"] and counts["unfinished"] == summary.get("on_data_audio"):  # a rerun cannot help
        steps.append(f"{counts['unfinished']} stopped on a failed turn in the run; {DATA_AUDIO}")
    elif counts["unfinished"]:
        on_data = summary.get("on_data_audio")
        steps.append(f"{counts['unfinished']} stopped before their end in the run (a failed turn, or the run was "
                     "stopped): `ihbench run` with the same "
                     "options plays them again, then `ihbench judge`"
                     + (f" ({on_data} of them: {DATA_AUDIO})" if on_data else ""))
    if counts["judge_error"]:
        steps.append(f"{counts['judge_error']} ended in judge_error: `{command_line('ihbench', 'judge', run)}` "
                     "tries them again")
    if counts["not_judged"] + counts["judged_before_replay"] or not steps:
        steps.append(f"run `{command_line('ihbench', 'judge', run)}` first")
    return "; ".join(steps)


#: the report's settings: flag, attribute, default (a flag given where it cannot apply is refused)
SETTINGS = {"--sid-definition": ("sid_definition", "notebook"), "--tost-margin": ("tost_margin", 0.05),
            "--n-bootstrap": ("n_bootstrap", 1000), "--seed": ("seed", 0)}


def _cross_settings(args: argparse.Namespace) -> None:
    """A cross report's settings act on some of its runs: refused when none of them is of that kind."""
    from ihbench.report.benchmark_runs import BENCHMARKS, read_run

    kinds = {read_run(path).kind for path in args.runs}
    applies = (("--sid-definition",) if "sid" in kinds else ()) + \
        (("--tost-margin", "--n-bootstrap", "--seed") if "ihbench" in kinds else ())
    _settings(args, applies, f"these runs ({', '.join(sorted(BENCHMARKS[kind] for kind in kinds))}: --n-bootstrap, "
                             "--seed and --tost-margin act on IHBench runs, --sid-definition on SID-Bench ones)")


def _settings(args: argparse.Namespace, applies, what: str) -> None:
    """Refuse a setting given for runs it does not apply to (a SID definition for IHBench runs, a bootstrap
    for a ConversationBench run's Wilson intervals), then fill in the defaults; `args.given` keeps which
    were given, for a note when one found nothing to act on."""
    from ihbench.dataset.errors import UsageError

    args.given = {flag for flag, (name, _) in SETTINGS.items() if getattr(args, name) is not None}
    for flag in sorted(args.given - set(applies)):
        raise UsageError(f"{flag}: does not apply to {what}; leave it out")
    for name, default in SETTINGS.values():
        if getattr(args, name) is None:
            setattr(args, name, default)


def _cross_report(args: argparse.Namespace) -> int:
    from ihbench.dataset.outputs import check_output_path, folder_kind
    from ihbench.report.benchmark_runs import read_run
    from ihbench.report.convbench_summary import not_scored_line
    from ihbench.report.cross import cross_report
    from ihbench.report.cross_render import check_out, cross_stdout, write_cross_report

    for run in args.runs:  # a folder of no run's kind is said before the output's folder is tried (and touched)
        if not Path(run).is_dir() or folder_kind(Path(run)) not in ("run", "sid", "turns", "reference_run"):
            read_run(run)
    out = args.out or Path("report")
    check_out(out, args.runs)
    check_output_path(out, "--out", may_be=("report",))
    _cross_settings(args)
    report = cross_report(args.runs, model_names=args.model_name, sid_definition=args.sid_definition,
                          tost_margin=args.tost_margin, n_bootstrap=args.n_bootstrap, seed=args.seed)
    paths = write_cross_report(report, out)
    for run in (report.ihbench.runs if report.ihbench else []):  # the same warnings as a report of runs
        _warn_about(run)
    print("\n".join(cross_stdout(report)))  # the result: --quiet hides notes and progress, not this
    for run in (report.ihbench.runs if report.ihbench else []):  # counted apart, beside the scores
        parts = _not_scored(run)
        if parts:
            print(f"{run['run']}: " + "; ".join(parts))
    for run in report.runs:  # a ConversationBench run's row is dashes where nothing is scored: said why
        left = not_scored_line(run) if run["kind"] == "convbench" else None
        if left:
            print(f"ihbench report: warning: {run['run']}: {left}; {_convbench_next(run)}", file=sys.stderr)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0

