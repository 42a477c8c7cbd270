"""Encoding on a Ray cluster: genes sharded into Ray Data blocks, encoded by a pool of actors.

Each actor holds one copy of the adapter (its model loads once per actor, on a GPU of its own when the
cluster has GPUs) and turns a block of symbols into rows keyed by symbol. Rows come back to the driver in
whatever order blocks finish; the embedding cache keys them by gene, so order never matters. Ray Data
restarts a killed actor and runs its block again; a block's rows reach the driver once, and the cache keeps
one row per gene in any case.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from genebench.distributed.engine import worker_error
from genebench.embeddings import GeneEmbeddings
from genebench.errors import DistributedError
from genebench.model_info import ModelInfo

logger = logging.getLogger(__name__)

MAX_RESTARTS = 3
"""How often a killed encoding actor is restarted, and its block retried, before the run fails."""


class _EncodeActor:
    """One adapter per actor: `__call__` encodes a block of symbols into rows (symbol, vector, reason, model)."""

    def __init__(self, encoder: Any) -> None:
        import ray

        self.encoder = encoder
        self.node = ray.util.get_node_ip_address()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        symbols = [str(s) for s in batch["symbol"]]
        try:
            part = self.encoder.encode(symbols)
        except Exception as exc:
            raise DistributedError(f"encoding {len(symbols)} genes ({symbols[0]} ...) with "
                                   f"{self.encoder.meta.id} failed on node {self.node}: "
                                   f"{type(exc).__name__}: {exc}") from exc
        return pack(part)


def pack(part: GeneEmbeddings) -> dict[str, np.ndarray]:
    """An adapter's output as Ray Data columns: one row per encoded or missing gene.

    Columns: `symbol`; `vector`, the float32 bytes ("" for a missing gene); `reason`, why a gene is missing
    ("" when encoded); `model`, the adapter's JSON record (repeated, so any block carries it).
    """
    symbols = [str(s) for s in part.symbols]
    reasons = [""] * len(symbols)
    vectors = [np.ascontiguousarray(v, dtype=np.float32).tobytes() for v in part.vectors]
    for reason, genes in part.missing.items():
        symbols += list(genes)
        reasons += [reason] * len(genes)
        vectors += [b""] * len(genes)
    return {"symbol": np.asarray(symbols, dtype=object), "vector": np.asarray(vectors, dtype=object),
            "reason": np.asarray(reasons, dtype=object),
            "model": np.asarray([part.model.model_dump_json() if part.model else ""] * len(symbols), dtype=object)}


def unpack(rows: dict[str, np.ndarray]) -> GeneEmbeddings:
    """The `GeneEmbeddings` of rows made by `pack` (from any number of blocks)."""
    encoded = np.asarray([r == "" for r in rows["reason"]], dtype=bool)
    vectors = [np.frombuffer(v, dtype=np.float32) for v in rows["vector"][encoded]]
    missing: dict[str, list[str]] = {}
    for symbol, reason in zip(rows["symbol"][~encoded], rows["reason"][~encoded]):
        missing.setdefault(str(reason), []).append(str(symbol))
    model = ModelInfo.model_validate_json(rows["model"][0]) if len(rows["model"]) and rows["model"][0] else None
    return GeneEmbeddings(symbols=np.asarray([str(s) for s in rows["symbol"][encoded]], dtype=object),
                          vectors=np.stack(vectors) if vectors else np.zeros((0, 0), np.float32), model=model,
                          missing=missing)


def pool_size(resources: dict[str, float], options: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Actors to start and each one's options: one per GPU where the cluster has GPUs, else one per
    `options["num_cpus"]` CPUs."""
    gpus = int(resources.get("GPU", 0))
    if gpus:
        return gpus, {**options, "num_gpus": 1}
    return max(1, int(resources.get("CPU", 1) // options.get("num_cpus", 1))), options


def encode_chunks(encoder: Any, symbols: Sequence[str], chunk_size: int, resources: dict[str, float],
                  options: dict[str, Any]) -> Iterator[tuple[list[str], GeneEmbeddings]]:
    """Encode `symbols` with copies of `encoder` on a Ray cluster, yielding parts as blocks finish.

    Args:
        encoder: an adapter that has not loaded its model yet (it is shipped to every actor).
        symbols: genes to encode, in the order the adapter prefers (blocks are consecutive slices).
        chunk_size: genes per yielded part (the embedding cache writes its file once per part).
        resources: the cluster's resources, which size the actor pool.
        options: each actor's Ray options (`RayEngine.worker_options`).

    Yields:
        (symbols settled, their `GeneEmbeddings`) for every `chunk_size` or so genes, in no fixed order.

    Raises:
        DistributedError: an actor failed to encode (naming its node), or was killed more than
            `MAX_RESTARTS` times. Parts yielded before stay valid.
    """
    import ray
    import ray.data

    if not symbols:
        return
    n_actors, per_actor = pool_size(resources, options)
    block = max(1, min(chunk_size, math.ceil(len(symbols) / (4 * n_actors))))
    logger.info("encoding %d genes on Ray: %d actors (%s each), blocks of %d genes", len(symbols), n_actors,
                ", ".join(f"{k} {per_actor[k]:g}" for k in ("num_cpus", "num_gpus") if k in per_actor), block)
    dataset = ray.data.from_items([{"symbol": s} for s in symbols], override_num_blocks=math.ceil(len(symbols) / block))
    with warnings.catch_warnings():  # Ray 2.60 names no parameter for restarts yet, and warns on the generic one
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*is deprecated")
        encoded = dataset.map_batches(_EncodeActor, fn_constructor_args=(encoder,), batch_size=block,
                                      compute=ray.data.ActorPoolStrategy(size=n_actors), batch_format="numpy",
                                      max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS, **per_actor)
    pending: list[dict[str, np.ndarray]] = []
    try:
        for rows in encoded.iter_batches(batch_size=None, batch_format="numpy"):
            pending.append(rows)
            if sum(len(r["symbol"]) for r in pending) >= chunk_size:
                yield _merge(pending)
                pending = []
    except ray.exceptions.RayError as exc:
        raise DistributedError(worker_error(exc, f"encoding with {encoder.meta.id}")) from exc
    if pending:
        yield _merge(pending)


def _merge(parts: list[dict[str, np.ndarray]]) -> tuple[list[str], GeneEmbeddings]:
    rows = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    return [str(s) for s in rows["symbol"]], unpack(rows)

