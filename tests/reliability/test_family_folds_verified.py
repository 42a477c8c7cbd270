"""Family folds are verified against the data's HGNC table before the scheme is first used: folds that do not hold
families out, fold ids that are not folds, and "unscorable" marks that do not follow from the folds refuse the data
in one line, before anything is scored or written, even when the manifest was re-hashed to match."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, fails, snapshot

HLA = "HLA class I vs class II"


def _rewrite(data: Path, family: str, change: Callable[[pa.Table], pa.Table], files: str = "fold_*.parquet") -> None:
    """Apply `change` to each of a family's files, then re-hash the manifest as a careful forger would."""
    from genebench.data import read_manifest
    from genebench.data_folder import commit_manifest

    for path in sorted((data / family).glob(files)):
        pq.write_table(change(pq.read_table(path)), path)
    commit_manifest(data, read_manifest(data))


def _column(table: pa.Table, name: str, values) -> pa.Table:
    index = table.schema.get_field_index(name)
    return table.set_column(index, name, pa.array(values))


def _paper_folds(table: pa.Table) -> pa.Table:
    return _column(table, "family_fold", table.column("fold"))


def _shuffled(table: pa.Table) -> pa.Table:
    folds = table.column("family_fold").to_numpy()
    return _column(table, "family_fold", np.random.default_rng(0).permutation(folds).astype(np.int8))


def _nan_ids(table: pa.Table) -> pa.Table:
    folds = table.column("family_fold").to_numpy().astype(np.float64)
    folds[::7] = np.nan
    return _column(table, "family_fold", folds)


def _fold_nine(table: pa.Table) -> pa.Table:
    return _column(table, "family_fold", np.full(len(table), 9, dtype=np.int8))


def _mark(task: str, reason: str | None) -> Callable[[pa.Table], pa.Table]:
    def change(table: pa.Table) -> pa.Table:
        marks = [reason if name == task else mark for name, mark in
                 zip(table.column("name").to_pylist(), table.column("family_unscorable").to_pylist())]
        return _column(table, "family_unscorable", pa.array(marks, pa.string()))
    return change


def _pair_split_changed(table: pa.Table) -> pa.Table:
    return _column(table, "family_fold", ((table.column("fold").to_numpy() + 1) % 5).astype(np.int8))


# case -> (family, task run, change, files, fragments of the one line)
DAMAGES = {
    "paper folds as family folds": ("humantfs", TASK, _paper_folds, "fold_*.parquet", "families cross a fold"),
    "shuffled family folds": ("humantfs", TASK, _shuffled, "fold_*.parquet", "families cross a fold"),
    "NaN family fold ids": ("humantfs", TASK, _nan_ids, "fold_*.parquet", "rows have a family fold outside 0..4"),
    "every row in fold 9": ("humantfs", TASK, _fold_nine, "fold_*.parquet", "rows have a family fold outside 0..4"),
    "HLA's unscorable mark cleared": ("hgnc", HLA, _mark(HLA, None), "tasks.parquet",
                                      "its family folds leave it unscorable", "not marked family_unscorable"),
    "a scorable task marked unscorable": ("humantfs", TASK, _mark(TASK, "labels cannot be split"), "tasks.parquet",
                                          "marked family_unscorable 'labels cannot be split'"),
    "a pair task's family split off its paper split": ("gene2gene", TASK, _pair_split_changed, "fold_*.parquet",
                                                       "family folds differ from its paper split"),
}


@pytest.mark.parametrize("case", DAMAGES)
def test_damaged_family_folds_refuse_the_data_in_one_line(case, cli, data_copy, tmp_path):
    family, task, change, files, *fragments = DAMAGES[case]
    _rewrite(data_copy, family, change, files)
    out = tmp_path / "out"
    outcome = cli("run", "--input", "random", "--data", data_copy, "--tasks", task, "--out", out)
    fails(outcome, "run", f"data folder '{data_copy}'", "family folds refused", *fragments,
          "rebuild it with `genebench build`")
    assert snapshot(out) == {}  # nothing scored, nothing written (not even the paper-fold results)


@pytest.mark.parametrize("folds", [(), ("--scheme", "family")])
def test_a_damaged_family_is_refused_by_the_task_list(folds, cli, data_copy):
    _rewrite(data_copy, "humantfs", _shuffled)
    fails(cli("tasks", "--data", data_copy, *folds), "tasks", "family folds refused")


def test_the_refusal_holds_on_every_later_use_of_the_scheme(data_copy):
    from genebench.data import BenchmarkData
    from genebench.errors import SourceFormatError

    _rewrite(data_copy, "humantfs", _shuffled)
    data = BenchmarkData(data_copy)
    for _ in range(2):
        with pytest.raises(SourceFormatError, match="family folds refused"):
            data.load_task(TASK, "family")
    assert len(data.load_task(TASK).fold_ids) == data.metadata(TASK).n_entities  # the paper scheme is not damaged


def test_the_bundled_families_and_marks_pass(data_copy):
    from genebench.data import BenchmarkData

    data = BenchmarkData(data_copy)
    marked = {meta.name for meta in data.tasks("family") if meta.family_unscorable}
    assert HLA in marked and TASK not in marked
    assert json.loads((data_copy / "genebench.json").read_text())["data_hash"] == data.data_hash
