"""A gene's family: the one definition family folds (`genebench.tasks.folds.family_folds`) group genes by.

A gene's family is its most specific HGNC gene group: of the groups its `gene_group_id` lists, the one with the
fewest approved genes in the HGNC table the data was built with (ties: the lowest group id). A gene in no group
falls back to its symbol stem, the symbol without trailing digits (``ZNF717`` -> ``ZNF``, ``OR2A4`` -> ``OR2A``).

Why this and not connected groups: HGNC groups nest and overlap, and joining every group that shares a gene
links 43% of the genes into one component, so no fold could hold it out. The smallest group keeps paralogs
together (olfactory receptor subfamilies, SLC families, ZNF clusters) while the largest family of any bundled
task stays near 5% of its genes (`TaskMetadata.family_report`).

Family keys are strings: ``"group:<id>"`` or ``"stem:<stem>"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

_TRAILING_DIGITS = re.compile(r"\d+$")


def symbol_stem(symbol: str) -> str:
    """The symbol without trailing digits (the whole symbol when it is all digits).

    Examples:
        >>> symbol_stem("ZNF717"), symbol_stem("HLA-A"), symbol_stem("C1orf112")
        ('ZNF', 'HLA-A', 'C1orf')
    """
    return _TRAILING_DIGITS.sub("", symbol) or symbol


def gene_families(hgnc: pd.DataFrame) -> dict[str, str]:
    """Symbol -> family key for every approved gene of an HGNC table (`genebench.symbols.read_hgnc` columns).

    Examples:
        >>> hgnc = pd.DataFrame({"symbol": ["A1", "A2", "B7"], "gene_group_id": ["5|9", "9", ""]})
        >>> gene_families(hgnc)
        {'A1': 'group:5', 'A2': 'group:9', 'B7': 'stem:B'}
    """
    symbols = hgnc["symbol"].astype(str).tolist()
    groups = [[g for g in str(value).split("|") if g.strip()] for value in hgnc["gene_group_id"].astype(str)]
    size = pd.Series([g for gs in groups for g in gs], dtype=object).value_counts().to_dict()
    families = {}
    for symbol, gs in zip(symbols, groups):
        if gs:
            families[symbol] = "group:" + min(gs, key=lambda g: (size[g], int(g) if g.isdigit() else 0, g))
        else:
            families[symbol] = "stem:" + symbol_stem(symbol)
    return families


def families_of(genes: Iterable[str], families: dict[str, str]) -> np.ndarray:
    """Family key of each gene, shape (n_genes,); a gene outside the HGNC table gets its symbol stem."""
    return np.array([families.get(g) or "stem:" + symbol_stem(g) for g in map(str, genes)], dtype=object)
