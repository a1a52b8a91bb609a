"""Battery 4 (issue 23), files and wording: each file a user can get wrong named in one line with
what is wrong with it, each warning true (its real cause) and said once, and nothing written by a
command that had nothing to write."""
import json
import os

import numpy as np
import pytest

from ihbench.cli import main


def _one_error(capsys, command) -> str:
    """The one error line of `command`, after checking nothing else was said but argparse's usage."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(f"ihbench {command}: error: ")]
    assert len(errors) == 1, err
    others = [line for line in lines if line not in errors and not line.startswith((f"usage: ihbench {command}", " "))]
    assert others == [], err
    return errors[0]


def _files(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, dirs, names in os.walk(folder)
                  for name in dirs + names)


def _wav(path, samples, rate=16_000):
    import soundfile

    soundfile.write(str(path), np.asarray(samples, np.float32), rate, subtype="PCM_16")
    return path


# --- finding 16: a WAV of no frames ------------------------------------------------------------

def test_a_wav_of_no_samples_is_said_to_hold_no_audio(tmp_path, capsys):
    """FFmpeg's words were about start and stop times the user never gave."""
    _wav(tmp_path / "zero.wav", np.zeros((0, 2)))
    assert main(["turns", str(tmp_path / "zero.wav"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    error = _one_error(capsys, "turns")
    assert error == f"ihbench turns: error: {tmp_path / 'zero.wav'}: no audio (0 samples)"
    assert _files(tmp_path) == ["zero.wav"]


def test_a_recording_of_no_samples_is_refused_by_the_dataset_s_reader_in_the_same_words(tmp_path):
    from ihbench.dataset.audio import AudioError, load_recording

    _wav(tmp_path / "zero.wav", np.zeros(0))
    with pytest.raises(AudioError, match=r"zero.wav \(audio\): no audio \(0 samples\)$"):
        load_recording(tmp_path / "zero.wav")


# --- finding 22: one file for both channels ----------------------------------------------------

def test_turns_refuses_one_file_given_for_both_channels_of_a_pair(tmp_path, capsys):
    mono = _wav(tmp_path / "mono.wav", np.zeros(32_000))
    assert main(["turns", str(mono), str(tmp_path / "." / "mono.wav"), "--pair", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert (f"AUDIO: {mono} is given for both channels of a pair (the AI's and the user's); --pair takes each "
            "speaker's own recording") in _one_error(capsys, "turns")
    assert _files(tmp_path) == ["mono.wav"]


# --- finding 23: a transcripts line for a recording that is not analysed -----------------------

def test_a_transcripts_line_for_an_unknown_recording_is_a_warning_even_with_quiet(tmp_path, capsys):
    from turns_synth import write_short_call

    audio = write_short_call(tmp_path / "call.wav")
    transcripts = tmp_path / "tr.jsonl"
    transcripts.write_text(json.dumps({"recording": "nosuchrec", "channel": "A",
                                       "words": [{"word": "hi", "start": 0.1, "end": 0.3}]}) + "\n")
    assert main(["turns", str(audio), "--transcripts", str(transcripts), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning") == 1, err
    assert (f"ihbench turns: warning: {transcripts}: no recording named 'nosuchrec'; those lines are unused "
            "(the recordings are 'call')") in err


# --- finding 27: the SID layout's WAV folder ----------------------------------------------------

def test_sid_import_names_the_wav_folder_the_layout_expects(tmp_path, capsys):
    root = tmp_path / "sid"
    (root / "test_wavs").mkdir(parents=True)
    (root / "test_wavs" / "en_test_lines.jsonl").write_text(json.dumps(
        {"audio": "a.wav", "total_nonbreak": False, "break_time": 1.0, "duration": 2.0,
         "text_with_break": "hi [break] there"}) + "\n")
    _wav(root / "test_wavs" / "a.wav", np.zeros(32_000))  # beside the jsonl, not in test_wavs/en/
    assert main(["sid-import", str(root), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    error = _one_error(capsys, "sid-import")
    assert (f"(no WAV folder for en_test_lines.jsonl: expected them in {root / 'test_wavs' / 'en'}/): line 1: "
            "a.wav") in error
    assert not (tmp_path / "data").exists()


# --- finding 9: a stereo clip, and one far longer than its line says ----------------------------

def test_sid_import_warns_of_a_stereo_clip_and_one_whose_length_is_not_its_line_s(tmp_path, capsys):
    root = tmp_path / "sid"
    (root / "test_wavs" / "en").mkdir(parents=True)
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("".join(json.dumps(
        {"audio": name, "total_nonbreak": False, "break_time": 1.0, "duration": 3.0,
         "text_with_break": "hi [break] there"}) + "\n" for name in ("a.wav", "b.wav")))
    _wav(root / "test_wavs" / "en" / "a.wav", np.zeros((16_000 * 7 // 2, 2)))  # 3.5 s, two channels (more: refused)
    _wav(root / "test_wavs" / "en" / "b.wav", np.zeros(16_000 * 3))  # as listed
    annotations = root / "test_wavs" / "en_test_lines.jsonl"
    assert main(["sid-import", str(root), "--out", str(tmp_path / "data"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"ihbench sid-import: warning: {annotations}: 1 sid_en WAV(s) differ from the listed duration by more than "
        "0.1s (scores use the listed one): a.wav (3.500s, listed 3.0s)",
        f"ihbench sid-import: warning: {annotations}: 1 sid_en WAV(s) are not mono, as SID-Bench's clips are (the "
        "detectors hear their channels mixed): a.wav (2 channels)"], err


# --- findings 17 and 21: a ConversationBench run with nothing scored -----------------------------

def _convbench_run(root, fail_at_turn=None):
    """A golden replay of the bike benchmark (as tests/test_convbench_judge.py plays it); with
    `fail_at_turn` the server fails there and the conversation stops on that turn."""
    from convbench_layout import write_benchmark_folder
    from openai_test_server import OpenAITestServer, Reply
    from test_convbench_run import golden_replay, spec

    from ihbench.convbench import run_convbench
    from ihbench.dataset.convbench import import_convbench

    data = root / "data"
    import_convbench(write_benchmark_folder(root / "repo"), data, progress=False)
    replay = golden_replay()

    def respond(body):
        failing = fail_at_turn is not None and sum(m["role"] == "user" for m in body["messages"]) == fail_at_turn + 1
        return Reply(status=500) if failing else replay(body)

    with OpenAITestServer(respond=respond) as server:
        run_convbench(spec(data, root / "run", server), progress=False)
    return root / "run"


@pytest.fixture
def failed_convbench_run(tmp_path):
    """A ConversationBench run whose only conversation stopped on a failed turn."""
    return _convbench_run(tmp_path, fail_at_turn=3)


def test_convbench_report_says_a_failed_conversation_is_played_again_by_run_not_judge(failed_convbench_run,
                                                                                       capsys):
    assert main(["report", str(failed_convbench_run), "--out", str(failed_convbench_run.parent / "rep"),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert (f"{failed_convbench_run}: no judged conversation (0 finished); 1 stopped before their end in the run (a "
            "failed turn, or the run was stopped): `ihbench run` with the same options plays them again, then "
            "`ihbench judge`") in out
    assert "run `ihbench judge` first" not in out


def test_convbench_report_after_a_failed_judge_says_the_judge_retries_it(tmp_path, capsys):
    from convbench_judging import ConvJudge
    from test_convbench_judge import judge

    run = _convbench_run(tmp_path)
    judge(run, ConvJudge(fail=True), "--timeout", "5")
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert (f"{run}: no judged conversation (1 finished); 1 ended in judge_error: `ihbench judge {run}` tries them "
            "again") in out


# --- finding 11: verify given a built dataset folder --------------------------------------------

def test_verify_on_a_dataset_folder_says_it_is_one_not_a_source_missing_an_id(tmp_path, capsys):
    """A build's own build_info.json was read as a conversation: "conversation_id: missing"."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    (data / "build_info.json").write_text("{}")  # what `ihbench build` leaves beside its configs
    capsys.readouterr()
    assert main(["verify", str(data)]) == 2
    assert (f"ihbench verify: error: {data}: is a dataset folder built by `ihbench build`, not conversation source "
            "JSON files (what a build is made from: its --sources); `ihbench verify --audio` checks a built "
            "dataset's cuts") == _one_error(capsys, "verify")


def test_verify_on_a_run_folder_says_it_is_one(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    assert main(["verify", str(tmp_path / "run")]) == 2
    assert "run: is a run folder (run.json), not conversation source JSON files" in _one_error(capsys, "verify")



def test_verify_on_a_generate_output_folder_names_its_conversations_folder(tmp_path, capsys):
    """Battery 43 nit: `verify GENOUT` said it is a generate folder, not where the sources it made are."""
    generated = tmp_path / "gen"
    (generated / "conversations").mkdir(parents=True)
    (generated / "generate.json").write_text('{"runs": []}')
    capsys.readouterr()
    assert main(["verify", str(generated)]) == 2
    assert (f"gen: is an `ihbench generate` output folder (generate.json), not conversation source JSON files; the "
            f"conversations it generated are in {generated / 'conversations'}") in _one_error(capsys, "verify")

# --- finding 8: the Space on a damaged dataset ---------------------------------------------------

def test_the_space_refuses_a_damaged_parquet_file_at_start_in_the_words_info_uses(tmp_path, capsys):
    """The Space opens a config only when a page asks for it; a damaged file is refused at start,
    by the same check info and run go through, not found by a user's first click."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    damaged = sorted((data / "conversations").glob("*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:200])
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    said = _one_error(capsys, "info").removeprefix("ihbench info: error: ")
    assert said.startswith(f"{damaged}: not a readable Parquet file (")
    assert main(["space", "--data", str(data), "--port", "1"]) == 2  # refused before the port is even tried
    assert _one_error(capsys, "space") == f"ihbench space: error: {said}"


# --- finding 18: a second judge whose verdicts all failed ----------------------------------------

def _judged(official, tmp_path, judges, limit=1):
    """A run of one item, judged into one judgments file per `judges` entry ({suffix of the file's
    name: reply}, "" for judgments.jsonl; a well-behaved scripted judge where the reply is None)."""
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    run = _answered(official, tmp_path / "r", "--limit", str(limit))
    for name, respond in judges.items():
        with OpenAITestServer(respond=respond or ScriptedJudge(faults=False)) as judge:
            main(["judge", str(run), "--judge-model", f"judge{name}", "--judge-base-url", judge.base_url, "--cache",
                  str(tmp_path / f"{name}.sqlite"), "--quiet", "--out", str(run / f"judgments{name}.jsonl")])
    return run


@pytest.fixture
def official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


def test_a_second_judge_with_only_judge_errors_is_said_not_shown_as_an_empty_table(official, tmp_path, capsys):
    from openai_test_server import Reply

    run = _judged(official, tmp_path, {"": None, "-j2": lambda body: Reply(content="not json")})
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    second = run / "judgments-j2.jsonl"
    for axis in ("TF", "RQ"):
        note = f"no {axis} inter-judge agreement: {second}: 1 {axis} judge error(s), no verdict to compare"
        assert f"ihbench report: warning: {note}" in err
        assert f"- {note}" in (run / "report.md").read_text()


# --- findings 5, 19 and 12: damaged lines, and what they lead to ----------------------------------

def _damage(path, changes):
    """Rewrite lines of a JSON-lines file: {line number (1-based): {field: value}}."""
    lines = path.read_text().splitlines()
    for number, fields in changes.items():
        lines[number - 1] = json.dumps({**json.loads(lines[number - 1]), **fields})
    path.write_text("\n".join(lines) + "\n")


def test_judgments_of_answers_whose_records_are_damaged_are_left_out_not_called_another_run_s(official, tmp_path,
                                                                                            capsys):
    """Following "another run's judgments file; move it out of the way" threw away every good
    judgment. The damaged records' own judgments are left out, and `ihbench run` redoes them; once
    it has, the damaged lines are no longer warned of (finding 19)."""
    from openai_test_server import OpenAITestServer

    run = _judged(official, tmp_path, {"": None}, limit=3)
    _damage(run / "responses.jsonl", {1: {"response": 12345}, 2: {"epoch": -1}})
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "another run's" not in err and err.count("line 1:") == 1 and err.count("line 2:") == 1, err
    assert (f"ihbench report: warning: {run / 'judgments.jsonl'}: 4 judgment(s) are of answers whose records in "
            f"{run / 'responses.jsonl'} are damaged or cut off (line(s) 1, 2) and left out; `ihbench run` with the same "
            "options answers them again, then `ihbench judge` judges them") in err
    with OpenAITestServer() as server:  # the judge goes on with the others
        assert main(["judge", str(run), "--judge-model", "judge", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--timeout", "5"]) in (0, 1)
    assert "another run's" not in capsys.readouterr().err

    _answered(official, run, "--limit", "3", "--allow-endpoint-change")  # redoes the two damaged records
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "responses.jsonl line" not in err and "damaged" not in err, err


def _answered(official, out, *extra):
    from test_battery_round3 import _answered as answered

    return answered(official, out, *extra)


def test_answers_without_a_verdict_are_explained_by_their_true_cause_once(official, tmp_path, capsys):
    run = _judged(official, tmp_path, {})
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--axes", "tf"]) == 0
        capsys.readouterr()
        assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
        err = capsys.readouterr().err
        assert (f"ihbench report: warning: {run}: 1 answer(s) have no RQ judgment yet (the last judge ran with --axes tf) "
                f"and are not in the scores; `ihbench judge {run} --axes rq` judges only those") in err
        assert "answered after" not in err

        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache",
                     str(tmp_path / "c.sqlite"), "--quiet", "--axes", "rq"]) == 0
    (run / "judgments-second.jsonl").write_text((run / "judgments.jsonl").read_text())  # a second judge's file
    _damage(run / "judgments.jsonl", {1: {"axis": "xx"}})
    capsys.readouterr()
    assert main(["report", str(run), "--quiet", "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert err.count("judgments.jsonl line 1: field 'axis' must be tf or rq") == 1, err  # read twice, said once
    assert (f"1 answer(s) have no TF judgment yet ({run / 'judgments.jsonl'} has 1 damaged line(s) (1), left out) "
            "and are not in the scores") in err


# --- finding 26: convbench-import --speaker where it chooses nothing -----------------------------

def test_convbench_import_refuses_a_speaker_it_could_not_use_naming_why(tmp_path, capsys):
    """Hub rows without a speaker column were imported as they are with --speaker person9 (and recorded
    as `real_audio/person9/`); on a benchmark folder, --text-only dropped the speaker without a word."""
    from convbench_layout import write_benchmark_folder, write_hub_rows

    folder = write_benchmark_folder(tmp_path / "repo", real_speaker="person1")
    hub = write_hub_rows(tmp_path / "hub")
    out = tmp_path / "data"
    assert main(["convbench-import", str(hub), "--setup", str(folder), "--speaker", "person9", "--out", str(out),
                 "--quiet"]) == 2
    assert (f"--speaker person9: {hub / 'metadata.jsonl'} has no `speaker` column (its rows are one voice, the audio "
            "they name); leave --speaker out") in _one_error(capsys, "convbench-import")
    assert main(["convbench-import", str(folder), "--speaker", "person1", "--text-only", "--out", str(out),
                 "--quiet"]) == 2
    assert ("--speaker person1: in a benchmark folder the speaker chooses the audio (real_audio/person1/) and "
            "--text-only imports none") in _one_error(capsys, "convbench-import")
    assert main(["convbench-import", str(folder), "--speaker", "person9", "--out", str(out), "--quiet"]) == 2
    assert (f"{folder / 'real_audio' / 'person9'}: no such folder (the speakers of {folder / 'real_audio'}: person1)"
            in _one_error(capsys, "convbench-import"))
    assert not out.exists()
    spoken = write_hub_rows(tmp_path / "hub2", speakers=("person1", "person2"))  # here it chooses the rows
    assert main(["convbench-import", str(spoken), "--setup", str(folder), "--speaker", "person2", "--text-only",
                 "--out", str(out), "--quiet"]) == 0


# --- finding 15: a wrong --tune-data ---------------------------------------------------------------

def _sid(root, names=("c0.wav", "c1.wav"), breaks=(True, False)):
    """SID-Bench's layout: test_wavs/en/*.wav (2 s of silence each) and en_test_lines.jsonl."""
    (root / "test_wavs" / "en").mkdir(parents=True)
    for name in names:
        _wav(root / "test_wavs" / "en" / name, np.zeros(32_000))
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("".join(json.dumps(
        {"audio": name, "total_nonbreak": not brk, "duration": 2.0, "break_time": 0.5 if brk else 2.0,
         "text_with_break": "x"}) + "\n" for name, brk in zip(names, breaks)))
    return root


def _not_sid_config(root, config):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / config).mkdir(parents=True)
    pq.write_table(pa.table({"conversation_id": ["c"]}), str(root / config / "test-00000-of-00001.parquet"))
    return root


def _tuning_data(case, tmp_path, scored):
    """(the --tune-data folder, extra flags, what the one error line says after '--tune-data PATH: ')."""
    tune = tmp_path / "tune"
    if case == "not a dataset":
        tune.mkdir()
        return tune, [], f"{tune}: no SID-Bench annotation file found"
    if case == "no such config":
        return _sid(tune), ["--tune-on", "sid_zh"], f"{tune}: has no sid_zh"
    if case == "not a SID config":
        return _not_sid_config(tune, "conversations"), ["--tune-on", "conversations"], \
            f"--tune-on conversations: not a SID config of {tune}"  # was blamed on --config
    if case == "empty":
        _sid(tune, names=(), breaks=())
        return tune, [], f"{tune / 'test_wavs' / 'en_test_lines.jsonl'}: no rows"
    if case == "the scored data":
        return scored, [], ("the same dataset as --data and the same config (sid_en): the operating point would be "
                            "chosen on the clips it is reported on")  # was blamed on --tune-on
    if case == "a copy of the scored data":
        return _sid(tune), [], "the tuning clips include 2 of the reported ones (e.g. c0.wav) (the same clips as in"
    if case == "no break":
        return _sid(tune, names=("t0.wav",), breaks=(False,)), [], "sid_en: none of its 1 clip(s) has a break"
    if case == "an unreadable clip":  # was a torchcodec traceback after the readable tuning clips were heard
        _sid(tune, names=("t0.wav", "t1.wav"))
        (tune / "test_wavs" / "en" / "t1.wav").write_text("not audio")
        return tune, [], "sid_en: clip t1.wav is not readable audio ("
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["not a dataset", "no such config", "not a SID config", "empty", "the scored data",
                                  "a copy of the scored data", "no break", "an unreadable clip"])
def test_a_wrong_tune_data_is_refused_up_front_naming_tune_data_and_its_path(case, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    scored = _sid(tmp_path / "SID")
    tune, extra, message = _tuning_data(case, tmp_path, scored)
    out = tmp_path / "out"
    argv = ["sid", "--detector", "smart-turn", "--data", str(scored), "--config", "sid_en", "--thresholds", "0.5",
            "--tune-data", str(tune), *extra, "--out", str(out), "--quiet"]
    assert main(argv) == 2
    error = _one_error(capsys, "sid")
    assert error.startswith(f"ihbench sid: error: --tune-data {tune}: ") and message in error, error
    assert not out.exists()


def test_a_tune_data_that_is_not_a_folder_is_refused_when_parsed(tmp_path, capsys):
    scored = _sid(tmp_path / "SID")
    for tune, why in ((tmp_path / "nope", "not found"), (scored / "test_wavs" / "en_test_lines.jsonl", "a file")):
        with pytest.raises(SystemExit) as stop:
            main(["sid", "--detector", "smart-turn", "--data", str(scored), "--thresholds", "0.5", "--tune-data",
                  str(tune), "--out", str(tmp_path / "out"), "--quiet"])
        assert stop.value.code == 2
        assert (f"argument --tune-data: expected an existing folder, got '{tune}' ({why})"
                in _one_error(capsys, "sid"))
    assert not (tmp_path / "out").exists()


def test_a_right_tune_data_is_taken(tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    scored, tune = _sid(tmp_path / "SID"), _sid(tmp_path / "tune", names=("t0.wav", "t1.wav"))
    assert main(["sid", "--detector", "smart-turn", "--data", str(scored), "--thresholds", "0.3,0.5", "--timeouts",
                 "1", "--tune-data", str(tune), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["operating_point"]["tuned_on"] == "tune:sid_en"
