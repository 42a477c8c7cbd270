"""Which genes a run needs: the genes of its tasks, and the gene options that restrict them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from genebench.embeddings import GeneEmbeddings
from genebench.errors import ConfigError
from genebench.tasks.task import Task

logger = logging.getLogger(__name__)


def task_genes(tasks: Sequence[Task]) -> list[str]:
    """Every gene symbol the tasks need, sorted (the first entity of pair tasks, and gene partners)."""
    genes: set[str] = set()
    read = set()  # derived tasks share their parent's entity array: read each array once
    for task in tasks:
        key = (id(task.entities), tuple(task.metadata.entity_types))
        if key not in read:
            read.add(key)
            genes.update(task.gene_entities().tolist())
    return sorted(map(str, genes))


def restrict(genes: Sequence[str], *, include_genes: str | None = None, exclude_genes: str | None = None,
             common_with: Sequence[str] = ()) -> list[str]:
    """The genes left after `include_genes`, `exclude_genes` and `common_with`, in order.

    Restricting comes before encoding and before partner vectors, so an excluded gene is neither encoded nor
    part of a gene set's vector.

    Args:
        genes: the genes the tasks need.
        include_genes: a file of symbols (one per line) to keep, or None for all.
        exclude_genes: a file of symbols to drop, or None.
        common_with: embedding files whose genes every task is restricted to.

    Raises:
        ConfigError: a gene list cannot be read, or the options leave no gene.
    """
    include = set(_read_symbols(include_genes, "include_genes")) if include_genes else None
    exclude = set(_read_symbols(exclude_genes, "exclude_genes")) if exclude_genes else set()
    common = [set(map(str, GeneEmbeddings.load(path).symbols)) for path in common_with]
    kept = [g for g in genes if (include is None or g in include) and g not in exclude
            and all(g in other for other in common)]
    if genes and not kept:
        used = [f"{name} '{value}'" for name, value in (("include_genes", include_genes),
                                                         ("exclude_genes", exclude_genes)) if value]
        used += [f"common_with {list(common_with)}"] if common else []
        raise ConfigError(f"the selected tasks need {len(genes)} genes, but {' and '.join(used)} leave none of them; "
                          "check the gene lists hold current HGNC symbols.")
    if len(kept) < len(genes):
        logger.info("gene options keep %d of %d genes", len(kept), len(genes))
    return kept


def _read_symbols(path: str, option: str) -> list[str]:
    """The symbols of a gene list file: UTF-8 text, one symbol per line."""
    where = f"gene list '{path}' ({option})"
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read ({exc.strerror or exc}); pass a file with one symbol per line."
                          ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise ConfigError(f"{where}: expected a text file with one symbol per line, found binary data.")
    symbols = [line.strip() for line in text.splitlines() if line.strip()]
    if not symbols:
        raise ConfigError(f"{where}: holds no symbols; pass a file with one symbol per line, or drop the option.")
    return symbols
