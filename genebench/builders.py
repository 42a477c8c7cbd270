"""The task families genebench builds, as data: each family's `datasets` builder, named lazily ("module:Class").

The builders live in `dataset_builders`; the core reads this table (to list or suggest a family) without importing
them, as it reads `genebench.inputs` for the adapters.
"""

from __future__ import annotations

from genebench.errors import UnknownTaskError
from genebench.registry import Registry

FAMILIES: Registry[str] = Registry("task family", {
    "humantfs": "dataset_builders.humantfs:HumanTFs",
    "hgnc": "dataset_builders.hgnc:HGNC",
    "genecorpus": "dataset_builders.genecorpus:Genecorpus",
    "reactome": "dataset_builders.reactome:Reactome",
    "gene2gene": "dataset_builders.gene2gene:Gene2Gene",
    "hpa": "dataset_builders.hpa:HPA",
    "uniprot_keywords": "dataset_builders.uniprot_keywords:UniProtKeywords",
    "opentargets": "dataset_builders.opentargets:OpenTargets",
    "perturbqa": "dataset_builders.perturbqa:PerturbQA",
}, error=UnknownTaskError)
"""Family name (= the dataset config name) -> "module:Builder", imported on first use."""


def get_builder_class(family: str) -> type:
    """The builder class of a family, e.g. `get_builder_class("humantfs")`."""
    return FAMILIES.load(family)
