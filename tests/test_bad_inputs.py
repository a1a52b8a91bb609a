"""Every bad option is refused before any work starts, and a file a user can get wrong is named
with what is wrong with it (issue 23, parts 2 and 3).

"One error line" means: stderr is argparse's usage block (a line starting `usage: ihbench CMD`
and its indented continuation lines; absent when the command itself refused the value), then
exactly one line `ihbench CMD: error: ...`, and nothing else: no traceback, no warning.

The allowed values of an option are read from the type it is parsed with
(`ihbench.dataset.argtypes`), never from a second table kept here.
"""
import json
import math
import os
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from ihbench.cli import build_parser, main
from ihbench.dataset.argtypes import ArgType, ArgumentValueError, Each, Number, PathArg, Url, Whole


def _commands() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return dict(action.choices)


def _actions(kind):
    """(command, action) for every option of every command whose type is a `kind`."""
    return [(name, action) for name, command in _commands().items() for action in command._actions
            if isinstance(action.type, kind)]


def _argv(command: str, action, value: str) -> list[str]:
    if action.option_strings:
        return [command, f"{action.option_strings[0]}={value}"]
    return [command, value]


def _run(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()  # what the test's own setup printed
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.err


def one_error_line(stderr: str, command: str) -> str:
    """The error line, after checking stderr is the usage block (optional) plus that one line."""
    lines = stderr.rstrip("\n").split("\n")
    assert "Traceback" not in stderr, stderr
    error = lines[-1]
    assert error.startswith(f"ihbench {command}: error: "), stderr
    usage = lines[:-1]
    if usage:
        assert usage[0].startswith(f"usage: ihbench {command}"), stderr
        assert all(line.startswith(" ") for line in usage[1:]), stderr
    return error


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """An empty working directory holding one file and one folder, to be left exactly so."""
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x")
    Path("afolder").mkdir()
    yield tmp_path
    assert sorted(os.listdir(tmp_path)) == ["afile", "afolder"] and os.listdir("afolder") == []


# --- the declared range, read from the type --------------------------------------------------

def _as_number(text: str):
    if not text.isascii():  # battery 46: '١' (Arabic-Indic one) was read as 1
        return None
    try:
        return float(text)
    except ValueError:
        return None


def allowed(kind, text: str) -> bool:
    """What the option's declared range says of `text` (worked out here, not by the type)."""
    if isinstance(kind, Whole):
        if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):
            return False
        try:  # digits between separators int() does not strip ('0\x1f'): the clean-clone CI's hypothesis find
            value = int(text)
        except ValueError:
            return False
        return (kind.min is None or value >= kind.min) and (kind.max is None or value <= kind.max)
    value = _as_number(text)
    if value is None or not math.isfinite(value):
        return False
    if kind.min is not None and (value < kind.min or (kind.min_open and value == kind.min)):
        return False
    return not (kind.max is not None and (value > kind.max or (kind.max_open and value == kind.max)))


NUMERIC = _actions((Whole, Number))
PATHS = _actions(PathArg)
PROBES = ("0", "-1", "1.5", "abc", "", "nan", "inf", "1e999", "99999999999999999999", "\u0661", "\u0663.\u0665")


def test_every_typed_option_is_parsed_with_a_checked_type():
    loose = [f"{name} {'/'.join(a.option_strings) or a.dest}: {a.type!r}" for name, command in _commands().items()
             for a in command._actions if a.type is not None and not isinstance(a.type, ArgType)]
    assert loose == []  # no bare int, float or Path: each says what it allows
    assert len(NUMERIC) >= 30 and len(PATHS) >= 25  # the walk below sees them all


def _option_types() -> list[tuple[str, str, ArgType]]:
    """(owner, option, type) of every loader's and detector's `--option` types."""
    from ihbench.loaders import LOADERS, get
    from ihbench.sid.detectors import DETECTORS

    found = []
    for kind, registry, lookup in (("loader", LOADERS, get), ("detector", DETECTORS, DETECTORS.get)):
        for name in registry.names():
            for klass in lookup(name).__mro__:
                found += [(f"{kind} {name}", option, kind_) for option, kind_ in klass.__dict__.get("option_types",
                                                                                                   {}).items()]
    return found


def test_every_whole_number_option_has_an_upper_end():
    """Battery 4: `run --epochs 99999999999999999999` passed the check, wrote run.json, then planned
    its work list until the kernel killed it. A count past its top cannot be meant: every whole-number
    option of every command, loader and detector says its top, and the walk below probes past it."""
    unbounded = [f"{c} {a.option_strings[0]}" for c, a in NUMERIC if isinstance(a.type, Whole) and a.type.max is None]
    unbounded += [f"{owner}: {option}" for owner, option, kind in _option_types()
                  if isinstance(kind, Whole) and kind.max is None]
    assert unbounded == []


@pytest.mark.parametrize("command, action", NUMERIC, ids=[f"{c} {a.option_strings[0]}" for c, a in NUMERIC])
def test_a_numeric_option_refuses_what_its_range_does_not_allow_before_doing_anything(command, action, cwd, capsys):
    for probe in PROBES:
        if allowed(action.type, probe):
            assert action.type(probe) == pytest.approx(float(probe))
            continue
        code, stderr = _run(_argv(command, action, probe), capsys)
        assert code == 2, (probe, stderr)
        error = one_error_line(stderr, command)
        assert f"argument {action.option_strings[0]}" in error and "expected" in error and repr(probe) in error


@pytest.mark.parametrize("command, action", PATHS,
                         ids=[f"{c} {'/'.join(a.option_strings) or a.dest}" for c, a in PATHS])
def test_a_path_option_refuses_a_file_for_a_folder_the_reverse_and_nothing(command, action, cwd, capsys):
    wrong = {"folder": ["afile"], "file": ["afolder"], None: []}[action.type.kind] + [""]
    for value in wrong:
        code, stderr = _run(_argv(command, action, value), capsys)
        assert code == 2, (value, stderr)
        error = one_error_line(stderr, command)
        assert "argument " in error and f"expected {action.type.expected}, got {value!r}" in error
    # battery 4: a name past the system's limits was an OSError traceback from the check itself
    for value in ("n" * 300, "/".join(["p" * 200] * 30)):
        code, stderr = _run(_argv(command, action, value), capsys)
        assert code == 2, stderr
        error = one_error_line(stderr, command)
        assert f"expected {action.type.expected}, got '" in error and "(File name too long)" in error
        assert len(error) < 400  # the path is cut in the middle, so the reason is seen


URLS = [(c, a) for c, a in _actions((Url, Each)) if isinstance(a.type, Url) or isinstance(a.type.item, Url)]


@pytest.mark.parametrize("command, action", URLS, ids=[f"{c} {a.option_strings[0]}" for c, a in URLS])
def test_a_url_option_refuses_a_query_string_or_fragment_without_echoing_it(command, action, cwd, capsys):
    """Battery 4: `--base-url http://h/v1?api_key=X` was taken, and every request went to
    `/v1/?api_key=Xchat/completions` (the client appends the endpoint to the URL's text)."""
    assert len(URLS) >= 6  # run, judge, verify, generate, barge-in (two)
    for value in ("http://u:pw@h:1/v1?api_key=SECRET9", "http://h:1/v1#SECRET9", "http://h:1/v1?"):
        code, stderr = _run(_argv(command, action, value), capsys)
        assert code == 2, (value, stderr)
        error = one_error_line(stderr, command)
        assert f"argument {action.option_strings[0]}: expected an http:// or https:// URL" in error
        assert "without a query string or #fragment" in error and "SECRET9" not in error and "pw" not in error


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_numeric_option_takes_exactly_its_declared_range(data):
    command, action = data.draw(st.sampled_from(NUMERIC))
    value = data.draw(st.one_of(st.integers(-10**6, 10**6).map(str), st.floats().map(repr), st.text(max_size=8),
                                st.sampled_from(["0", "1", "-0", "65535", "65536", "1.0", " 3 ", "1e3", "5\x1f", "\x1c5",
                                                 "\u0661", "\uff11", "\u0663.\u0665"])))
    if allowed(action.type, value):
        assert action.type(value) == pytest.approx(float(value))
    else:
        with pytest.raises(ArgumentValueError, match="expected"):
            action.type(value)


# --- the issue's cases, as a user types them ---------------------------------------------------

RUN = ["run", "--model", "openai", "--model-path", "m", "--data", "data", "--out", "out"]
SID_ENERGY = ["sid", "--data", "d", "--config", "sid_dev_en", "--out", "sx", "--detector", "energy", "--option"]
SID_SILERO = ["sid", "--data", "d", "--config", "sid_dev_en", "--out", "sx", "--detector", "silero-vad", "--option"]
SID_LLM = ["sid", "--data", "d", "--config", "sid_dev_en", "--out", "sx", "--detector", "audio-llm",
           "--option", "loader=openai", "--option", "model_path=m", "--option"]


@pytest.mark.parametrize("argv, message", [
    (RUN + ["--concurrency", "0"], "argument --concurrency: expected a whole number from 1 to 1024, got '0'"),
    (RUN + ["--temperature=-1", "--top-p", "2"], "argument --temperature: expected a number in [0, 2], got '-1'"),
    (RUN + ["--top-p", "2"], "argument --top-p: expected a number in (0, 1], got '2'"),
    (RUN + ["--base-url", "notaurl"], "argument --base-url: expected an http:// or https:// URL"),
    (RUN + ["--types", "filler,nonsense"], "argument --types: expected one or more of normal, impatient"),
    (RUN + ["--option", "extra_body={not json"], "--option extra_body: expected a JSON object, got '{not json' "
                                                 "(not JSON"),
    (RUN + ["--option", "extra_body=[1]"], "--option extra_body: expected a JSON object, got [1]"),
    (RUN + ["--option", "timeout=0"], "--option timeout: expected a number in (0, 86400], got 0"),
    (RUN + ["--option", 'base_url=["http://a:8000/v1", "b"]'], "--option base_url: expected an http:// or https://"),
    (RUN + ["--option", "novalue"], "argument --option: expected KEY=VALUE, got 'novalue'"),
    (RUN + ["--option", "colour=red"], "--option colour: not an option of the openai loader"),
    (["judge", "run", "--judge-model", "M", "--timeout=-5"], "argument --timeout: expected a number in (0, 86400], got '-5'"),
    (["judge", "run", "--judge-model", "M", "--axes", "tf,xx"], "argument --axes: expected one or more of tf, rq"),
    (["judge", "run", "--judge-model", "M", "--axes", "tf,,"], "--axes: expected one or more of tf, rq, separated by "
                                                               "commas, got 'tf,,' (an empty name between commas)"),
    (RUN + ["--types", "filler,,pushback"], "(an empty name between commas)"),
    (["judge", "run", "--judge-model", "M", "--judge-base-url", "localhost:8000"], "argument --judge-base-url"),
    (["report", "run", "--n-bootstrap", "0"], "argument --n-bootstrap: expected a whole number from 10 to 100000, got '0'"),
    (["report", "run", "--n-bootstrap", "2"], "argument --n-bootstrap: expected a whole number from 10 to 100000, got '2'"),
    (["sid", "--data", "d", "--out", "o", "--detector", "energy", "--limit=-1"], "argument --limit"),
    (["sid", "--data", "d", "--out", "o", "--detector", "energy", "--limit", "0"], "argument --limit"),
    (["sid", "--data", "d", "--out", "o", "--detector", "energy", "--tolerance=-1"], "argument --tolerance"),
    (["build", "--out", "o", "--sid-noise-clips=-1"], "argument --sid-noise-clips: expected a whole number from 1 to 2000"),
    (["generate", "--llm-model", "m", "--out", "o", "--price-per-1k-input=-5"],
     "argument --price-per-1k-input: expected a number >= 0, got '-5'"),
    (["verify", "--judge-model", "M", "--concurrency", "0"], "argument --concurrency: expected a whole number from 1 to 1024"),
    (["run", "--model", "qwen2-audio", "--model-path", "tiny", "--data", "data", "--out", "rt", "--concurrency", "4"],
     "--concurrency: not an option of the qwen2-audio loader; its options: batch_size"),
    (["run", "--model", "qwen2-audio", "--model-path", "tiny", "--data", "data", "--out", "rt", "--base-url",
      "http://a:1/v1"], "--base-url: not an option of the qwen2-audio loader"),
    (["sid", "--data", "d", "--out", "sx", "--detector", "energy", "--hop", "500"],
     "--hop: only for --detector audio-llm, not energy"),
    (["sid", "--data", "d", "--out", "sx", "--detector", "silero-vad", "--model", "openai", "--model-path", "m"],
     "--model: only for --detector audio-llm, not silero-vad"),
    (["sid", "--data", "d", "--out", "sx", "--detector", "audio-llm"], "--detector audio-llm needs --model"),
    (["generate", "--llm-model", "m", "--domain", "telecom", "--goal", "   ", "--out", "g"], "argument --goal"),
    (RUN + ["--config", ""], "argument --config: expected a non-empty name"),
    (["info", ""], "argument data: expected a dataset folder or a Hub id, got ''"),
    (["models", "foo"], "unrecognized arguments: foo"),
    (["space", "--port", "70000"], "argument --port: expected a whole number from 1 to 65535, got '70000'"),
    (["run", "--model", "qwen2-audio", "--model-path", "tiny", "--data", "data", "--out", "rt", "--option",
      "device=bogus"], "--option device: expected a device: auto, cpu, cuda, cuda:N (N a whole number) or mps, "
                       "got 'bogus'"),
    (["report", "run", "--n-bootstrap", "99999999999"],
     "argument --n-bootstrap: expected a whole number from 10 to 100000, got '99999999999'"),
    (SID_ENERGY + ["margin_db=abc"], "--option margin_db: expected a number in [0, 60], got 'abc'"),
    (SID_ENERGY + ["margin_db=nan"], "--option margin_db: expected a number in [0, 60], got 'nan'"),
    (SID_ENERGY + ["min_frames=1.5"], "--option min_frames: expected a whole number from 1 to 1000000, got 1.5"),
    (SID_ENERGY + ["noise_percentile=500"], "--option noise_percentile: expected a number in [0, 100], got 500"),
    (SID_ENERGY + ["frame_ms=0"], "--option frame_ms: expected a number in (0, 1000], got 0"),
    (SID_ENERGY + ["frame_ms=1e9"], "--option frame_ms: expected a number in (0, 1000], got 1e9"),
    (SID_ENERGY + ["colour=red"], "--option colour: detector 'energy' has no such option; it accepts frame_ms"),
    (SID_SILERO + ["threshold=5"], "--option threshold: expected a number in [0, 1], got 5"),
    (SID_SILERO + ["threshold=-1"], "--option threshold: expected a number in [0, 1], got -1"),
    (SID_LLM + ["hop_ms=0"], "--option hop_ms: expected a number in (0, 60000], got 0"),
    (SID_SILERO + ["onnx=yes"], "--option onnx: expected true or false, got 'yes'"),
    (SID_LLM + ["loader_options={\"concurrency\": 0}"],
     "--option loader_options: --option concurrency: expected a whole number from 1 to 1024, got 0"),
    (SID_LLM + ["loader_options={\"colour\": 1}"], "--option loader_options: --option colour: not an option of the"),
    (SID_LLM + ["loader_options=[1]"], "--option loader_options: expected a JSON object of the openai loader's"),
    (["sid", "--data", "d", "--config", "sid_dev_en", "--out", "sx", "--detector", "audio-llm", "--option",
      "loader=nope", "--option", "model_path=m"], "--option loader: "),
    (["run", "--model", "gemma4", "--model-path", "tiny", "--data", "data", "--out", "rt", "--option",
      "thinking=maybe"], "--option thinking: expected true or false, got 'maybe'"),
])
def test_the_issues_bad_options_are_one_line_before_anything_is_made(argv, message, cwd, capsys):
    code, stderr = _run(argv, capsys)
    assert code == 2
    assert message in one_error_line(stderr, argv[0])


def test_a_key_given_where_a_variable_name_is_expected_is_refused_and_not_echoed(cwd, capsys):
    code, stderr = _run(RUN + ["--option", "api_key_env=sk-live-123456"], capsys)
    assert code == 2 and "sk-live" not in stderr
    assert "--option api_key_env: expected the name of an environment variable" in one_error_line(stderr, "run")


def test_loader_options_are_checked_by_the_loader_itself_from_python_too():
    from ihbench.dataset.errors import UsageError
    from ihbench.loaders import check_options, create
    from ihbench.loaders.transformers_base import TransformersLoader

    with pytest.raises(UsageError, match="--option extra_body: expected a JSON object"):
        create("openai", "m", extra_body="{not json")
    with pytest.raises(UsageError, match="--option concurrency: expected a whole number from 1 to 1024, got 0"):
        create("openai", "m", concurrency=0)
    with pytest.raises(UsageError, match="--option batch_size: expected a whole number from 1 to 1000000, got 0"):
        TransformersLoader.check_options({"batch_size": 0})
    with pytest.raises(UsageError, match="--option device: expected a device"):
        check_options("qwen2-audio", {"device": "cuda:x"})
    assert check_options("qwen2-audio", {"device": "cuda:1"}) == {"device": "cuda:1"}
    assert all(check_options("qwen2-audio", {"device": d}) == {"device": d} for d in ("auto", "cpu", "cuda", "mps"))
    assert check_options("openai", {"extra_body": '{"top_k": 5}', "base_url": ["http://a:1/v1", "https://b/v1"]}) \
        == {"extra_body": {"top_k": 5}, "base_url": ["http://a:1/v1", "https://b/v1"]}


def test_library_guards_name_the_option_before_any_work(tmp_path):
    import asyncio

    from ihbench.dataset.build import build
    from ihbench.dataset.errors import UsageError
    from ihbench.generate.run import GenerateSpec, check_spec
    from ihbench.judge.review import review_conversations
    from ihbench.sid.run_sid import run_sid

    with pytest.raises(UsageError, match="--concurrency: expected a whole number from 1 to 1024, got 0"):
        asyncio.run(review_conversations([], backend=None, concurrency=0))
    with pytest.raises(UsageError, match="--sid-noise-clips: expected a whole number from 1 to 2000, got 0"):
        build(tmp_path / "data" / "ds", sid_noise_clips=0)
    with pytest.raises(UsageError, match="--limit: expected a whole number from 1 to 1000000, got -1"):
        run_sid("missing", "sid_en", tmp_path / "sid", detector="energy", limit=-1)
    with pytest.raises(UsageError, match="--tolerance: expected a number in \\[0, 2\\], got -1"):
        run_sid("missing", "sid_en", tmp_path / "sid", detector="energy", tolerance=-1)
    with pytest.raises(UsageError, match="--price-per-1k-input: expected a number >= 0, got -5"):
        check_spec(GenerateSpec(out=tmp_path / "gen", domain="telecom", goal="g", price_input=-5, price_output=1))
    assert os.listdir(tmp_path) == []


# --- turns: the likelihoods file is checked before any audio is analysed --------------------------

def _stereo(path: Path, seconds: float = 2.0, level: float = 0.0) -> Path:
    """`level`: each recording its own (the same audio twice is refused first)."""
    import soundfile

    soundfile.write(str(path), np.full((int(16000 * seconds), 2), level, np.float32), 16000)
    return path


@pytest.mark.parametrize("name, write, message", [
    ("four.npy", lambda p: np.save(p, np.zeros((30, 4))), r"four.npy: recording 'a': expected shape \(n_chunks, 5\)"),
    ("transposed.npy", lambda p: np.save(p, np.zeros((5, 30))), r"expected shape \(n_chunks, 5\)"),
    ("other.npz", lambda p: np.savez(p, a=np.zeros((3, 5)), c=np.zeros((3, 5))),
     r"other.npz: no likelihoods for recording\(s\) 'b'; it has 'a', 'c'"),
    ("nan.npz", lambda p: np.savez(p, a=np.zeros((3, 5)), b=np.full((3, 5), np.nan)),
     r"nan.npz: recording 'b': row 0: likelihood of C is not a finite number"),
    ("rows.jsonl", lambda p: p.write_text("".join(json.dumps({"recording": n, "likelihoods": [[0.2] * 5, [1, 2]]}) + "\n"
                                                  for n in "ab")),
     r"rows.jsonl: recording 'a': row 1: expected 5 numbers"),
])
def test_turns_refuses_a_likelihoods_file_of_the_wrong_shape_before_any_audio_is_analysed(
        name, write, message, tmp_path, monkeypatch, capsys):
    import ihbench.turns.run as turns

    def never(*args, **kwargs):
        raise AssertionError("audio was analysed before the likelihoods file was checked")

    monkeypatch.setattr(turns, "analyze", never)
    monkeypatch.setattr(turns, "_warm_up", never)
    audio = [_stereo(tmp_path / "a.wav"), _stereo(tmp_path / "b.wav", level=0.01)]
    if name.endswith(".npy"):
        audio = audio[:1]
    write(tmp_path / name)
    code, stderr = _run(["turns", *map(str, audio), "--judge-likelihoods", str(tmp_path / name),
                         "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and re.search(message, one_error_line(stderr, "turns"))
    assert not (tmp_path / "out").exists()


# --- files a user can get wrong (part 3) -----------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text("not a database, just text\n"), "not an SQLite database (file is not a database)"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE notes (x)").connection.commit(),
     "an SQLite database, but not an LLM answer cache (its tables: notes)"),
])
def test_a_cache_that_is_not_an_llm_cache_is_named_and_left_alone(make, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache.sqlite"
    make(cache)
    before = cache.read_bytes()
    (tmp_path / "run").mkdir()  # judge refuses a folder that is not a run first; this one is
    (tmp_path / "run" / "run.json").write_text('{"data": "data"}')
    for argv in (["cache", "info", "--cache", str(cache)], ["cache", "prune", "--max-entries", "1", "--cache", str(cache)],
                 ["judge", str(tmp_path / "run"), "--judge-model", "m", "--cache", str(cache)]):
        code, stderr = _run(argv, capsys)
        assert code == 2 and f"{cache}: {message}" in one_error_line(stderr, argv[0])
    assert cache.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["cache.sqlite", "run"]
    assert os.listdir(tmp_path / "run") == ["run.json"]


def test_a_cache_path_that_is_a_folder_is_named(tmp_path, capsys):
    from ihbench.llm.cache import CacheFileError, LLMCache

    with pytest.raises(CacheFileError, match=f"{tmp_path}: is a folder; the cache is one SQLite file"):
        LLMCache(tmp_path)
    code, stderr = _run(["judge", str(tmp_path), "--judge-model", "m", "--cache", str(tmp_path)], capsys)
    assert code == 2 and f"argument --cache: expected a file, got '{tmp_path}' (a folder)" in one_error_line(stderr, "judge")
    assert os.listdir(tmp_path) == []


@pytest.fixture
def official_run(tmp_path, monkeypatch):
    """The run-format-2 fixture beside the official-layout data it was run on."""
    import shutil

    from official_layout import write_official_layout

    import datasets

    monkeypatch.chdir(tmp_path)
    write_official_layout(tmp_path / "data")
    datasets.disable_progress_bars()  # datasets' own bars when the command loads the data (not --quiet's to hide)
    yield Path(shutil.copytree(FIXTURES / "run-format-2", tmp_path / "run"))
    datasets.enable_progress_bars()


def test_report_on_a_judgments_file_copied_from_another_run_names_it(official_run, capsys):
    path = official_run / "judgments.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**line, "id": line["id"].replace("conv-", "other-")}) + "\n" for line in lines))
    code, stderr = _run(["report", str(official_run), "--n-bootstrap", "10", "--quiet"], capsys)
    assert code == 2
    line = one_error_line(stderr, "report")
    assert (f"{path}: 6 of 6 judgment(s) are of answers {official_run} does not have (e.g. other-a/2, epoch 0): either "
            "responses.jsonl lost lines since they were judged") in line and "or it is another run's judgments file" in line
    assert not (official_run / "summary.json").exists()


def test_sid_on_an_empty_config_names_it(tmp_path, capsys):
    import datasets

    from ihbench.dataset.sid.importing import sid_features

    data = tmp_path / "data"
    (data / "sid_dev_noise").mkdir(parents=True)
    datasets.Dataset.from_dict({name: [] for name in sid_features()}, features=sid_features()).to_parquet(
        str(data / "sid_dev_noise" / "test-00000-of-00001.parquet"))
    (data / "README.md").write_text("---\nconfigs:\n- config_name: sid_dev_noise\n  data_files:\n  - split: test\n"
                                    "    path: sid_dev_noise/test-*\n---\n")
    code, stderr = _run(["sid", "--data", str(data), "--config", "sid_dev_noise", "--detector", "energy",
                         "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert code == 2
    assert f"{data / 'sid_dev_noise'}: config 'sid_dev_noise' has no clips" in one_error_line(stderr, "sid")
    assert not (tmp_path / "out").exists()


def test_detector_options_are_checked_by_the_detector_from_python_too(tmp_path):
    from ihbench.dataset.errors import UsageError
    from ihbench.sid.detectors import EnergyDetector, check_detector_options, get_detector
    from ihbench.sid.run_sid import run_sid

    with pytest.raises(UsageError, match="--option noise_percentile: expected a number in \\[0, 100\\]"):
        get_detector("energy", noise_percentile=500)
    with pytest.raises(UsageError, match="--option min_frames: expected a whole number from 1 to 1000000"):
        run_sid("missing", "sid_en", tmp_path / "sid", detector="energy", options={"min_frames": 0})
    assert check_detector_options("energy", {"margin_db": "6", "min_frames": 2}) == {"margin_db": 6.0, "min_frames": 2}
    assert isinstance(get_detector("energy", margin_db=6), EnergyDetector)
    assert os.listdir(tmp_path) == []


def _fake_config(data: Path, name: str) -> None:
    (data / name).mkdir(parents=True)
    (data / name / "test-00000-of-00001.parquet").write_bytes(b"PAR1")  # refused before it is read


@pytest.mark.parametrize("config", ["conversations", "interruptions"])
def test_sid_on_a_config_that_is_not_sid_names_it_and_the_sid_configs(config, tmp_path, capsys):
    data = tmp_path / "data"
    for name in ("conversations", "interruptions", "sid_dev_en", "sid_dev_noise"):
        _fake_config(data, name)
    code, stderr = _run(["sid", "--data", str(data), "--config", config, "--detector", "energy",
                         "--out", str(tmp_path / "sx"), "--quiet"], capsys)
    assert code == 2
    assert (f"--config {config}: not a SID config of {data}; its SID configs: sid_dev_en, sid_dev_noise"
            in one_error_line(stderr, "sid"))
    assert not (tmp_path / "sx").exists()


@pytest.mark.parametrize("content, message", [
    ("[]", "not a JSON object (an array); expected an object with 'positives' and 'negatives' lists"),
    ('{"positives": 5}', "positives: expected a non-empty list, got 5"),
    ('{"positives": [{"lead": "a", "cue": "b"}]}', "negatives: expected a non-empty list, got nothing"),
    ('{"positives": ["x"], "negatives": ["n"]}', "positives[0]: expected an object with 'lead' and 'cue' texts"),
    ('{"positives": [{"lead": "a"}], "negatives": ["n"]}', "positives[0].cue: missing or empty"),
    ('{"positives": [{"lead": "a", "cue": "b"}], "negatives": [3]}', "negatives[0]: must be a non-empty string"),
    ("{not json", "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
])
def test_build_refuses_a_malformed_sid_sources_file_before_writing(content, message, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, stderr = _run(["build", "--sources", str(FIXTURES / "sid_small.json"), "--out", str(tmp_path / "bx"),
                         "--sid-sources", str(bad), "--quiet"], capsys)
    assert code == 2
    assert f"{bad}: {message}" in one_error_line(stderr, "build")
    assert not (tmp_path / "bx").exists()


@pytest.mark.parametrize("argv", [["judge", "RUN", "--judge-model", ""], ["judge", "RUN", "--judge-model", "  "],
                                  ["run", "--model", "openai", "--model-path", "", "--data", "d", "--out", "o"]])
def test_an_empty_model_name_is_refused(argv, tmp_path, monkeypatch, capsys):
    """Found by the bad-input battery: `judge --judge-model ''` judged 42 points as judge ''."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "RUN").mkdir()
    code, stderr = _run(argv, capsys)
    assert code == 2 and "expected a non-empty name" in one_error_line(stderr, argv[0])
    assert sorted(os.listdir(tmp_path)) == ["RUN"]


def test_space_refuses_a_data_source_that_info_refuses_before_serving(cwd, capsys):
    """`space --data` hands the source to the page; a file or a run folder is refused here, in the
    same words as `info`, rather than served as a page that cannot load."""
    (cwd / "afolder" / "run.json").write_text("{}")  # a run folder, by its marker
    try:
        for source, reason in (("afile", "expected a dataset directory"), ("afolder", "not a dataset"),
                               ("./missing", "no such dataset directory")):
            code, stderr = _run(["space", "--data", source], capsys)
            assert code == 2 and reason in one_error_line(stderr, "space"), stderr
            assert "IHBENCH_DATA" not in os.environ or os.environ["IHBENCH_DATA"] != source
    finally:
        (cwd / "afolder" / "run.json").unlink()


def test_every_option_that_is_not_text_has_a_type():
    """An untyped option is taken as typed and fails later, or never (silero's `onnx=yes` was read
    as true). Every keyword option whose default is a number or a flag, of every loader and detector,
    is checked when parsed."""
    import inspect

    from ihbench.loaders import LOADERS, get
    from ihbench.sid.detectors import DETECTORS

    untyped = []
    for kind, registry, lookup in (("loader", LOADERS, get), ("detector", DETECTORS, DETECTORS.get)):
        for name in registry.names():
            cls = lookup(name)
            types = {}
            for klass in cls.__mro__:
                types.update(klass.__dict__.get("option_types", {}))
            for klass in cls.__mro__:
                init = klass.__dict__.get("__init__")
                if init is None:
                    continue
                for parameter in inspect.signature(init).parameters.values():
                    default = parameter.default
                    if isinstance(default, (bool, int, float)) and parameter.name not in types:
                        untyped.append(f"{kind} {name}: {parameter.name}")
    assert untyped == []
