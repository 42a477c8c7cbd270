"""The README reads in five minutes, and every number it quotes is the data's or a run's.

The numbers that follow from the data (its hash, task and gene counts, the shortcut-solvable counts, a task's
classes) are checked against the data in use; the worked example's table against a run of it, given as
GENEBENCH_README_RESULTS (the `--out` of the README's command 1), since that run takes minutes.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from genebench import pipeline
from genebench.data import open_data

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_README_LINES = 300


@pytest.fixture(scope="module")
def data():
    return open_data()


def worked_example() -> str:
    return README.split("```console\n", 1)[1].split("```", 1)[0]


def test_the_readme_is_short():
    assert len(README.splitlines()) <= MAX_README_LINES


def test_hash_and_counts_are_the_datas(data):
    n_tasks = len(data.tasks("paper"))
    assert set(re.findall(r"data revision ([0-9a-f]{16})", README)) == {data.data_hash}
    assert re.findall(r"on (\d+) curated gene properties", README) == [str(n_tasks)]
    assert re.findall(r"holds (\d+) tasks", README) == [str(n_tasks)]
    example = worked_example()
    assert re.findall(r"(paper|family) folds: (\d+) tasks to score", example) == [
        ("paper", str(n_tasks)), ("family", str(n_tasks))]
    assert re.findall(r"paper folds (\d+) tasks; family folds (\d+) tasks", example) == [(str(n_tasks),) * 2]
    genes = pipeline.task_genes(pipeline.select_tasks(data, [meta.name for meta in data.tasks("paper")]))
    assert re.findall(r"encoding (\d+) genes", example) == [str(len(genes))]


def test_the_worked_tables_task_counts_are_the_datas(data):
    """Per category and task type, the tasks each scheme averages: every task of the data (known-incomplete ones
    out), less under family folds those family folds cannot split."""
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in worked_example().splitlines()
            if line.startswith(("| category ", "| type "))]
    assert rows
    tasks = [meta for meta in data.tasks("paper") if not meta.incomplete]
    for by, group, paper, *_, family, _, _, _, _ in rows:
        members = [meta for meta in tasks if getattr(meta, by) == group]
        assert int(paper) == len(members), group
        assert int(family) == sum(not meta.family_unscorable for meta in members), group


def test_shortcut_counts_are_the_stored_controls(data):
    line = next(line for line in worked_example().splitlines() if line.startswith("shortcut-solvable"))
    for scheme in ("paper", "family"):
        flagged = Counter(meta.best_control[0] for meta in data.tasks(scheme) if meta.is_shortcut_solvable)
        by_control = ", ".join(f"{name} {n}" for name, n in sorted(flagged.items(), key=lambda c: (-c[1], c[0])))
        assert f"{sum(flagged.values())} tasks under {scheme} folds ({by_control})" in line


def test_class_counts_quoted_in_the_docs_are_the_tasks(data):
    quoted = re.findall(r"(\w[\w ]*?) \(([\d,]+) genes, (\d+) classes\)", (ROOT / "docs" / "scaling.md").read_text())
    assert quoted
    for name, genes, classes in quoted:
        task = data.load_task(name)
        assert (len(task.labels), len(task.metadata.label_names)) == (int(genes.replace(",", "")), int(classes))


def test_the_worked_table_is_a_run_of_it():
    folder = os.environ.get("GENEBENCH_README_RESULTS")
    if not folder:
        pytest.skip("GENEBENCH_README_RESULTS unset: give the --out of the README's command 1 to check its table")
    from genebench.report import markdown_table, paper_table
    from genebench.results import load_results

    assert markdown_table(paper_table(load_results(folder))) in worked_example()
