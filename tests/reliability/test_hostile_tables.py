"""Hostile embedding tables given to `genebench encode --input precomputed`: one clear line each, nothing written."""

from __future__ import annotations

import gzip
import io
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reliability_helpers import TASK, fails

GENES = ["TP53", "BRCA1", "MYC"]


def _csv(rows: list[list]) -> bytes:
    return pd.DataFrame(rows, columns=["symbol", "a", "b"]).to_csv(index=False).encode()


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


OK_CSV = _csv([[g, float(i), 1.0] for i, g in enumerate(GENES)])
OK_PARQUET = _parquet(pa.table({"symbol": GENES, "a": [1.0, 2.0, 3.0]}))

# (file name, its bytes, fragments of the one error line)
HOSTILE: dict[str, tuple[str, bytes | Callable[[Path], None], tuple[str, ...]]] = {
    "empty csv": ("t.csv", b"", ("cannot be read as a table of vectors",)),
    "header-only csv": ("t.csv", b"symbol,a,b\n", ("holds no vectors",)),
    "truncated gzip": ("t.csv.gz", gzip.compress(OK_CSV)[:30], ("cannot be read as a table of vectors",)),
    "truncated parquet": ("t.parquet", OK_PARQUET[: len(OK_PARQUET) // 2], ("cannot be read as a table of vectors",)),
    "pickle": ("t.pkl", pickle.dumps({"TP53": [1.0, 2.0]}), ("a Python pickle, which genebench never loads",)),
    "pickle named csv": ("t.csv", pickle.dumps([1, 2, 3], protocol=4), ("a Python pickle",)),
    "random bytes csv": ("t.csv", bytes(range(256)) * 4, ("cannot be read as a table of vectors",)),
    "random bytes txt": ("t.txt", b"\xff\xfe\x00\x81" * 64, ("cannot be read as a table of vectors",)),
    "random bytes parquet": ("t.parquet", os.urandom(64), ("cannot be read as a table of vectors",)),
    "npy without index": ("t.npy", lambda p: np.save(p, np.ones((3, 2))), ("needs an index of symbols", "--index")),
    "ragged vector lists": ("t.parquet", _parquet(pa.table({"symbol": GENES[:2], "vector": [[1.0, 2.0], [1.0]]})),
                            ("expected every vector to have the same length",)),
    "non-JSON parquet metadata": ("t.parquet", _parquet(pa.table({"symbol": GENES[:1], "vector": [[1.0, 2.0]]})
                                                        .replace_schema_metadata({b"genebench.missing": b"{nope"})),
                                  ("expected numeric vectors and JSON metadata",)),
    "duplicate symbols, different vectors": ("t.csv", _csv([["TP53", 1.0, 2.0], ["TP53", 3.0, 4.0]]),
                                             ("symbol 'TP53' is listed on rows 1 and 2 with different vectors",)),
    "word2vec header contradicts body": ("t.txt", b"5 3\nTP53 1 2 3\nBRCA1 1 2 3\n",
                                         ("its header says 5 vectors of 3 values, the body holds 2 of 3",)),
    "word2vec ragged lines": ("t.txt", b"TP53 1 2 3\nBRCA1 1 2\n", ("same number of values",)),
    "only non-finite rows": ("t.csv", b"symbol,a,b\nTP53,nan,1\nBRCA1,1,inf\n",
                             ("gave a vector for none of", "non_finite_vector 2")),
    "no known gene": ("t.csv", b"symbol,a,b\nNOT_A_GENE,1,2\n", ("gave a vector for none of", "not_in_table")),
    "a folder of nothing": ("t", lambda p: p.mkdir(), ("",)),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_hostile_table(case, cli, tmp_path):
    name, content, fragments = HOSTILE[case]
    path = tmp_path / name
    content(path) if callable(content) else path.write_bytes(content)
    out = tmp_path / "out.parquet"
    outcome = cli("encode", "--input", "precomputed", "--model", path, "--name", "lab/table", "--tasks", TASK,
                  "--out", out)
    fails(outcome, "encode", *fragments)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_an_object_npy_is_refused_without_unpickling(cli, tmp_path):
    np.save(tmp_path / "t.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "symbols.txt").write_text("TP53\n")
    outcome = cli("encode", "--input", "precomputed", "--model", tmp_path / "t.npy", "--index",
                  tmp_path / "symbols.txt", "--name", "lab/npy", "--tasks", TASK, "--out", tmp_path / "out.parquet")
    fails(outcome, "encode", "cannot be read as a table of vectors", "allow_pickle")
    assert not (tmp_path / "out.parquet").exists()


def test_npy_with_index_reads_and_a_binary_index_is_refused(cli, tmp_path):
    np.save(tmp_path / "t.npy", np.arange(6, dtype=np.float32).reshape(3, 2))
    (tmp_path / "symbols.txt").write_text("\n".join(GENES) + "\n")
    out = tmp_path / "out.parquet"
    ok = cli("encode", "--input", "precomputed", "--model", tmp_path / "t.npy", "--index", tmp_path / "symbols.txt",
             "--name", "lab/npy", "--tasks", TASK, "--out", out)
    assert ok.code == 0 and out.is_file(), ok.err[-500:]
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00\x01" * 8)
    bad = cli("encode", "--input", "precomputed", "--model", tmp_path / "t.npy", "--index", tmp_path / "binary.txt",
              "--name", "lab/npy", "--tasks", TASK, "--out", tmp_path / "other.parquet")
    fails(bad, "encode", "cannot be read as a table of vectors")
    assert not (tmp_path / "other.parquet").exists()


def test_symbol_column_option_and_non_finite_rows_reported_as_such(cli, tmp_path):
    (tmp_path / "t.csv").write_text("a,gene_name,b\n0,TP53,1\n1,BRCA1,nan\n2,MYC,2\n")
    out = tmp_path / "out.parquet"
    ok = cli("encode", "--input", "precomputed", "--model", tmp_path / "t.csv", "--symbol-column", "gene_name",
             "--name", "lab/t", "--tasks", TASK, "--out", out)
    assert ok.code == 0, ok.err[-500:]
    assert "non_finite_vector 1" in ok.out
    assert set(pq.read_table(out)["symbol"].to_pylist()) == {"TP53", "MYC"}


def test_identical_duplicate_rows_are_harmless(cli, tmp_path):
    (tmp_path / "t.csv").write_bytes(_csv([["TP53", 1.0, 2.0], ["TP53", 1.0, 2.0], ["MYC", 0.0, 1.0]]))
    out = tmp_path / "out.parquet"
    ok = cli("encode", "--input", "precomputed", "--model", tmp_path / "t.csv", "--name", "lab/t", "--tasks", TASK,
             "--out", out)
    assert ok.code == 0 and pq.read_table(out).num_rows == 2


def test_a_wide_table_is_read_in_seconds(tmp_path):
    """44 genes x 100,000 values (pandas alone took a minute)."""
    import time

    from model_adapters.precomputed import read_table

    rng = np.random.default_rng(0)
    values = rng.normal(size=(44, 100_000)).astype(np.float32)
    lines = ["symbol," + ",".join(f"d{i}" for i in range(values.shape[1]))]
    lines += [f"G{row}," + ",".join(map("{:.4f}".format, values[row])) for row in range(len(values))]
    (tmp_path / "wide.csv").write_text("\n".join(lines) + "\n")
    start = time.perf_counter()
    symbols, vectors, _ = read_table(tmp_path / "wide.csv")
    assert time.perf_counter() - start < 20
    assert vectors.shape == (44, 100_000) and symbols[:2] == ["G0", "G1"]
    np.testing.assert_allclose(vectors, values, atol=1e-4)
