"""Battery 61 (issue 23): findings H… of the sixty-first battery of bad inputs, tried on an installed wheel as a new
user would (/work/battery61/LOG.md). Each test's docstring names its finding. (H4 is in test_judge.py.)"""
import json

import pytest

from ihbench.cli import main

AWS_KEYS = ["AKIAIOSFODNN7EXAMPLQ", "ASIAY34FZKBOKMUTVV7A"]


@pytest.mark.parametrize("key", AWS_KEYS)
def test_an_aws_access_key_id_is_a_key_by_its_shape(key):
    """Battery 61, H6 (P1): an AWS access key id (`AKIA`/`ASIA` and 16 capitals or digits: 20 characters, below the
    24 a key without a prefix is judged from) was echoed, written into run.json and passed verify."""
    from ihbench.dataset.key_shapes import holds_prefixed_key
    from ihbench.dataset.redaction import credential_in, redact_text

    assert holds_prefixed_key(f"my key is {key}.") and credential_in(f"runs/{key}/x")
    assert key not in redact_text(f"denied for {key}: no such user")


@pytest.mark.parametrize("name", ["AKIAIOSFODNN7EXAMPLQX", "AKIA_model", "ASIAN-FOOD-REVIEWS-2024",
                                  "akiaiosfodnn7examplq"])
def test_names_near_the_aws_shape_are_names(name):
    from ihbench.dataset.key_shapes import holds_prefixed_key

    assert not holds_prefixed_key(name)


@pytest.mark.parametrize("key", AWS_KEYS)
def test_an_aws_key_id_given_to_run_is_refused_without_echo(key, tmp_path, capsys):
    for option in (["--model-path", key], ["--model-path", "m", "--option", f"api_key_env={key}"]):
        try:  # a flag's value is refused by argparse (exit 2), an --option's by the command (returns 2)
            code = main(["run", "--model", "openai", "--data", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1",
                         "--out", str(tmp_path / "r"), *option])
        except SystemExit as exit:
            code = exit.code
        assert code == 2
        err = capsys.readouterr().err
        assert key not in err and ("API key" in err or "a provider's key by its shape" in err), err
    assert not (tmp_path / "r").exists()


def _sources_saying(tmp_path, said: str):
    """A folder of one shipped conversation source whose first user turn is `said`."""
    from ihbench.dataset.sources import source_files

    original = next(iter(source_files()))
    source = json.loads(original.read_text())
    source["turns"][0]["user"] = said
    folder = tmp_path / "sources"
    folder.mkdir()
    (folder / original.name).write_text(json.dumps(source))
    return folder


def test_a_source_holding_an_aws_key_id_is_refused_by_verify(tmp_path, capsys):
    folder = _sources_saying(tmp_path, f"My AWS key is {AWS_KEYS[0]} if that helps.")
    assert main(["verify", str(folder)]) == 1
    said = capsys.readouterr()
    assert "turns[0].user: holds a provider's API key (a credential; not shown)" in said.out + said.err
    assert AWS_KEYS[0] not in said.out + said.err


@pytest.mark.parametrize("description, said", [("", "expected a non-empty sentence on one line, got ''"),
                                               ("Line of sk-proj-" + "Ab3dE5fG7h" * 4, "got what looks like an API key "
                                                "(a credential; not shown): a sentence holds none"),
                                               ("a line\nand another", "a non-empty sentence on one line")])
def test_generate_s_description_is_held_to_a_sentence_s_rules(description, said, tmp_path, capsys):
    """Battery 61, H3 (P3): `--description ''` (an empty variable) silently meant "the LLM writes it", while the same
    for --goal was refused."""
    with pytest.raises(SystemExit):
        main(["generate", "--domain", "telecom", "--goal", "Port the caller's number", "--description", description,
              "--llm-model", "m", "--out", str(tmp_path / "g")])
    assert said in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_a_model_given_as_judge_s_data_is_said_as_a_model_not_as_an_option_judge_lacks(tmp_path, capsys):
    """Battery 61, H8 (P3): `judge --data TINY_MODEL` (and report's) said "give it as --model-path", an option
    neither has."""
    from ihbench.loaders.tiny import make_tiny_model

    from judged_runs import judged_run

    model = make_tiny_model("qwen2-text", tmp_path / "tiny")
    run = judged_run(tmp_path, limit=1)
    capsys.readouterr()
    for command in (["judge", str(run), "--judge-model", "j", "--judge-base-url", "http://127.0.0.1:9/v1"],
                    ["report", str(run), "--out", str(tmp_path / "rep")]):
        assert main([*command, "--data", str(model)]) == 2
        err = capsys.readouterr().err
        assert "it is a model (`ihbench run --model-path` takes it); give a dataset folder built by `ihbench build`" \
            in err, err


def test_an_output_folder_holding_a_hand_made_build_info_is_not_called_a_dataset(tmp_path, capsys):
    """Battery 61, H9 (P3): report --out on a folder of the user's notes and a build_info.json of `{}` called it "a
    dataset folder (build_info.json)", where build says its record is not a build's."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "build_info.json").write_text("{}")
    (folder / "notes.txt").write_text("mine")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    assert main(["report", str(tmp_path / "run"), "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"--out: {folder} is a folder whose build_info.json is not a build's record" in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["build_info.json", "notes.txt"]


def test_a_judge_stopped_mid_way_is_said_so_beside_a_torn_line(tmp_path, capsys):
    """Battery 61, H7 (P3): after a judge killed mid-way (its record says it did not finish) with its last line torn,
    the report put every answer without a verdict down to the one damaged line."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=3)
    judgments = next(run.glob("judgments*.jsonl"))
    asked = judgments.with_name(judgments.stem + ".asked.json")
    record = json.loads(asked.read_text())
    asked.write_text(json.dumps({**record, "unfinished": True}))  # as a judge killed mid-way leaves it
    lines = judgments.read_text().splitlines(keepends=True)
    judgments.write_text("".join(lines[:2]) + lines[2][:20])  # two verdicts, then a line cut mid-way
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "rep"), "--n-bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert "line 3: incomplete (cut mid-line" in err, err
    assert f"(the last `ihbench judge` stopped before it finished (killed, or ended by an error); {judgments} has 1 " \
        "damaged line(s) (3), left out)" in err, err  # both said (battery 62, I7)



SECRET = "Tq8WzL3nV6pR2xK9"  # a made-up value of 16 characters: an environment secret's, from 12


def test_an_environment_secret_s_value_in_a_source_is_refused_by_verify_and_build(tmp_path, capsys, monkeypatch):
    """Battery 61, H11 (P1): `$MY_SERVICE_TOKEN`'s value pasted in a conversation's turn passed verify, and build
    wrote it into two Parquet files (a provider's key there is refused since battery 58, E9)."""
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    folder = _sources_saying(tmp_path, f"My code is {SECRET} if that helps.")
    assert main(["verify", str(folder)]) == 1
    said = capsys.readouterr()
    assert "turns[0].user: holds the value of $MY_SERVICE_TOKEN (a credential; not shown)" in said.out + said.err
    assert main(["build", "--sources", str(folder), "--out", str(tmp_path / "ds"), "--no-sid", "--no-convbench",
                 "--no-duplex", "--quiet"]) == 2
    said = capsys.readouterr()
    assert "holds the value of $MY_SERVICE_TOKEN" in said.err and SECRET not in said.out + said.err
    assert not (tmp_path / "ds").exists()
    monkeypatch.delenv("MY_SERVICE_TOKEN")  # the same text is a conversation's own where no secret holds it
    assert main(["verify", str(folder)]) == 0


def test_an_environment_secret_s_value_in_a_workflow_is_refused_before_any_prompt(tmp_path, capsys, monkeypatch):
    """Battery 61, H10 (P1): a --workflow whose knowledge base held `$MY_SERVICE_TOKEN`'s value was sent in every
    prompt and written into the suite (the same in --description was refused)."""
    from openai_test_server import OpenAITestServer
    from test_generate import WORKFLOW

    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    flow = tmp_path / "flow.yaml"
    flow.write_text(WORKFLOW.replace("Porting time: one business day", f"support_key: {SECRET}"))
    with OpenAITestServer() as server:
        assert main(["generate", "--workflow", str(flow), "--llm-model", "m", "--llm-base-url", server.base_url,
                     "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert f"--workflow {flow}: holds the value of $MY_SERVICE_TOKEN (a credential; not shown)" in err, err
    assert SECRET not in err and not (tmp_path / "out").exists()


def test_publish_finds_an_environment_secret_s_value_in_built_data(tmp_path, monkeypatch):
    """Battery 61, H11: a dataset built before the check (or edited since) is read before a publish."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ihbench.dataset.keys_in_data import key_in_parquet

    pq.write_table(pa.Table.from_pylist([{"id": "c1", "turns": [{"user": f"code {SECRET}", "agent": "ok"}]}]),
                   tmp_path / "d.parquet")
    assert key_in_parquet(tmp_path / "d.parquet") is None
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    assert key_in_parquet(tmp_path / "d.parquet") == ("turns.user", "the value of $MY_SERVICE_TOKEN")


SPELLED = ["fam-\U0001F468\u200d\U0001F469\u200d\U0001F467",  # a ZWJ emoji sequence
           "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F-eval",  # England's flag
           "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, with its non-joiner
           "\u0915\u094d\u200d\u0937-run", "\u2764\ufe0f\u200d\U0001F525", "1\ufe0f\u20e3-first"]
BLANK = ["zwj-a\u200db", "zwnj-a\u200cb", "tag-a\U000E0041b", "vs-a\ufe0fb", "cgj-a\u034fb", "hang-a\u3164b",
         "brl-a\u2800b", "x-\U0001F3F4\U000E0067"]


@pytest.mark.parametrize("name", SPELLED)
def test_a_name_spelled_with_joiners_is_a_name_where_it_is_made_and_where_it_is_read(name, tmp_path, monkeypatch,
                                                                                       capsys):
    """Battery 61, H12 and H13 (P2): G1 let `make-tiny-model --out` and `build --out` make such folders, and then
    --model-path and --data refused them ("a line break, a tab, a control character ..."): a dataset made that
    nothing could read."""
    monkeypatch.chdir(tmp_path)
    assert _code(["make-tiny-model", "qwen2-text", "--out", name, "--quiet"]) == 0
    _code(["run", "--model", "openai", "--model-path", name, "--data", "d", "--base-url", "http://127.0.0.1:9/v1",
           "--out", "r"])
    assert "no such dataset directory" in capsys.readouterr().err  # refused for the data, not for the model's name
    for command in (["info", name], ["run", "--model", "openai", "--model-path", "m", "--data", name, "--out", "r",
                                               "--base-url", "http://127.0.0.1:9/v1"]):
        _code(command)
        err = capsys.readouterr().err
        assert "is an `ihbench make-tiny-model` model folder" in err, err  # read as the folder it is


@pytest.mark.parametrize("name", BLANK)
def test_joiners_and_fillers_that_show_nothing_are_refused_in_a_new_name(name, tmp_path, monkeypatch, capsys):
    """Battery 61, H1 (P3): G1's allowance took a ZWJ or non-joiner between Latin letters (`zwj-a<ZWJ>b` reads as
    `zwj-ab`), a lone tag, a Hangul filler or the Braille blank: folders whose names read as others'."""
    monkeypatch.chdir(tmp_path)
    assert _code(["make-tiny-model", "qwen2-text", "--out", name, "--quiet"]) == 2
    assert "an invisible or direction-changing character" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert _code(["run", "--model", "openai", "--model-path", name, "--data", "d", "--out", "r"]) == 2
    assert "an invisible or direction-changing character in it" in capsys.readouterr().err


def _code(argv) -> int:
    """The exit code of a command, whether argparse refused a flag (SystemExit) or the command returned it."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_sid_run_again_without_the_secret_variable_keeps_its_summary_hidden(tmp_path, monkeypatch):
    """Battery 61, H14 (P1): `ihbench sid` with an audio-llm detector whose server address held `$SVC_TOKEN`'s value,
    run again in a shell without the variable, wrote the value into summary.json (run.json and generate.json kept
    it hidden since battery 59, F2 and battery 60, G6; now every record written again does)."""
    from openai_test_server import OpenAITestServer, Reply
    from test_report_cross import write_sid_folder

    data = write_sid_folder(tmp_path / "SID-bench")
    value = "Kw7Rt2Yp9Lm4Qx8Z"
    with OpenAITestServer(respond=lambda body: Reply(content="no")) as server:
        def sid() -> int:
            return main(["sid", "--data", str(data), "--config", "sid_en", "--out", str(tmp_path / "s"), "--detector",
                         "audio-llm", "--model", "openai", "--model-path", "m", "--base-url",
                         server.base_url.replace("/v1", f"/{value}/v1"), "--hop", "60000", "--quiet"])

        monkeypatch.setenv("SVC_TOKEN", value)
        assert sid() == 0
        monkeypatch.delenv("SVC_TOKEN")
        assert sid() == 0
    written = {path.name: path.read_text(errors="replace") for path in (tmp_path / "s").rglob("*") if path.is_file()}
    assert "<redacted>" in written["summary.json"] and not [name for name, text in written.items() if value in text]


def test_a_json_record_written_again_keeps_hidden_what_it_hid(tmp_path):
    from ihbench.dataset.io import write_json_atomic

    path = tmp_path / "summary.json"
    write_json_atomic(path, {"base_url": "http://h/<redacted>/v1", "n": 1})
    write_json_atomic(path, {"base_url": "http://h/Kw7Rt2Yp9Lm4Qx8Z/v1", "n": 2})
    assert json.loads(path.read_text()) == {"base_url": "http://h/<redacted>/v1", "n": 2}
    path.write_text("not json")  # a damaged one is replaced as it is
    write_json_atomic(path, {"n": 3})
    assert json.loads(path.read_text()) == {"n": 3}


def _loop(path):
    """`path` made a symlink loop: it and its sibling link to each other."""
    import os

    path.unlink(missing_ok=True)
    os.symlink(path.name + ".other", path)
    os.symlink(path.name, path.with_name(path.name + ".other"))


def test_a_run_json_that_is_a_symlink_loop_is_said_so(tmp_path, capsys):
    """Battery 61, H15 (P3): a run.json that was a symlink loop was said "missing" by report, and its folder "not a
    folder this command wrote" by run."""
    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    _loop(run / "run.json")
    capsys.readouterr()
    for command in (["report", str(run), "--out", str(tmp_path / "rep")],
                    ["run", "--model", "openai", "--model-path", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                     str(tmp_path), "--out", str(run)]):
        assert _code(command) == 2
        assert f"{run / 'run.json'}: is a symlink loop (its links point at each other)" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["folder", "loop"])
def test_an_sid_output_whose_summary_is_no_file_is_said_so(damage, tmp_path, capsys):
    """Battery 61, H17 (P3): an sid output whose summary.json was a folder was said to have no summary.json."""
    from test_report_cross import write_sid_folder, write_sid_predictions

    data = write_sid_folder(tmp_path / "SID-bench")
    predictions = write_sid_predictions(tmp_path / "p.jsonl", (0.1, 0.2), 0)
    out = tmp_path / "sid"
    assert main(["sid", "--data", str(data), "--config", "sid_en", "--predictions", str(predictions), "--out",
                 str(out), "--quiet"]) == 0
    (out / "summary.json").unlink()
    (out / "summary.json").mkdir() if damage == "folder" else _loop(out / "summary.json")
    capsys.readouterr()
    assert main(["report", str(out), "--model-name", f"{out}=m", "--out", str(tmp_path / "rep")]) == 2
    said = "a folder" if damage == "folder" else "a symlink loop"
    assert f"{out / 'summary.json'}: is {said}" in capsys.readouterr().err


@pytest.mark.parametrize("description", ["   ", "\u200b", "line\nmore"])
def test_a_description_that_is_blank_invisible_or_two_lines_is_refused_before_any_call(description, tmp_path, capsys):
    """Battery 61, H18 and H19 (P2): `--description '   '` made calls and files, then failed naming a temporary file
    and left the folder refused for good; a zero-width space generated every conversation and discarded them all."""
    from openai_test_server import OpenAITestServer

    with OpenAITestServer() as server:
        assert _code(["generate", "--domain", "government", "--goal", "Start water service", "--description",
                      description, "--llm-model", "m", "--llm-base-url", server.base_url, "--out",
                      str(tmp_path / "g"), "--cache", str(tmp_path / "c.sqlite")]) == 2
        assert server.requests == []
    assert "argument --description: expected a non-empty sentence on one line" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("field, value, said", [
    ("description", '"\\u200b"', "must be a non-empty string: it holds only invisible characters"),
    ("goal", '"\\u200b\\u200b"', "must be a non-empty string: it holds only invisible characters"),
    ("goal", '"Port a\\u200bnumber"', "must be one sentence on one line, as --goal is: it holds an invisible"),
    ("description", '"a line\\nand another"', "must be one sentence on one line, as --description is: it holds a line"),
])
def test_a_workflow_s_goal_or_description_is_held_to_the_command_line_s_rule(field, value, said, tmp_path, capsys):
    """Battery 61, H19 (P2), through --workflow: every call was made and every conversation discarded, exit 0."""
    from openai_test_server import OpenAITestServer
    from test_generate import WORKFLOW

    text = WORKFLOW.replace("goal: Port the caller's number to a new postpaid line\n", "goal: Port a number\n")
    text = text.replace(f"{field}: Port a number", f"{field}: {value}") if field == "goal" else \
        text.replace("domain: telecom\n", f"domain: telecom\ndescription: {value}\n")
    flow = tmp_path / "flow.yaml"
    flow.write_text(text)
    with OpenAITestServer() as server:
        assert _code(["generate", "--workflow", str(flow), "--llm-model", "m", "--llm-base-url", server.base_url,
                      "--out", str(tmp_path / "g"), "--cache", str(tmp_path / "c.sqlite")]) == 2
        assert server.requests == []
    assert f"{flow}: {field}: {said}" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_a_copied_run_given_beside_its_original_is_refused(tmp_path, capsys):
    """Battery 61, H20 (P3): `report d3 d3copy` (a `cp -r` of the run) reported one run as two, and let a statistics
    library's "catastrophic cancellation" warning through."""
    import shutil

    from judged_runs import judged_run

    run = judged_run(tmp_path, limit=1)
    shutil.copytree(run, tmp_path / "copy")
    capsys.readouterr()
    assert main(["report", str(run), str(tmp_path / "copy"), "--out", str(tmp_path / "rep")]) == 2
    assert f"{tmp_path / 'copy'}: the same run as {run} (its run.json, answers and judgments are the same bytes" in \
        capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_what_an_earlier_start_hid_is_hidden_in_every_text_written_after(monkeypatch):
    """With H14: once a record written again finds a part its earlier version hid (`<redacted>` there, in clear now,
    the shell no longer holding the variable), that part is hidden in every text written after it, a server's error
    quoting the address included."""
    from ihbench.dataset import redaction

    monkeypatch.setattr(redaction, "_IN_USE", set())
    before = {"endpoint": "http://h/<redacted>/v1"}
    assert redaction.hidden_as_before(before, {"endpoint": "http://h/Kw7Rt2Yp9Lm4Qx8Z/v1"}) == before
    assert redaction.redact_text("404 for http://h/Kw7Rt2Yp9Lm4Qx8Z/v1/chat") == "404 for http://h/<redacted>/v1/chat"


@pytest.mark.parametrize("character", ["\u3164", "\ufe0f", "\u034f", "\u2800", "\U000E0100"])
def test_a_refused_character_is_shown_by_its_code(character, tmp_path, capsys):
    """Battery 62, I5 and I6 (P3): a variation selector of the supplement (U+E0100) after a Latin letter was taken;
    a refused Hangul filler or selector was quoted raw, so the name in the message read as a plain one."""
    code = f"\\u{ord(character):04x}" if ord(character) <= 0xFFFF else f"\\U{ord(character):08x}"
    for option in ("--model-path", "--out"):
        argv = ["run", "--model", "openai", "--model-path", "m", "--data", "d", "--out", "r"]
        argv[argv.index(option) + 1] = f"mp{character}b"
        assert _code(argv) == 2
        err = capsys.readouterr().err
        assert f"got 'mp{code}b' (an invisible or direction-changing character" in err, err
