"""Protein and DNA inputs: sequences from the fake UniProt / Ensembl APIs through tiny ESM models."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adapters_fake_apis import CDS, GENOMIC, PROTEINS
from transformers import AutoModel, AutoTokenizer

from model_adapters.base import AdapterError
from model_adapters.clients import EnsemblClient, UniProtClient
from model_adapters.dna import DnaAdapter
from model_adapters.protein import ProteinAdapter


def _residue_mean(model_dir, sequence: str) -> np.ndarray:
    tokenizer, model = AutoTokenizer.from_pretrained(model_dir), AutoModel.from_pretrained(model_dir)
    inputs = tokenizer(sequence, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**inputs).last_hidden_state[0]
    return hidden[1:-1].mean(0).numpy()  # without <cls> and <eos>


def test_protein_vectors_are_residue_means_with_chunking(api, esm_protein_dir, hgnc, tmp_path):
    client = UniProtClient(api.url("uniprot"), cache_dir=tmp_path)
    adapter = ProteinAdapter(str(esm_protein_dir), hgnc=hgnc, client=client, dtype="float32")
    result = adapter.encode(["TP53", "EGFR", "HLA-A"])
    assert result.symbols.tolist() == ["TP53", "EGFR"]
    assert result.missing == {"no_sequence": ["HLA-A"]}  # P04439 is not served
    sequence = PROTEINS["P04637"]  # 393 residues, context 32 -> 30 residues per chunk
    starts = range(0, len(sequence), 30)
    expected = sum(_residue_mean(esm_protein_dir, sequence[i:i + 30]) * len(sequence[i:i + 30]) for i in starts)
    np.testing.assert_allclose(result.vectors[0], expected / len(sequence), atol=1e-4)
    n_chunks = len(starts) + len(range(0, len(PROTEINS["P00533"]), 30))
    assert result.model.notes["n_extra_chunks"] == n_chunks - 2
    assert result.model.source_version == f"uniprot:{api.url('uniprot')}"


@pytest.mark.parametrize("region", ["gene", "cds"])
def test_dna_kmer_model_encodes_ensembl_sequences(api, esm_dna_dir, hgnc, tmp_path, region):
    client = EnsemblClient(api.url("ensembl"), cache_dir=tmp_path)
    result = DnaAdapter(str(esm_dna_dir), hgnc=hgnc, region=region, client=client, dtype="float32").encode(
        ["EGFR", "HLA-A", "TP53"])
    assert result.symbols.tolist() == ["EGFR", "TP53"]
    assert result.missing == {"no_sequence": ["HLA-A"]}
    assert result.model.settings["region"] == region
    if region == "cds":  # 21 nt = 3 six-mers + 3 single nucleotides: fits the 16-token context
        np.testing.assert_allclose(result.vectors[0], _residue_mean(esm_dna_dir, CDS["ENST00000275493"]), atol=1e-5)
    else:  # TP53's 300 nt need several 16-token chunks
        assert len(GENOMIC["ENSG00000141510"]) == 300
        assert result.model.notes["n_extra_chunks"] >= 3


def test_dna_max_bases_truncates(api, esm_dna_dir, hgnc, tmp_path):
    client = EnsemblClient(api.url("ensembl"), cache_dir=tmp_path)
    result = DnaAdapter(str(esm_dna_dir), hgnc=hgnc, max_bases=12, client=client, dtype="float32").encode(["TP53"])
    np.testing.assert_allclose(result.vectors[0], _residue_mean(esm_dna_dir, "ACGTACGTTTGA"), atol=1e-5)


def test_dna_region_must_be_gene_or_cds(hgnc):
    with pytest.raises(AdapterError, match="expected 'gene' or 'cds'"):
        DnaAdapter("x", hgnc=hgnc, region="exon")
