"""Fold schemes never mixed on screen: a paper-only and a family-only run, each printed, reported and ranked under its
own scheme, every table and count naming it; Understanding leaves out what a control solves or family folds cannot
score, and says why; --exclude-flagged applies one rule to both schemes."""

import pytest

from genebench.cli import main
from genebench.report import MAX_LINE

TASKS = ["long vs short range TF", "HLA class I vs class II", "Gene2Gene"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The paper-only and the family-only results folders: random vectors on the bundled snapshot."""
    root = tmp_path_factory.mktemp("schemes")
    for name, folds in (("paper-only", "paper"), ("family-only", "family")):
        assert main(["run", "--input", "random", "--name", f"test/{name}", "--scheme", folds, "--tasks", *TASKS,
                     "--out", str(root / name)]) == 0
    return root / "paper-only", root / "family-only"


def test_a_family_only_run_prints_family_columns(capsys, tmp_path):
    code = main(["run", "--input", "random", "--name", "test/family", "--scheme", "family", "--tasks", TASKS[0],
                 "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert code == 0
    assert ": family folds 1 task\n" in printed
    header = next(line for line in printed.splitlines() if line.startswith("| by "))
    assert "family AUC" in header and "family lift" in header and "added over names (family)" in header
    assert "paper" not in header and "| AUC" not in header


def test_report_gives_each_scheme_its_own_section_and_ranks_within_it(runs, capsys, tmp_path):
    paper, family = runs
    capsys.readouterr()
    assert main(["report", str(paper), str(family), "--out", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    sections = printed.split("family folds only: overall")
    assert len(sections) == 2
    assert "test/paper-only" in sections[0] and "test/family-only" not in sections[0]
    assert "test/paper-only" not in sections[1].split("shortcut-solvable")[0]
    assert "| rank (paper folds)" in sections[0] and "| rank (family folds)" in sections[1]
    assert "| AUC (paper folds)" not in sections[1]
    assert "understanding (family folds) leaves out 2 tasks:\n  Gene2Gene: identity control" in printed
    assert "  HLA class I vs class II: not scorable under family folds: labels cannot be split" in printed
    assert max(len(line) for line in printed.splitlines()) <= MAX_LINE
    assert (tmp_path / "report" / "categories_family_folds_only.md").is_file()


def test_exclude_flagged_is_one_rule_for_both_schemes(runs, capsys, tmp_path):
    """Gene2Gene (identity, both schemes) and HLA (names, paper folds only) leave both schemes' summaries."""
    paper, family = runs
    capsys.readouterr()
    assert main(["report", str(paper), str(family), "--out", str(tmp_path / "r"), "--exclude-flagged"]) == 0
    printed = capsys.readouterr().out
    assert "| 1 of 128 " in printed  # paper folds: HLA and Gene2Gene out, of the data revision's tasks too
    family_overall = printed.split("family folds only: overall")[1].split("\n\n")[0]
    assert "1 of 128 (1 scored, 1 in understanding)" in family_overall
    assert "left out of every summary, under both schemes (--exclude-flagged: a task a control solves under either " \
           "scheme)" in printed
