"""Result-folder writers for the leaderboard tests: realistic results through the real `TaskResult` schema."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from genebench.results import TaskResult

PROVENANCE = {
    "data_hash": "3f1c9a0d2b7e",
    "hub_id": None,
    "hub_revision": None,
    "sources": {"humantfs": {"humantfs": "1.01"}, "hpa": {"hpa": "23"}},
}

# (name, category, type, family, n_entities): names as in Kan-Tor et al. 2024 and PerturbQA.
TASKS: tuple[tuple[str, str, str, str, int], ...] = (
    ("TF vs non-TF", "regulatory functions", "binary", "humantfs", 19177),
    ("Bivalent vs non-methylated", "regulatory functions", "binary", "genecorpus", 134),
    ("Dosage sensitive vs insensitive TFs", "genomic properties", "binary", "genecorpus", 487),
    ("HLA class I vs class II", "genomic properties", "binary", "hgnc", 38),
    ("Subcellular location", "localization", "categorical", "hpa", 12003),
    ("Secretome location", "localization", "categorical", "hpa", 2741),
    ("Pathways", "biological processes", "multi-label", "reactome", 11184),
    ("Gene2Gene", "biological processes", "gene-pair binary", "gene2vec", 290032),
    ("UniProt keywords;Kinase", "protein properties", "derived binary", "uniprot_keywords", 18050),
)

MODELS = {
    "sentence-transformers/all-MiniLM-L6-v2": ("description", 22_700_000, 0.80),
    "ctheodoris/Geneformer": ("token", 10_300_000, 0.74),
    "facebook/esm2_t33_650M_UR50D": ("protein", 650_000_000, 0.70),
}


def task_file_name(task_name: str) -> str:
    """A path-safe file name for a task (what the results writer does)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in task_name) + ".json"


def result_document(
    model_id: str,
    task: tuple[str, str, str, str, int],
    *,
    level: float,
    adapter: str,
    n_parameters: int | None,
    seed: int,
    provenance: dict[str, Any] = PROVENANCE,
    scheme: str = "paper",
) -> dict[str, Any]:
    """One result as JSON-ready dict, validated through TaskResult, with folds drawn around `level`; under family
    folds (`scheme`) with a name control and added over names drawn around `level - 0.75`."""
    name, category, task_type, family, n_entities = task
    rng = np.random.default_rng(seed)
    folds = np.clip(rng.normal(level, 0.02, size=5), 0.5, 1.0).tolist()
    document = {
        "genebench_version": "0.1.0",
        "task": {
            "name": name,
            "category": category,
            "type": task_type,
            "family": family,
            "n_entities": n_entities,
            "source_url": "https://example.org/source",
            "source_version": "1",
            "license": "CC-BY-4.0",
            "citation": "Kan-Tor et al. 2024, arXiv:2412.04075",
            "parent": "UniProt keywords" if task_type == "derived binary" else None,
        },
        "provenance": provenance,
        "model": {"id": model_id, "revision": "main", "input": adapter, "pooling": "mean",
                  "n_parameters": n_parameters},
        "probe": {"C": 1.0, "tol": 1e-4, "max_iter": 500, **({"scheme": scheme} if scheme != "paper" else {})},
        "coverage": {"n_covered": n_entities, "n_task": n_entities, "fraction": 1.0},
        "scores": {"roc_auc": {"folds": folds, "mean": float(np.mean(folds)), "std": float(np.std(folds))}},
        "main_score": "roc_auc",
        "timing": {"fit_s": 0.5},
        "date": "2025-01-15T10:00:00+00:00",
    }
    if scheme == "family":
        added = level - 0.75
        draws = (added + rng.normal(0, 0.01, size=200)).round(4).tolist()
        document["task"]["controls"] = {"name": 0.95 if family == "hgnc" else 0.8}
        document["lift"] = document["scores"]["roc_auc"]["mean"] - document["task"]["controls"]["name"]
        document["added_over_names"] = {"value": added, "low": float(np.quantile(draws, 0.025)),
                                        "high": float(np.quantile(draws, 0.975)), "names": 0.8, "combined": 0.8 + added,
                                        "n_rows": n_entities, "draws": draws}
    return TaskResult.model_validate(document).model_dump(mode="json")


def write_model(
    root: Path,
    model_id: str,
    *,
    adapter: str = "description",
    n_parameters: int | None = 22_700_000,
    level: float = 0.8,
    tasks: tuple = TASKS,
    meta: dict[str, Any] | None = None,
    provenance: dict[str, Any] = PROVENANCE,
    scheme: str = "paper",
) -> Path:
    """Write a complete `<org__model>/main/` results folder under `root` (family folds: under `root/folds-family/`,
    where `genebench run` writes them); return that folder."""
    folder = (root if scheme == "paper" else root / f"folds-{scheme}") / model_id.replace("/", "__") / "main"
    folder.mkdir(parents=True, exist_ok=True)
    for i, task in enumerate(tasks):
        document = result_document(
            model_id,
            task,
            level=level - 0.02 * (i % 3),
            adapter=adapter,
            n_parameters=n_parameters,
            seed=zlib.crc32(f"{model_id}|{i}".encode()),
            provenance=provenance,
            scheme=scheme,
        )
        (folder / task_file_name(task[0])).write_text(json.dumps(document, indent=1))
    meta = {"id": model_id, "revision": "main", "description": f"{model_id} gene embeddings"} if meta is None else meta
    (folder / "model_meta.json").write_text(json.dumps(meta))
    return folder
