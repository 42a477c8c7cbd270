"""Encoding on a Ray cluster: the embedding cache's chunks as Ray Data blocks, encoded by a pool of actors.

Each actor holds one copy of the adapter (its model loads once per actor, on a GPU of its own when the
cluster has GPUs) and turns a chunk of symbols into rows keyed by symbol. Rows come back to the driver in
whatever order chunks finish; the embedding cache keys them by gene, so order never matters. Ray Data
restarts a killed actor and runs its chunk again; a chunk's rows reach the driver once, and the cache keeps
one row per gene in any case.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from genebench.embeddings import GeneEmbeddings
from genebench.errors import DistributedError, worker_error
from genebench.model_info import ModelInfo

logger = logging.getLogger(__name__)

MAX_RESTARTS = 3
"""How often a killed encoding actor is restarted, and its block retried, before the run fails."""


class _EncodeActor:
    """One adapter per actor: `__call__` encodes chunks of the gene list (given by number) into rows."""

    def __init__(self, encoder: Any, symbols: list[str], chunk_size: int) -> None:
        import ray

        self.encoder, self.symbols, self.chunk_size = encoder, symbols, chunk_size
        self.node = ray.util.get_node_ip_address()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        rows = [pack(self._encode(int(chunk))) for chunk in batch["id"]]
        return {key: np.concatenate([r[key] for r in rows]) for key in rows[0]}

    def _encode(self, chunk: int) -> GeneEmbeddings:
        symbols = self.symbols[chunk * self.chunk_size:(chunk + 1) * self.chunk_size]
        try:
            return self.encoder.encode(symbols)
        except Exception as exc:
            raise DistributedError(f"encoding {len(symbols)} genes ({symbols[0]} ...) with "
                                   f"{self.encoder.meta.id} failed on node {self.node}: "
                                   f"{type(exc).__name__}: {exc}") from exc


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
    """Encode `symbols` with copies of `encoder` on a Ray cluster, yielding each chunk as it finishes.

    The chunks are those a local run encodes (consecutive slices of `chunk_size` genes), one Ray Data block
    each: an encoder batches and pads within a chunk, so the same chunks give the same vectors to the bit.

    Args:
        encoder: an adapter that has not loaded its model yet (it is shipped to every actor).
        symbols: genes to encode, in the order the adapter prefers.
        chunk_size: genes per chunk.
        resources: the cluster's resources, which size the actor pool.
        options: each actor's Ray options (`RayEngine.worker_options`).

    Yields:
        (the chunk's symbols, their `GeneEmbeddings`), in the order chunks finish.

    Raises:
        DistributedError: an actor failed to encode (naming its node and the model), or was killed more than
            `MAX_RESTARTS` times. Chunks yielded before stay valid.
    """
    import ray
    import ray.data

    if not symbols:
        return
    symbols = list(symbols)
    n_chunks = math.ceil(len(symbols) / chunk_size)
    n_actors, per_actor = pool_size(resources, options)
    n_actors = min(n_actors, n_chunks)
    logger.info("encoding %d genes on Ray: %d chunks of up to %d genes over %d actors (%s each)", len(symbols),
                n_chunks, chunk_size, n_actors,
                ", ".join(f"{k} {per_actor[k]:g}" for k in ("num_cpus", "num_gpus") if k in per_actor))
    chunks = ray.data.from_items([{"id": i} for i in range(n_chunks)], override_num_blocks=n_chunks)  # no read task
    with warnings.catch_warnings():  # Ray 2.60 names no parameter for restarts yet, and warns on the generic one
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*is deprecated")
        encoded = chunks.map_batches(_EncodeActor, fn_constructor_args=(encoder, symbols, chunk_size), batch_size=1,
                                     compute=ray.data.ActorPoolStrategy(size=n_actors), batch_format="numpy",
                                     max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS, **per_actor)
    try:
        for rows in encoded.iter_batches(batch_size=None, batch_format="numpy"):
            yield [str(s) for s in rows["symbol"]], unpack(rows)
    except ray.exceptions.RayError as exc:
        raise DistributedError(worker_error(exc, f"encoding with {encoder.meta.id}")) from exc
