"""Vectors for the non-gene side of pair tasks (gene sets, diseases), made from a recipe the family's builder
writes into the data folder's manifest as data (`genebench.json`, `families.<family>.partners`).

A recipe names an auxiliary table of the family, its id column, and how a partner's vector is made:

- ``members``: a column of gene lists; the partner's vector is the mean of its members that have one
  (PerturbQA's gene sets);
- ``text``: a template over the table's columns (``"Disease {name}: {description}"``); the partner is encoded
  from that text by the run's encoder, which must have an ``encode_entities(ids, texts)`` method (description
  inputs); with another encoder its tasks are skipped.

Builders yield rows and know nothing about models; this module is the only one that turns partners into vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from genebench.data import BenchmarkData
from genebench.embeddings import GeneEmbeddings
from genebench.errors import SourceFormatError
from genebench.tasks.task import Task

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartnerRecipe:
    """How one family's partners get vectors.

    Attributes:
        table: the family's auxiliary table that lists the partners.
        id: its column of partner ids (the tasks' second entity).
        members: its column of member gene lists, when a partner is the mean of its members' vectors.
        text: a `str.format` template over its columns, when a partner is encoded from text.
    """

    table: str
    id: str
    members: str | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if (self.members is None) == (self.text is None):
            raise ValueError(f"partner recipe of table '{self.table}': expected exactly one of members and text.")

    def to_dict(self) -> dict[str, str]:
        """The recipe as the manifest stores it."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_dict(cls, record: Any, *, family: str) -> PartnerRecipe:
        """Read a manifest's recipe.

        Raises:
            SourceFormatError: it is not an object with table, id and one of members or text.
        """
        try:
            return cls(**record)
        except (TypeError, ValueError) as exc:
            raise SourceFormatError(f"data manifest: family '{family}' has a partner recipe {record!r}; expected "
                                    "an object with table, id and one of members or text. Rebuild the family.") from exc


def partner_embeddings(tasks: Sequence[Task], embeddings: GeneEmbeddings, data: BenchmarkData,
                       encoder: Any) -> GeneEmbeddings | None:
    """Vectors for the non-gene entities of the pair tasks among `tasks`, by their families' recipes.

    Args:
        tasks: the selected tasks.
        embeddings: the run's gene vectors, already restricted to the genes the run may use.
        data: the data folder (its manifest holds the recipes, its auxiliary tables the partners).
        encoder: the run's encoder (possibly wrapped in the cache, as `.encoder`), for text recipes.

    Returns:
        One table of every partner that got a vector, or None when no selected task needs partners or none got one.
    """
    families = sorted({t.metadata.family for t in tasks if len(t.metadata.entity_types) == 2
                       and t.metadata.entity_types[1] != "gene"})
    parts = []
    for family in families:
        record = data.manifest["families"][family].get("partners")
        if record is None:
            continue
        recipe = PartnerRecipe.from_dict(record, family=family)
        table = data.auxiliary(family, recipe.table)
        part = (_mean_of_members(table, recipe, embeddings) if recipe.members is not None
                else _encoded(table, recipe, encoder, family))
        if part is not None:
            parts.append(part)
    if not parts:
        return None
    return GeneEmbeddings(symbols=np.concatenate([p.symbols for p in parts]),
                          vectors=np.concatenate([p.vectors for p in parts]), model=embeddings.model)


def _mean_of_members(table: Any, recipe: PartnerRecipe, embeddings: GeneEmbeddings) -> GeneEmbeddings | None:
    """Each partner as the mean vector of its members that have one; None when none has a member with a vector."""
    index = {symbol: row for row, symbol in enumerate(map(str, embeddings.symbols))}
    ids, vectors = [], []
    for name, genes in table[[recipe.id, recipe.members]].itertuples(index=False):
        rows = [index[g] for g in genes if g in index]
        if rows:
            ids.append(str(name))
            vectors.append(embeddings.vectors[rows].mean(axis=0))
    if not vectors:
        return None
    return GeneEmbeddings(symbols=np.asarray(ids, dtype=object), vectors=np.stack(vectors), model=embeddings.model)


def _encoded(table: Any, recipe: PartnerRecipe, encoder: Any, family: str) -> GeneEmbeddings | None:
    """Each partner encoded from its text; None when the encoder cannot encode text (its tasks are then skipped)."""
    adapter = getattr(encoder, "encoder", encoder)
    if not hasattr(adapter, "encode_entities"):
        logger.warning("%s tasks need partner vectors encoded from text, which only --input description gives; "
                       "skipping them", family)
        return None
    texts = [recipe.text.format(**row).strip() for row in table.to_dict("records")]
    return adapter.encode_entities(table[recipe.id].astype(str).tolist(), texts)
