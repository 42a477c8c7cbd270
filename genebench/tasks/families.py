"""A gene's family: the one definition family folds (`genebench.tasks.folds.family_folds`) group genes by.

A gene's family is its most specific HGNC gene group: of the groups its `gene_group_id` lists, the one with the
fewest approved genes in the HGNC table the data was built with (ties: the lowest group id). A gene in no group
falls back to its symbol stem, the symbol without trailing digits (``ZNF717`` -> ``ZNF``, ``OR2A4`` -> ``OR2A``).

Why this and not connected groups: HGNC groups nest and overlap, and joining every group that shares a gene
links 43% of the genes into one component, so no fold could hold it out. The smallest group keeps paralogs
together (olfactory receptor subfamilies, SLC families, ZNF clusters). In most bundled tasks the largest family
is small (median 2.9% of a task's genes; 6 of the 24 tasks with family folds above 10%), but some tasks are drawn
from one family: "dosage sensitive vs insensitive TF" is 51% C2H2 zinc fingers (HGNC group 28), "HLA class I vs
class II" 52% one HLA group. A family is held out whole, so such a task's family folds cannot be even: one fold
holds that family (fold imbalance 2.65, `genebench.tasks.folds.fold_imbalance`). Each task records its largest
family share and fold imbalance (`TaskMetadata.family_report`); one where a family holds more than
`DOMINANT_SHARE` is marked (`TaskMetadata.dominant_family`), in the task table and in its results, which set the
pooled out-of-fold AUC beside the fold mean (`genebench.tasks.folds.pooled_auc`). The summary rule stays the fold
mean, for every task: on the bundled name control under family folds the two differ by 0.003 on average over the
116 tasks no family dominates and by 0.094 on the one that is (0.738 against 0.833; the gap follows the fold
imbalance, correlation 0.86; `benchmarks/bench_family_share.py`). Pooling ranks together scores of five probes
fitted apart, so it is shown as a diagnostic and the mark says why the two part.

Family keys are strings: ``"group:<id>"`` or ``"stem:<stem>"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

_TRAILING_DIGITS = re.compile(r"\d+$")
DOMINANT_SHARE = 1 / 3
"""A task where one family holds more than this share of the genes is family-dominated."""


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
