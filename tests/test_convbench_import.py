"""ConversationBench (1/2), part 1: the published layouts imported without running any of their files,
into a dataset folder `load_dataset` opens, beside IHBench configs."""
import json
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from convbench_layout import KB, TURNS, streaming_wav, write_benchmark_folder, write_hub_rows

from ihbench.cli import main
from ihbench.dataset.audio import repair_wav_sizes
from ihbench.dataset.convbench import ConvBenchFormatError, import_convbench, load_benchmark, read_benchmark


@pytest.fixture
def folder(tmp_path):
    return write_benchmark_folder(tmp_path / "repo")


def test_a_benchmark_folder_is_read_as_literals(folder):
    read = read_benchmark(folder)
    bench = read.benchmark
    assert bench.name == "bike_bench" and bench.hf_repo == "example/bike-bench" and len(bench.turns) == len(TURNS)
    assert bench.tool_names == ["end_session", "book_repair", "cancel_booking"]  # the ToolsSchema order
    assert bench.tools[0]["function"]["parameters"] == {"type": "object", "properties": {}, "required": []}
    assert bench.system_instruction.startswith("You are the phone assistant") and KB in bench.system_instruction
    assert bench.system_instruction.endswith("Call a tool only with its required parameters.")
    assert bench.knowledge_base == KB
    assert bench.turns[2].required_calls[1] == {"name": "book_repair", "args": {"customer": "Ada Park", "slot_id": "43"}}
    assert bench.turns[1].required_function_call == {"name": "book_repair",
                                                     "args": {"customer": "Ada Park", "slot_id": "42"}}
    # the published rule: core dimensions, then the union of the categories' extras, sorted
    assert bench.turns[3].scoring_dimensions == ["kb_grounding", "instruction_following", "tool_use_correct",
                                                 "ambiguity_handling", "state_tracking"]
    assert bench.turns[0].scoring_dimensions == ["kb_grounding", "instruction_following", "tool_use_correct"]
    assert bench.mapping_version.startswith("unpublished")
    assert read.audio_files[0] == "audio/turn_000.wav"


def test_the_published_mappings_are_named_but_read_from_the_folder(folder):
    from ihbench.dataset.convbench.benchmark import mapping_version

    v1 = {c: ["state_tracking"] for c in ("long_range_memory", "cross_turn_reasoning", "cancellation_flow",
                                          "implicit_correction", "error_recovery")}
    v1.update(ambiguous_entity=["ambiguity_handling"], numerical_reasoning=["ambiguity_handling"], basic_qa=[])
    assert mapping_version(v1) == "v1 (main)"
    del v1["numerical_reasoning"]
    assert mapping_version(v1).startswith("v2")


def test_a_placeholder_riff_size_is_set_from_the_file_length():
    data = streaming_wav(1.0)
    with pytest.raises(Exception):  # the stdlib takes the placeholder at its word
        with wave.open(__import__("io").BytesIO(data)) as reader:
            assert reader.getnframes() == 24000
    repaired = repair_wav_sizes(data)
    with wave.open(__import__("io").BytesIO(repaired)) as reader:
        assert reader.getnframes() == 24000 and reader.getframerate() == 24000
    assert repaired[44:] == data[44:] and repair_wav_sizes(repaired) == repaired


def test_import_then_load_dataset_reads_every_field_and_the_audio_at_its_own_rate(folder, tmp_path):
    import datasets

    out = tmp_path / "data"
    result = import_convbench(folder, out, progress=False)
    assert result["name"] == "bike_bench" and result["turns"] == 5
    rows = datasets.load_dataset(str(out), "bike_bench", split="test")
    assert rows[0]["input_text"] == TURNS[0]["input"] and rows[0]["turn_id"] == 0
    audio = rows[0]["audio"]
    assert audio.metadata.sample_rate == 24000 and audio.get_all_samples().data.shape[-1] == 12000
    assert rows[2]["required_function_call"] == [
        {"name": "cancel_booking", "args": json.dumps({"customer": "Ada Park", "slot_id": "42"})},
        {"name": "book_repair", "args": json.dumps({"customer": "Ada Park", "slot_id": "43"})}]
    assert json.loads(rows[2]["function_call_response_json"])[1]["error_code"] == "SLOT_FULL"
    assert rows[3]["scoring_dimensions"][-2:] == ["ambiguity_handling", "state_tracking"]
    setup = datasets.load_dataset(str(out), "bike_bench_setup", split="test")[0]
    assert [t["function"]["name"] for t in json.loads(setup["tools_json"])] == ["end_session", "book_repair",
                                                                                 "cancel_booking"]
    assert KB in setup["system_instruction"] and setup["knowledge_base"] == KB
    bench = load_benchmark(out, "bike_bench")
    assert bench.turns[2].function_call_response == TURNS[2]["function_call_response"]
    assert bench.turns[1].required_function_call == TURNS[1]["required_function_call"]
    card = (out / "README.md").read_text()
    assert "conversation_bench:" in card and "bike_bench:" in card and "mapping_version" in card


def test_a_missing_audio_folder_says_how_to_put_the_published_audio_in_place(tmp_path):
    folder = write_benchmark_folder(tmp_path / "repo", audio=False)
    with pytest.raises(ConvBenchFormatError, match=r"bike_bench/audio: no such folder; the published audio is not in the "
                                                   r"repository: put it in place with `hf download "
                                                   r"example/bike-bench --repo-type dataset --include 'audio/\*\.wav'"):
        import_convbench(folder, tmp_path / "data", progress=False)
    assert not (tmp_path / "data").exists()
    result = import_convbench(folder, tmp_path / "data", text_only=True, progress=False)
    assert result["audio"] == "none (--text-only)"


def test_real_audio_of_a_speaker(tmp_path):
    import datasets

    folder = write_benchmark_folder(tmp_path / "repo", real_speaker="person1")
    import_convbench(folder, tmp_path / "data", speaker="person1", name="bike_person1", progress=False)
    row = datasets.load_dataset(str(tmp_path / "data"), "bike_person1", split="test")[0]
    assert row["audio"].metadata.sample_rate == 16000


def test_hub_rows_need_the_setup_folder_and_unwrap_single_calls(folder, tmp_path):
    hub = write_hub_rows(tmp_path / "hub")
    with pytest.raises(ConvBenchFormatError, match="holds the turns only; give the benchmark folder"):
        read_benchmark(hub)
    bench = read_benchmark(hub, setup=folder).benchmark
    assert bench.turns[1].required_function_call == TURNS[1]["required_function_call"]  # unwrapped
    assert bench.turns[2].function_call_response == TURNS[2]["function_call_response"]
    assert bench.turns[0].required_function_call is None
    spoken = write_hub_rows(tmp_path / "hub2", speakers=("person1", "person2"))
    with pytest.raises(ConvBenchFormatError, match=r"several speakers \(person1, person2\); choose one with --speaker"):
        read_benchmark(spoken, setup=folder)
    read = read_benchmark(spoken, setup=folder, speaker="person2")
    assert read.audio_files[0] == "real_audio/person2/turn_000.wav"
    assert read.benchmark.turns[2].required_calls[1]["args"]["slot_id"] == "43"  # from a JSON-string column
    import_convbench(spoken, tmp_path / "data", setup=folder, speaker="person2", name="bike_hub", progress=False)


# --- nothing of theirs is run: every other shape is refused with file, line and reason ------------

REFUSED = [
    ("turns.py", "import os\n", "`import os` is not part of a benchmark file", 1),
    ("turns.py", "for x in []:\n    pass\n", "a loop is not part of the shape", 1),
    ("turns.py", "print('hi')\n", "a call is not part of the shape", 1),
    ("turns.py", "EXTRA = __import__('os').system('true')\n", "a call assigned to `EXTRA`", 1),
    ("turns.py", "def helper():\n    pass\n", "function `helper` is not one a benchmark file defines", 1),
    ("tools.py", "x = open('/etc/passwd')\n", "tools.py holds only `x = FunctionSchema(...)`", 1),
    ("tools.py", "from os import system\n", "`from os import system` is not an import", 1),
    ("tools.py", "y = FunctionSchema(name=__import__('os').getcwd())\n", "FunctionSchema `name` is not a literal", 1),
    ("system.py", "system_instruction = open('x').read()\n", "expected `system_instruction = _PREAMBLE +", 1),
    ("config.py", "import subprocess\n", "`import subprocess` is not part", 1),
]


@pytest.mark.parametrize("file, appended, reason, _", REFUSED)
def test_every_other_statement_is_refused_with_file_line_and_reason(file, appended, reason, _, folder, tmp_path):
    path = folder / file
    lines = path.read_text().count("\n")
    path.write_text(path.read_text() + appended)
    with pytest.raises(ConvBenchFormatError) as error:
        import_convbench(folder, tmp_path / "data", progress=False)
    message = str(error.value)
    assert message.startswith(f"{path}:{lines + 1}: ") and reason in message, message
    assert not (tmp_path / "data").exists()


def test_a_turns_value_built_by_code_is_refused(folder, tmp_path):
    path = folder / "turns.py"
    path.write_text(path.read_text().replace("CORE_DIMENSIONS = [", "CORE_DIMENSIONS = list() + ["))
    with pytest.raises(ConvBenchFormatError, match=r"turns\.py:\d+: `CORE_DIMENSIONS` is not a literal value"):
        read_benchmark(folder)


def test_the_mapping_is_required_from_the_folder(folder):
    path = folder / "turns.py"
    text = path.read_text()
    start = text.index("CATEGORY_DIMENSIONS =")
    path.write_text(text[:start] + text[text.index("\n\n", start):])
    with pytest.raises(ConvBenchFormatError, match="no `CATEGORY_DIMENSIONS`.*read from the folder, never assumed"):
        read_benchmark(folder)


def test_importing_never_runs_a_file_of_theirs(folder, tmp_path):
    """A module-level side effect hidden where a literal is expected would run on import; here it
    is refused, and the marker file it would write never appears."""
    marker = tmp_path / "ran"
    (folder / "config.py").write_text((folder / "config.py").read_text().replace(
        'name = "bike_bench"', f"name = open({str(marker)!r}, 'w').name"))
    with pytest.raises(ConvBenchFormatError, match="BenchmarkConfig.name is not a literal"):
        import_convbench(folder, tmp_path / "data", progress=False)
    assert not marker.exists()


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("'slot_id': '43'}}]", "'slot': '43'}}]"), "`book_repair` lacks required argument slot_id"),
    (lambda t: t.replace("'name': 'cancel_booking'", "'name': 'cancel_everything'"),
     "expected call `cancel_everything` is not one of the tools"),
    (lambda t: t.replace("{'status': 'success'}, ", ""), "1 scripted responses for 2 required calls"),
    (lambda t: t.replace("'golden_text': 'Bye!'", "'golden_text': None"), "`golden_text` must be a string"),
])
def test_a_turn_that_cannot_be_run_is_named(edit, message, folder, tmp_path):
    path = folder / "turns.py"
    text = path.read_text()
    path.write_text(edit(text))
    assert path.read_text() != text
    with pytest.raises(ConvBenchFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_convbench(folder, tmp_path / "data", progress=False)


def test_the_command_line_and_a_second_benchmark_beside_ihbench_configs(folder, tmp_path, capsys):
    import datasets

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")  # a dataset folder with IHBench configs
    assert main(["convbench-import", str(folder), "--out", str(data), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "imported bike_bench (5 turns, 3 tools" in out and "replacing" not in out
    assert main(["convbench-import", str(folder), "--out", str(data), "--name", "bike_copy", "--text-only",
                 "--quiet"]) == 0
    # the same name again replaces that config: said, with where the replaced one came from (battery 41's nit)
    assert main(["convbench-import", str(folder), "--out", str(data), "--name", "bike_copy", "--text-only",
                 "--quiet"]) == 0
    assert capsys.readouterr().out.strip().endswith(
        ", replacing the bike_copy it held (from benchmark folder; audio: none (--text-only))")
    names = datasets.get_dataset_config_names(str(data))
    assert {"bike_bench", "bike_bench_setup", "bike_copy", "bike_copy_setup"} <= set(names)
    assert datasets.load_dataset(str(data), "bike_copy", split="test")[0]["audio"] is None
    code = main(["convbench-import", str(folder), "--out", str(data), "--name", "interruptions", "--quiet"])
    assert code == 2 and "'interruptions' is reserved for a config `ihbench build` writes" in capsys.readouterr().err


def test_a_rebuild_keeps_imported_benchmarks_and_their_card_metadata(folder, tmp_path):
    import datasets

    from ihbench.dataset.build import build
    from ihbench.dataset.builddir import BuildDir

    sources = Path(__file__).parent.parent / "ihbench_dataset" / "sources" / "conversations"
    out = tmp_path / "data"
    one = sorted(sources.glob("*.json"))[:1]
    build(out, one, progress=False, sid=False, duplex=False, convbench=[])
    import_convbench(folder, out, text_only=True, progress=False)
    build(out, one, progress=False, sid=False, duplex=False, convbench=[])
    assert "bike_bench" in BuildDir(out).card_metadata("conversation_bench")
    assert len(datasets.load_dataset(str(out), "bike_bench", split="test")) == 5


def test_the_repository_level_folder_lists_its_benchmarks(folder):
    with pytest.raises(ConvBenchFormatError, match="a repository with several benchmarks; give one folder"):
        read_benchmark(folder.parent.parent)


@pytest.mark.slow
def test_convbench_import_from_a_fresh_process(folder, tmp_path):
    out = tmp_path / "data"
    result = subprocess.run([sys.executable, "-m", "ihbench.cli", "convbench-import", str(folder), "--out", str(out),
                             "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.slow
def test_the_shipped_in_house_benchmark_goes_through_the_importer_in_the_build(tmp_path, tts_cache):
    """convbench_dev is read by the same importer users run, and each turn spoken by our TTS."""
    import datasets

    from ihbench.dataset.build import build
    from ihbench.dataset.convbench.rendered import shipped_folders

    sources = Path(__file__).parent.parent / "ihbench_dataset" / "sources" / "conversations"
    out = tmp_path / "data"
    result = build(out, sorted(sources.glob("*.json"))[:1], cache_dir=tts_cache, progress=False, sid=False,
                   duplex=False)
    shipped = read_benchmark(shipped_folders()[0]).benchmark
    bench = load_benchmark(out, "convbench_dev")
    assert [t.input for t in bench.turns] == [t.input for t in shipped.turns]
    assert bench.tools == shipped.tools and bench.system_instruction == shipped.system_instruction
    assert len(bench.turns) >= 40 and len(bench.tools) >= 6 and bench.knowledge_base.count("\n") >= 300
    row = datasets.load_dataset(str(out), "convbench_dev", split="dev")[0]
    assert row["audio"].metadata.sample_rate == 16000
    assert result.statistics["conversation_bench"]["convbench_dev"]["turns"] == len(bench.turns)
    assert "ConversationBench-style `convbench_dev`" in (out / "README.md").read_text()


# --- ihbench verify: what the judge takes for truth is traceable ----------------------------------

def test_the_test_benchmark_and_the_shipped_one_pass_verify(folder, capsys):
    from ihbench.dataset.convbench.checks import verify_benchmark_folder

    assert verify_benchmark_folder(folder)[1] == []
    assert main(["verify", "--no-audio"]) == 0
    assert "1 ConversationBench-style benchmark(s) (52 turns) checked" in capsys.readouterr().out


@pytest.mark.parametrize("old, new, problem", [
    ("We open at 9:00 AM on Saturday.", "We open at 8:30 AM on Saturday.",
     "turn 0: golden_text: '8:30' is in no source the agent has by then"),
    ("We open at 9:00 AM on Saturday.", "We open at 9:00 AM, ask for Marguerite.",
     "turn 0: golden_text: the name 'Marguerite' is in no source"),
    ("You said Ada Park.", "You said Ada Park, slot 44.", "turn 3: golden_text: '44' is in no source"),
    ("'slot_id': '42'}}, 'categories': ['tool_use']", "'slot_id': '41'}}, 'categories': ['tool_use']",
     "turn 1: `book_repair` argument slot_id='41': '41' is in no source the agent has by then"),
    ("'customer': 'Ada Park', 'slot_id': '42'}}, 'categories'", "'customer': 'Ada Parker', 'slot_id': '42'}}, "
                                                                "'categories'",
     "argument customer='Ada Parker': 'ada parker' is in no source"),
])
def test_verify_finds_what_a_correct_agent_could_not_know(old, new, problem, folder, capsys):
    path = folder / "turns.py"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    assert main(["verify", str(folder)]) == 1
    captured = capsys.readouterr()
    assert problem in captured.err and "1 problem(s)" in captured.out, captured.err


def test_the_build_refuses_a_benchmark_that_fails_verify(folder, tmp_path):
    from ihbench.dataset.build import build

    path = folder / "turns.py"
    path.write_text(path.read_text().replace("We open at 9:00 AM", "We open at 7:15 AM"))
    sources = Path(__file__).parent.parent / "ihbench_dataset" / "sources" / "conversations"
    with pytest.raises(ConvBenchFormatError, match=r"does not pass `ihbench verify` \(1 problem\(s\)\).*'7:15'"):
        build(tmp_path / "data", sorted(sources.glob("*.json"))[:1], progress=False, sid=False, duplex=False,
              convbench=[folder])
    assert not (tmp_path / "data").exists()


def test_verify_refuses_a_judge_for_a_conversationbench_benchmark_it_would_not_review(folder, tmp_path, capsys):
    """Battery 38, H4 (P2): `verify BENCHMARK --judge-model x` printed "OK" without a single request (with no
    server listening too), so a user read the benchmark as reviewed. The semantic review reads IHBench
    sources; given only ConversationBench benchmarks it is refused before any work."""
    cache = tmp_path / "c.sqlite"
    code = main(["verify", str(folder), "--no-audio", "--judge-model", "x", "--judge-base-url",
                 "http://127.0.0.1:9/v1", "--cache", str(cache)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and not cache.exists()
    assert captured.err.strip() == (
        f"ihbench verify: error: --judge-model: the semantic review reads IHBench sources (their points and "
        f"criteria), and {folder} is a ConversationBench benchmark, which it does not review; leave --judge-model "
        "out, or give IHBench sources too")


def test_two_turns_naming_one_recording_are_refused_before_the_import(folder, tmp_path, capsys):
    """Battery 39, J3: turn 1's audio_file edited to turn 0's was imported without a word, so an audio model
    answered turn 1 from turn 0's recording and was scored against the booking it never heard."""
    path = folder / "turns.py"
    text = path.read_text()
    assert text.count("audio/turn_001.wav") == 1
    path.write_text(text.replace("audio/turn_001.wav", "audio/turn_000.wav"))
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "ds"), "--name", "bench", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ihbench convbench-import: error: {folder}: turns 0 and 1 name the same audio ('audio/turn_000.wav'); "
        "each turn is its own recording")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("spelled", ["./audio/turn_000.wav", "audio//turn_000.wav"])
def test_one_recording_spelled_two_ways_is_still_one(spelled, folder, tmp_path, capsys):
    """Battery 40, K1: the J3 check compared the spelling of the path, so './audio/turn_000.wav' passed."""
    path = folder / "turns.py"
    path.write_text(path.read_text().replace("audio/turn_001.wav", spelled))
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "ds"), "--name", "bench", "--quiet"]) == 2
    # both spellings, as each turn wrote it: battery 41 searched turns.py for the one quoted and found turn 1 only
    assert f"{folder}: turns 0 and 1 name the same audio ('audio/turn_000.wav' and {spelled!r})" in \
        capsys.readouterr().err


@pytest.mark.parametrize("spelled, refused", [
    ("audio/../audio/turn_001.wav", False), ("./audio/./turn_001.wav", False),
    ("audio/../../turn_001.wav", True), ("../bench/audio/turn_001.wav", True), ("/etc/hostname", True),
])
def test_a_path_through_dotdot_is_refused_only_when_it_leaves_the_folder(spelled, refused, folder, tmp_path,
                                                                        capsys):
    """Battery 41, L2: any '..' was refused as leaving the folder, its own file 'audio/../audio/turn_002.wav'
    too, and the example offered was turn 0's path."""
    path = folder / "turns.py"
    path.write_text(path.read_text().replace("audio/turn_001.wav", spelled))
    code = main(["convbench-import", str(folder), "--out", str(tmp_path / "ds"), "--name", "bench", "--quiet"])
    err = capsys.readouterr().err
    if refused:
        assert code == 2 and f"`audio_file` {spelled!r} leaves the benchmark's folder; give a path inside it, " \
            "such as audio/turn_001.wav" in err
        assert not (tmp_path / "ds").exists()
    else:
        assert code == 0, err
        import datasets

        rows = datasets.load_dataset(str(tmp_path / "ds"), "bench", split="test")
        assert rows[1]["audio_file"] == spelled and rows[1]["audio"] is not None


def test_a_recording_copied_over_another_turns_file_is_said(folder, tmp_path, capsys):
    """Battery 40, K1: turn 1's WAV copied over turn 2's (names untouched) was imported without a word; the
    model hears turn 1's request for both. Said, not refused: one sentence said twice renders the same."""
    (folder / "audio" / "turn_002.wav").write_bytes((folder / "audio" / "turn_001.wav").read_bytes())
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "ds"), "--name", "bench", "--quiet"]) == 0
    assert (f"ihbench convbench-import: warning: {folder}: turns 1 and 2 hold the same audio (audio/turn_001.wav, "
            "audio/turn_002.wav) but different words; the model hears turn 1's request for both") \
        in capsys.readouterr().err


@pytest.mark.parametrize("inside", ["imp", ".", "audio/imp"])
def test_an_import_into_the_folder_it_reads_is_refused(inside, folder, tmp_path, capsys):
    """Battery 42, M1: `convbench-import BENCH --out BENCH/imp` wrote the dataset among the checkout's own
    files; a dataset folder is protected from every output, the folder being imported was not."""
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    out = folder / inside
    assert main(["convbench-import", str(folder), "--out", str(out), "--name", "bench", "--quiet"]) == 2
    assert f"--out: {out} is inside {folder}, the benchmark being imported; give a path outside it" in \
        capsys.readouterr().err
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before


def test_an_import_into_the_setup_folder_it_reads_is_refused(folder, tmp_path, capsys):
    """Battery 43, N1: the --setup benchmark folder of a Hub-rows import was not protected as the source was."""
    hub = write_hub_rows(tmp_path / "hub")
    before = sorted(folder.rglob("*"))
    out = folder / "imported"
    assert main(["convbench-import", str(hub), "--setup", str(folder), "--out", str(out), "--quiet"]) == 2
    assert f"--out: {out} is inside {folder}, the --setup benchmark being imported; give a path outside it" in \
        capsys.readouterr().err
    assert sorted(folder.rglob("*")) == before


@pytest.mark.parametrize("field", ["name", "description", "hf_repo"])
def test_a_key_in_the_benchmark_s_config_is_refused_before_the_dataset_is_written(field, folder, tmp_path, capsys):
    """Battery 54, A8: the benchmark's name from its config.py passed the config-name format only, so a key of that
    alphabet (`sk_<48 hex>`, `db_password_<32 hex>`) named two folders of the dataset and its card entries, and was
    printed. Its description and Hub repository are copied into the dataset too."""
    import secrets

    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    key = "db_password_" + secrets.token_hex(16)
    old = {"name": 'name = "bike_bench"', "description": 'description = "5-turn test benchmark"',
           "hf_repo": 'hf_repo = "example/bike-bench"'}[field]
    config = folder / "config.py"
    config.write_text(config.read_text().replace(old, old.split(" = ")[0] + f' = "{key}"'))
    assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    said = ("the benchmark's name in its config.py (give --name): expected a config name, got what looks like an API "
            "key (a credential; not shown)" if field == "name" else
            f"{folder}: the benchmark's {field} (config.py) holds what looks like an API key (a credential; not shown)")
    assert said in err and key not in err, err
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before
    if field == "name":  # with another name given, the import goes on
        assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--name", "bike", "--quiet"]) == 0


def test_a_provider_key_in_the_benchmark_s_texts_is_refused_before_the_dataset_is_written(folder, tmp_path, capsys):
    """Battery 55, B13: a key in the benchmark's knowledge base or system prompt was imported into the setup parquet,
    and `publish-dataset` would have uploaded it."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    key = "sk-proj-iQrfNKp8zXzy5-ZWaoni92lBRlTW0UvCLlOAWN8xeH4"  # drawn once (fixed)
    knowledge = folder / "data" / "knowledge_base.txt"
    knowledge.write_text(knowledge.read_text() + f"\nInternal note: the CRM key is {key}.\n")
    assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{folder}: the knowledge base holds a provider's API key (a credential; not shown)" in err, err
    assert key not in err and sorted(p.relative_to(data) for p in data.rglob("*")) == before


def test_an_environment_secret_s_value_in_the_benchmark_s_texts_is_refused(folder, tmp_path, capsys, monkeypatch):
    """Battery 61, H11 (P1): `$MY_SERVICE_TOKEN`'s value in the knowledge base was imported into the setup parquet."""
    from official_layout import write_official_layout

    data = write_official_layout(tmp_path / "official")
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    value = "Tq8WzL3nV6pR2xK9"
    monkeypatch.setenv("MY_SERVICE_TOKEN", value)
    knowledge = folder / "data" / "knowledge_base.txt"
    knowledge.write_text(knowledge.read_text() + f"\nSupport line code: {value}\n")
    assert main(["convbench-import", str(folder), "--out", str(data), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{folder}: the knowledge base holds the value of $MY_SERVICE_TOKEN (a credential; not shown)" in err, err
    assert value not in err and sorted(p.relative_to(data) for p in data.rglob("*")) == before


def test_a_provider_key_in_any_field_of_a_turn_is_refused(folder, tmp_path, capsys):
    """Battery 56, C5: a turn's subcategory (and categories, audio_file, tool_use_guidance) went unread, and a key in
    it was imported into the dataset."""
    import secrets
    import string

    key = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    turns = folder / "turns.py"
    assert "partial_success" in turns.read_text()
    turns.write_text(turns.read_text().replace("partial_success", f"partial_success {key}"))
    assert main(["convbench-import", str(folder), "--out", str(tmp_path / "data"), "--text-only", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{folder}: turn 2 holds a provider's API key (a credential; not shown)" in err, err
    assert key not in err and not (tmp_path / "data").exists()


@pytest.mark.parametrize("category, refused", [("ambiguous_entitty", True), ("long_range_memroy", True),
                                               ("venue_questions", False), (None, False)])
def test_a_misspelt_category_is_refused_and_an_unknown_one_said(category, refused, folder, tmp_path, capsys, caplog):
    """Battery 56, C15: a category the mapping does not name adds no dimension, so a typo (`ambiguous_entitty`)
    silently judged its turn on fewer dimensions. Close to a known one: refused naming it; another: said."""
    turns = folder / "turns.py"
    text = turns.read_text()
    assert "'ambiguous_entity'" in text
    spelled = "" if category is None else repr(category)
    turns.write_text(text.replace("'long_range_memory', 'ambiguous_entity'", spelled, 1))
    code = main(["convbench-import", str(folder), "--out", str(tmp_path / "data"), "--text-only", "--quiet"])
    err = capsys.readouterr().err + caplog.text
    if refused:
        assert code == 2 and f"turn 3: category {category!r} is not a category of the mapping" in err, err
        assert "did you mean" in err and not (tmp_path / "data").exists()
    else:
        assert code == 0
        said = f"categories the mapping does not name, which add no scoring dimension: {category!r}" if category else \
            "turn(s) 3 have no category: judged on the core dimensions only"
        assert said in err, err
