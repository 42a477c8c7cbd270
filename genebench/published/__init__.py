"""The paper's published results, as data: 9 models x 62 tasks x 5 folds, and each paper task's genebench task.

Kan-Tor et al. ("Does your model understand genes?", arXiv 2412.04075) published every fold of every model on every
task (the reference repository's `tasks/task_descriptions.xlsx`, sheet "Preformance long form", Apache-2.0). This
package bundles that sheet verbatim (`published_results.csv.gz`), with two tables of ours: `models.csv` (how each
paper model is filed) and `task_map.csv` (each paper task's genebench task and their relation). `manifest.json`
holds the sha256 of each file; every file is checked against it when read.

The scores were computed by the reference code, on its own data releases (HPA v23, UniProt via REST in 2024, NCBI
descriptions via mygene) and with its own protocol (LogisticRegression on raw vectors, unseeded 5-fold
StratifiedKFold, KFold for multi-label tasks, multi-label ROC AUC from hard 0/1 predictions, random vectors for the
genes a model lacks). They are shown beside genebench runs, never ranked with them.

Relations (`task_map.csv`, column `relation`), and how a run refines them (`run_relation`):

- same: same source and definition. A run whose data holds another release of the source than the paper's
  (`paper_source`, e.g. HPA v23 against the bundled snapshot's v18.1) makes it "release".
- protocol: a multi-label task, which the paper scores by ROC AUC from hard 0/1 predictions; a run made with
  `--multilabel-auc predictions` (the reproduction mode) makes it "same" (or "release").
- none: genebench has no counterpart (the note says why).

The reference swaps its two N1 files: the paper's "N1 network" is genebench's "N1 targets", and vice versa; the
mapping says so.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genebench.errors import ResultsError, SourceFormatError
from genebench.hashing import file_sha256

HERE = Path(__file__).parent
MANIFEST = "manifest.json"
ARXIV = "2412.04075"
PAPER_URL = f"https://arxiv.org/abs/{ARXIV}"
REPOSITORY = "https://github.com/BiomedSciAI/gene-benchmark"
COMMIT = "d2b345ec4af9850c04926c940af85c70060d22e7"
LICENSE = "Apache-2.0"
CITATION = """\
@article{kantor2024genes,
  title={Does your model understand genes? A benchmark of gene properties for biological and text models},
  author={Kan-Tor, Yoav and others},
  journal={arXiv preprint arXiv:2412.04075}, year={2024}
}"""
DATA_HASH = f"arXiv-{ARXIV}"
"""The data hash of every published result: its own, so no summary or ranking mixes it with genebench's."""
GROUP = f"as published (arXiv {ARXIV}): their data releases and protocol"
"""The label under which published models are shown."""
PROTOCOL = {
    "protocol": "reference", "probe": "LogisticRegression(max_iter=5000) on raw vectors", "scheme": "paper",
    "split": "unseeded StratifiedKFold(5); KFold(5, shuffle) for multi-label tasks",
    "multilabel_auc": "predictions", "missing_genes": "random vectors",
    "data_releases": "HPA v23, UniProt REST 2024, NCBI descriptions via mygene (2024)",
}
"""How the paper's scores were computed, recorded as each published result's `probe`."""
RELATIONS = {"same": "same source and definition", "release": "same definition on another release",
             "protocol": "another protocol (multi-label ROC AUC from hard predictions)", "none": "no counterpart"}
MARKS = {"same": "=", "release": "R", "protocol": "P", "none": "-"}
"""One character per relation, for tables."""
METRICS = {"roc_auc": "roc_auc", "accuracy": "accuracy"}
"""Paper metric -> genebench metric carried over. The paper's precision, recall and F1 are weighted for
categorical and multi-label tasks but of the positive class for binary ones, so no one genebench metric holds them:
they stay in the verbatim table only."""


def bundled_file(name: str, folder: Path = HERE) -> Path:
    """The path of a bundled file of `folder`, once its size and sha256 match the folder's `manifest.json`.

    Raises:
        SourceFormatError: the manifest is unreadable, or the file is absent or differs from it.
    """
    try:
        entry = json.loads((folder / MANIFEST).read_bytes())["files"][name]
        expected = (int(entry["bytes"]), str(entry["sha256"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SourceFormatError(f"published results: '{folder / MANIFEST}' is missing or lists no '{name}' with its "
                                f"sha256 and bytes ({type(exc).__name__}); reinstall genebench.") from None
    path = folder / name
    if not path.is_file() or (path.stat().st_size, file_sha256(path)) != expected:
        raise SourceFormatError(f"published results: '{path}' does not match its sha256 in {folder / MANIFEST}; the "
                                "bundled file was changed or damaged, reinstall genebench.")
    return path


@functools.cache
def long_table() -> pd.DataFrame:
    """The paper's sheet, verbatim: task_name, task_group, model_name, fold, metric, score, task_type, Model family,
    Model (one row per model, task, fold and metric)."""
    return pd.read_csv(bundled_file("published_results.csv.gz"), keep_default_na=False, na_values=[""])


@functools.cache
def task_map() -> pd.DataFrame:
    """Each paper task's genebench task: paper_task, task ("" for none), family, category, type (genebench's),
    relation (see `RELATIONS`), paper_source ("family.source version" the paper used, "" when the same), note."""
    table = pd.read_csv(bundled_file("task_map.csv"), dtype=str, keep_default_na=False)
    bad = table[~table["relation"].isin(RELATIONS) | ((table["relation"] == "none") != (table["task"] == ""))]
    if len(bad):
        raise SourceFormatError(f"published task map: row '{bad.iloc[0]['paper_task']}' has relation "
                                f"'{bad.iloc[0]['relation']}' and task '{bad.iloc[0]['task']}'; expected one of "
                                f"{list(RELATIONS)}, 'none' exactly when there is no task.")
    return table


@functools.cache
def models() -> pd.DataFrame:
    """The paper's models: model (its display name), paper_id, slug (the id results are filed under is
    `arXiv-2412.04075/<slug>`), input (genebench's input kind for such a model) and modality."""
    return pd.read_csv(bundled_file("models.csv"), dtype=str, keep_default_na=False)


def model_id(slug: str) -> str:
    """The id a published model's results are filed under, e.g. 'arXiv-2412.04075/MPNet'."""
    return f"{DATA_HASH}/{slug}"


def select_models(names: Sequence[str] | None = None) -> list[str]:
    """The paper's display names of `names` (matched case-insensitively on display name, paper id or slug); every
    model when `names` is None or empty.

    Raises:
        ResultsError: a name that is none of the paper's models.
    """
    table = models()
    if not names:
        return table["model"].tolist()
    lookup = {str(value).lower(): row.model for row in table.itertuples()
              for value in (row.model, row.paper_id, row.slug)}
    unknown = [name for name in names if name.lower() not in lookup]
    if unknown:
        raise ResultsError(f"--published {unknown[0]}: expected one of the paper's models "
                           f"{', '.join(table['model'])}.")
    return list(dict.fromkeys(lookup[name.lower()] for name in names))


@functools.cache
def fold_scores(metric: str = "roc_auc") -> pd.DataFrame:
    """One row per (paper model, paper task): model, paper_task, its mapping's columns, folds (the 5 fold scores),
    mean and sd (the sample standard deviation of the folds, ddof=1, as pandas gives it)."""
    table = long_table()
    rows = table[table["metric"] == metric].sort_values(["Model", "task_name", "fold"], kind="stable")
    grouped = rows.groupby(["Model", "task_name"], sort=True)["score"]
    scores = pd.DataFrame({"folds": grouped.agg(list), "mean": grouped.mean(), "sd": grouped.std(ddof=1)})
    scores = scores.reset_index().rename(columns={"Model": "model", "task_name": "paper_task"})
    return scores.merge(task_map(), on="paper_task", how="left", validate="many_to_one")


def published_results(names: Sequence[str] | None = None) -> list:
    """The published scores of `names` (default: all 9 models) as genebench `TaskResult`s: one per model and paper
    task, filed under the genebench task it maps to (the paper's name kept as the task's alias; an unmapped task
    keeps its paper name), with ROC AUC (main) and accuracy per fold, and the paper's data releases and protocol as
    its `provenance` and `probe`.

    Coverage is recorded as 0 of 0 rows: the reference gave random vectors to the genes a model lacks, and did not
    publish how many there were.
    """
    from genebench.results import Coverage, MetricScores, TaskResult
    from genebench.tasks.metadata import TaskMetadata

    chosen = select_models(names)
    info = models().set_index("model")
    per_metric = {ours: fold_scores(theirs).set_index(["model", "paper_task"]) for theirs, ours in METRICS.items()}
    main = per_metric["roc_auc"]
    provenance = {"data_hash": DATA_HASH, "n_tasks": int(main.index.get_level_values("paper_task").nunique()),
                "sources": {"paper": {"repository": REPOSITORY, "commit": COMMIT, "releases":
                                      PROTOCOL["data_releases"]}}}
    results = []
    for (model, paper_task), row in main[main.index.get_level_values("model").isin(chosen)].iterrows():
        task = TaskMetadata(
            name=row["task"] or paper_task, family=row["family"] if row["task"] else "paper",
            category=row["category"], type=row["type"],
            aliases=(paper_task,) if row["task"] and row["task"] != paper_task else (),
            description=f"The paper's task '{paper_task}'.", notes=row["note"],
            source_url=f"{REPOSITORY}/tree/{COMMIT}", source_version=row["paper_source"] or "the paper's",
            license=LICENSE, citation=CITATION)
        scores = {}
        for metric, table in per_metric.items():
            folds = [float(v) for v in table.at[(model, paper_task), "folds"]]
            scores[metric] = MetricScores(folds=folds, mean=float(np.mean(folds)), std=float(np.std(folds)))
        results.append(TaskResult(
            genebench_version="published", task=task, provenance=provenance,
            model=_model_info(model, info.loc[model]), probe=dict(PROTOCOL),
            coverage=Coverage(n_covered=0, n_task=0, fraction=0.0), scores=scores, date="2024-12",
            config={"paper": PAPER_URL, "repository": REPOSITORY, "commit": COMMIT, "paper_task": paper_task,
                    "paper_model": model, "relation": row["relation"]},
            diagnostics={"coverage": "not published: the reference gives random vectors to genes a model lacks"}))
    return results


def _model_info(model: str, row: Mapping[str, str]):
    from genebench.model_info import ModelInfo

    return ModelInfo(id=model_id(row["slug"]), revision=f"published-{COMMIT[:12]}", input=row["input"],
                     reference=PAPER_URL, modality=row["modality"], license=LICENSE,
                     settings={"paper_model": model, "paper_id": row["paper_id"]})


def run_relation(relation: str, paper_source: str, run_sources: Mapping[str, Any], run_probe: Mapping[str, Any]) -> str:
    """A mapping's relation for one run: "protocol" becomes "same" when the run scored multi-label ROC AUC from
    hard predictions, and "same" becomes "release" when the run's data holds another release of the source than
    the paper's (`paper_source`, "family.source version").

    Examples:
        >>> sources = {"hpa": {"proteinatlas": "v18.1 (local: proteinatlas_v18.1.tsv.zip)"}}
        >>> run_relation("same", "hpa.proteinatlas v23", sources, {})
        'release'
        >>> run_relation("protocol", "", {}, {"multilabel_auc": "predictions"})
        'same'
    """
    if relation == "protocol" and run_probe.get("multilabel_auc") == "predictions":
        relation = "same"
    if relation == "same" and paper_source:
        where, version = paper_source.split(" ", 1)
        family, key = where.split(".", 1)
        ours = str(run_sources.get(family, {}).get(key, ""))
        if ours.split(" ", 1)[0] != version:
            relation = "release"
    return relation
