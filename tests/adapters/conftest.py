"""Tiny, randomly initialised models saved with `save_pretrained`, and a fake NCBI/Ensembl/UniProt server.

Every model here loads through the same `from_pretrained` path as a Hub model. The HTTP server listens on
127.0.0.1 only and answers in each API's true format (see `adapters_fake_apis.py`).
"""

from __future__ import annotations

import itertools
import pickle
from pathlib import Path

import pandas as pd
import pytest
from adapters_fake_apis import FakeApis
from tiny_models import save_tiny_bert, tiny_bert_config

from genebench.symbols import read_hgnc

GENES = ["TP53", "EGFR", "HLA-A"]


@pytest.fixture(scope="session")
def hgnc(hgnc_file) -> pd.DataFrame:
    """The real HGNC excerpt (352 genes) as `read_hgnc` returns it."""
    return read_hgnc(hgnc_file)


@pytest.fixture(scope="session")
def bert_dir(tmp_path_factory) -> Path:
    """A 2-layer BERT with a character-level WordPiece vocabulary (covers every gene symbol)."""
    return save_tiny_bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="session")
def esm_protein_dir(tmp_path_factory) -> Path:
    """A 2-layer ESM-2-style model with the ESM amino-acid vocabulary and a 32-token context."""
    import torch
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer

    tokens = ["<cls>", "<pad>", "<eos>", "<unk>", *"LAGVSERTIDPKQNFYMHWCXBUZO", ".", "-", "<null_1>", "<mask>"]
    path = tmp_path_factory.mktemp("esm-protein")
    (path / "vocab.txt").write_text("\n".join(tokens))
    config = EsmConfig(vocab_size=len(tokens), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=1026, position_embedding_type="rotary",
                       pad_token_id=1, mask_token_id=len(tokens) - 1, token_dropout=False)
    torch.manual_seed(0)
    EsmForMaskedLM(config).save_pretrained(path)
    EsmTokenizer(str(path / "vocab.txt"), model_max_length=32).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def esm_dna_dir(tmp_path_factory) -> Path:
    """A Nucleotide-Transformer-style ESM: 6-mer vocabulary plus single nucleotides, 16-token context."""
    import torch
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer

    kmers = ["".join(k) for k in itertools.product("ACGT", repeat=6)]
    tokens = ["<unk>", "<pad>", "<mask>", "<cls>", "<eos>", *kmers, "A", "T", "C", "G", "N"]
    path = tmp_path_factory.mktemp("esm-dna")
    (path / "vocab.txt").write_text("\n".join(tokens))
    config = EsmConfig(vocab_size=len(tokens), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=1026, position_embedding_type="rotary",
                       pad_token_id=1, mask_token_id=2, token_dropout=False)
    torch.manual_seed(0)
    EsmForMaskedLM(config).save_pretrained(path)
    EsmTokenizer(str(path / "vocab.txt"), model_max_length=16, cls_token="<cls>", eos_token="<eos>",
                 pad_token="<pad>", unk_token="<unk>", mask_token="<mask>").save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def geneformer_dir(tmp_path_factory, hgnc) -> Path:
    """A Geneformer-like BertForMaskedLM whose tokens are Ensembl ids, with its token dictionary pickle.

    Like the Hub's Geneformer it has no tokenizer files; the dictionary covers TP53 and EGFR but not HLA-A.
    """
    import torch
    from transformers import BertForMaskedLM

    ensembl = dict(zip(hgnc["symbol"], hgnc["ensembl_gene_id"]))
    dictionary = {"<pad>": 0, "<mask>": 1, ensembl["TP53"]: 2, ensembl["EGFR"]: 3, "ENSG00000000000": 4}
    path = tmp_path_factory.mktemp("geneformer")
    torch.manual_seed(0)
    BertForMaskedLM(tiny_bert_config(len(dictionary), pad_token_id=0)).save_pretrained(path)
    with open(path / "token_dictionary_gc104M.pkl", "wb") as handle:
        pickle.dump(dictionary, handle)
    return path


@pytest.fixture(scope="session")
def apis():
    """The fake NCBI / Ensembl / UniProt server, running for the whole session."""
    server = FakeApis()
    yield server
    server.close()


@pytest.fixture()
def api(apis):
    """The fake server with its request log and failure plans cleared."""
    apis.reset()
    return apis
