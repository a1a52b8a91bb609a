"""Battery 25 (issue 23): findings U… of the twenty-fifth battery of bad inputs, tried on an installed wheel
as a new user would (/work/battery25/LOG.md). Each test's docstring names its finding. Model servers and
judges are STAND-INS (scripted OpenAI-compatible servers on loopback)."""
import pytest

from ihbench.cli import main


@pytest.mark.parametrize("argv", [
    ["info", "~nouser-ihbench/x"],
    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
     "~nouser-ihbench/d", "--out", "{tmp}/r"],
    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data", "{tmp}",
     "--out", "~nouser-ihbench/r"],
    ["report", "~nouser-ihbench/r"],
    ["doctor", "--model", "qwen2-audio", "--model-path", "~nouser-ihbench/m"],
])
def test_a_home_folder_of_no_user_is_named_not_a_traceback_or_a_symlink_loop(argv, tmp_path, capsys):
    """Battery 25, U6 (P2): `--data ~nouser/...` ended in pathlib's RuntimeError traceback ("Could not determine
    home directory"), and every other path option called it "a symlink loop"."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = main(argv)
    except SystemExit as stopped:  # argparse's own refusal of an option's value
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert "~nouser-ihbench is the home folder of a user this system does not have; give the path in full" in err, err
    assert "Traceback" not in err and "symlink loop" not in err
    assert not (tmp_path / "r").exists()


def _digest(root):
    import hashlib

    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith(".")}


@pytest.mark.parametrize("earlier", [False, True])
def test_an_import_that_fails_writing_the_card_leaves_the_dataset_as_it_was(earlier, tmp_path, capsys, monkeypatch):
    """Battery 25, U9 (P2): convbench-import failing on a full disk after its Parquet files were named left them
    inside the dataset, and a re-import had already deleted the earlier import's files the card still named. (The
    full disk is a STAND-IN: the card's writer raises the system's error.)"""
    import errno

    from convbench_layout import write_benchmark_folder

    from ihbench.dataset.builddir import BuildDir

    from official_layout import write_official_layout

    folder = write_benchmark_folder(tmp_path / "repo")
    data = write_official_layout(tmp_path / "data")
    if earlier:
        assert main(["convbench-import", str(folder), "--out", str(data), "--quiet"]) == 0
        (folder / "data" / "knowledge_base.txt").write_text("Another knowledge base.\n")  # new bytes, new file names
    before = _digest(data)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(BuildDir, "list_configs", full)
    capsys.readouterr()
    assert main(["convbench-import", str(folder), "--out", str(data), "--quiet"]) == 2
    assert f"No space left on device (writing in {data})" in capsys.readouterr().err
    assert _digest(data) == before
    assert sorted(p.name for p in data.iterdir() if not p.name.startswith(".")) == \
        sorted({p.split("/")[0] for p in before})  # no config folder made for nothing


@pytest.mark.parametrize("command", ["publish-dataset", "publish-space"])
@pytest.mark.parametrize("named", ["/etc/hostname", "../outside/b.parquet", "https://example.com/b.parquet"])
def test_publishing_a_card_that_names_a_file_outside_the_dataset_is_one_line(command, named, tmp_path, capsys):
    """Battery 25, U10 (P2): a card whose config names an absolute path ended publish-dataset and publish-space
    in pathlib's NotImplementedError ("Non-relative patterns are unsupported"); info and run named it."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    card = data / "README.md"
    text = card.read_text()
    first = next(line.split("path:", 1)[1].strip() for line in text.splitlines() if "path:" in line)
    card.write_text(text.replace(first, named, 1))
    argv = ["publish-dataset", str(data), "--repo", "me/ds", "--dry-run"] if command == "publish-dataset" else \
        ["publish-space", "--data", str(data), "--repo", "me/sp", "--dry-run", "--staging-dir", str(tmp_path / "stg")]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"names {named}, a path outside the dataset folder" in err and "nothing was uploaded" in err, err
    assert "Traceback" not in err and not (tmp_path / "stg").exists()


def test_a_cache_another_program_holds_locked_is_one_line(tmp_path, capsys, monkeypatch):
    """Battery 25, U5 (P2): a cache held in an open write by another program (an sqlite3 shell) ended judge and
    `cache prune` in sqlite3's "database is locked" traceback after 5 s."""
    import sqlite3

    from judging import ScriptedJudge
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    import ihbench.llm.cache as cache

    run = _answered(write_official_layout(tmp_path / "official"), tmp_path / "run", "--limit", "1")
    path = tmp_path / "c.sqlite"
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as server:
        judge = ["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--cache", str(path),
                 "--quiet"]
        assert main(judge) == 0  # the cache made, with answers in it
        (run / "judgments.jsonl").unlink()
        monkeypatch.setattr(cache, "BUSY_SECONDS", 0.3)
        holder = sqlite3.connect(path)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            capsys.readouterr()
            for argv in (judge, ["cache", "prune", "--cache", str(path), "--max-entries", "1"]):
                assert main(argv) == 2
                err = capsys.readouterr().err
                assert f"{path}: the cache is locked by another program (waited 0.3 s" in err, err
                assert "Traceback" not in err
        finally:
            holder.rollback()
            holder.close()
        assert main(judge) == 0  # released: the same command goes on


@pytest.mark.parametrize("linked", ["test_wavs/en/a.wav", "test_wavs/en_test_lines.jsonl", "test_wavs/en"])
def test_sid_import_refuses_a_link_out_of_the_benchmark_folder(linked, tmp_path, capsys):
    """Battery 25, U1 (P2, battery 24 T6's class): sid-import followed a WAV, the lines file or a whole language
    folder linked to a place outside the SID-Bench folder and wrote it into the dataset; convbench-import refused
    the same thing. One rule now (`io.regular.leaves`)."""
    import shutil

    from test_battery_round3 import _sid_folder

    root = _sid_folder(tmp_path / "SID")
    target, outside = root / linked, tmp_path / "elsewhere" / linked.rsplit("/", 1)[-1]
    outside.parent.mkdir()
    shutil.move(target, outside)
    target.symlink_to(outside)
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    err = capsys.readouterr().err
    named = target if linked.endswith((".wav", ".jsonl")) else target / "a.wav"  # a folder: its first clip
    assert f"{named}: a link to {named.resolve()}, outside {root}; put the file itself in the benchmark's folder" \
        in err, err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("line,kind", [("[1, 2]", "list"), ('"text"', "str"), ("null", "null"), ("3", "int")])
def test_a_metrics_upload_line_that_is_no_object_is_named(line, kind, tmp_path):
    """Battery 25, U11 (P3): a line that is not an object gave Python's words after "missing": "missing list
    indices must be integers or slices, not str"."""
    from ihbench import ui

    upload = tmp_path / "v.jsonl"
    upload.write_text('{"verdicts": [true]}\n\n' + line + "\n")
    for metric in ("rq_pass_rate", "fir", "convbench_pass_rate"):
        with pytest.raises(ui.UserError) as refused:
            ui.metrics_table(metric, str(upload))
        assert str(refused.value) == f"line 3: expected an object with the fields described above, got {kind}"


def test_a_barge_in_run_being_played_is_said_to_be_played_not_to_have_stopped(tmp_path):
    """Battery 25, U2: judge and report of a barge-in run with conversations left out said nothing on the terminal;
    they now say why (the replay command), or that the run is being played, while its writer holds it."""
    from ihbench.cli.common import held_back_why
    from ihbench.dataset.io import exclusive
    from ihbench.rundir import LOCK

    run = tmp_path / "run"
    run.mkdir()
    assert held_back_why(run).startswith("their last playing did not close")
    with exclusive(run / LOCK, f"run directory {run}"):
        said = held_back_why(run)
    assert said.startswith("it is being played now (pid ") and said.endswith("judge and report it when that ends")


def test_generate_keeps_a_hand_edited_file_that_fails_verify_before_making_it_again(tmp_path, capsys):
    """Battery 25, U4: a generated conversation edited by hand with one slip (a placeholder criterion) was
    overwritten by the resumed generate, the user's edits gone without a copy."""
    import json

    from generate_script import GenerationScript
    from openai_test_server import OpenAITestServer
    from test_generate import ID, generate

    out = tmp_path / "out"
    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        assert generate(server, out) == 0
        path = out / "conversations" / f"{ID.format(1)}.json"
        edited = json.loads(path.read_text())
        point = next(turn for turn in edited["turns"] if "interruption" in turn)
        point["interruption"]["rq_rubrics"][0] = "<criterion 1>"
        point["interruption"]["tf_rubric"] = "My own careful edit of the TF rubric."
        path.write_text(json.dumps(edited, indent=1))
        hand_made = path.read_bytes()
        for round_ in (1, 2):
            path.write_bytes(hand_made)
            assert generate(server, out) == 0
            kept = path.with_name(path.name + (".rejected" if round_ == 1 else ".rejected-2"))
            assert kept.read_bytes() == hand_made  # the edits, kept
            err = capsys.readouterr().err
            assert "does not pass `ihbench verify` (" in err and f"kept as {kept.name}, and generated again" in err
    assert json.loads(path.read_text())["turns"] != edited["turns"]  # made again
    assert sorted(p.name for p in (out / "conversations").glob("*.json")) == [path.name]  # no reader takes the copies


def test_an_agents_list_entry_is_named_by_its_index_alone():
    """Battery 25 nit: a simulator's bad criterion was named "rq_rubrics[0].v" (a stray ".v")."""
    from ihbench.generate.validate import InvalidAnswer, texts

    with pytest.raises(InvalidAnswer) as refused:
        texts({"rq_rubrics": ["Names the fee.", "{criterion}"]}, "rq_rubrics", "rubric: ")
    assert str(refused.value) == "rubric: rq_rubrics[1] contains the placeholder '{criterion}'; use a concrete value"
    with pytest.raises(InvalidAnswer, match=r"^rq_rubrics\[0\] must be a non-empty string"):
        texts({"rq_rubrics": [3]}, "rq_rubrics")


def test_a_report_into_a_read_only_run_names_the_run_not_an_option_never_given(tmp_path, capsys, monkeypatch):
    """Battery 25 nit (try 24): report on a read-only run said "--out: cannot create RUN" with no --out given
    and the folder there. (The read-only disk is a STAND-IN: making a folder in it raises the system's error.)"""
    import errno
    import tempfile

    from official_layout import write_official_layout
    from test_battery_round3 import _answered

    run = _answered(write_official_layout(tmp_path / "official"), tmp_path / "run", "--limit", "1")

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    import os  # and access(2) says so, as a read-only disk does (a toolkit folder is asked first: battery 63, J8)

    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    capsys.readouterr()
    assert main(["report", str(run), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ihbench report: error: the run's folder (where its report goes without --out): cannot write in {run} "
        f"(Read-only file system in {run})")


@pytest.mark.parametrize("emptied,said", [
    ("path:", "names no file (its data_files path is empty)"), ("path: ''", "names no file (its data_files path is empty)"),
    ("path: []", "names no file (its data_files path is empty)"),
    # battery 27, W1: a number or a boolean where a path belongs was a TypeError traceback
    ("path: 42", "has a data_files path 42, not a file name"), ("path: true", "has a data_files path True, not a file name"),
    ("path: {a: b}", "has a data_files path {'a': 'b'}, not a file name"),
    # battery 27, W5: a number or nothing where a split belongs was Python's TypeError words
    ("split: 5", "has a data_files split 5, not a split name (test, train, ...)"),
    # battery 29, Y2: pathlib's IndexError / AttributeError tracebacks
    ("path: .", "names the dataset folder itself (path '.'), not its files"),
    ("path: ./", "names the dataset folder itself (path './'), not its files"),
])
def test_a_card_config_with_an_empty_path_is_named_by_every_reader(emptied, said, tmp_path, capsys):
    """Battery 26, V1: a card whose config path was left empty made info and run print `datasets`' 25-line
    ValueError, naming another config ('conversations', where 'baseline' was the empty one)."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    card = data / "README.md"
    lines = card.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "config_name: baseline" in line)
    key = emptied.split(":")[0] + ":"
    index = next(i for i in range(start, len(lines)) if key in lines[i])
    lines[index] = lines[index].split(key)[0] + emptied
    card.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    err = capsys.readouterr().err
    assert f"{card}: config 'baseline' {said}; copy the dataset again" in err, err
    assert len(err.strip().splitlines()) == 1
    assert main(["publish-dataset", str(data), "--repo", "me/ds", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{card}: config 'baseline' {said}; copy the dataset again or rebuild it; nothing was uploaded" in err, err


def test_a_pair_whose_sides_differ_greatly_in_length_is_a_warning_even_with_quiet(tmp_path, capsys):
    """Battery 26, V3: --pair with the AI's file 6.6 min and the user's 60 s (a wrong pairing) gave figures over a
    user silent after a minute, with only a note --quiet hides. Now a warning; a small difference stays a note."""
    import numpy as np
    import soundfile

    from ihbench.turns.audio import read_pair

    ai, user, near = tmp_path / "call_ai.wav", tmp_path / "call_user.wav", tmp_path / "near_user.wav"
    soundfile.write(ai, np.zeros(16000 * 10, np.float32), 16000)
    soundfile.write(user, np.zeros(16000 * 3, np.float32), 16000)
    soundfile.write(near, np.zeros(16000 * 9, np.float32), 16000)
    main(["turns", "--pair", str(ai), str(user), "--out", str(tmp_path / "out"), "--quiet"])  # silent: no figures
    err = capsys.readouterr().err
    assert f"warning: {ai} + {user}: one side is 10 s long and the other 3 s; are these two sides of one call?" \
        in err, err
    assert "channel lengths differ (10.00 s vs 3.00 s)" in read_pair(ai, user).notes[0]
    main(["turns", "--pair", str(ai), str(near), "--out", str(tmp_path / "out2"), "--quiet"])
    assert "two sides of one call" not in capsys.readouterr().err


@pytest.mark.parametrize("beside", [False, True])
def test_publishing_checks_the_clips_of_conversationbench_turns(beside, tmp_path, capsys):
    """Battery 26, V4 (S7's class): publish-dataset checked the IHBench points' clips only; a ConversationBench
    turn clip that `run --config bike_bench` refuses (no samples) was uploaded, alone or beside IHBench configs."""
    from convbench_layout import write_benchmark_folder
    from test_battery22 import _with_a_silent_clip

    from ihbench.dataset.convbench import import_convbench

    source = tmp_path / "imported"
    if beside:
        from official_layout import write_official_layout

        write_official_layout(source)
    import_convbench(write_benchmark_folder(tmp_path / "repo"), source, progress=False)
    data = _with_a_silent_clip(source, tmp_path, "bike_bench", "audio")
    capsys.readouterr()
    assert main(["publish-dataset", str(data), "--repo", "me/ds", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{data}: 1 clip(s) a run would refuse: {data} [bike_bench]: turn 0 (" in err, err
    assert "nothing was uploaded" in err


def test_a_goal_longer_than_verify_allows_is_refused_before_any_call(tmp_path, capsys):
    """Battery 26, V8: a 100,000-character --goal was accepted, 29 planning calls were paid for, then verify
    discarded the conversation and generate ended rc 0 with nothing written."""
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        assert main(["generate", "--domain", "government", "--goal", "x" * 3000, "--intents", "1",
                     "--conversations", "1", "--llm-model", "m", "--llm-base-url", server.base_url, "--out",
                     str(tmp_path / "g"), "--quiet"]) == 2
        assert server.requests == []
    assert ("--goal: 3,000 characters long; a conversation's goal may be at most 2,000"
            in capsys.readouterr().err) and not (tmp_path / "g").exists()


def test_a_full_disk_reported_by_pyarrow_is_said_in_the_systems_words(tmp_path, capsys, monkeypatch):
    """Battery 25/26 nit: pyarrow's own words led the disk-full line ("Error writing bytes to file. Detail:
    [errno 28] ..."). (The full disk is a STAND-IN: the importer raises the error as pyarrow raises it.)"""
    from convbench_layout import write_benchmark_folder

    import ihbench.dataset.convbench.importing as importing

    def full(*args, **kwargs):
        error = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
        error.errno = 28  # as pyarrow sets it: no strerror
        raise error
    monkeypatch.setattr(importing, "write_benchmark", full)
    folder = write_benchmark_folder(tmp_path / "repo")
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "data"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ihbench convbench-import: error: No space left on device (writing in {tmp_path / 'data'})")
    assert "Detail" not in err


def test_a_conversationbench_judges_runaway_notes_or_reasoning_are_asked_again():
    """Battery 26 nit: a judge's 3 MB "notes" were copied into every turn record of its window (a 15 MB
    judgments.jsonl); such an answer is invalid (asked again, then a judge_error), as an over-long field is."""
    import json

    from ihbench.convbench.judge.parse import MAX_NOTES, MAX_REASONING, parse_window
    from ihbench.llm import InvalidAnswer

    row = {"turn": 0, "turn_taking": True, "instruction_following": True, "kb_grounding": True, "reasoning": "fine"}
    assert parse_window(json.dumps({"turns": [row], "notes": "n" * MAX_NOTES}), [0])["turns"][0]["reasoning"] == "fine"
    with pytest.raises(InvalidAnswer, match=r'"notes" is 3,000,000 characters long; write at most 20,000'):
        parse_window(json.dumps({"turns": [row], "notes": "n" * 3_000_000}), [0])
    with pytest.raises(InvalidAnswer, match=r'turn 0: "reasoning" is 8,001 characters long'):
        parse_window(json.dumps({"turns": [{**row, "reasoning": "r" * (MAX_REASONING + 1)}]}), [0])


def test_judge_and_report_of_a_run_being_written_say_so_not_to_run_it_again(tmp_path, capsys):
    """Battery 27, W3: judge and report of a run that `ihbench run` was writing right then advised "`ihbench run`
    with the same options goes on" (refused while it runs: the folder is locked)."""
    from judging import ScriptedJudge
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer
    from test_battery_round3 import _answered

    from ihbench.dataset.io import exclusive
    from ihbench.rundir import LOCK

    run = _answered(write_official_layout(tmp_path / "official"), tmp_path / "run")
    lines = (run / "responses.jsonl").read_text().splitlines(keepends=True)
    (run / "responses.jsonl").write_text(lines[0])  # the rest still to come
    capsys.readouterr()
    with exclusive(run / LOCK, f"run directory {run}"), OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", judge.base_url, "--cache",
                     str(tmp_path / "c.sqlite")]) == 0
        assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10", "--quiet"]) == 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert f"{run} is unfinished: 1 of " in text and text.count("a run is writing it now (pid ") == 2, text
    assert "`ihbench run` with the same options goes on" not in text


def _info_of_a_card_edited(tmp_path, capsys, old: str, new: str):
    """(the card, what `ihbench info` says) of an official-layout dataset whose card had `old` made `new`
    (refused: exit 2)."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    card = data / "README.md"
    card.write_text(card.read_text().replace(old, new, 1))
    capsys.readouterr()
    assert main(["info", str(data)]) == 2
    return card, capsys.readouterr().err


@pytest.mark.parametrize("name", ["5", "''"])
def test_a_card_config_name_that_is_no_name_is_one_line_naming_it(name, tmp_path, capsys):
    """Battery 27, W5: config_name 5 (or empty) gave "cannot load config 'conversations': TypeError: argument of
    type 'int' is not iterable", naming another config."""
    card, err = _info_of_a_card_edited(tmp_path, capsys, "config_name: baseline", f"config_name: {name}")
    assert f"{card}: a config's config_name is {5 if name == '5' else repr('')}, not a name; copy the dataset" in err, err



def test_generate_into_a_folder_of_another_goal_is_refused_before_any_call(tmp_path, capsys):
    """Battery 27, W4: another --domain/--goal into a generate folder went on without a word, and generate.json's
    goal, prerequisites and conversation seeds were overwritten by the last goal's."""
    import json

    from generate_script import GenerationScript
    from openai_test_server import OpenAITestServer
    from test_generate import generate

    out = tmp_path / "out"
    with OpenAITestServer(respond=GenerationScript(["cooperative"])) as server:
        assert generate(server, out) == 0
        before = (out / "generate.json").read_bytes()
        served = len(server.requests)
        assert main(["generate", "--domain", "travel", "--goal", "Rebook a cancelled flight", "--intents", "1",
                     "--conversations", "1", "--llm-model", "scripted", "--llm-base-url", server.base_url, "--out",
                     str(out), "--quiet"]) == 2
        assert len(server.requests) == served
    err = capsys.readouterr().err
    recorded = json.loads(before)
    assert f"--out: {out} holds the suite of goal {recorded['goal']!r} (government); give another --out for " \
           "'Rebook a cancelled flight' (travel)" in err, err
    assert (out / "generate.json").read_bytes() == before


@pytest.mark.parametrize("edit,said", [
    # battery 28, X1: the datasets library's words, naming the config asked for, not the broken entry
    (lambda t: t.replace("config_name: baseline", "config_name: ../baseline", 1),
     "config '../baseline' is not a name (it holds /: a config name is no path)"),
    (lambda t: t.replace("- config_name: baseline\n", "- config_name: baseline\n  default: true\n", 1),
     "configs 'conversations' and 'baseline' are both marked default: true; mark one"),
    # X2 and X3: a glob over other configs' folders, or one config naming another's file
    (lambda t: t.replace("path: baseline/test-*", "path: '*/test-*'", 1),
     "configs 'conversations' and 'baseline' both name conversations/"),
    (lambda t: t.replace("path: baseline/test-*", "path: conversations/test-*", 1),
     "configs 'conversations' and 'baseline' both name conversations/"),
])
def test_a_card_whose_configs_overlap_or_misname_is_one_line(edit, said, tmp_path, capsys):
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "data")
    card = data / "README.md"
    card.write_text(edit(card.read_text()))
    capsys.readouterr()
    for argv in (["info", str(data)], ["publish-dataset", str(data), "--repo", "me/ds", "--dry-run"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{card}: {said}" in err and len(err.strip().splitlines()) == 1, err


def test_two_conversation_ids_that_read_the_same_are_a_duplicate(tmp_path):
    """Battery 28, X5: ids one text in NFC and NFD ('café-tax-01'), or differing by a zero-width space, both
    passed verify and build: a dataset of two conversations no report, export or --conversation tells apart."""
    import json
    import shutil
    import unicodedata

    from ihbench.dataset.sources import source_files
    from ihbench.dataset.verify import verify_paths

    shipped = source_files()[0]
    data = json.loads(shipped.read_text())
    for form, name in (("NFC", "a"), ("NFD", "b")):
        cid = unicodedata.normalize(form, "café-tax-01")
        (tmp_path / f"{cid}.json").write_text(json.dumps({**data, "conversation_id": cid}))
    report = verify_paths([tmp_path], check_audio=False)
    duplicate = [p for p in report.problems if p.field == "conversation_id"]
    assert len(duplicate) == 1 and "one id to a reader and to a case-insensitive file system" in duplicate[0].message, report.problems
    shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    for cid in ("tax-01", "tax\u200b-01", "tax-01 ", "tax-01\u00a0"):  # battery 29 Y1: a blank at the end
        (tmp_path / f"{cid}.json").write_text(json.dumps({**data, "conversation_id": cid}))
    assert [p.field for p in verify_paths([tmp_path], check_audio=False).problems].count("conversation_id") == 3


@pytest.mark.parametrize("copied", ["a middle round", "the closing record", "another run's round"])
def test_a_round_line_copied_after_its_conversation_ended_is_named_and_changes_nothing(copied, built, tmp_path,
                                                                                          capsys, monkeypatch):
    """Battery 29, Y4 (P2): a barge_in.jsonl line copied to the end of the file, after its conversation
    had ended, left barge-in saying "already done" without a word, while judge and report called the
    conversation "left out, not scored" and then judged and scored it, and the advised `ihbench
    barge-in` played nothing. No playing writes a round there: the line is named, left out by every
    reader alike, and the conversation, whose rounds are all kept, is neither held back nor played again.
    Battery 30, Z1: the same round from another run (another --seed) was said to be "played again"."""
    import dataclasses
    import json

    from ihbench.barge_in.records import RoundRecord

    def line_of(lines: list[str]) -> dict:
        copy = json.loads(lines[-1 if copied == "the closing record" else 5])
        if copied == "another run's round":  # as another run writes it: its own seed, its own check
            record = RoundRecord.from_json(copy)
            copy = json.loads(json.dumps(dataclasses.replace(record, seed=record.seed + 1).to_json()))
        return copy

    out, lines, placed, copy, said = _played_then_resumed_with(line_of, built, tmp_path, capsys)
    if copied == "another run's round":
        named = (f"barge_in.jsonl line {len(lines) + 1}: its seed is not the one this run (--seed 0) draws for it: not "
                 "a round of this run (copied from another run, or run.json another run's?); left out, and the line "
                 "can be removed (the run played that round itself)")
    else:
        named = (f"barge_in.jsonl line {len(lines) + 1}: round {copy['round']} of {copy['conversation_id']} again, "
                 f"after the conversation ended at round {json.loads(lines[-1])['round']} with every round played: "
                 "not written by `ihbench barge-in`")
    assert named in said.err, said.err
    assert f"0 round(s) played, {len(lines)} already done" in said.out, said.out
    assert named in _judged_and_reported_whole(out, placed, tmp_path, capsys, monkeypatch)


def test_a_playing_killed_on_another_version_of_the_suite_lends_no_round_to_the_next():
    """The rounds of a playing killed before it closed are superseded by the next playing as a whole:
    one on another version of the suite (rounds 1-3) left its rounds in place of the durable ones
    when the next playing (the suite as it was, from round 4) closed."""
    from ihbench.barge_in.records import RoundRecord, durable, unclosed

    def record(number, digest, status="played", closes=False):
        return RoundRecord(conversation_id="c", round=number, status=status, seed=0, data_hash=digest,
                           reply=f"{digest}{number}", closes=closes)

    records = [record(1, "A"), record(2, "A"), record(3, "A"), record(4, "A", "error", closes=True),
               record(1, "B"), record(2, "B"), record(3, "B"),  # killed: no closing record
               record(4, "A"), record(5, "A"), record(6, "A", closes=True)]
    assert unclosed(records[:7]) == ["c"] and unclosed(records) == []
    assert [r.reply for r in durable(records).values()] == ["A1", "A2", "A3", "A4", "A5", "A6"]


@pytest.mark.parametrize("path", ["baseline", "baseline/."])
def test_a_card_path_naming_a_folder_is_called_a_folder(path, tmp_path, capsys):
    """Battery 29, Y3: a card data_files path naming a folder was called "not a regular file (a named pipe,
    a device, or a link to nothing)"; every reader says what the path is, in one wording (`io.regular.absent`)."""
    _, err = _info_of_a_card_edited(tmp_path, capsys, "path: baseline/test-*", f"path: {path}")
    assert ": a folder, not a regular file, where the card lists data of config 'baseline'" in err, err
    assert "named pipe" not in err and len(err.strip().splitlines()) == 1, err


def test_a_named_pipe_among_the_sources_is_named_not_waited_on(tmp_path):
    """Battery 30, Z4 (P2): a FIFO named *.json in a sources folder made `ihbench verify` and `ihbench build
    --sources` wait for ever, with no output. It is one line naming the file, as every other reader says it."""
    import os
    import shutil
    import subprocess
    import sys

    from ihbench.dataset.sources import source_files

    folder = tmp_path / "sources"
    folder.mkdir()
    shutil.copy(source_files()[0], folder)
    os.mkfifo(folder / "pipe-01.json")
    for argv in (["verify", str(folder)],
                 ["build", "--sources", str(folder), "--out", str(tmp_path / "b"), "--no-sid", "--no-convbench",
                  "--no-duplex", "--quiet"]):
        said = subprocess.run([sys.executable, "-m", "ihbench.cli", *argv], capture_output=True, text=True,
                              timeout=120)
        assert said.returncode in (1, 2), (argv, said)
        output = said.stdout + said.stderr
        assert f"{folder / 'pipe-01.json'}: structure: is a named pipe, not a conversation's JSON file" in output, output
        assert "Traceback" not in output
    assert not (tmp_path / "b").exists()


def test_generate_checks_a_goals_prerequisites_edited_by_hand_before_any_call(tmp_path, capsys):
    """Battery 30, Z5: prerequisites/GOAL.json with `domain` edited to a string were used as they were: the
    next conversation's calls were spent, then refused naming a temporary file that no longer exists."""
    import json

    from generate_script import GenerationScript
    from openai_test_server import OpenAITestServer
    from test_generate import generate

    script = GenerationScript(["cooperative"])
    out = tmp_path / "out"
    with OpenAITestServer(respond=script) as server:
        assert generate(server, out) == 0
        (path,) = (out / "prerequisites").glob("*.json")
        prereq = json.loads(path.read_text())
        for edit, said in (({"domain": "EDITED"}, "domain: must be an object, got a string"),
                           ({"intents": [{**prereq["intents"][0], "hidden_info": "one"}]},
                            "intents[0].hidden_info: must be a list, got a string"),
                           # battery 31, A1 (P2): another goal's prerequisites made this goal's conversations
                           ({"goal": "Pay a parking fine"}, "goal is 'Pay a parking fine', and --goal is "
                            f"{prereq['goal']!r}: the prerequisites are of another goal (edited by hand?)"),
                           ({"domain": {**prereq["domain"], "name": "healthcare"}},
                            "domain.name is 'healthcare', and --domain is 'government': the prerequisites are of "
                            "another domain")):
            path.write_text(json.dumps({**prereq, **edit}))
            sent = sum(script.requests.values())
            capsys.readouterr()
            assert generate(server, out, conversations=2) == 2
            err = capsys.readouterr().err
            assert f"{path}: {said}" in err and "correct it, or delete the file to write new ones" in err, err
            assert sum(script.requests.values()) == sent and "ihbench-generate-" not in err


def test_a_benchmark_of_no_turns_is_refused_by_verify_and_import(tmp_path, capsys):
    """Battery 30, Z3 (P2): `turns = []` passed verify ("0 turns") and convbench-import, which wrote a config
    of no rows that every reader of the dataset then refused: imported into a built dataset, `info` and
    `publish-dataset` failed for the whole of it."""
    import hashlib
    import shutil

    from convbench_layout import TURNS, write_benchmark_folder

    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    turns_py = folder / "turns.py"
    turns_py.write_text(turns_py.read_text().replace(f"turns = {TURNS!r}", "turns = []"))
    data = shutil.copytree(_official(tmp_path), tmp_path / "data")
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in data.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["verify", str(folder)]) == 1
    assert f"{turns_py}: `turns` is empty; a benchmark is one conversation of at least one turn" in \
        capsys.readouterr().err
    assert main(["convbench-import", str(folder), "--out", str(data), "--name", "empty_bench", "--text-only",
                 "--quiet"]) == 2
    assert f"{turns_py}: `turns` is empty" in capsys.readouterr().err
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in data.rglob("*") if p.is_file()} == before
    assert main(["info", str(data)]) == 0


def _official(tmp_path):
    from official_layout import write_official_layout

    return write_official_layout(tmp_path / "official")


@pytest.mark.parametrize("kind", ["a named pipe", "a folder"])
def test_a_sid_lines_file_that_is_no_file_is_named_not_skipped(kind, tmp_path, capsys):
    """Battery 31, A2: en_test_lines.jsonl that is a named pipe or a folder was taken for absent: its config
    was skipped (without a word under --quiet) and the others imported."""
    import os

    import numpy as np
    from test_battery5_files import _sid_noise

    root = _sid_noise(tmp_path / "sb", {"n0.wav": np.full(32_000, 0.01)})
    lines = root / "test_wavs" / "en_test_lines.jsonl"
    os.mkfifo(lines) if kind == "a named pipe" else lines.mkdir()
    assert main(["sid-import", str(root), "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert f"{lines}: {kind}, not a regular file; SID-Bench's annotations are a JSON lines file" in \
        capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_a_report_does_not_depend_on_the_order_of_the_run_files_lines(judged_run, tmp_path):
    """Battery 31, A4: the report's bootstrap intervals followed the order of judgments.jsonl, which is
    the order the judge finished in (its concurrency, a stop and a resume): the same verdicts were
    published as TF [0.350, 0.750], [0.375, 0.750] or [0.350, 0.725]."""
    import json
    import random
    import shutil

    shuffled = shutil.copytree(judged_run["root"] / "run", tmp_path / "shuffled")
    for name in ("responses.jsonl", "judgments.jsonl"):
        lines = (shuffled / name).read_text().splitlines(keepends=True)
        random.Random(1).shuffle(lines)
        (shuffled / name).write_text("".join(lines))
    summaries = []
    for run, out in ((judged_run["root"] / "run", tmp_path / "a"), (shuffled, tmp_path / "b")):
        assert main(["report", str(run), "--n-bootstrap", "200", "--quiet", "--out", str(out)]) == 0
        scores = json.loads((out / "summary.json").read_text())["runs"][0]
        summaries.append({k: scores[k] for k in ("tf_win_rate", "tf_win_rate_by_depth", "rq_pass_rate",
                                                 "rq_pass_rate_by_depth", "tf_depth_slope", "diagnostics")})
    assert summaries[0] == summaries[1]


@pytest.mark.parametrize("line", ["a responses line", "a round as text", "another conversation", "no conversation",
                                  "not an object"])
def test_a_damaged_line_after_a_whole_conversation_holds_nothing_back(line, built, tmp_path, capsys, monkeypatch):
    """Battery 31, A8 (P2): a barge_in.jsonl line whose `round` is missing or not a number (a responses line
    appended, "round": "6"), or that names a conversation the run does not have, made judge and report call
    the conversation "left out, not scored" while scoring it, and barge-in say "will be redone" and play
    nothing. A conversation is held back only while the next run would play something of it, and a held
    back conversation is left out whole."""
    import json

    def line_of(lines: list[str]) -> dict:
        record = json.loads(lines[5])
        return {"a responses line": {"id": f"{record['conversation_id']}/6", "conversation_id":
                                     record["conversation_id"], "epoch": 0, "response": "hello"},
                "a round as text": {**record, "round": "6"},
                "another conversation": {**record, "conversation_id": "ghost-01", "round": "x"},
                "no conversation": {},  # battery 32, B1: it said its conversation is played again
                "not an object": [1, 2]}[line]  # battery 33 nit: it said "will be redone"

    out, lines, placed, _, said = _played_then_resumed_with(line_of, built, tmp_path, capsys)
    assert f"barge_in.jsonl line {len(lines) + 1}: " in said.err and "will be redone" not in said.err, said.err
    if line in ("no conversation", "not an object"):
        assert "left out: it names no conversation (a round of one missing because of it is played again" in \
            said.err and "plays its conversation again from there" not in said.err, said.err
    elif line == "another conversation":  # battery 32 B1, battery 34 D4: it said its conversation is played again
        assert "left out: 'ghost-01' is no conversation of this run, so nothing is played for it" in said.err \
            and "plays its conversation again from there" not in said.err, said.err
    else:
        assert "left out: its conversation is whole without it, and nothing is played again" in said.err, said.err
    assert f"0 round(s) played, {len(lines)} already done" in said.out, said.out
    _judged_and_reported_whole(out, placed, tmp_path, capsys, monkeypatch)


def _played_then_resumed_with(line_of, built, tmp_path, capsys):
    """(run folder, its lines, cuts placed, the line added, what the resume said): one conversation played
    on-policy, `line_of(lines)` appended to its barge_in.jsonl, then `ihbench barge-in` run again."""
    import json

    from barge_in_script import scripts
    from openai_test_server import OpenAITestServer
    from test_barge_in import barge_in, cuts

    model_script, sim_script = scripts()
    out = tmp_path / "run"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
        lines = (out / "barge_in.jsonl").read_text().splitlines()
        placed = len(cuts(out))
        added = line_of(lines)
        with open(out / "barge_in.jsonl", "a") as records:
            records.write(json.dumps(added) + "\n")
        capsys.readouterr()
        assert barge_in(model, sim, built, out) == 0
        return out, lines, placed, added, capsys.readouterr()


def _judged_and_reported_whole(out, placed: int, tmp_path, capsys, monkeypatch) -> str:
    """Judge and report a barge-in run whose one conversation is whole: each of its `placed` cuts judged
    and scored, nothing said to be left out; what the report said (stderr)."""
    import json

    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer

    from ihbench.dataset.io import jsonlines

    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "judge.sqlite")]) == 0
    said = capsys.readouterr()
    assert "left out" not in said.out and f"{2 * placed} judgment(s) written" in said.out, said.out
    monkeypatch.setattr(jsonlines, "_WARNED", set())  # a line is said once a process: the report is a new one
    assert main(["report", str(out), "--n-bootstrap", "10", "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert "left out, not scored" not in err, err
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())["runs"][0]
    assert not summary["barge_in"]["held_back"] and summary["tf_win_rate"]["n_items"] == placed, summary["barge_in"]
    return err


def test_a_held_back_barge_in_conversation_is_left_out_whole(built, tmp_path, capsys):
    """What judge and report say of a held back conversation ("left out, not scored") is what they do: a
    damaged line in the middle (which the next `ihbench barge-in` plays again, from there) leaves none of
    its points scored until then, not the points of the rounds before the line."""
    import json

    from barge_in_script import scripts
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_barge_in import barge_in

    model_script, sim_script = scripts()
    out = tmp_path / "run"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
    lines = (out / "barge_in.jsonl").read_text().splitlines()
    lines[7] = "{}"  # round 8: damaged
    (out / "barge_in.jsonl").write_text("\n".join(lines) + "\n")
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "judge.sqlite")]) == 0
    said = capsys.readouterr()
    assert "0 judgment(s) written" in said.out and "1 conversation(s) of this barge-in run are left out" in said.out, \
        said.out
    assert not (out / "judgments.jsonl").exists() or not (out / "judgments.jsonl").read_text().strip()


@pytest.mark.parametrize("value", ["3", 4])
def test_a_barge_in_round_format_edited_in_run_json_is_one_line_and_nothing_is_played(value, built, tmp_path,
                                                                                      capsys):
    """Battery 32, B5 (P2) and B2 (P2): run.json's barge_in.round_format "3" ended barge-in in a TypeError
    traceback; 4 (a later format) left every round out as older than the run's, so each resume played
    all of them again and appended them once more (20, 40, 60 lines), and judge called the file empty."""
    import json

    from barge_in_script import scripts
    from openai_test_server import OpenAITestServer
    from test_barge_in import barge_in

    model_script, sim_script = scripts()
    out = tmp_path / "run"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
        info = json.loads((out / "run.json").read_text())
        info["barge_in"]["round_format"] = value
        (out / "run.json").write_text(json.dumps(info))
        before = (out / "barge_in.jsonl").read_text()
        capsys.readouterr()
        assert barge_in(model, sim, built, out) == 2
        err = capsys.readouterr().err
        assert (f"{out / 'run.json'}: field 'barge_in.round_format' must be a whole number from 1 to 3, got "
                f"{value!r}") in err and "Traceback" not in err, err
    assert main(["judge", str(out), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "field 'barge_in.round_format'" in capsys.readouterr().err
    assert (out / "barge_in.jsonl").read_text() == before


@pytest.mark.parametrize("edit, said", [
    (("modality", "audio"), "played in text modality, and this run's is audio"),
    (("seed", 7), "its seed is not the one this run (--seed 7) draws for it"),
])
def test_a_barge_in_run_json_edit_that_fits_no_round_is_said_per_line_and_not_called_empty(edit, said, built,
                                                                                           tmp_path, capsys):
    """Battery 32, B3 and B4 (P3): run.json's modality edited to audio on a run played in text was accepted by judge
    and report (published as an audio run); and a run.json edit that left every round out (a seed) made judge and
    report call barge_in.jsonl "empty". Each round now says why it is left out, and the file is not called empty."""
    import json

    from barge_in_script import scripts
    from judging import ScriptedJudge
    from openai_test_server import OpenAITestServer
    from test_barge_in import barge_in

    model_script, sim_script = scripts()
    out = tmp_path / "run"
    with OpenAITestServer(respond=model_script) as model, OpenAITestServer(respond=sim_script) as sim:
        assert barge_in(model, sim, built, out) == 0
    assert all(json.loads(line)["modality"] == "text" for line in (out / "barge_in.jsonl").read_text().splitlines())
    with OpenAITestServer(respond=ScriptedJudge(faults=False)) as judge:
        assert main(["judge", str(out), "--judge-model", "judge-x", "--judge-base-url", judge.base_url,
                     "--cache", str(tmp_path / "judge.sqlite"), "--quiet"]) == 0
    info = json.loads((out / "run.json").read_text())
    info[edit[0]] = edit[1]
    (out / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["report", str(out), "--n-bootstrap", "10", "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert said in err and "barge_in.jsonl: every line is left out (said above), while" in err, err
    assert "empty" not in err and "Traceback" not in err, err
    assert not (tmp_path / "rep" / "summary.json").exists()


@pytest.mark.parametrize("tokens, said", [
    ({"calls": "x"}, "field 'tokens.calls' must be a count (0 or more), got \"x\""),
    ({"prompt_tokens": None}, "field 'tokens.prompt_tokens' must be a count (0 or more), got null"),
    ({"calls": -5}, "field 'tokens.calls' must be a count (0 or more), got -5"),
    ({"price": 3}, "field 'tokens.price' is not one of calls, cached"),
    ([1], "field 'tokens' must be an object of counts, got [1]"),
])
def test_a_suite_s_token_counts_edited_by_hand_are_refused_before_any_call(tokens, said, tmp_path, capsys):
    """Battery 35, E4 (P2): generate.json's `tokens` of the wrong type made generate write its conversations, then
    end in a TypeError traceback without recording the run, and every later generate into the folder the same."""
    import json

    from generate_script import GenerationScript
    from openai_test_server import OpenAITestServer
    from test_generate import generate

    script = GenerationScript(["cooperative"])
    out = tmp_path / "out"
    with OpenAITestServer(respond=script) as server:
        assert generate(server, out) == 0
        info = json.loads((out / "generate.json").read_text())
        (out / "generate.json").write_text(json.dumps({**info, "tokens": tokens}))
        before = sorted(p.name for p in (out / "conversations").iterdir())
        sent = sum(script.requests.values())
        capsys.readouterr()
        assert generate(server, out, conversations=2) == 2
    err = capsys.readouterr().err
    assert f"{out / 'generate.json'}: {said}" in err and "Traceback" not in err, err
    assert sum(script.requests.values()) == sent and sorted(p.name for p in (out / "conversations").iterdir()) == before
