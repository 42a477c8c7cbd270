"""The `genebench` command, run in-process: every subcommand's happy path and its errors."""

import json

import huggingface_hub.constants
import pytest
import yaml
from fake_hub import FakeHub

from genebench.cli import main
from genebench.results import load_results

FAMILIES = ["humantfs", "hgnc", "reactome", "gene2gene"]


@pytest.fixture(scope="module")
def data(tmp_path_factory, fixtures):
    out = tmp_path_factory.mktemp("cli-data")
    assert main(["build", "--out", str(out), "--sources", str(fixtures), "--family", *FAMILIES]) == 0
    return out


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_help_teaches_with_examples(capsys):
    for command in ("tasks", "build", "push", "run", "encode", "report", "compare", "leaderboard", "submit"):
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0
        assert "examples:" in capsys.readouterr().out, command


def test_renamed_flags_show_their_new_names_and_still_take_the_old(capsys):
    from genebench.cli import build_parser
    from genebench.cli.run import config_from_args

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = capsys.readouterr().out
    assert "--model-revision" in shown and "--hub-revision" in shown and "--scheme" in shown
    assert "--revision" not in shown.replace("--model-revision", "").replace("--hub-revision", "")
    assert "--data-revision" not in shown and "--folds" not in shown
    parser = build_parser()
    new = parser.parse_args(["run", "--input", "random", "--model-revision", "abc", "--hub-revision", "v1",
                             "--scheme", "family"])
    old = parser.parse_args(["run", "--input", "random", "--revision", "abc", "--data-revision", "v1",
                             "--folds", "family"])
    assert (old.model_revision, old.hub_revision) == (new.model_revision, new.hub_revision) == ("abc", "v1")
    assert config_from_args(old) == config_from_args(new)
    assert (config_from_args(old).revision, config_from_args(old).schemes) == ("abc", ["family"])
    for command in ("report", "compare", "tasks", "controls"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        shown = capsys.readouterr().out
        assert "--scheme" in shown and "--folds" not in shown, command


def test_tasks_lists_filters_and_shows(capsys, data):
    code, out, _ = run(capsys, "tasks", "--data", data, "--family", "reactome", "--no-derived")
    assert code == 0 and "| Pathways" in out and out.strip().endswith("\n1 task")
    code, out, _ = run(capsys, "tasks", "--data", data, "--show", "HLA class I vs class II")
    assert code == 0 and "protein properties" in out and "20   45.5%  class I" in out


def test_unknown_task_is_one_line_with_a_suggestion(capsys, data):
    code, out, err = run(capsys, "tasks", "--data", data, "--show", "HLA class 1 vs class II")
    assert code == 2 and out == ""
    assert err.strip() == ("genebench tasks: error: unknown task 'HLA class 1 vs class II'. Did you mean: "
                           "'HLA class I vs class II'? List them with `genebench tasks`.")
    assert "Traceback" not in err


def test_unknown_category_is_refused_by_the_parser(capsys, data):
    with pytest.raises(SystemExit) as exit_:
        main(["tasks", "--data", str(data), "--category", "localisation"])
    assert exit_.value.code == 2
    assert "invalid choice: 'localisation'" in capsys.readouterr().err


def test_build_reports_and_refuses_unknown_family(capsys, tmp_path, fixtures):
    code, out, _ = run(capsys, "build", "--out", tmp_path, "--sources", fixtures, "--family", "hgnc")
    assert code == 0 and out.startswith("built hgnc into")
    code, _, err = run(capsys, "build", "--out", tmp_path, "--family", "reactom")
    assert code == 2 and "Did you mean: 'reactome'" in err


def test_push_uploads_the_folder_in_one_commit(capsys, data, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_tests")
    with FakeHub() as hub:
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.url)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        code, out, err = run(capsys, "push", data, "--repo", "my-org/genebench")
        assert code == 0, err
        files = hub.repos["my-org/genebench"].refs["main"]
        assert files["genebench.json"] == (data / "genebench.json").read_bytes()
        assert {"README.md", "reactome/fold_0.parquet", "symbols/hgnc.parquet"} <= set(files)
        assert hub.repos["my-org/genebench"].commits == 1
    code, _, err = run(capsys, "push", data, "--repo", "not a repo id")
    assert code == 2 and "--repo 'not a repo id'" in err


def test_run_resumes_and_guards_its_output(capsys, data, tmp_path):
    out = tmp_path / "results"
    args = ["run", "--data", data, "--input", "random", "--family", "humantfs", "hgnc", "--out", out]
    code, printed, err = run(capsys, *args)
    assert code == 0, err
    assert "| category | protein properties" in printed and "| type     | binary" in printed
    results = load_results(out)
    assert set(results["task"]) == {"TF vs non-TF", "HLA class I vs class II"}
    assert (out / "figures" / "categories.png").stat().st_size > 1000
    first = {p: p.read_bytes() for p in out.rglob("*.json")}
    assert run(capsys, *args)[0] == 0
    assert {p: p.read_bytes() for p in out.rglob("*.json")} == first  # kept as written: dates included
    code, _, err = run(capsys, "run", "--data", data, "--input", "bag-of-words", "--description-source", "hgnc",
                       "--family", "hgnc", "--out", out)
    assert code == 2 and "holds the results of another run (random, input random)" in err


def test_run_from_a_config_file_repeats_the_run(capsys, data, tmp_path):
    config = tmp_path / "model.yaml"
    config.write_text(yaml.safe_dump({"model": "random", "input": "random", "adapter": {"seed": 3},
                                      "probe": {"C": 0.5}}))
    out = tmp_path / "results"
    code, _, err = run(capsys, "run", "--config", config, "--data", data, "--tasks", "TF vs non-TF", "--out", out)
    assert code == 0, err
    (result,) = [json.loads(p.read_text()) for p in out.rglob("*.json")  # the paper folds' (family: folds-family/)
                 if p.name != "model_meta.json" and not p.relative_to(out).parts[0].startswith("folds-")]
    assert result["config"]["probe"] == {"C": 0.5} and result["probe"]["C"] == 0.5
    assert result["config"]["adapter"] == {"seed": 3}
    saved = yaml.safe_load((out / "run_config.yaml").read_text())
    assert saved["adapter"] == {"seed": 3} and saved["model"] == "random"


def test_run_input_errors(capsys, data, tmp_path):
    code, _, err = run(capsys, "run", "--data", data, "--model", "x", "--out", tmp_path)
    assert code == 2 and "choose how genes become model input with --input" in err
    with pytest.raises(SystemExit):
        main(["run", "--input", "protien"])
    assert "invalid choice: 'protien'" in capsys.readouterr().err
    config = tmp_path / "bad.yaml"
    config.write_text("model: m\ninput: random\nlearning_rate: 3\n")
    code, _, err = run(capsys, "run", "--config", config, "--data", data)
    assert code == 2 and "unknown key 'learning_rate'; expected keys among" in err


def test_a_setting_that_does_not_apply_fails_early_and_leaves_the_folder_free(capsys, data, tmp_path):
    out = tmp_path / "results"
    base = ["run", "--data", data, "--input", "random", "--tasks", "TF vs non-TF", "--out", out]
    code, _, err = run(capsys, *base, "--C", "-1")
    assert code == 2 and "probe settings {'C': -1.0}: ProbeSettings.C: expected a finite number in (0, inf)" in err
    code, _, err = run(capsys, *base, "--dtype", "bfloat16")
    assert code == 2 and "input kind 'random' has no setting 'dtype'; its settings are dim, seed" in err
    assert not (out / "run_config.yaml").exists()
    assert run(capsys, *base)[0] == 0  # the corrected command is not refused as "another run"


def test_encode_report_and_compare(capsys, data, tmp_path):
    emb = tmp_path / "random.parquet"
    code, out, err = run(capsys, "encode", "--data", data, "--input", "random", "--family", "hgnc", "--out", emb)
    assert code == 0 and "encoded 44 of 44 genes (100.0%)" in out
    results = tmp_path / "results"
    for seed in (1, 2):
        config = tmp_path / f"m{seed}.yaml"
        config.write_text(yaml.safe_dump({"model": "random", "name": f"test/random-{seed}", "input": "random",
                                          "adapter": {"seed": seed}}))
        assert main(["run", "--config", str(config), "--data", str(data), "--family", "humantfs", "hgnc", "reactome",
                     "--out", str(results / f"m{seed}")]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "report", results / "m1", results / "m2", "--out", tmp_path / "report")
    assert code == 0, err
    assert "random-1" in out and "random-2" in out
    for name in ("report.html", "categories.md", "tasks.csv", "heatmap.png", "heatmap.svg", "categories.svg"):
        assert (tmp_path / "report" / name).stat().st_size > 100, name
    code, out, err = run(capsys, "compare", results / "m1", results / "m2", "--a", "test/random-1", "--b",
                       "test/random-2")
    assert code == 0, err
    assert "A = test/random-1, B = test/random-2: 7 shared tasks (paper folds)" in out and "95% bootstrap CI" in out
    code, _, err = run(capsys, "compare", results / "m1", "--a", "test/random-1", "--b", "nope")
    assert code == 2 and "model 'nope' has no scored results here" in err


def test_full_disk_is_one_clear_error(data, tmp_path):
    """Writes past a 64 KiB file-size limit fail as a full disk would: one line, exit 2, no traceback."""
    import resource
    import signal
    import subprocess
    import sys

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    command = [sys.executable, "-m", "genebench.cli", "run", "--data", str(data), "--input", "random",
               "--tasks", "TF vs non-TF", "--out", str(tmp_path / "results")]
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=limit, timeout=120,
                          env={**__import__("os").environ, "GENEBENCH_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("genebench run: error: cannot write, the disk is full or the file too large")
    assert last.endswith("finished results are kept and the run resumes.")
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_ctrl_c_keeps_finished_tasks_and_a_rerun_resumes(tmp_path):
    """SIGINT mid-run over the ten PerturbQA tasks: finished files stay, the rerun completes."""
    from interrupting import interrupt_then_resume

    interrupt_then_resume(["--input", "random", "--family", "perturbqa"], tmp_path / "results", tmp_path / "cache", 10)
