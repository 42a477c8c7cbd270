"""`genebench sweep`: three models in their own folders, one report, finished models skipped on rerun."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from genebench.cli import main
from genebench.errors import GenebenchError
from genebench.report import MAX_LINE
from genebench.sweep import DONE_FILE, Sweep

TASKS = ["HLA class I vs class II", "long vs short range TF"]


def write_sweep(path: Path, models: str, extra: str = "") -> Path:
    path.write_text(f"models:\n{models}tasks: {{tasks: {json.dumps(TASKS)}}}\nprobe: {{C: 0.5}}\n{extra}")
    return path


THREE = """\
  - {input: random, name: test/random-a, adapter: {dim: 16, seed: 0}}
  - {input: random, name: test/random-b, adapter: {dim: 16, seed: 1}}
  - {input: random, name: test/random-c, adapter: {dim: 32, seed: 2}}
"""


def _scores(out: Path) -> dict[tuple[str, str, str], tuple[dict, float]]:
    """(model, fold scheme, task) -> (scores, the file's mtime)."""
    files = [p for p in out.rglob("*.json") if p.name != "model_meta.json" and "report" not in p.parts]
    results = [(json.loads(p.read_text()), p.stat().st_mtime_ns) for p in files]
    return {(r["model"]["id"], r["probe"]["scheme"], r["task"]["name"]): (r["scores"], mtime) for r, mtime in results}


def test_sweep_scores_each_model_in_its_folder_and_skips_finished_ones(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep.yaml", THREE)
    out = tmp_path / "out"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3 models scored, 0 finished before" in printed
    folders = sorted(p for p in out.iterdir() if p.name != "report")
    assert [f.name.split("-random-")[0] for f in folders] == ["test__random-a", "test__random-b", "test__random-c"]
    for folder in folders:
        assert (folder / "run_config.yaml").exists() and (folder / DONE_FILE).exists()
    first = _scores(out)
    assert len(first) == 3 * 2 * len(TASKS)  # each model under both fold schemes, the family's in folds-family/
    assert all(r["probe"]["C"] == 0.5 for r in (json.loads(p.read_text()) for p in out.rglob("*.json")
                                                if p.name != "model_meta.json" and "report" not in p.parts))
    assert (out / "report" / "report.html").exists()
    assert "| test/random-c |" in printed
    # the report's screen: the overall, family-fold and category tables apart, every line within MAX_LINE
    headers = [line.split("|")[1:3] for line in printed.splitlines() if line.startswith("| model ")]
    assert [[cell.strip() for cell in header] for header in headers] == [
        ["model", "rank (paper folds)"], ["model", "AUC (family folds)"], ["model", "regulatory functions"],
        ["model", "binary"]]
    assert [line for line in printed.splitlines() if line.startswith("paper folds: ")] == [
        "paper folds: overall", "paper folds: family folds beside", "paper folds: AUC (paper folds) by category",
        "paper folds: AUC (paper folds) by task type"]
    assert max(len(line) for line in printed.splitlines()) <= MAX_LINE

    assert main(["sweep", str(sweep), "--out", str(out)]) == 0  # nothing left to do
    assert "0 models scored, 3 finished before" in capsys.readouterr().out
    assert _scores(out) == first  # not even rewritten
    if importlib.util.find_spec("ray") is not None:  # nothing to do: Ray is never started (this address fails)
        assert main(["sweep", str(sweep), "--out", str(out), "--engine", "ray", "--ray-address",
                     "ray://127.0.0.1:9"]) == 0
        assert "0 models scored, 3 finished before" in capsys.readouterr().out

    (folders[1] / DONE_FILE).unlink()  # model b was interrupted after its first task
    (result,) = [p for p in folders[1].rglob("*.json") if "long_vs_short" in p.name and "folds-family" not in p.parts]
    result.unlink()
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    assert "1 models scored, 2 finished before" in capsys.readouterr().out
    again = _scores(out)
    assert {key: value[0] for key, value in again.items()} == {key: value[0] for key, value in first.items()}
    rewritten = {key for key in first if again[key][1] != first[key][1]}
    assert rewritten == {("test/random-b", "paper", "long vs short range TF")}  # only the missing one was computed


@pytest.mark.parametrize(("models", "extra", "message"), [
    ("", "", r"sweep '.*': models: Input should be a valid list"),
    ("  - {input: random, probe: {C: 2}}\n", "", r"models\[0\]: probe settings are shared .* top-level 'probe'"),
    ("  - {input: random, folds: [paper]}\n", "", r"models\[0\]: folds settings are shared .* top-level 'folds'"),
    ("  - {input: randm}\n", "", r"models\[0\]: .*randm"),
    ("  - {input: random}\n  - {input: random}\n", "", r"models\[0\] and models\[1\] both resolve to the model id "
                                                       r"'genebench/random-256'"),
    ("  - {input: random, adapter: {seed: 1}}\n  - {input: bag-of-words}\n  - {input: random, adapter: {seed: 2}}\n",
     "", r"models\[0\] and models\[2\] both resolve to the model id 'genebench/random-256'.*distinct `name:`s"),
    ("  - {input: random}\n", "engine: ray\n",
     r"sweep '.*': unknown key 'engine'; expected keys among \['data', .*\], e.g. \{models: \[\{input: random"),
])
def test_bad_sweep_files_fail_in_one_line_naming_the_entry(tmp_path, models, extra, message):
    with pytest.raises(GenebenchError, match=message):
        Sweep.from_yaml(write_sweep(tmp_path / "sweep.yaml", models, extra))


@pytest.mark.parametrize(("tasks", "selected"), [
    ('["HLA class I vs class II", "long vs short range TF"]', TASKS),
    ('"HLA class I vs class II"', TASKS[:1]),
    ("{family: [humantfs], tasks: [long vs short range TF]}", TASKS[1:]),
])
def test_tasks_may_be_a_list_of_names_one_name_or_a_selection(tmp_path, tasks, selected):
    path = tmp_path / "sweep.yaml"
    path.write_text(f"models:\n  - {{input: random}}\ntasks: {tasks}\n")
    sweep = Sweep.from_yaml(path)
    assert sweep.tasks.tasks == selected


def test_an_empty_task_list_is_refused_with_an_example(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("models:\n  - {input: random}\ntasks: []\n")
    with pytest.raises(GenebenchError, match=r"tasks: an empty list selects no task; give task names, e.g. tasks: "):
        Sweep.from_yaml(path)


def test_a_sweep_file_is_read_within_the_yaml_limits(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(5)))
    with pytest.raises(GenebenchError, match=r"sweep '.*': its aliases expand to over 10000 values"):
        Sweep.from_yaml(path)


@pytest.mark.parametrize("flags", [["--ray-address", "auto"], ["--chunk-size", "64"]])
def test_ray_options_without_the_ray_engine_are_refused_in_one_line(tmp_path, capsys, flags):
    sweep = write_sweep(tmp_path / "sweep.yaml", THREE)
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), *flags]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"genebench sweep: error: {' '.join(flags)} applies to --engine ray only; add --engine ray."]
    assert not (tmp_path / "out").exists()
