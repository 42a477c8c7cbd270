"""Stored control predictions are checked where they are read: a block edited, reversed, swapped or a score edited
(its manifest hash updated to match, so the file itself passes its sha256) changes the data revision and is
refused in one line by `run`, which writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, fails, snapshot

from genebench.data import BenchmarkData, read_manifest
from genebench.data_folder import commit_manifest


def _rewrite(data: Path, relative: str, change) -> None:
    """Apply `change` to the column `value` of a stored control file, then re-hash the manifest as a forger would."""
    path = data / relative
    table = pq.read_table(path)
    column = table.column(table.column_names[0]).to_numpy(zero_copy_only=False)
    pq.write_table(pa.table({table.column_names[0]: change(column)}), path)
    commit_manifest(data, read_manifest(data))


def _edit_score(data: Path) -> None:
    path = data / "controls" / "scores.parquet"
    frame = pq.read_table(path).to_pandas()
    frame.loc[(frame["task"] == TASK) & (frame["control"] == "name"), "score"] = 0.55
    pq.write_table(pa.Table.from_pandas(frame, schema=pq.read_schema(path), preserve_index=False), path)
    commit_manifest(data, read_manifest(data))


@pytest.mark.parametrize("folds, tamper", [
    ("family", lambda data: _rewrite(data, "controls/name-family.parquet", lambda v: -v)),
    ("family", lambda data: _rewrite(data, "controls/name-family.parquet", lambda v: v[::-1])),
    ("paper", _edit_score),
])
def test_tampered_stored_controls_are_refused_by_run(cli, data_copy, tmp_path, folds, tamper):
    revision = BenchmarkData(data_copy).data_hash
    tamper(data_copy)
    assert BenchmarkData(data_copy).data_hash != revision  # the data hash covers the controls
    out = tmp_path / "results"
    outcome = cli("run", "--input", "random", "--dim", "16", "--data", data_copy, "--tasks", TASK, "--scheme", folds,
                  "--out", out)
    fails(outcome, "run", f"stored name control of task '{TASK}' under {folds} folds", "edited or swapped",
          "genebench controls --data")
    assert not [path for path in snapshot(out) if path.endswith(".json")]  # no result written


def test_swapped_scheme_files_are_refused(cli, data_copy, tmp_path):
    paper, family = (data_copy / "controls" / f"name-{scheme}.parquet" for scheme in ("paper", "family"))
    paper_bytes, family_bytes = paper.read_bytes(), family.read_bytes()
    paper.write_bytes(family_bytes)
    family.write_bytes(paper_bytes)
    commit_manifest(data_copy, read_manifest(data_copy))
    outcome = cli("run", "--input", "random", "--dim", "16", "--data", data_copy, "--tasks", TASK, "--scheme",
                  "paper", "--out", tmp_path / "results")
    fails(outcome, "run", f"task '{TASK}' under paper folds", "edited or swapped")
    assert not [path for path in snapshot(tmp_path / "results") if path.endswith(".json")]  # no result written
    assert json.loads((data_copy / "genebench.json").read_text())["format"] == 2
    assert np.isfinite(BenchmarkData(data_copy).metadata(TASK).controls["name"])
