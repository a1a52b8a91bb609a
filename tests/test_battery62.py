"""Battery 62 (issue 23): findings I… of the sixty-second battery of bad inputs, tried on an installed wheel as a new
user would (/work/battery62/LOG.md). Each test's docstring names its finding. (I4 is in test_judge.py, I5 and I6 in
test_battery61.py beside H1.)"""
import pytest

from ihbench.cli import main
from test_battery61 import _sources_saying


#: 32 letters and digits drawn at random once (the same in every test process): no key of anyone's
RANDOM_KEY = "ZIsIfjm3Q58fMoZvEAWAgdj7eIKOmvpr"


@pytest.mark.parametrize("said, found", [
    ("go to https://bob:S3cr3tPassw0rd@example.com", "a URL with a user part (a password or a key)"),
    (f"the code is {RANDOM_KEY}", "what looks like an API key"),
])
def test_a_url_password_or_a_random_key_in_a_source_is_refused_by_verify_and_build(said, found, tmp_path, capsys):
    """Battery 62, I1 and I2 (P1): a URL's password, or 32 random letters and digits, in a conversation's turn passed
    verify and build wrote it into the dataset (the same refused as a name since battery 45)."""
    folder = _sources_saying(tmp_path, said)
    assert main(["verify", str(folder)]) == 1
    out = capsys.readouterr()
    assert f"turns[0].user: holds {found}" in out.out + out.err
    secret = said.split()[-1].split("@")[0].split(":")[-1]
    assert secret not in out.out + out.err
    assert main(["build", "--sources", str(folder), "--out", str(tmp_path / "ds"), "--no-sid", "--no-convbench",
                 "--no-duplex", "--quiet"]) == 2
    assert not (tmp_path / "ds").exists()


def test_a_url_password_in_a_benchmark_is_refused_by_convbench_import(tmp_path, capsys):
    """Battery 62, I3 (P1): a URL with a password in a ConversationBench benchmark's knowledge base was imported."""
    from convbench_layout import write_benchmark_folder
    from official_layout import write_official_layout

    folder = write_benchmark_folder(tmp_path / "bench")
    data = write_official_layout(tmp_path / "official")
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    knowledge = folder / "data" / "knowledge_base.txt"
    knowledge.write_text(knowledge.read_text() + "\nCode: http://ann:Pa55word99@host.example/x\n")
    assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "the knowledge base holds a URL with a user part" in err and "Pa55word99" not in err, err
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before


def test_a_caller_s_reference_codes_are_a_conversation_s_own(tmp_path, capsys):
    """The neighbour of I2: what a caller reads out (a claim number, a booking code, an email address) stays."""
    folder = _sources_saying(tmp_path, "My claim is CLM-2024-88731, booking ZX81KQ, email me at bob@example.com.")
    assert main(["verify", str(folder)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("record", ["garbage", '{"hello": 1}'])
def test_a_folder_whose_build_info_is_no_build_s_is_not_called_a_damaged_dataset(record, tmp_path, capsys):
    """Battery 62, I8 (P3): `info` on a folder of the user's with a build_info.json of garbage advised "copy the
    dataset again or rebuild it"."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "build_info.json").write_text(record)
    (folder / "notes.txt").write_text("mine")
    assert main(["info", str(folder)]) == 2
    assert f"{folder}: not a dataset: its build_info.json is not a build's record, and it has no card (README.md)" \
        in capsys.readouterr().err


@pytest.mark.parametrize("typed, shown", [("NaN", "NaN"), ("Infinity", "Infinity"), ("1_000", "'1_000'")])
def test_a_scalar_option_number_is_shown_as_typed_and_digit_grouping_is_no_number(typed, shown, tmp_path, capsys):
    """Battery 62, I9 (P3): `--option timeout=NaN` was said "got nan", Infinity "got inf"; `timeout=1_000` (Python's
    digit grouping) was taken as 1000."""
    assert main(["run", "--model", "openai", "--model-path", "m", "--data", str(tmp_path), "--base-url",
                 "http://127.0.0.1:9/v1", "--option", f"timeout={typed}", "--out", str(tmp_path / "r")]) == 2
    assert f"--option timeout: expected a number in (0, 86400], got {shown}" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["run.json", "responses.jsonl"])
def test_report_on_a_run_whose_record_is_a_named_pipe_is_refused_at_once(name, tmp_path, capsys):
    """Battery 62, I12 (P2): H20's check for a copied run read run.json and responses.jsonl whole: a named pipe there
    made `report` wait for ever."""
    import os

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    (run / name).unlink()
    os.mkfifo(run / name)
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep")]) == 2
    assert f"{run / name}: is a named pipe" in capsys.readouterr().err


@pytest.mark.parametrize("field, value", [("model_path", "AKIAIOSFODNN7EXAMPLQ"), ("extra_note", "m-Tq8WzL3nV6pR2xK9")])
def test_a_credential_in_an_sid_summary_s_detector_is_refused_by_report(field, value, tmp_path, capsys, monkeypatch):
    """Battery 62, I15 (P1): a key (or an environment secret's value) in an sid summary's detector record, edited in,
    was printed by `report` and copied into its summary.json and report.md."""
    import json

    from test_report_cross import write_sid_folder

    monkeypatch.setenv("MY_SERVICE_TOKEN", "Tq8WzL3nV6pR2xK9")
    data = write_sid_folder(tmp_path / "SID-bench")
    out = tmp_path / "sid"
    assert main(["sid", "--data", str(data), "--config", "sid_en", "--detector", "energy", "--out", str(out),
                 "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    summary["detector"][field] = value
    (out / "summary.json").write_text(json.dumps(summary))
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 2
    said = capsys.readouterr()
    assert f"field detector.{field} holds" in said.err and value not in said.out + said.err, said.err
    assert not (tmp_path / "rep").exists()


def _a_text_of(data) -> str:
    """16 characters of a text of the first point: a value the test sets as an environment secret's."""
    from ihbench.dataset import load_items

    from ihbench.dataset.checks.words import strings

    text = next(text for _, text in strings(load_items(str(data))[0]) if len(text) >= 24 and " " in text
                and text[0].isalpha())
    return text[:16]


def test_an_environment_secret_s_value_in_the_data_is_not_sent_nor_exported(tmp_path, capsys, monkeypatch):
    """Battery 62, I16 (P1) and I17 (P2): with `$MY_SERVICE_TOKEN` set to a text the dataset holds, `run` and `judge`
    sent it to their servers in every prompt, and `export` copied it into conversation.md."""
    from judged_runs import judged_run
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    run = judged_run(tmp_path, limit=1)
    data = write_official_layout(tmp_path / "official2")
    value = _a_text_of(data)
    monkeypatch.setenv("MY_SERVICE_TOKEN", value)
    capsys.readouterr()
    with OpenAITestServer() as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(tmp_path / "fresh"), "--quiet"]) == 2
        said = capsys.readouterr().err
        assert "holds the value of $MY_SERVICE_TOKEN (a credential; not shown), which the prompts would carry" in said
        assert not (tmp_path / "fresh").exists()
        judged = json_of(run / "run.json")["data"]
        monkeypatch.setenv("MY_SERVICE_TOKEN", _a_text_of(judged))
        assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", server.base_url, "--out",
                     str(run / "judgments-again.jsonl"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 2
        said += capsys.readouterr().err
        assert "which the judge's prompts would send to its server" in said
        assert server.requests == []
    assert main(["export", str(judged), "--out", str(tmp_path / "ex")]) == 2
    said += capsys.readouterr().err
    assert "which conversation.md would copy" in said and not list((tmp_path / "ex").rglob("*.md"))
    assert value not in said


def json_of(path):
    import json

    return json.loads(path.read_text())


def test_an_unfinished_run_s_damaged_response_line_is_said_beside_it(tmp_path, capsys):
    """Battery 62, I13 (P3): a run whose responses.jsonl held only a line cut mid-way was said "unfinished: 0 of 4",
    the cut line unsaid."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=2)
    responses = run / "responses.jsonl"
    responses.write_text(responses.read_text()[:300])
    for judgments in run.glob("judgments*"):
        judgments.unlink()
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    assert "is unfinished: 0 of 6 planned response(s) are in it; 1 line(s) of its responses.jsonl (1) cut mid-line, " \
        "left out" in capsys.readouterr().err


def test_an_out_in_another_run_s_folder_is_refused_before_any_probe_there(tmp_path, capsys, monkeypatch):
    """Battery 62, I14 (P3): `report --out OTHER_RUN` and `judge --out OTHER_RUN/judgments-x.jsonl` made and removed a
    probe folder inside the other run before refusing (a kill at that moment would have left it)."""
    import tempfile

    from judged_runs import judged_run

    run = judged_run(tmp_path / "a", limit=1)
    other = judged_run(tmp_path / "b", limit=1)
    probes = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: probes.append(k.get("dir")) or real(*a, **k))
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(other)]) == 2
    assert "is another run's folder" in capsys.readouterr().err
    assert main(["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--out",
                 str(other / "judgments-x.jsonl")]) == 2
    assert "is inside another run's folder" in capsys.readouterr().err
    assert not [place for place in probes if place and str(other) in str(place)], probes


@pytest.mark.parametrize("secret", ["https://bob:S3cr3tPassw0rd@example.com", RANDOM_KEY])
def test_verify_hides_a_credential_its_problem_quotes(secret, tmp_path, capsys):
    """Battery 63, J1 (P1): a credential used as a voice's name or a knowledge base's key was quoted in full by
    verify's problem line ("unknown voice 'https://bob:...'"), where build hid it."""
    import json

    folder = _sources_saying(tmp_path, "Hello there.")
    source_path = next(folder.glob("*.json"))
    source = json.loads(source_path.read_text())
    source["user_voice"] = secret
    source_path.write_text(json.dumps(source))
    assert main(["verify", "--no-audio", str(folder)]) == 1
    said = capsys.readouterr()
    assert "unknown voice" in said.err and secret.split("@")[0].split(":")[-1] not in said.out + said.err, said.err


@pytest.mark.parametrize("field", ["data", "config"])
def test_a_credential_in_any_field_of_an_sid_summary_is_refused_by_report(field, tmp_path, capsys):
    """Battery 63, J2 (P1): I15's check read model_name and detector; a URL password in `config` or `data` was copied
    into report.md and summary.json."""
    import json

    from test_report_cross import write_sid_folder

    data = write_sid_folder(tmp_path / "SID-bench")
    out = tmp_path / "sid"
    assert main(["sid", "--data", str(data), "--config", "sid_en", "--detector", "energy", "--out", str(out),
                 "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    summary[field] = "https://bob:S3cr3tPassw0rd@example.com"
    (out / "summary.json").write_text(json.dumps(summary))
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 2
    said = capsys.readouterr()
    assert f"field {field} holds a URL with a user part" in said.err and "S3cr3t" not in said.out + said.err
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("answer", ["\u3164", "\u3164\u3164 \ufe0f", "\u2800"])
def test_an_answer_of_blank_looking_characters_is_a_failed_item(answer, tmp_path, capsys):
    """Battery 63, J5 (P2): an answer made only of the Hangul filler (it draws blank) was judged and scored, where one
    of zero-width spaces is a failed item, retried and never scored."""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer, Reply

    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer(respond=lambda body: Reply(content=answer)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--option",
                     "max_retries=0", "--quiet"]) == 1
    assert "only invisible characters" in (tmp_path / "r" / "responses.jsonl").read_text()


@pytest.mark.parametrize("answer", ["your token is Tq8WzL3nV6pR2xK9", "key sk-proj-Ab3dE5fG7hAb3dE5fG7hAb3dE5fG7hAb3d ok"])
def test_an_answer_echoing_a_secret_is_written_without_it(answer, tmp_path, monkeypatch):
    """Battery 63, J6 (P1): a model's answer holding an environment secret's value (or a provider's key) was written
    to responses.jsonl as it came."""
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer, Reply

    monkeypatch.setenv("MY_SERVICE_TOKEN", "Tq8WzL3nV6pR2xK9")
    data = write_official_layout(tmp_path / "official")
    with OpenAITestServer(respond=lambda body: Reply(content=answer)) as server:
        assert main(["run", "--model", "openai", "--model-path", "m", "--base-url", server.base_url, "--data",
                     str(data), "--out", str(tmp_path / "r"), "--limit", "1", "--epochs", "1", "--quiet"]) == 0
    written = (tmp_path / "r" / "responses.jsonl").read_text()
    assert "<redacted>" in written and "Tq8WzL3nV6pR2xK9" not in written and "Ab3dE5fG7h" not in written


def test_a_repo_refusal_shows_an_invisible_character_by_its_code(tmp_path, capsys):
    """Battery 63, J7 (P3): `--repo "me/<U+3164>"` was refused quoting the Hangul filler raw (it read 'me/ ')."""
    assert main(["publish-dataset", str(tmp_path), "--repo", "me/\u3164", "--dry-run"]) == 2
    assert "got 'me/\\u3164'" in capsys.readouterr().err


def test_khmer_inherent_vowels_are_refused_in_a_new_name(tmp_path, monkeypatch, capsys):
    """Battery 63, J3 (P3): U+17B4 and U+17B5, which Unicode marks to be ignored in display, made `run-a<U+17B4>b`
    a folder that reads `run-ab`."""
    monkeypatch.chdir(tmp_path)
    for character in ("\u17b4", "\u17b5"):
        with pytest.raises(SystemExit):
            main(["make-tiny-model", "qwen2-text", "--out", f"run-a{character}b"])
        assert f"run-a\\u{ord(character):04x}b" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["report", "judge"])
def test_a_response_record_without_its_response_key_is_a_damaged_line(command, tmp_path, capsys):
    """Battery 63, J9 (P2): a responses.jsonl line whose "response" key was deleted ended report, judge and a resumed
    run in a TypeError traceback."""
    import json

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    lines = (run / "responses.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["error"] = "HTTP 500: down"  # a failed item's record (as a down server's), then its key deleted
    del record["response"]
    (run / "responses.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    capsys.readouterr()
    argv = ["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"] if command == "report" else \
        ["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1", "--out",
         str(run / "judgments-x.jsonl"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"]
    main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "field 'response' is missing" in err, err


def test_a_judge_answer_echoing_a_secret_is_written_and_cached_without_it(tmp_path, capsys, monkeypatch):
    """Battery 63, J10 (P1): a judge's answer holding an environment secret's value and a provider's key was written
    into judgments.jsonl and the judge's cache as it came (with J6's rule, the server's text hides them)."""
    import json

    from judged_runs import judged_run
    from openai_test_server import OpenAITestServer, Reply

    run = judged_run(tmp_path, limit=1)
    key = "sk-proj-Ab3dE5fG7hAb3dE5fG7hAb3dE5fG7hAb3d"
    monkeypatch.setenv("MY_SERVICE_TOKEN", "Tq8WzL3nV6pR2xK9")
    answer = json.dumps({"winner": "B", "loser_deficiency": "it repeats Tq8WzL3nV6pR2xK9",
                         "reasoning": f"the key {key} shows"})
    with OpenAITestServer(respond=lambda body: Reply(content=answer)) as server:
        main(["judge", str(run), "--judge-model", "j2", "--judge-base-url", server.base_url, "--axes", "tf", "--out",
              str(run / "judgments-j2.jsonl"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"])
    written = (run / "judgments-j2.jsonl").read_bytes() + (tmp_path / "c.sqlite").read_bytes()
    assert b"<redacted>" in written and b"Tq8WzL3nV6pR2xK9" not in written and b"Ab3dE5fG7h" not in written


@pytest.mark.parametrize("answer, yes, no", [("No. Actually yes.", False, False), ("Yes, but no", False, False),
                                             ("yes no", False, False), ("Yes.", True, False), ("No, not yet", False, True)])
def test_an_answer_that_says_both_yes_and_no_is_neither(answer, yes, no):
    """Battery 63, J11 (P2): the audio-LLM detector scored "No. Actually yes." by its first word; an answer holding both
    is a failed call, retried and never scored, as "maybe" is."""
    from ihbench.sid.detectors import says_no, says_yes

    assert (says_yes(answer), says_no(answer)) == (yes, no)


def test_a_refused_import_leaves_a_dataset_s_folder_untouched(tmp_path, capsys):
    """Battery 63, J8 (P3): `convbench-import EMPTY --out DATASET` made and removed a probe folder inside the dataset
    before refusing its source: the dataset's modification time changed with every refused try."""
    import os

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    (tmp_path / "empty").mkdir()
    os.utime(data, (1_000_000, 1_000_000))
    assert main(["convbench-import", str(tmp_path / "empty"), "--out", str(data), "--text-only", "--quiet"]) == 2
    assert os.stat(data).st_mtime == 1_000_000
