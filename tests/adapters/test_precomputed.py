"""Precomputed tables in every supported format, with symbols normalised through HGNC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from genebench.embeddings import GeneEmbeddings
from genebench.errors import MissingSourceError, SourceFormatError
from genebench.hashing import file_sha256
from genebench.model_info import ModelInfo
from model_adapters.precomputed import PrecomputedAdapter

SYMBOLS = ["TP53", "ERBB", "p53", "NOTAGENE"]  # ERBB: EGFR's previous symbol; p53: TP53's alias
VECTORS = np.arange(12, dtype=np.float32).reshape(4, 3)


def _write(kind: str, folder) -> tuple[object, dict]:
    frame = pd.DataFrame(VECTORS, columns=["d0", "d1", "d2"]).assign(gene=SYMBOLS)[["gene", "d0", "d1", "d2"]]
    if kind == "csv":
        frame.to_csv(folder / "t.csv", index=False)
        return folder / "t.csv", {}
    if kind == "tsv.gz":
        frame.to_csv(folder / "t.tsv.gz", sep="\t", index=False)
        return folder / "t.tsv.gz", {}
    if kind == "parquet":
        frame.to_parquet(folder / "t.parquet")
        return folder / "t.parquet", {}
    if kind in ("parquet-index", "parquet-unnamed-index"):  # the most common save: symbols as the index, last
        indexed = frame.set_index("gene").rename_axis(None if kind == "parquet-unnamed-index" else "Gene_ID")
        indexed.to_parquet(folder / "t.parquet")
        return folder / "t.parquet", {}
    if kind == "genebench":
        GeneEmbeddings(SYMBOLS, VECTORS, model=ModelInfo(id="org/m", input="random")).save(folder / "cache.parquet")
        return folder / "cache.parquet", {}
    if kind == "npy":
        np.save(folder / "t.npy", VECTORS)
        (folder / "index.txt").write_text("\n".join(SYMBOLS) + "\n")
        return folder / "t.npy", {"index": folder / "index.txt"}
    if kind in ("w2v", "w2v-noheader"):
        lines = [" ".join([s, *map(str, v)]) for s, v in zip(SYMBOLS, VECTORS)]
        header = ["4 3"] if kind == "w2v" else []
        (folder / "gene2vec.txt").write_text("\n".join(header + lines) + "\n")
        return folder / "gene2vec.txt", {}
    if kind == "hf-dataset":
        import datasets

        datasets.Dataset.from_dict({"symbol": SYMBOLS, "embedding": VECTORS.tolist()}).save_to_disk(folder / "ds")
        return folder / "ds", {}
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["csv", "tsv.gz", "parquet", "parquet-index", "parquet-unnamed-index", "genebench",
                                  "npy", "w2v", "w2v-noheader", "hf-dataset"])
def test_every_format_gives_the_same_normalised_table(kind, hgnc, tmp_path):
    path, options = _write(kind, tmp_path)
    result = PrecomputedAdapter(path, hgnc=hgnc, **options).encode(["EGFR", "TP53", "HLA-A", "XYZ1"])
    assert result.symbols.tolist() == ["EGFR", "TP53"]
    np.testing.assert_array_equal(result.vectors, VECTORS[[1, 0]])  # TP53's own row wins over its alias p53
    assert result.missing == {"unknown_symbol": ["XYZ1"], "not_in_table": ["HLA-A"]}
    settings = result.model.notes
    assert (settings["n_renamed"], settings["n_unknown"], settings["n_duplicate"]) == (2, 1, 1)
    assert result.model.input == "precomputed" and result.model.dim == 3


@pytest.mark.parametrize("kind", ["csv", "npy"])
def test_a_table_is_recorded_by_name_size_and_sha256_never_its_path(kind, hgnc, tmp_path):
    path, options = _write(kind, tmp_path)
    model = PrecomputedAdapter(path, hgnc=hgnc, **options).encode(["TP53"]).model
    sha256 = file_sha256(path)
    assert model.settings["table"] == {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256}
    assert model.revision == sha256[:12] and model.id == path.name
    assert ("index" in model.settings) == (kind == "npy")
    assert str(tmp_path) not in model.model_dump_json()


def test_a_table_without_a_symbol_column_says_which_column_it_took(hgnc, tmp_path, caplog):
    path = tmp_path / "t.csv"
    pd.DataFrame(VECTORS, columns=["d0", "d1", "d2"]).assign(ids=SYMBOLS)[["ids", "d0", "d1", "d2"]].to_csv(
        path, index=False)
    assert PrecomputedAdapter(path, hgnc=hgnc).encode(["TP53"]).symbols.tolist() == ["TP53"]
    assert "took the first column, 'ids', as the gene symbols (pass --symbol-column to choose)" in caplog.text


def test_non_finite_rows_are_dropped_not_served(hgnc, tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("symbol,a,b\nTP53,1,\nEGFR,2,3\n")
    result = PrecomputedAdapter(path, hgnc=hgnc).encode(["TP53", "EGFR"])
    assert result.symbols.tolist() == ["EGFR"]
    assert result.missing == {"non_finite_vector": ["TP53"]} and result.model.notes["n_non_finite"] == 1


def test_bad_tables_are_reported(hgnc, tmp_path):
    np.save(tmp_path / "t.npy", VECTORS)
    with pytest.raises(SourceFormatError, match="needs an index of symbols; pass --index"):
        PrecomputedAdapter(tmp_path / "t.npy", hgnc=hgnc).encode(["TP53"])
    (tmp_path / "short.txt").write_text("TP53\n")
    with pytest.raises(SourceFormatError, match=r"expected shape \(1, d\)"):
        PrecomputedAdapter(tmp_path / "t.npy", hgnc=hgnc, index=tmp_path / "short.txt").encode(["TP53"])
    (tmp_path / "text.csv").write_text("symbol,a\nTP53,high\n")
    with pytest.raises(SourceFormatError, match="numeric vector columns"):
        PrecomputedAdapter(tmp_path / "text.csv", hgnc=hgnc).encode(["TP53"])
    with pytest.raises(MissingSourceError, match="file not found"):
        PrecomputedAdapter(tmp_path / "absent.csv", hgnc=hgnc).encode(["TP53"])


def test_a_csv_table_is_read_value_for_value_as_python_floats_rounded_to_float32(tmp_path):
    from model_adapters.precomputed import read_table

    rng = np.random.default_rng(3)
    values = rng.standard_normal((300, 5)) * 10.0 ** rng.integers(-8, 8, size=(300, 5))
    text = [["symbol", "a", "b", "c", "d", "e"]] + [[f"G{i}", *map(repr, row.tolist())] for i, row in enumerate(values)]
    text[7][3] = ""  # empty: NaN
    (tmp_path / "t.csv").write_text("\n".join(",".join(row) for row in text) + "\n")
    symbols, vectors, _ = read_table(tmp_path / "t.csv")
    expected = np.array([[np.float32(float(v)) if v else np.nan for v in row[1:]] for row in text[1:]], np.float32)
    assert symbols == [f"G{i}" for i in range(300)] and vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(vectors, expected)
    (tmp_path / "na.csv").write_text("symbol,a\nG1,NA\n")  # never read as missing: not a numeric table
    with pytest.raises(SourceFormatError, match="na.csv"):
        read_table(tmp_path / "na.csv")
