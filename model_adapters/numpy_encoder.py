"""A BERT sentence-transformers model, such as all-MiniLM-L6-v2, run in NumPy: the description input without torch.

It runs what all-MiniLM-L6-v2 is made of: a BERT encoder (absolute positions, exact GELU), mean pooling and an
optional Normalize module, with the model's `tokenizer.json` through `tokenizers`. In float32 its vectors agree
with sentence-transformers on torch to about 1e-7. Texts are batched by token count (`plan_batches`), and the
batches run on every core at once, each with a single-threaded BLAS, so the element-wise work (softmax, GELU
through NumPy's SIMD `exp`) is parallel too. GELU runs in blocks within a core's L2 cache, on preallocated
scratch arrays, biases and residuals are added to blocks of rows while they are in cache, layer norm sums with a
product and an einsum, and softmax skips its max shift unless a row sum shows it was needed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from genebench.parallel import core_threads
from genebench.progress import work_bar
from model_adapters.base import AdapterError, note_truncated, plan_batches
from model_adapters.hub import local_folder, read_json, resolve_model

SUPPORTED = "BERT sentence-transformers models with mean pooling, such as all-MiniLM-L6-v2"
_FILES = ["*.json", "model.safetensors"]  # what the runtime reads from a Hub repo
_ROWS = 2048  # tokens per block of the feed-forward's products: a whole batch of the default plan (fastest of 256 to
# 2,048 on 2 Intel AVX-512 cores: 6% faster encoding than 256, which had been chosen on an AMD EPYC)
_GELU_ROWS = 32  # tokens per GELU block, its three scratch arrays within L2 (32 and 64 tie on Intel, 16 is slower)
_NORM_ROWS = 256  # tokens per block of a residual's bias, sum and layer norm (~400 KB: they stay in L2)
_BLOCK = 1 << 17  # attention scores per block of texts
_TINY, _HUGE = np.float32(1e-20), np.float32(1e35)  # safe row sums of unshifted softmax terms (see _softmax_terms)


def _pooling_modes(config: dict[str, Any]) -> list[str]:
    """The pooling modes of a Pooling module's config, in either sentence-transformers format ("mean", "cls", ...)."""
    if "pooling_mode" in config:  # sentence-transformers 6
        mode = config["pooling_mode"]
        return [mode] if isinstance(mode, str) else list(mode)
    return sorted(re.sub(r"_tokens?$", "", key.removeprefix("pooling_mode_"))
                  for key, on in config.items() if key.startswith("pooling_mode_") and on)


def _read(folder: Path, name: str) -> Any:
    """A JSON file of the model folder, or None when it has no such file."""
    return read_json(str(folder), name, "local")


def unsupported_reason(folder: Path) -> str | None:
    """Why the numpy runtime cannot run the model in `folder`, or None when it can."""
    modules = _read(folder, "modules.json")
    if modules is None:
        return "is not a sentence-transformers model (no modules.json)"
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return f"is made of the modules {kinds}"
    if (modes := _pooling_modes(_read(folder, f"{modules[1]['path']}/config.json") or {})) != ["mean"]:
        return f"pools by {modes or 'nothing'}"
    if (_read(folder, "config_sentence_transformers.json") or {}).get("default_prompt_name"):
        return "prepends a default prompt"
    config = _read(folder, "config.json") or {}
    if config.get("model_type") != "bert":
        return f"is a '{config.get('model_type')}' model"
    if config.get("auto_map"):
        return "ships its own model code (auto_map in config.json)"
    if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        return f"uses {config.get('hidden_act')} and {config.get('position_embedding_type')} positions"
    missing = [name for name in ("tokenizer.json", "model.safetensors") if not (folder / name).is_file()]
    return f"has no {' or '.join(missing)}" if missing else None


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: np.float32) -> np.ndarray:
    """Layer norm over the last axis, in place; shape (tokens, hidden). The sums are a product and an einsum: one
    pass each, no temporary."""
    scale = np.float32(1 / x.shape[-1])
    mean = x @ np.full(x.shape[-1], scale, dtype=np.float32)
    x -= mean[:, None]
    variance = np.einsum("ij,ij->i", x, x)
    variance *= scale
    variance += eps
    np.sqrt(variance, out=variance)
    np.reciprocal(variance, out=variance)
    x *= variance[:, None]
    x *= weight
    x += bias
    return x


def _add_norm(x: np.ndarray, bias: np.ndarray, residual: np.ndarray, norm: tuple[np.ndarray, np.ndarray],
              eps: np.float32) -> np.ndarray:
    """Layer norm of x + bias + residual, in place, in row blocks that stay in cache; shape (tokens, hidden)."""
    for i in range(0, len(x), _NORM_ROWS):
        block = x[i:i + _NORM_ROWS]
        block += bias
        block += residual[i:i + _NORM_ROWS]
        _layer_norm(block, *norm, eps)
    return x


# Abramowitz and Stegun 7.1.26: erfc(z) ~ t * P(t) * exp(-z^2), t = 1 / (1 + p z), |error in erf| < 1.5e-7. For
# z = |x| / sqrt(2), t = u / P with u = 1 / (1 / P + |x|) and P = p / sqrt(2): the polynomial is taken in u, its
# coefficients a_k / P^k halved, so that it gives erfc(|x| / sqrt(2)) / 2 = Phi(-|x|) without scaling |x| or halving.
_P = 0.3275911 * np.sqrt(0.5)
_INVERSE_P = np.float32(1 / _P)
_C = [np.float32(a / (2 * _P ** k)) for k, a in
      ((5, 1.061405429), (4, -1.453152027), (3, 1.421413741), (2, -0.284496736), (1, 0.254829592))]


def gelu(x: np.ndarray, work: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Exact (erf) GELU, x * Phi(x), in place, through NumPy's SIMD exp: max(x, 0) - |x| Phi(-|x|).

    `work` is three scratch arrays of x's shape (allocated when None). Within 2e-7 * max(1, |x|) of the float64
    erf GELU over [-12, 12] (scipy's float32 erf: 1.1e-7).
    """
    size, u, tail = work or (np.empty_like(x), np.empty_like(x), np.empty_like(x))
    np.abs(x, out=size)
    np.add(size, _INVERSE_P, out=u)
    np.reciprocal(u, out=u)
    np.multiply(u, _C[0], out=tail)
    for c in _C[1:]:
        tail += c
        tail *= u
    np.square(x, out=u)
    u *= np.float32(-0.5)
    np.exp(u, out=u)
    tail *= u  # Phi(-|x|)
    tail *= size
    np.maximum(x, 0, out=x)
    x -= tail
    return x


def _softmax_terms(q: np.ndarray, k: np.ndarray, keys: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Attention's unnormalised softmax terms, shape (texts, heads, length, length), and their row sums, for queries
    and keys of shape (texts, heads, length, head size) and a key mask of -inf (or None).

    The terms are exp(scores), without the usual shift by each row's max (two passes fewer over the scores); where a
    row sum leaves (1e-20, 1e30), so that exp could have overflowed or lost precision, the scores are recomputed
    and shifted. Softmax does not change under the shift.
    """
    for shift in (False, True):
        scores = q @ k.transpose(0, 1, 3, 2)  # all heads at once
        if keys is not None:
            scores += keys
        if shift:
            scores -= scores.max(-1, keepdims=True)
        with np.errstate(over="ignore"):  # an overflow is caught below, by the row sums
            np.exp(scores, out=scores)
        total = scores.sum(-1, keepdims=True)
        if shift or (total.min() > _TINY and total.max() < _HUGE):
            break
    return scores, total


@dataclass
class _Layer:
    qkv: np.ndarray  # (hidden, 3 * hidden), the query part scaled by 1 / sqrt(head size)
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


@dataclass
class _Bert:
    """BERT's weights, transposed for `x @ w`, and its forward pass."""

    weights: dict[str, np.ndarray]
    heads: int
    eps: np.float32
    layers: list[_Layer] = field(default_factory=list)

    @classmethod
    def load(cls, folder: Path, config: dict[str, Any]) -> _Bert:
        from safetensors.numpy import load_file

        raw = load_file(folder / "model.safetensors")
        weights = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items() if v.dtype.kind == "f"}
        bert = cls(weights, int(config["num_attention_heads"]), np.float32(config.get("layer_norm_eps", 1e-12)))
        scale = np.float32(1 / np.sqrt(int(config["hidden_size"]) // bert.heads))
        for i in range(int(config["num_hidden_layers"])):
            def w(name: str, i: int = i) -> np.ndarray:
                return weights[f"encoder.layer.{i}.{name}"]

            attention = [w(f"attention.self.{part}.weight") for part in ("query", "key", "value")]
            biases = [w(f"attention.self.{part}.bias") for part in ("query", "key", "value")]
            bert.layers.append(_Layer(
                qkv=np.ascontiguousarray(np.concatenate([attention[0] * scale, *attention[1:]]).T),
                qkv_bias=np.concatenate([biases[0] * scale, *biases[1:]]),
                out=np.ascontiguousarray(w("attention.output.dense.weight").T),
                out_bias=w("attention.output.dense.bias"),
                norm1=(w("attention.output.LayerNorm.weight"), w("attention.output.LayerNorm.bias")),
                up=np.ascontiguousarray(w("intermediate.dense.weight").T), up_bias=w("intermediate.dense.bias"),
                down=np.ascontiguousarray(w("output.dense.weight").T), down_bias=w("output.dense.bias"),
                norm2=(w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
            ))
        return bert

    @property
    def n_parameters(self) -> int:
        return sum(v.size for v in self.weights.values())

    def __call__(self, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Last hidden state, shape (batch, length, hidden), for token ids padded to one length (the longest row
        first) and each row's token count."""
        w, (n, length) = self.weights, ids.shape
        h = w["embeddings.word_embeddings.weight"][ids.ravel()]
        h.reshape(n, length, -1)[:] += w["embeddings.position_embeddings.weight"][:length]
        h += w["embeddings.token_type_embeddings.weight"][0]
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        keys = np.where(np.arange(length) < lengths[:, None], 0, -np.inf).astype(np.float32)[:, None, None]
        group = max(1, _BLOCK // (self.heads * length * length))  # texts whose attention scores fit in cache
        width = self.layers[0].up.shape[1]
        work = tuple(np.empty((_GELU_ROWS, width), np.float32) for _ in range(3))
        for layer in self.layers:
            qkv = (h @ layer.qkv).reshape(n, length, -1)
            q, k, v = qkv.reshape(n, length, 3, self.heads, -1).transpose(2, 0, 3, 1, 4)
            context = np.empty((n, length, self.heads, q.shape[-1]), dtype=np.float32)
            for i in range(0, n, group):
                rows = slice(i, i + group)
                qkv[rows] += layer.qkv_bias  # a group at a time: its rows stay in cache for the products below
                padded = lengths[min(i + group, n) - 1] < length  # the group's shortest text has padding to leave out
                scores, total = _softmax_terms(q[rows], k[rows], keys[rows] if padded else None)
                # normalised after the product: length x head size values, not length x length
                np.matmul(scores, v[rows], out=context[rows].transpose(0, 2, 1, 3))
                context[rows] /= total.transpose(0, 2, 1, 3)
            h = _add_norm(context.reshape(n * length, -1) @ layer.out, layer.out_bias, h, layer.norm1, self.eps)
            out = np.empty_like(h)
            for i in range(0, len(h), _ROWS):
                up = h[i:i + _ROWS] @ layer.up
                for j in range(0, len(up), _GELU_ROWS):  # the bias with GELU, while the block is in cache
                    block = up[j:j + _GELU_ROWS]
                    block += layer.up_bias
                    gelu(block, tuple(w[:len(block)] for w in work))
                np.matmul(up, layer.down, out=out[i:i + _ROWS])
            h = _add_norm(out, layer.down_bias, h, layer.norm2, self.eps)
        return h.reshape(n, length, -1)


@dataclass
class NumpySentenceEncoder:
    """A BERT sentence-transformers model run in NumPy float32 on the CPU; same interface as
    `model_adapters.hf.SentenceEncoder` (truncation at the model's `max_seq_length`, longest texts first).

    Raises (on first use):
        AdapterError: the model is not one of `SUPPORTED`, or a setting asks for a GPU or another precision.
    """

    model_id: str
    revision: str | None = None
    device: str | None = None
    dtype: str = "auto"
    batch_size: int = 128  # at most this many texts per batch
    max_tokens: int = 2048  # tokens per batch (padding included), one batch per core
    notes: dict[str, Any] = field(default_factory=dict)
    precision = "float32"

    def __post_init__(self) -> None:
        if self.device not in (None, "cpu") or self.dtype not in ("auto", "float32"):
            asked = f"--device {self.device}" if self.device not in (None, "cpu") else f"--dtype {self.dtype}"
            raise AdapterError(f"{asked}: the numpy runtime computes in float32 on the CPU; pass --runtime torch "
                               "for a GPU or a lower precision.")

    @cached_property
    def location(self) -> tuple[str, str]:
        """(local folder or hub id, revision to record)."""
        return resolve_model(self.model_id, self.revision)

    @cached_property
    def folder(self) -> Path:
        """The model's local folder (a Hub model's files are downloaded once, into the Hub cache)."""
        folder = local_folder(*self.location, _FILES)
        if reason := unsupported_reason(folder):
            raise AdapterError(f"model '{self.model_id}' {reason}: the numpy runtime runs only {SUPPORTED}; pass "
                               "--runtime torch.")
        return folder

    @cached_property
    def _settings(self) -> dict[str, Any]:
        settings, config = (_read(self.folder, name) or {} for name in ("sentence_bert_config.json", "config.json"))
        limits = [(_read(self.folder, "tokenizer_config.json") or {}).get("model_max_length"),
                  config.get("max_position_embeddings")]
        max_length = settings.get("max_seq_length") or min((int(n) for n in limits if n and n < 100_000), default=512)
        return {"config": config, "normalize": len(_read(self.folder, "modules.json")) == 3,
                "max_length": int(max_length), "lower": bool(settings.get("do_lower_case"))}

    @cached_property
    def model(self) -> _Bert:
        """The weights, loaded on first use."""
        return _Bert.load(self.folder, self._settings["config"])

    @cached_property
    def tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self._settings["max_length"])
        return tokenizer

    @property
    def n_parameters(self) -> int:
        """How many parameters the model has."""
        return self.model.n_parameters

    def _embed(self, encodings: list[Any]) -> np.ndarray:
        """Pooled vectors of one batch, shape (batch, hidden)."""
        lengths = np.array([len(e.ids) for e in encodings])
        ids = np.zeros((len(encodings), lengths[0]), dtype=np.int64)  # the plan puts the longest first
        for row, encoding in enumerate(encodings):
            ids[row, :lengths[row]] = encoding.ids
        mask = (np.arange(lengths[0]) < lengths[:, None]).astype(np.float32)
        vectors = (mask[:, None, :] @ self.model(ids, lengths))[:, 0] / lengths[:, None].astype(np.float32)
        if self._settings["normalize"]:
            vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts, longest first, one batch per core. Returns shape (n_texts, n_dims), float32."""
        if not texts:
            self.notes["n_truncated"] = 0
            return np.zeros((0, 0), dtype=np.float32)
        model, limit = self.model, self._settings["max_length"]
        encodings = self.tokenizer.encode_batch([t.lower() for t in texts] if self._settings["lower"] else list(texts))
        lengths = [len(e.ids) for e in encodings]
        plan = plan_batches(lengths, self.batch_size, self.max_tokens)
        out = np.zeros((len(texts), model.weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        with core_threads() as pool, work_bar(sum(lengths), self.model_id, "token") as bar:
            for batch, vectors in zip(plan.batches, pool.map(lambda b: self._embed([encodings[i] for i in b]),
                                                             plan.batches)):
                out[batch] = vectors
                bar.update(sum(lengths[i] for i in batch))
        plan.note(self.notes)
        note_truncated(self.notes, self.model_id, sum(n >= limit for n in lengths), limit)
        return out
