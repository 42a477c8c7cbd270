"""Token input: Geneformer-style Ensembl vocabularies, symbol vocabularies, and symbol-string tokens."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from transformers import AutoModel, AutoTokenizer

from genebench.errors import SourceFormatError
from model_adapters.base import AdapterError
from model_adapters.token import TokenAdapter


def _rows(model_dir) -> np.ndarray:
    return AutoModel.from_pretrained(model_dir).get_input_embeddings().weight.detach().numpy()


def test_geneformer_vocabulary_gives_input_embedding_rows(geneformer_dir, hgnc):
    adapter = TokenAdapter(str(geneformer_dir), hgnc=hgnc)
    result = adapter.encode(["EGFR", "TP53", "HLA-A", "NOTAGENE"])
    rows = _rows(geneformer_dir)
    assert result.symbols.tolist() == ["EGFR", "TP53"]
    np.testing.assert_array_equal(result.vectors, rows[[3, 2]])
    assert result.missing == {"unknown_symbol": ["NOTAGENE"], "not_in_vocabulary": ["HLA-A"]}
    assert result.model.pooling == "input"
    assert result.model.settings["vocabulary"].startswith("token_dictionary_gc104M.pkl@")


def test_symbol_keyed_vocabulary_normalises_old_symbols(bert_dir, hgnc):
    adapter = TokenAdapter(str(bert_dir), hgnc=hgnc, vocabulary={"ERBB": 7, "TP53": 8})  # ERBB: EGFR's old symbol
    result = adapter.encode(["TP53", "EGFR", "HLA-A"])
    np.testing.assert_array_equal(result.vectors, _rows(bert_dir)[[8, 7]])
    assert result.missing == {"not_in_vocabulary": ["HLA-A"]}


def test_token_dictionary_pickle_with_code_is_refused(geneformer_dir, hgnc, tmp_path):
    evil = tmp_path / "token_dictionary.pkl"
    evil.write_bytes(pickle.dumps({"ENSG00000141510": os.getpid}))  # a global: would be called on load
    with pytest.raises(SourceFormatError, match="expected only builtin containers.*'posix.getpid'"):
        TokenAdapter(str(geneformer_dir), hgnc=hgnc, vocabulary=evil).encode(["TP53"])


def test_vocabulary_outside_the_embedding_matrix_is_an_error(geneformer_dir, hgnc):
    with pytest.raises(AdapterError, match="outside the model's 5 embeddings"):
        TokenAdapter(str(geneformer_dir), hgnc=hgnc, vocabulary={"TP53": 99}).encode(["TP53"])


def test_symbol_string_input_embeddings_are_averaged(bert_dir, hgnc):
    result = TokenAdapter(str(bert_dir), hgnc=hgnc, pooling="input").encode(["TP53", "HLA-A"])
    tokenizer = AutoTokenizer.from_pretrained(bert_dir)
    ids = tokenizer("TP53", add_special_tokens=False)["input_ids"]
    assert len(ids) == 4  # t ##p ##5 ##3
    np.testing.assert_allclose(result.vectors[0], _rows(bert_dir)[ids].mean(0), atol=1e-6)
    assert result.model.settings["vocabulary"] == "symbol-string"


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_symbol_string_contextual_pooling(bert_dir, hgnc, pooling):
    result = TokenAdapter(str(bert_dir), hgnc=hgnc, pooling=pooling).encode(["TP53", "EGFR"])
    assert result.vectors.shape == (2, 16) and np.isfinite(result.vectors).all()
    assert not np.allclose(result.vectors[0], result.vectors[1])
    assert result.model.pooling == pooling


def test_bad_pooling_lists_the_choices(bert_dir, hgnc):
    with pytest.raises(AdapterError, match=r"expected one of \['input', 'mean', 'cls'\]"):
        TokenAdapter(str(bert_dir), hgnc=hgnc, pooling="max")


def test_vocabulary_file_that_is_not_a_mapping(tmp_path, bert_dir, hgnc):
    path = tmp_path / "vocab.pkl"
    with open(path, "wb") as handle:
        pickle.dump(["TP53", "EGFR"], handle)
    with pytest.raises(SourceFormatError, match="expected a mapping gene -> token id"):
        TokenAdapter(str(bert_dir), hgnc=hgnc, vocabulary=path).encode(["TP53"])


def test_symbol_keyed_tokenizer_vocabulary_is_detected(tmp_path, hgnc):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *hgnc["symbol"][:20], "EGFR", "ERBB2"]
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tokens), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                         intermediate_size=8)).save_pretrained(tmp_path)
    BertTokenizer(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=False).save_pretrained(tmp_path)
    result = TokenAdapter(str(tmp_path), hgnc=hgnc).encode(["EGFR", "TP53"])
    np.testing.assert_array_equal(result.vectors, _rows(tmp_path)[[25]])
    assert result.missing == {"not_in_vocabulary": ["TP53"]}
    assert result.model.settings["vocabulary"] == "tokenizer vocabulary (symbol)"
