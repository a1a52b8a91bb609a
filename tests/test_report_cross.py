"""`ihbench report` across IHBench, SID-Bench and turn-taking: one table per model, Spearman rank
correlations across models (the IHBench paper's Section 5.5), a heatmap, and clear refusals.

The IHBench runs are real runs (`ihbench.runner` against the local OpenAI-compatible test server)
with judgments written in the judge's record format; the SID runs are real `ihbench sid` runs
scoring prediction files on WAV clips through the apt metric module; the turns runs are
summary.json files in the shape `ihbench turns` writes.
"""
import itertools
import json
import math
import os

import numpy as np
import pytest
import soundfile
from metric_modules import load
from scipy import stats as scipy_stats

from ihbench.cli import main
from ihbench.dataset.io import read_records
from ihbench.judge import PROMPT_VERSION, prompt_hash

SR = 16_000
BREAK = 0.5  # seconds into each "break" clip where the request starts
# TF wins and RQ passes out of the 9 (item, epoch) responses of each IHBench run
IHBENCH = {"alpha": (8, 2), "beta": (5, 5), "gamma": (3, 7)}
# per model: how late it fires on the two break clips, and on how many of the two non-break clips it fires
SID = {"alpha": ((0.1, 0.2), 0), "beta": ((0.3, 0.4), 1), "gamma": ((0.5, 0.6), 2), "delta": ((0.2, 0.25), 0)}
# per model: response latency mean, stop latency mean, turn-over rate (the shape `ihbench turns` writes)
TURNS = {"alpha": (0.62, 0.31, 0.80), "beta": (0.90, 0.45, 0.75), "gamma": (1.40, 0.52, 0.50),
         "delta": (0.70, 0.20, 0.90)}
ARGS = ["--n-bootstrap", "200", "--quiet"]


def turns_summary(name, response, stop, rate, n=12):
    def latency(mean):
        return {"mean": mean, "median": mean - 0.05, "ci_low": mean - 0.1, "ci_high": mean + 0.1, "n": n}

    return {"kind": "turns", "model_name": name, "recordings": 3,
            "timing": {"response_latency_s": latency(response), "stop_latency_s": latency(stop),
                       "turn_over_rate": {"value": rate, "ci_low": rate - 0.2, "ci_high": min(1.0, rate + 0.1),
                                          "n": n}},
            "statistics": {}, "agreement": None}


def write_turns_run(folder, name, values):
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(turns_summary(name, *values)))
    return folder


def speech_like(seconds):
    """Harmonics on a gliding pitch with a syllable envelope (real samples in a real WAV file)."""
    t = np.arange(round(seconds * SR)) / SR
    phase = 2 * np.pi * np.cumsum(150 + 30 * np.sin(2 * np.pi * 0.7 * t)) / SR
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    return (0.15 * voiced * 0.5 * (1 - np.cos(2 * np.pi * 4 * t)) ** 2).astype(np.float32)


def write_sid_folder(root):
    """SID-Bench's layout: test_wavs/en/*.wav and en_test_lines.jsonl; clips 0 and 2 are requests."""
    (root / "test_wavs" / "en").mkdir(parents=True)
    lines = []
    for index in range(4):
        nonbreak = index % 2 == 1
        samples = np.concatenate([np.zeros(round(BREAK * SR), np.float32), speech_like(1.5)])
        soundfile.write(root / "test_wavs" / "en" / f"clip{index}.wav", samples, SR, subtype="PCM_16")
        duration = round(len(samples) / SR, 3)
        lines.append(json.dumps({"audio": f"clip{index}.wav", "total_nonbreak": nonbreak, "duration": duration,
                                 "break_time": duration if nonbreak else BREAK, "text_with_break": "<break> x"}))
    (root / "test_wavs" / "en_test_lines.jsonl").write_text("\n".join(lines) + "\n")
    return root


def write_sid_predictions(path, late, false_alarms):
    rows = [{"audio": "clip0.wav", "total_nonbreak": False, "break_time": BREAK + late[0]},
            {"audio": "clip1.wav", "total_nonbreak": false_alarms < 1, "break_time": 0.3 if false_alarms >= 1 else -1},
            {"audio": "clip2.wav", "total_nonbreak": False, "break_time": BREAK + late[1]},
            {"audio": "clip3.wav", "total_nonbreak": false_alarms < 2, "break_time": 0.3 if false_alarms >= 2 else -1}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def judge_by_script(run_dir, tf_wins, rq_passes):
    """Judgments in the judge's own record format: the first `tf_wins` responses win, the first
    `rq_passes` meet every criterion."""
    from ihbench.dataset import load_items

    items = {i.id: i for i in load_items(json.loads((run_dir / "run.json").read_text())["data"])}
    keys = sorted((r["id"], r["epoch"]) for r in read_records(run_dir / "responses.jsonl"))
    records = []
    for index, (item_id, epoch) in enumerate(keys):
        base = {"id": item_id, "epoch": epoch, "judge_model": "judge-x", "prompt_version": PROMPT_VERSION,
                "prompt_hash": prompt_hash(), "outcome": "judged"}
        records.append({**base, "axis": "tf", "verdict": "model" if index < tf_wins else "baseline"})
        passed = index < rq_passes
        criteria = [passed] + [True] * (len(items[item_id].rubric.rq) - 1)
        records.append({**base, "axis": "rq", "verdict": "pass" if passed else "fail", "criteria": criteria})
    from dataclasses import replace

    from ihbench.records import RECORD_FORMAT, JudgmentRecord

    written = [replace(JudgmentRecord.from_json(r), format_version=RECORD_FORMAT).to_json() for r in records]  # checked
    (run_dir / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in written))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from official_layout import write_official_layout
    from openai_test_server import OpenAITestServer

    from ihbench.runner import RunSpec, run

    root = tmp_path_factory.mktemp("cross")
    data = write_official_layout(root / "official")
    folders = {"ihbench": {}, "sid": {}, "turns": {}}
    with OpenAITestServer() as server:
        for name, (wins, passes) in IHBENCH.items():
            out = root / f"ihbench-{name}"
            run(RunSpec(loader="openai", model_path=name, data=str(data), out=out, epochs=3,
                        loader_options={"base_url": server.base_url}), progress=False)
            judge_by_script(out, wins, passes)
            folders["ihbench"][name] = out
    sid_data = write_sid_folder(root / "SID-bench")
    for name, (late, false_alarms) in SID.items():
        predictions = write_sid_predictions(root / f"predictions-{name}.jsonl", late, false_alarms)
        out = root / f"sid-{name}"
        assert main(["sid", "--data", str(sid_data), "--config", "sid_en", "--predictions", str(predictions),
                     "--out", str(out), "--quiet"]) == 0
        folders["sid"][name] = out
    for name, values in TURNS.items():
        folders["turns"][name] = write_turns_run(root / f"turns-{name}", name, values)
    return dict(root=root, data=data, sid_data=sid_data, **folders)


def sid_names(runs):
    """The SID runs scored prediction files, which record no model: name them on the command line."""
    return [arg for name, folder in runs["sid"].items() for arg in ("--model-name", f"{folder}={name}")]


@pytest.fixture(scope="module")
def four_models(runs):
    """alpha, beta, gamma with all three benchmarks; delta without an IHBench run. Runs in mixed order."""
    out = runs["root"] / "report-four"
    folders = [runs["turns"]["delta"], runs["ihbench"]["alpha"], runs["sid"]["beta"], *runs["turns"].values(),
               runs["sid"]["alpha"], runs["ihbench"]["gamma"], runs["sid"]["gamma"], runs["ihbench"]["beta"],
               runs["sid"]["delta"]]
    folders = list(dict.fromkeys(folders))
    assert main(["report", *map(str, folders), *sid_names(runs), "--out", str(out), *ARGS]) == 0
    return out, json.loads((out / "summary.json").read_text())


def exact_p(x, y):
    """Two-sided permutation p-value by enumerating every ordering: |rho| at least the observed one."""
    observed = abs(scipy_stats.spearmanr(x, y).statistic)
    rhos = [abs(scipy_stats.spearmanr(list(order), y).statistic) for order in itertools.permutations(x)]
    return sum(r >= observed - 1e-12 for r in rhos) / len(rhos)


def _values(summary):
    return {m["model"]: {k: c["value"] for k, c in m["metrics"].items()} for m in summary["models"]}


def test_one_table_per_model_with_every_benchmarks_figures_from_their_sources(runs, four_models):
    out, summary = four_models
    assert summary["kind"] == "cross_benchmark"
    assert [m["model"] for m in summary["models"]] == ["delta", "alpha", "beta", "gamma"]  # command-line order
    values = _values(summary)
    for name, folder in runs["ihbench"].items():  # TF and RQ are the metric modules' own numbers
        judged = read_records(folder / "judgments.jsonl")
        tf = [j for j in judged if j["axis"] == "tf"]
        rq = [j for j in judged if j["axis"] == "rq"]
        expected_tf = load("tf_win_rate").compute(predictions=[j["verdict"] for j in tf], item_ids=[j["id"] for j in tf],
                                                  n_bootstrap=200)
        expected_rq = load("rq_pass_rate").compute(predictions=[j["criteria"] for j in rq],
                                                   item_ids=[j["id"] for j in rq], n_bootstrap=200)
        assert values[name]["tf"] == pytest.approx(expected_tf["tf_win_rate"]) == pytest.approx(IHBENCH[name][0] / 9)
        assert values[name]["rq"] == pytest.approx(expected_rq["rq_pass_rate"]) == pytest.approx(IHBENCH[name][1] / 9)
        cell = next(m for m in summary["models"] if m["model"] == name)["metrics"]["tf"]
        assert cell["ci_low"] <= cell["value"] <= cell["ci_high"] and cell["n"] == 3 and cell["run"] == str(folder)
    for name, folder in runs["sid"].items():  # the notebook definition by default, exactly as `ihbench sid` scored it
        scores = json.loads((folder / "summary.json").read_text())["scores"]["notebook"]
        assert {k: values[name][k] for k in ("fir", "irl", "apt")} == {k: scores[k] for k in ("fir", "irl", "apt")}
    assert values["gamma"]["fir"] == 0.5 and values["alpha"]["irl"] == pytest.approx(0.15)
    for name, (response, stop, rate) in TURNS.items():
        assert (values[name]["response_latency_s"], values[name]["stop_latency_s"],
                values[name]["turn_over_rate"]) == (response, stop, rate)
    delta = next(m for m in summary["models"] if m["model"] == "delta")
    assert delta["metrics"]["tf"]["value"] is None and delta["metrics"]["rq"]["value"] is None
    assert set(delta["runs"]) == {"sid", "turns"}


def test_spearman_between_every_pair_on_the_models_that_have_both(four_models):
    _, summary = four_models
    values = _values(summary)
    correlations = summary["correlations"]
    keys = ["tf", "rq", "fir", "irl", "apt", "response_latency_s", "stop_latency_s", "turn_over_rate"]
    assert correlations["method"] == "spearman" and correlations["n_models"] == 4 and correlations["note"] is None
    assert len(correlations["pairs"]) == len(keys) * (len(keys) - 1) // 2
    for pair in correlations["pairs"]:
        shared = [m for m in values if values[m][pair["a"]] is not None and values[m][pair["b"]] is not None]
        assert pair["models"] == shared and pair["n"] == len(shared)
        assert len(shared) == (3 if "tf" in (pair["a"], pair["b"]) or "rq" in (pair["a"], pair["b"]) else 4)
        x, y = [values[m][pair["a"]] for m in shared], [values[m][pair["b"]] for m in shared]
        assert pair["rho"] == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
        assert pair["p_value"] == pytest.approx(exact_p(x, y))
    tf_rq = next(p for p in correlations["pairs"] if (p["a"], p["b"]) == ("tf", "rq"))
    assert tf_rq["rho"] == pytest.approx(-1.0)  # by construction: the better TF, the worse RQ
    mean_tf = [p["rho"] for p in correlations["pairs"] if "tf" in (p["a"], p["b"])]
    assert correlations["mean_rho"]["tf"] == pytest.approx(sum(mean_tf) / len(mean_tf))


def test_report_md_holds_the_tables_the_correlations_and_the_heatmap(four_models):
    from conftest import png_size

    out, summary = four_models
    text = (out / "report.md").read_text()
    for expected in ("# Cross-benchmark report", "| model | TF win rate ↑ | RQ pass rate ↑ | FIR ↓ |", "### delta",
                     "## Rank correlations across models (Spearman)", "![Rank correlations](correlations.png)",
                     "Mean correlation of each metric", "## Runs", "named by --model-name",
                     "## IHBench report", "### Scores"):  # the single-benchmark report follows, one level down
        assert expected in text, expected
    delta_row = next(line for line in text.splitlines() if line.startswith("| **delta** |"))
    assert delta_row.split(" | ")[1:3] == ["–", "–"]  # no IHBench run: TF and RQ cells empty
    alpha_row = next(line for line in text.splitlines() if line.startswith("| **alpha** |"))
    tf = next(m for m in summary["models"] if m["model"] == "alpha")["metrics"]["tf"]
    assert f"{tf['value']:.3f} [{tf['ci_low']:.3f}, {tf['ci_high']:.3f}]" in alpha_row
    assert png_size(out / "correlations.png") == (1040, 920)  # 8 metrics
    assert (out / "per_type.png").is_file() and (out / "depth.png").is_file()


def test_two_models_say_the_correlations_need_three_and_give_no_numbers(runs, tmp_path, capsys):
    """Mixed kinds named by the runs themselves: an energy-detector SID run is the model "energy"."""
    energy = tmp_path / "sid-energy"
    assert main(["sid", "--data", str(runs["sid_data"]), "--config", "sid_en", "--detector", "energy",
                 "--out", str(energy), "--quiet"]) == 0
    turns = write_turns_run(tmp_path / "turns-energy", "energy", (0.5, 0.4, 0.6))
    out = tmp_path / "report"
    assert main(["report", str(runs["ihbench"]["alpha"]), str(energy), str(turns), str(runs["turns"]["alpha"]),
                 "--out", str(out), "--n-bootstrap", "200", "--sid-definition", "readme"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [m["model"] for m in summary["models"]] == ["alpha", "energy"]
    readme = json.loads((energy / "summary.json").read_text())["scores"]["readme"]
    assert summary["sid_definition"] == "readme" and summary["models"][1]["metrics"]["fir"]["value"] == readme["fir"]
    assert summary["correlations"]["pairs"] == [] and summary["correlations"]["mean_rho"] == {}
    assert "need at least 3 models" in summary["correlations"]["note"]
    text = (out / "report.md").read_text()
    assert "need at least 3 models; this report has 2" in text and "| metric | metric | ρ |" not in text
    assert not (out / "correlations.png").exists()
    assert "need at least 3 models" in capsys.readouterr().out


def test_cross_benchmark_flag_on_ihbench_runs_only_correlates_tf_and_rq(runs, tmp_path):
    out = tmp_path / "report"
    assert main(["report", *map(str, runs["ihbench"].values()), "--cross-benchmark", "--out", str(out), *ARGS]) == 0
    (pair,) = json.loads((out / "summary.json").read_text())["correlations"]["pairs"]
    assert (pair["a"], pair["b"], pair["n"]) == ("tf", "rq", 3) and pair["rho"] == pytest.approx(-1.0)


def test_ihbench_runs_alone_keep_the_single_benchmark_report(runs, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(runs["ihbench"]["alpha"]), "--out", str(out), *ARGS]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "ihbench" and summary["runs"][0]["tf_win_rate"]["tf_win_rate"] == pytest.approx(8 / 9)
    assert (out / "report.md").read_text().startswith("# IHBench report")


def test_permutation_p_values_are_exact_for_a_handful_of_models():
    from ihbench.stats import spearman_permutation

    assert spearman_permutation([3, 2, 1], [1, 2, 3]).p_value == pytest.approx(1 / 3)  # scipy's t-approximation: 0
    assert spearman_permutation([1, 2, 3, 4], [2, 3, 4, 9]).p_value == pytest.approx(1 / 12)
    x, y = [0.1, 0.1, 0.4, 0.3, 0.9], [1.0, 2.0, 2.5, 2.0, 3.0]  # ties on both sides
    result = spearman_permutation(x, y)
    assert result.statistic == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
    assert result.p_value == pytest.approx(exact_p(x, y)) and result.n == 5
    rng = np.random.default_rng(0)
    x = rng.random(10)
    y = x + rng.random(10)
    assert spearman_permutation(x, y).p_value == spearman_permutation(x, y).p_value < 0.05  # seeded beyond 7


def test_a_constant_metric_or_too_few_shared_models_gives_a_reason_not_a_number(tmp_path):
    from conftest import png_size

    from ihbench.report.cross import rank_correlations
    from ihbench.report.cross_render import plot_correlations

    def model(name, **values):
        return {"model": name, "metrics": {k: {"value": values.get(k)} for k in ("fir", "apt", "tf")}}

    models = [model("a", fir=0.1, apt=1.0, tf=0.5), model("b", fir=0.1, apt=2.0, tf=0.6),
              model("c", fir=0.1, apt=3.0), model("d", fir=0.1, apt=0.5)]
    result = rank_correlations(models, ["fir", "apt", "tf"])
    pairs = {(p["a"], p["b"]): p for p in result["pairs"]}
    assert pairs[("fir", "apt")]["rho"] is None and "FIR is the same for every model" in pairs[("fir", "apt")]["reason"]
    assert pairs[("apt", "tf")]["rho"] is None and pairs[("apt", "tf")]["reason"].startswith("only 2 model(s)")
    assert not any(isinstance(p["rho"], float) and math.isnan(p["rho"]) for p in result["pairs"])
    assert result["mean_rho"] == {"fir": None, "apt": None, "tf": None}
    labels = [{"key": k, "label": k.upper()} for k in ("fir", "apt", "tf")]
    assert plot_correlations({"metrics": labels, "correlations": result}, tmp_path / "c.png") is None  # no rho at all
    models.append(model("e", fir=0.2, apt=4.0, tf=0.7))
    result = rank_correlations(models, ["fir", "apt", "tf"])
    assert [p["rho"] is None for p in result["pairs"]] == [False, False, False]
    result["pairs"][0].update(rho=None, reason="made up")  # a grey cell beside coloured ones
    path = plot_correlations({"metrics": labels, "correlations": result}, tmp_path / "c.png")
    assert png_size(path) == (565, 445)


def _fails(args, capsys):
    assert main(["report", *map(str, args)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    return error


def test_a_run_of_unknown_kind_is_refused_naming_its_folder(runs, tmp_path, capsys):
    odd = tmp_path / "asr-run"
    odd.mkdir()
    (odd / "summary.json").write_text(json.dumps({"kind": "asr", "wer": 0.1}))
    error = _fails([runs["turns"]["alpha"], odd], capsys)
    assert f"{odd}: a run of unknown kind 'asr'" in error
    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"{empty}: not a run the report knows" in _fails([runs["turns"]["alpha"], empty], capsys)


def test_a_folder_that_is_no_run_is_refused_before_the_report_folder_is_touched(tmp_path, monkeypatch, capsys):
    """Battery 46: `report tq` (a model folder) tried ./report for writing first, changing its time."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tq").mkdir()
    (tmp_path / "report").mkdir()
    old = 1_000_000_000
    for folder in (tmp_path, tmp_path / "report"):
        os.utime(folder, (old, old))
    assert "tq: not a run the report knows" in _fails(["tq"], capsys)
    assert [os.stat(f).st_mtime for f in (tmp_path, tmp_path / "report")] == [old, old]


def test_two_runs_of_one_kind_for_one_model_are_refused_naming_both(runs, tmp_path, capsys):
    again = write_turns_run(tmp_path / "turns-alpha-again", "alpha", (0.1, 0.2, 0.3))
    error = _fails([runs["turns"]["alpha"], again], capsys)
    assert f"{again}: model 'alpha' already has a turns run ({runs['turns']['alpha']})" in error
    error = _fails([runs["ihbench"]["alpha"], runs["ihbench"]["beta"], "--model-name",
                    f"{runs['ihbench']['beta']}=alpha"], capsys)
    assert "model 'alpha' already has an IHBench run" in error and str(runs["ihbench"]["beta"]) in error


def test_bad_input_names_the_file_and_field(runs, tmp_path, capsys):
    broken = write_turns_run(tmp_path / "turns-broken", "zeta", (0.1, 0.2, 0.3))
    summary = json.loads((broken / "summary.json").read_text())
    del summary["timing"]["stop_latency_s"]["mean"]
    (broken / "summary.json").write_text(json.dumps(summary))
    assert f"{broken / 'summary.json'}: field timing.stop_latency_s.mean is missing" in _fails([broken], capsys)
    summary["timing"]["stop_latency_s"]["mean"] = "fast"
    (broken / "summary.json").write_text(json.dumps(summary))
    assert "field timing.stop_latency_s.mean must be a number or null, got 'fast'" in _fails([broken], capsys)
    unnamed = runs["sid"]["alpha"]
    assert f"{unnamed}: an SID run that records no model name; give --model-name {unnamed}=NAME" in \
        _fails([unnamed, runs["turns"]["alpha"]], capsys)  # alone, its folder names its row (battery 59, F14)
    stranger = tmp_path / "elsewhere"
    assert f"{stranger} is not one of the run folders given" in \
        _fails([unnamed, "--model-name", f"{stranger}=alpha"], capsys)
    assert "is one of the runs being reported" in _fails([runs["turns"]["alpha"], "--out", runs["turns"]["alpha"]],
                                                          capsys)


def test_a_report_with_model_names_keeps_failed_and_unjudged_counts_beside_the_scores(runs, tmp_path, capsys):
    """Battery 6, finding 6: naming the models (a cross report) dropped "N failed ... not scored" (and
    the not-judged warnings) from the terminal; they stay, as in a report of runs."""
    import shutil

    damaged = tmp_path / "ihbench-alpha"
    shutil.copytree(runs["ihbench"]["alpha"], damaged)
    lines = (damaged / "responses.jsonl").read_text().splitlines()
    from dataclasses import replace

    from ihbench.records import ResponseRecord

    failed = replace(ResponseRecord.from_json(json.loads(lines[0])), response=None,
                     error="TransportError: the server was down")  # as the runner records a failed item
    lines[0] = json.dumps(failed.to_json())
    (damaged / "responses.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    out = tmp_path / "report"
    assert main(["report", str(damaged), str(runs["sid"]["alpha"]), "--model-name", f"{damaged}=A",
                 "--model-name", f"{runs['sid']['alpha']}=A", "--out", str(out), *ARGS]) == 0
    said = capsys.readouterr()
    assert f"{damaged}: 1 failed response(s) not scored (`ihbench run` with the same options tries them again)" in said.out


def test_one_output_that_records_no_model_is_named_by_its_folder(runs, tmp_path, monkeypatch, capsys):
    """Battery 59, F14 (P3): `ihbench report SID_OUT` on one SID output (prediction files record no model) asked for
    --model-name, though one row needs no grouping; its folder names the row, and the report says so."""
    monkeypatch.chdir(tmp_path)
    unnamed = runs["sid"]["alpha"]
    assert main(["report", str(unnamed), "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert [(r["model"], r["named_by"]) for r in summary["runs"]] == [(unnamed.name, "its folder")]
    assert f"{unnamed.name} (SID-Bench, named by its folder)" in (tmp_path / "report" / "report.md").read_text()
