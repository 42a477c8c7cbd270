"""The embedding cache: free second runs, resumable interrupted runs, corrupt files rebuilt, shareable files."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from model_adapters.baselines import RandomAdapter
from model_adapters.cache import CachedEncoder, cache_path
from model_adapters.precomputed import PrecomputedAdapter


class CountingRandom(RandomAdapter):
    """The random baseline, recording which genes it was asked to encode and failing on request."""

    def __init__(self, *args, fail_on_call: int | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[list[str]] = []
        self.fail_on_call = fail_on_call

    def encode(self, symbols):
        self.calls.append(list(symbols))
        if len(self.calls) == self.fail_on_call:
            raise KeyboardInterrupt
        return super().encode(symbols)


def test_second_encode_costs_nothing(hgnc, tmp_path):
    inner = CountingRandom(hgnc=hgnc, dim=4)
    cached = CachedEncoder(inner, cache_dir=tmp_path)
    first = cached.encode(["TP53", "EGFR", "NOTAGENE"])
    second = cached.encode(["EGFR", "TP53", "NOTAGENE"])
    assert inner.calls == [["TP53", "EGFR", "NOTAGENE"]]
    assert second.symbols.tolist() == ["EGFR", "TP53"]
    np.testing.assert_array_equal(second.vectors, first.vectors[[1, 0]])
    assert second.missing == {"unknown_symbol": ["NOTAGENE"]}  # known-missing genes are not retried
    assert second.model == first.model == inner.meta.keyed().model_copy(update={"dim": 4})
    cached.encode(["TP53", "HLA-A"])
    assert inner.calls[-1] == ["HLA-A"]


def test_interrupted_encoding_resumes_from_the_cached_chunks(hgnc, tmp_path):
    genes = ["TP53", "EGFR", "HLA-A", "A4GALT", "AAAS"]
    failing = CountingRandom(hgnc=hgnc, dim=4, fail_on_call=2)
    with pytest.raises(KeyboardInterrupt):
        CachedEncoder(failing, cache_dir=tmp_path, chunk_size=2).encode(genes)
    beats = [t for t in threading.enumerate() if t.name.startswith("progress: encoding")]
    for beat in beats:
        beat.join(timeout=5)
    assert beats and not any(beat.is_alive() for beat in beats)  # stopped with the encoding (it logged on forever)
    resumed = CountingRandom(hgnc=hgnc, dim=4)
    result = CachedEncoder(resumed, cache_dir=tmp_path, chunk_size=2).encode(genes)
    assert resumed.calls == [["HLA-A", "A4GALT"], ["AAAS"]]  # the first chunk came from the cache
    np.testing.assert_array_equal(result.vectors, RandomAdapter(hgnc=hgnc, dim=4).encode(genes).vectors)


def test_corrupt_cache_file_warns_and_is_rebuilt(hgnc, tmp_path):
    inner = CountingRandom(hgnc=hgnc, dim=4)
    cached = CachedEncoder(inner, cache_dir=tmp_path)
    cached.encode(["TP53"])
    cached.path.write_bytes(b"PAR1 this is not parquet")
    with pytest.warns(UserWarning, match="is corrupt.*re-encoded"):
        result = cached.encode(["TP53"])
    assert inner.calls == [["TP53"], ["TP53"]] and result.symbols.tolist() == ["TP53"]
    assert len(CachedEncoder(inner, cache_dir=tmp_path).load().symbols) == 1  # rewritten, readable


@pytest.mark.parametrize("in_the_way", ["root", "model folder", "file"])
def test_a_file_or_folder_in_the_cache_path_is_one_line_before_anything_is_encoded(hgnc, tmp_path, monkeypatch,
                                                                                   capsys, in_the_way):
    from genebench.cli import main

    root = tmp_path / "cache"
    path = cache_path(CountingRandom(hgnc=hgnc).meta, root)
    blocking = {"root": root, "model folder": path.parent, "file": path}[in_the_way]
    blocking.parent.mkdir(parents=True, exist_ok=True)
    blocking.mkdir() if in_the_way == "file" else blocking.write_text("not a folder")
    monkeypatch.setenv("GENEBENCH_CACHE", str(root))
    assert main(["run", "--input", "random", "--tasks", "TF vs non-TF", "--out", str(tmp_path / "out")]) == 2
    if in_the_way == "file":
        expected = (f"embedding cache '{path}' is a folder, expected the cache's parquet file; move or remove that "
                    "folder, then rerun.")
    else:
        expected = (f"embedding cache '{path}': '{blocking}' is a file, expected a folder; move that file, or set "
                    "GENEBENCH_CACHE to a folder (the cache's root; default ~/.cache/genebench).")
    assert capsys.readouterr().err.strip().splitlines() == [f"genebench run: error: {expected}"]
    inner = CountingRandom(hgnc=hgnc)
    with pytest.raises(IsADirectoryError if in_the_way == "file" else NotADirectoryError, match="^embedding cache"):
        CachedEncoder(inner, cache_dir=root).encode(["TP53"])
    assert inner.calls == []  # nothing encoded that could not be kept


def test_cache_key_separates_settings_and_file_loads_as_precomputed(hgnc, tmp_path):
    seed0, seed1 = RandomAdapter(hgnc=hgnc, dim=4, seed=0), RandomAdapter(hgnc=hgnc, dim=4, seed=1)
    assert cache_path(seed0.meta, tmp_path) != cache_path(seed1.meta, tmp_path)
    cached = CachedEncoder(seed0, cache_dir=tmp_path)
    encoded = cached.encode(["TP53", "EGFR"])
    assert cached.path.parent == tmp_path / "embeddings" / "random"
    shared = PrecomputedAdapter(cached.path, hgnc=hgnc).encode(["EGFR", "TP53"])
    np.testing.assert_array_equal(shared.vectors, encoded.vectors[[1, 0]])


def test_cached_protein_encoding_in_chunks_adds_up_counts(api, esm_protein_dir, hgnc, tmp_path):
    from model_adapters.clients import UniProtClient
    from model_adapters.protein import ProteinAdapter

    client = UniProtClient(api.url("uniprot"), cache_dir=tmp_path / "http")
    adapter = ProteinAdapter(str(esm_protein_dir), hgnc=hgnc, client=client)
    whole = adapter.encode(["TP53", "EGFR"])
    cached = CachedEncoder(ProteinAdapter(str(esm_protein_dir), hgnc=hgnc, client=client), cache_dir=tmp_path,
                           chunk_size=1).encode(["TP53", "EGFR", "HLA-A"])
    np.testing.assert_allclose(cached.vectors, whole.vectors, atol=1e-5)
    assert cached.model.notes["n_extra_chunks"] == whole.model.notes["n_extra_chunks"]
    assert cached.missing == {"no_sequence": ["HLA-A"]}


def test_descriptions_are_encoded_longest_first_so_chunks_batch_similar_lengths(bert_dir, hgnc, tmp_path):
    from model_adapters.description import DescriptionAdapter

    adapter = DescriptionAdapter(str(bert_dir), hgnc=hgnc, source="hgnc", dtype="float32")
    genes = ["TP53", "EGFR", "HLA-A", "A4GALT"]
    names = dict(zip(hgnc["symbol"], hgnc["name"]))
    longest_first = sorted(genes, key=lambda g: -len(names[g]))
    assert adapter.encoding_order(genes) == longest_first != genes
    chunks: list[list[str]] = []

    class Recorded:  # the real adapter, recording the chunks it is asked to encode
        meta = adapter.meta
        encoding_order = adapter.encoding_order

        def encode(self, symbols):
            chunks.append(list(symbols))
            return adapter.encode(symbols)

    cached = CachedEncoder(Recorded(), cache_dir=tmp_path, chunk_size=2)
    result = cached.encode(genes)
    assert chunks == [longest_first[:2], longest_first[2:]]
    assert cached.load().symbols.tolist() == sorted(genes)  # the file is keyed and sorted by gene
    assert result.symbols.tolist() == genes  # returned in the order asked for
    np.testing.assert_allclose(result.vectors, adapter.encode(genes).vectors, atol=1e-5)
