"""`genebench compare RESULTS --published`: a run beside the paper's published scores, relation by relation."""

import math
import re

import pytest

from genebench import published
from genebench.cli import main
from genebench.results import load_results


@pytest.fixture(scope="module")
def runs(tmp_path_factory, fixtures):
    """A random-vector run on real excerpts (TF vs non-TF, HLA, Pathways), scored by genebench's multi-label AUC and
    by the reference's."""
    root = tmp_path_factory.mktemp("published")
    data = root / "data"
    assert main(["build", "--out", str(data), "--sources", str(fixtures), "--family", "humantfs", "hgnc",
                 "reactome"]) == 0
    for name, extra in (("default", []), ("reference", ["--multilabel-auc", "predictions"])):
        assert main(["run", "--data", str(data), "--input", "random", "--scheme", "paper", "--no-derived",
                     "--out", str(root / name), *extra]) == 0
    return root


def rows(out: str) -> dict[str, list[str]]:
    """The per-task table's rows by task."""
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")]
    return {row[0]: row[1:] for row in cells if row[0] not in ("task", "category")}


def test_compare_with_published_gives_each_mapped_task_and_its_relation(capsys, runs):
    capsys.readouterr()
    assert main(["compare", str(runs / "default"), "--published", "MPNet"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 200
    table = rows(out)
    scores = load_results(runs / "default")
    paper = published.fold_scores().set_index(["model", "paper_task"])
    for task, mark in (("TF vs non-TF", "="), ("HLA class I vs class II", "="), ("Pathways", "P")):
        category, shown_mark, run, pub, sd, difference, within = table[task]
        mine = scores[(scores["task"] == task) & scores["is_main"]]["mean"].iloc[0]
        theirs = paper.loc[("MPNet", task)]
        assert shown_mark == mark
        assert (run, pub, sd) == (f"{mine:.3f}", f"{theirs['mean']:.3f}", f"{theirs['sd']:.3f}")
        assert difference == f"{mine - theirs['mean']:+.3f}"
        limit = max(0.02, 2 * theirs["sd"] / math.sqrt(5))
        assert within == ("yes" if abs(mine - theirs["mean"]) <= limit else "no")
    assert "3 of the paper's 61 mapped tasks scored by the run" in out
    assert re.search(r"same source, release and protocol: 2 tasks", out)


def test_the_references_auc_makes_a_multi_label_task_the_same_protocol(capsys, runs):
    capsys.readouterr()
    assert main(["compare", str(runs / "reference"), "--published", "bag_of_words", "gene2vec"]) == 0
    out = capsys.readouterr().out
    assert out.count("against Bag of Words") == 1 and out.count("against Gene2vec") == 1
    assert rows(out)["Pathways"][1] == "="
    assert "same source, release and protocol: 3 tasks" in out


def test_compare_needs_two_models_or_published(capsys, runs):
    assert main(["compare", str(runs / "default"), "--a", "genebench/random-256"]) == 2
    err = capsys.readouterr().err
    assert "expected --a MODEL and --b MODEL (two models), or --published" in err
    assert main(["compare", str(runs / "default"), "--published", "ESM2"]) == 2
    assert "--published ESM2: expected one of the paper's models MPNet" in capsys.readouterr().err


pytestmark = pytest.mark.slow  # real-data builds, refits, the published field: seconds each; CI runs them
