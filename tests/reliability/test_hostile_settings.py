"""Hostile run settings (model YAML, probe options, gene lists): one clear line each, before any result is written."""

from __future__ import annotations

import pytest
from reliability_helpers import TASK, fails, no_partial_files, result_files

BOMB = "input: random\nmodel: random\nprobe:\n" + "".join(
    f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9) if i else ', '.join(['lol'] * 9)}]\n" for i in range(9))

# (YAML text, fragments of the one error line)
YAMLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "probe is a number": ("model: random\ninput: random\nprobe: 5\n",
                          ("probe: Input should be a valid dictionary, found 5 (int)",)),
    "model is a list": ("input: random\nmodel: [1, 2]\n",
                        ("model: Input should be a valid string, found [1, 2] (list)",)),
    "model is a number": ("input: random\nmodel: 123\n", ("model: Input should be a valid string, found 123 (int)",)),
    "include_genes is a list": ("model: random\ninput: random\ninclude_genes: [TP53]\n",
                                ("include_genes: Input should be a valid string, found ['TP53'] (list)",)),
    "negative n_parameters": ("model: random\ninput: random\nn_parameters: -5\n",
                              ("n_parameters: Input should be greater than or equal to 0",)),
    "unknown key": ("model: random\ninput: random\nbatch: 3\n", ("unknown key 'batch'", "expected keys among")),
    "a list, not a mapping": ("- model\n- random\n", ("expected a mapping of keys among", "found list")),
    "not YAML": ("model: [random\n", ("cannot be read as YAML",)),
    "alias bomb": (BOMB, ("aliases expand to over 10000 values",)),
    "self-referencing alias": ("model: random\ninput: random\nprobe: &a {x: *a}\n", ("aliases expand to over",)),
    "unknown input": ("model: random\ninput: randm\n", ("input: unknown input kind 'randm'", "Did you mean: 'random'")),
    "infinite tol": ("model: random\ninput: random\nprobe: {tol: .inf}\n",
                     ("ProbeSettings.tol: expected a finite number in (0, inf), found inf",)),
    "NaN C": ("model: random\ninput: random\nprobe: {C: .nan}\n", ("ProbeSettings.C: expected a finite number",)),
    "unknown probe setting": ("model: random\ninput: random\nprobe: {alpha: 1}\n",
                              ("probe: unknown key 'alpha'", "expected keys among")),
    "zero dim": ("model: random\ninput: random\nadapter: {dim: 0}\n", ("random input: dim must be an integer >= 1",)),
    "negative dim": ("model: random\ninput: random\nadapter: {dim: -3}\n", ("dim must be an integer >= 1, found -3",)),
    "string seed": ("model: random\ninput: random\nadapter: {seed: abc}\n",
                    ("adapter.seed: Input should be a valid integer", "found 'abc' (str)")),
    "common_with one file, not characters": ("model: random\ninput: random\ncommon_with: other.parquet\n",
                                             ("embedding file 'other.parquet': not found",)),
}


@pytest.mark.parametrize("case", YAMLS, ids=list(YAMLS))
def test_hostile_yaml(case, cli, tmp_path):
    text, fragments = YAMLS[case]
    (tmp_path / "model.yaml").write_text(text)
    out = tmp_path / "out"
    fails(cli("run", "--config", tmp_path / "model.yaml", "--tasks", TASK, "--out", out), "run", *fragments)
    assert not result_files(out)
    no_partial_files(tmp_path)


def test_oversized_and_undecodable_yaml(cli, tmp_path):
    (tmp_path / "big.yaml").write_text("model: random\ninput: random\n" + "#" * (1 << 20))
    fails(cli("run", "--config", tmp_path / "big.yaml", "--out", tmp_path / "out"), "run", "bytes, over the")
    (tmp_path / "bin.yaml").write_bytes(b"model: \xff\xfe\n")
    fails(cli("run", "--config", tmp_path / "bin.yaml", "--out", tmp_path / "out"), "run", "expected UTF-8 text")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("option", "value", "fragment"), [
    ("--C", "inf", "ProbeSettings.C: expected a finite number in (0, inf), found inf"),
    ("--C", "0", "ProbeSettings.C: expected a finite number in (0, inf), found 0.0"),
    ("--C", "-1", "found -1.0"),
    ("--C", "nan", "found nan"),
])
def test_probe_options_out_of_range(option, value, fragment, cli, tmp_path):
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", tmp_path / "out", option, value)
    fails(outcome, "run", fragment)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("content", "fragment"), [
    (b"", "holds no symbols; pass a file with one symbol per line"),
    (b"\n  \n", "holds no symbols"),
    (b"\x00\x01\xff\xfe" * 16, "expected a text file with one symbol per line, found binary data"),
    (b"NOT_A_GENE\nALSO_NOT\n", "leave none of them; check the gene lists hold current HGNC symbols"),
])
def test_gene_lists_blamed_for_what_they_do(content, fragment, cli, tmp_path):
    (tmp_path / "genes.txt").write_bytes(content)
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", tmp_path / "out", "--include-genes",
                  tmp_path / "genes.txt")
    line = fails(outcome, "run", fragment, "include_genes")
    assert "adapter" not in line
    assert not result_files(tmp_path / "out")


def test_missing_gene_list(cli, tmp_path):
    outcome = cli("run", "--input", "random", "--tasks", TASK, "--out", tmp_path / "out", "--exclude-genes",
                  tmp_path / "absent.txt")
    fails(outcome, "run", "gene list", "absent.txt", "cannot be read")


@pytest.mark.parametrize(("args", "fragment"), [
    (("build", "--out", "{tmp}/d", "--n-folds", "0"), "argument --n-folds: expected an integer >= 2, found 0"),
    (("build", "--out", "{tmp}/d", "--n-folds", "1"), "argument --n-folds: expected an integer >= 2, found 1"),
    (("build", "--out", "{tmp}/d", "--n-folds", "two"), "expected an integer >= 2, found 'two'"),
    (("compare", "{tmp}", "--a", "x", "--b", "y", "--n-boot", "0"), "argument --n-boot: expected an integer >= 1"),
    (("compare", "{tmp}", "--a", "x", "--b", "y", "--n-boot", "-5"), "expected an integer >= 1, found -5"),
    (("compare", "{tmp}", "--a", "x", "--b", "y", "--top", "-3"), "argument --top: expected an integer >= 1"),
])
def test_counts_below_their_minimum(args, fragment, cli, tmp_path):
    outcome = cli(*[a.format(tmp=tmp_path) for a in args])
    assert outcome.code == 2 and "Traceback" not in outcome.err
    assert fragment in outcome.err.splitlines()[-1]
    assert not (tmp_path / "d").exists()
