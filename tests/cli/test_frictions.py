"""The small things a newcomer meets first: where --debug goes, piping into head, a renamed task."""

import os
import subprocess
import sys

from genebench.cli import main


def genebench(*argv: str, pipe: str = "", path: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, *sys.path])}
    command = " ".join([sys.executable, "-m", "genebench.cli", *(f"'{a}'" for a in argv)]) + pipe
    return subprocess.run(command, shell=True, capture_output=True, text=True, env=env, timeout=120)


def test_debug_is_accepted_after_the_subcommand():
    tasks = genebench("tasks", "--family", "humantfs", "--debug")
    assert tasks.returncode == 0 and "| TF vs non-TF" in tasks.stdout


def test_piping_into_head_is_quiet():
    piped = genebench("tasks", pipe=" | head -n 1")
    assert piped.stdout.startswith("| name") and piped.stderr == ""


def test_an_unknown_family_says_whether_genebench_can_build_it(capsys):
    assert main(["tasks", "--family", "opentargets"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "build it with `genebench build --out DIR --family opentargets` and pass --data DIR.")
    assert main(["tasks", "--family", "hgnx"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Did you mean: 'hgnc'?" in err and "--family hgnx" not in err
    assert err.endswith("genebench builds these families: humantfs, hgnc, genecorpus, reactome, gene2gene, hpa, "
                        "uniprot_keywords, opentargets, perturbqa.")


def test_the_task_table_leaves_a_missing_parent_blank(capsys):
    assert main(["tasks", "--family", "humantfs"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| TF vs non-TF ")]
    assert len(rows) == 1 and "nan" not in rows[0]


def test_without_torch_minilm_runs_in_numpy_and_a_torch_runtime_fails_in_one_line(tmp_path):
    shadow = tmp_path / "shadow"  # first on the path: these imports fail as when the libraries are not installed
    for library in ("torch", "transformers", "sentence_transformers"):
        (shadow / library).mkdir(parents=True)
        (shadow / library / "__init__.py").write_text(f"raise ModuleNotFoundError('no {library}', name='{library}')\n")
    minilm = ("--model", "sentence-transformers/all-MiniLM-L6-v2", "--input", "description",
              "--tasks", "HLA class I vs class II")
    ran = genebench("run", *minilm, "--out", str(tmp_path / "numpy"), path=(str(shadow),))
    assert ran.returncode == 0, ran.stderr
    assert "torch is not installed: all-MiniLM-L6-v2 runs in NumPy" in ran.stderr
    result = next((tmp_path / "numpy").rglob("HLA*.json"))
    assert '"runtime": "numpy"' in result.read_text()
    refused = genebench("run", *minilm, "--runtime", "torch", "--out", str(tmp_path / "torch"), path=(str(shadow),))
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        'genebench run: error: a model input needs torch, which is not installed; run: pip install torch==2.13.0 '
        '--index-url https://download.pytorch.org/whl/cpu && pip install "transformers>=4.56" '
        '"sentence-transformers>=2.2" (CPU-only Linux; for macOS or CUDA, the README\'s Install section)']


def test_a_renamed_task_warns_in_one_line(capsys, tmp_path):
    old = "Lys4-only-methylated vs non-methylated"
    assert main(["run", "--input", "random", "--tasks", old, "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"warning: task '{old}' is now called 'bivalent vs Lys4-only-methylated'.\n" in err
    assert ".py:" not in err and "UserWarning" not in err


def test_a_missing_file_option_fails_before_any_work(capsys, tmp_path):
    code = main(["run", "--model", "ctheodoris/Geneformer", "--input", "token", "--vocabulary",
                 str(tmp_path / "token_dictionary.pkl"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (f"genebench run: error: --vocabulary '{tmp_path / 'token_dictionary.pkl'}': no such "
                                 "file; expected the token input: gene -> token id dictionary (pickle or json).")
    assert not (tmp_path / "out").exists()


def test_without_out_each_model_gets_its_own_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--name", "my-random"]):
        assert main(["run", "--input", "random", "--tasks", "HLA class I vs class II", *extra]) == 0
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["genebench__random-256", "my-random"]
    assert "results (paper folds): results/my-random/\n" in capsys.readouterr().out
    assert (tmp_path / "results" / "my-random" / "my-random").is_dir()  # a results root, as --out would be
