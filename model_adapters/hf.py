"""Shared Hugging Face loading and encoding: one place for devices, dtypes, batching, pooling and chunking.

- The device is chosen automatically (cuda, mps, cpu), and so is the precision (`dtype="auto"`): bf16 on a GPU
  (fp16 where bf16 is unsupported) and on a CPU with native bf16 instructions (AVX512-BF16 or AMX), float32 on
  other CPUs. On the CPU the weights stay float32 and matrix products run in bf16 under autocast, so layer
  norms and softmax keep float32. The precision used is recorded with the vectors. Every forward pass runs
  under `torch.inference_mode`.
- Inputs are sorted by token count and batched, so little compute goes to padding.
- An input longer than the model's context is cut into context-sized chunks; the gene's vector is the
  token-count-weighted mean of its chunks' vectors.
- Models are resolved, and code shipped with them refused unless trusted, by `model_adapters.hub`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from genebench.constants import DTYPES
from genebench.optional import TORCH, import_optional
from genebench.parallel import n_cores
from genebench.progress import work_bar
from model_adapters.base import AdapterError, Pooling, note_truncated, plan_batches
from model_adapters.hub import check_remote_code, resolve_model

torch = import_optional("torch", needed_for="a model input", install=TORCH)
transformers = import_optional("transformers", needed_for="a model input", install=TORCH)

logger = logging.getLogger(__name__)

_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "esm"}  # position ids start after the pad index


def select_device(device: str | None = None) -> torch.device:
    """`device` if given, else cuda, then mps, then cpu."""
    if device:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AVX512-BF16 or AMX), so bf16 is faster than float32."""
    capabilities = torch.cpu.get_capabilities() if hasattr(torch.cpu, "get_capabilities") else {}
    return bool(capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"))


def dtype_name(dtype: torch.dtype) -> str:
    """A torch dtype as recorded with the vectors: "float32", "bfloat16" or "float16"."""
    return str(dtype).removeprefix("torch.")


def select_dtype(device: torch.device, dtype: str = "auto") -> torch.dtype:
    """The precision to compute in: `dtype`, or for "auto" the fastest one that keeps vectors faithful.

    "auto" gives bf16 on a GPU that supports it, else fp16 on a GPU or mps; on the CPU, bf16 where the
    CPU has native bf16 instructions, else float32.

    Raises:
        AdapterError: `dtype` is not one of `DTYPES`.
    """
    if dtype not in DTYPES:
        raise AdapterError(f"dtype '{dtype}': expected one of {list(DTYPES)}; pass --dtype float32 for full "
                           "precision.")
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "mps":
        return torch.float16
    return torch.bfloat16 if cpu_has_native_bf16() else torch.float32


@contextlib.contextmanager
def loading_quietly() -> Iterator[None]:
    """Load a model without transformers' per-weight progress bar or sentence-transformers' info lines:
    genebench says what it loads, and its own bar shows the encoding."""
    hf_logging = transformers.utils.logging
    bar_was_on, library = hf_logging.is_progress_bar_enabled(), logging.getLogger("sentence_transformers")
    level = library.level
    hf_logging.disable_progress_bar()
    library.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()
        library.setLevel(level)


def context_length(tokenizer: Any, config: Any, max_length: int | None = None) -> int:
    """Tokens per forward pass: `max_length`, else the tokenizer's limit, else the config's positions."""
    if max_length:
        return int(max_length)
    if tokenizer.model_max_length and tokenizer.model_max_length < 100_000:
        return int(tokenizer.model_max_length)
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if positions:
        return int(positions) - (2 if getattr(config, "model_type", "") in _OFFSET_POSITIONS else 0)
    return 512


@dataclass
class _Chunk:
    gene: int
    ids: list[int]
    special: list[int]


def split_chunks(input_ids: list[int], special: list[int], window: int) -> list[tuple[list[int], list[int]]]:
    """Cut one tokenized input into pieces of at most `window` tokens, each keeping its special tokens.

    Args:
        input_ids: token ids with the tokenizer's special tokens.
        special: 1 where `input_ids` holds a special token, same length.
        window: the model's context length.

    Returns:
        A list of (ids, special mask) pairs; the input itself when it fits.

    Examples:
        >>> split_chunks([0, 5, 6, 7, 2], [1, 0, 0, 0, 1], 4)
        [([0, 5, 6, 2], [1, 0, 0, 1]), ([0, 7, 2], [1, 0, 1])]
    """
    if len(input_ids) <= window:
        return [(input_ids, special)]
    start = 0
    while start < len(special) and special[start]:
        start += 1
    end = len(special)
    while end > start and special[end - 1]:
        end -= 1
    prefix, core, suffix = input_ids[:start], input_ids[start:end], input_ids[end:]
    size = window - len(prefix) - len(suffix)
    if size < 1:
        raise AdapterError(f"context length {window} leaves no room beside {len(prefix) + len(suffix)} special tokens.")
    mask_prefix, mask_suffix = [1] * len(prefix), [1] * len(suffix)
    return [
        (prefix + core[i:i + size] + suffix, mask_prefix + [0] * len(core[i:i + size]) + mask_suffix)
        for i in range(0, len(core), size)
    ]


@dataclass
class _Runtime:
    """Where an encoder's torch `model` is loaded from, where and in what precision it runs, and its size.

    Subclasses provide `model` (the loaded torch module).
    """

    model_id: str
    revision: str | None = None
    trust_remote_code: bool = False
    device: str | None = None
    dtype: str = "auto"
    batch_size: int = 32
    notes: dict[str, Any] = field(default_factory=dict)  # what the last call did, for the model's notes

    @cached_property
    def location(self) -> tuple[str, str]:
        """(path or hub id to load, revision to record)."""
        return resolve_model(self.model_id, self.revision)

    @cached_property
    def load_from(self) -> tuple[str, str | None]:
        """(path or hub id, revision to pass to `from_pretrained`), once remote code is checked (see
        `check_remote_code`)."""
        path, revision = self.location
        check_remote_code(path, revision=revision, trust_remote_code=self.trust_remote_code, model_id=self.model_id)
        return path, None if Path(path).is_dir() else revision

    @cached_property
    def torch_device(self) -> torch.device:
        """The device the model runs on."""
        return select_device(self.device)

    @cached_property
    def torch_dtype(self) -> torch.dtype:
        """The precision of the forward pass (see `select_dtype`)."""
        return select_dtype(self.torch_device, self.dtype)

    @property
    def precision(self) -> str:
        """`torch_dtype` as recorded with the vectors."""
        return dtype_name(self.torch_dtype)

    @property
    def weights_dtype(self) -> torch.dtype:
        """float32 on the CPU (autocast lowers the matrix products), `torch_dtype` elsewhere."""
        return torch.float32 if self.torch_device.type == "cpu" else self.torch_dtype

    def forward_context(self) -> contextlib.AbstractContextManager:
        """Inference mode, plus CPU autocast when the CPU computes in lower precision."""
        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        if self.torch_device.type == "cpu" and self.torch_dtype != torch.float32:
            stack.enter_context(torch.autocast("cpu", dtype=self.torch_dtype))
        return stack

    @property
    def n_parameters(self) -> int:
        """How many parameters the loaded model has."""
        return sum(p.numel() for p in self.model.parameters())


@dataclass
class HFEncoder(_Runtime):
    """A transformers model and tokenizer that turn texts or sequences into pooled vectors.

    Args:
        model_id: Hub id or local folder.
        revision: commit, tag or branch; None for the default branch.
        trust_remote_code: allow code shipped in the repository to run.
        device: "cuda", "mps" or "cpu"; None picks the best available.
        dtype: precision of the forward pass, one of `DTYPES` ("auto": see `select_dtype`).
        batch_size: inputs (chunks) per forward pass.
        max_length: tokens per forward pass; None reads the tokenizer and config.
    """

    max_length: int | None = None

    @cached_property
    def tokenizer(self) -> Any:
        """The model's tokenizer, loaded on first use."""
        path, revision = self.load_from
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, revision=revision,
                                                               trust_remote_code=self.trust_remote_code)
        if tokenizer.pad_token_id is None:
            logger.warning("tokenizer of '%s' has no pad token: padded positions get id 0 and are masked out of "
                           "attention and pooling", self.model_id)
            self.notes["pad_token"] = "none (padding masked, id 0)"
        return tokenizer

    @cached_property
    def model(self) -> Any:
        """The model on its device, in eval mode, loaded on first use."""
        path, revision = self.load_from
        with loading_quietly():
            model = transformers.AutoModel.from_pretrained(path, revision=revision, dtype=self.weights_dtype,
                                                           trust_remote_code=self.trust_remote_code)
        return model.to(self.torch_device).eval()

    @cached_property
    def context(self) -> int:
        """Tokens per forward pass."""
        return context_length(self.tokenizer, self.model.config, self.max_length)

    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids (with special tokens, never truncated) and their special-token masks."""
        encoded = self.tokenizer(list(texts), add_special_tokens=True, truncation=False,
                                 return_special_tokens_mask=True, verbose=False)
        return encoded["input_ids"], encoded["special_tokens_mask"]

    def encode_texts(
        self, texts: Sequence[str], *, pooling: Pooling = "mean", skip_special: bool = False
    ) -> np.ndarray:
        """Encode texts or sequences; see `encode_ids`. Returns shape (n_texts, n_dims), float32."""
        if not texts:
            self.notes["n_extra_chunks"] = 0
            return np.zeros((0, 0), dtype=np.float32)
        return self.encode_ids(*self.tokenize(texts), pooling=pooling, skip_special=skip_special)

    def encode_ids(
        self,
        input_ids: Sequence[list[int]],
        special: Sequence[list[int]],
        *,
        pooling: Pooling = "mean",
        skip_special: bool = False,
    ) -> np.ndarray:
        """Pool the last hidden state of each tokenized input, chunking inputs longer than the context.

        Args:
            input_ids: one token-id list per gene, with special tokens; none may be empty.
            special: matching special-token masks.
            pooling: "mean" over tokens (without special tokens when `skip_special`), or the first ("cls") token.
            skip_special: leave special tokens out of the mean (residues or nucleotides only).

        Returns:
            Shape (n_genes, n_dims), float32; a chunked gene gets the token-weighted mean of its chunks.
        """
        chunks: list[_Chunk] = []
        for gene, (ids, mask) in enumerate(zip(input_ids, special)):
            pieces = split_chunks(list(ids), list(mask), self.context)
            chunks.extend(_Chunk(gene, piece, piece_mask) for piece, piece_mask in pieces)
        n_chunked = len(chunks) - len(input_ids)
        if n_chunked:
            logger.info("%s: %d inputs longer than %d tokens were cut into chunks", self.model_id, n_chunked,
                        self.context)
        self.notes["n_extra_chunks"] = n_chunked  # per call: the cache adds calls up
        sums: np.ndarray | None = None
        weights = np.zeros(len(input_ids), dtype=np.float64)
        model, device = self.model, self.model.device
        pad_id = self.tokenizer.pad_token_id or 0
        accepts_mask = "attention_mask" in inspect.signature(model.forward).parameters
        with self.forward_context(), work_bar(sum(len(c.ids) for c in chunks), self.model_id, "token") as bar:
            for batch in plan_batches([len(c.ids) for c in chunks], self.batch_size).batches:
                picked = [chunks[i] for i in batch]
                width = max(len(c.ids) for c in picked)
                ids = torch.full((len(picked), width), pad_id, dtype=torch.long)
                attention = torch.zeros((len(picked), width), dtype=torch.long)
                pool = torch.zeros((len(picked), width), dtype=torch.float32)
                for row, chunk in enumerate(picked):
                    ids[row, :len(chunk.ids)] = torch.tensor(chunk.ids)
                    attention[row, :len(chunk.ids)] = 1
                    keep = [0 if (skip_special and s) else 1 for s in chunk.special]
                    pool[row, :len(keep)] = torch.tensor(keep, dtype=torch.float32)
                kwargs = {"attention_mask": attention.to(device)} if accepts_mask else {}
                output = model(input_ids=ids.to(device), **kwargs)
                hidden = (output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]).float()
                counts = pool.sum(1).clamp(min=1)
                if pooling == "cls":
                    vectors = hidden[:, 0]
                else:
                    vectors = (hidden * pool.to(device)[..., None]).sum(1) / counts.to(device)[:, None]
                vectors_np = vectors.cpu().numpy().astype(np.float64)
                if sums is None:
                    sums = np.zeros((len(input_ids), vectors_np.shape[1]), dtype=np.float64)
                for row, chunk in enumerate(picked):
                    sums[chunk.gene] += vectors_np[row] * float(counts[row])
                    weights[chunk.gene] += float(counts[row])
                bar.update(sum(len(c.ids) for c in picked))
        if sums is None:
            return np.zeros((0, 0), dtype=np.float32)
        return (sums / weights[:, None]).astype(np.float32)

    @cached_property
    def input_embeddings(self) -> np.ndarray:
        """The model's input-embedding matrix, shape (vocab_size, n_dims), float32, copied once per encoder."""
        return self.model.get_input_embeddings().weight.detach().float().cpu().numpy()


@dataclass
class SentenceEncoder(_Runtime):
    """A sentence-transformers model run batch by batch through its own modules (tokenize, forward).

    Truncation follows the model's `max_seq_length`, as sentence-transformers' `encode` does; texts are
    batched by their token count (not their character count, as `encode` does), up to `max_tokens` tokens and
    `batch_size` texts a batch, so almost nothing goes to padding.
    """

    batch_size: int = 128
    max_tokens: int = 2048

    @cached_property
    def model(self) -> Any:
        """The SentenceTransformer on its device, loaded on first use."""
        SentenceTransformer = import_optional(  # noqa: N806
            "sentence_transformers", needed_for="a sentence-transformers model", install=TORCH).SentenceTransformer
        path, revision = self.load_from
        with loading_quietly():
            model = SentenceTransformer(path, device=str(self.torch_device), trust_remote_code=self.trust_remote_code,
                                        revision=revision)
        return model.to(self.weights_dtype).eval()

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts, longest first, in batches planned by token count (on a CPU, one batch per core, each
        on one thread: on 2 cores this beat torch's own intra-op threads). Returns shape (n_texts, n_dims), float32.
        """
        model = self.model
        limit = model.max_seq_length
        lengths = [len(ids) for ids in model.tokenizer(list(texts), truncation=True, max_length=limit)["input_ids"]]
        plan = plan_batches(lengths, self.batch_size, self.max_tokens)
        preprocess = getattr(model, "preprocess", None) or model.tokenize  # sentence-transformers < 6: tokenize

        def embed(features: dict[str, Any]) -> np.ndarray:
            with self.forward_context():  # inference mode and autocast hold per thread
                features = {k: v.to(model.device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
                return model(features)["sentence_embedding"].float().cpu().numpy()

        out: np.ndarray | None = None
        on_cpu, threads = self.torch_device.type == "cpu", torch.get_num_threads()
        bar = work_bar(sum(lengths), self.model_id, "token")
        with ThreadPoolExecutor(n_cores() if on_cpu else 1) as pool, bar:
            torch.set_num_threads(1 if on_cpu else threads)
            try:
                # tokenized here, in one thread: a fast tokenizer called from two threads at once can fail
                batches = [preprocess([texts[i] for i in batch]) for batch in plan.batches]
                for batch, vectors in zip(plan.batches, pool.map(embed, batches)):
                    if out is None:
                        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                    out[batch] = vectors
                    bar.update(sum(lengths[i] for i in batch))
            finally:
                torch.set_num_threads(threads)
        plan.note(self.notes)
        note_truncated(self.notes, self.model_id, sum(n >= limit for n in lengths), limit)
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)
