"""The command line's small cuts, closed: what a newcomer types first either works or says what to type."""

import subprocess
import sys

import pytest
import yaml

from genebench.cli import DESCRIPTION, main
from genebench.data import open_data
from genebench.report import MAX_LINE
from genebench.results import load_results

TASK = "long vs short range TF"


def test_run_config_keeps_the_task_selection(capsys, tmp_path):
    out = tmp_path / "first"
    assert main(["run", "--input", "random", "--scheme", "paper", "--tasks", TASK, "--out", str(out)]) == 0
    saved = yaml.safe_load((out / "run_config.yaml").read_text())
    assert saved["tasks"]["tasks"] == [TASK]
    again = tmp_path / "again"
    assert main(["run", "--config", str(out / "run_config.yaml"), "--out", str(again)]) == 0
    assert set(load_results(again)["task"]) == {TASK}  # the same task, not all 130


@pytest.mark.parametrize(("block", "unknown", "listed"), [
    ("probe: {c: 1.0}", "probe: unknown key 'c'; expected keys among ['C', ", "e.g. probe: {C: 1.0}"),
    ("adapter: {dimm: 3}", "unknown key 'adapter.dimm'; expected keys among ['batch_size', ", "'dim', "),
    ("tasks: {famly: [hgnc]}", "unknown key 'tasks.famly'; expected keys among ['category', 'family', ", "'type'"),
])
def test_an_unknown_yaml_key_names_the_file_and_the_valid_keys(capsys, tmp_path, block, unknown, listed):
    config = tmp_path / "model.yaml"
    config.write_text(f"input: random\n{block}\n")
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"config '{config}': {unknown}" in err and listed in err and "__init__" not in err
    assert not (tmp_path / "out").exists()


def test_a_run_that_writes_nothing_leaves_no_folder(capsys, tmp_path):
    vocabulary = tmp_path / "vocab.json"
    vocabulary.write_text("{}")  # no gene has a token: the run fails after the folder was made
    out = tmp_path / "out"
    assert main(["run", "--input", "token", "--model", "x/y", "--vocabulary", str(vocabulary), "--tasks", TASK,
                 "--out", str(out)]) == 2
    assert not out.exists()


def test_compare_infers_the_models_of_two_single_model_folders(capsys, tmp_path):
    for seed in (1, 2):
        assert main(["run", "--input", "random", "--seed", str(seed), "--name", f"test/random-{seed}", "--scheme",
                     "paper", "--tasks", TASK, "HLA class I vs class II", "--out", str(tmp_path / f"m{seed}")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "m1"), str(tmp_path / "m2")]) == 0
    assert "A = test/random-1, B = test/random-2: 2 shared tasks (paper folds)" in capsys.readouterr().out


def test_suggestions_for_a_misspelled_option_and_a_category_given_as_tasks(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--modle", "x"])
    err = capsys.readouterr().err
    assert err.startswith("usage: genebench run ") and "did you mean --model?" in err
    assert main(["run", "--input", "random", "--tasks", "localization"]) == 2
    assert "use --category 'localization'" in capsys.readouterr().err
    assert main(["run", "--input", "random", "--tasks", "humantfs"]) == 2
    assert "found a task family; use --family 'humantfs'" in capsys.readouterr().err


def test_tasks_name_shows_the_task_and_the_table_names_its_columns(capsys):
    assert main(["tasks", "TF vs non-TF"]) == 0
    assert capsys.readouterr().out.startswith("TF vs non-TF\n============\n")
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == ["name", "family", "category", "type", "rows", "shortcut (paper folds)",
                      "shortcut (family folds)"]
    assert max(len(line) for line in lines) <= MAX_LINE
    row = next(line for line in lines if line.startswith("| TF vs non-TF "))
    assert [cell.strip() for cell in row.strip("|").split("|")][1] == "humantfs"  # the task family, not a flag


def test_python_m_genebench_and_the_task_count_in_help():
    shown = subprocess.run([sys.executable, "-m", "genebench", "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "does your model understand genes?" in shown.stdout
    n_tasks = len(open_data().tasks("paper"))
    assert f"on {n_tasks} curated gene properties" in DESCRIPTION
