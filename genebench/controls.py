"""Control baselines: how well a task can be solved without understanding genes.

A control depends only on the data, so it is computed once per data revision (at build time, or by
`genebench controls --data DIR`) and stored in the data folder as ordinary result files,
``controls/control__<name>/<revision>/<task>.json``, listed and hash-checked in its manifest. Three controls:

- ``name``: bag-of-words over each gene's HGNC symbol and approved name ("Gene symbol HLA-A full name major
  histocompatibility complex, class I, A"), probed like any model (`model_adapters.baselines.BagOfWordsAdapter`
  with description source "hgnc").
- ``identity`` (pair tasks): one indicator per gene, the pair's row holding 1/2 at each of its two genes (the
  engine's "mean" pair mode; PerturbQA's ordered pairs use one indicator block per side, "concat"), fitted
  with the same L2 logistic objective by scikit-learn on the sparse indicators. It measures what knowing
  which genes are paired predicts: each gene's propensity to be labelled positive, learnt from the training
  pairs it appears in. Single-gene tasks have no identity control: under cross-validation a test gene's
  indicator is never trained.
- ``random``: seeded random vectors of `RANDOM_DIM` dimensions (`model_adapters.baselines.RandomAdapter`).

A task on which a control reaches `SHORTCUT_AUC` is shortcut-solvable (`TaskMetadata.is_shortcut_solvable`).
A model's lift on a task is its main score minus the best control's (`TaskResult.lift`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
import scipy.sparse
from tqdm.auto import tqdm

from genebench.data import BenchmarkData
from genebench.errors import GenebenchError
from genebench.metrics import classification_scores
from genebench.model_info import ModelInfo
from genebench.probe.engine import TaskScores, is_ordered_pair, iter_task_scores, main_score_for, summarise_folds
from genebench.probe.settings import ProbeSettings
from genebench.probe.validation import check_labels
from genebench.results import Coverage
from genebench.tasks.metadata import SHORTCUT_AUC, TaskMetadata
from genebench.tasks.task import Task
from genebench.tasks.types import task_type

logger = logging.getLogger(__name__)

CONTROLS_DIR = "controls"
"""The data folder's sub-folder that holds the control results."""
RANDOM_DIM = 384
"""Width of the random control: the median width of the models the README evaluates (Gene2vec 200, Geneformer
256, ESM-2 8M 320, MiniLM 384, BGE-small 384, Nucleotide Transformer 512, ESM-2 650M 1280)."""
CONTROLS: dict[str, str] = {
    "name": "bag-of-words over the HGNC symbol and approved name",
    "identity": "one indicator per gene of a pair (pair tasks)",
    "random": f"seeded random vectors of {RANDOM_DIM} dimensions",
}
"""Control name -> what its features are."""

__all__ = ["CONTROLS", "CONTROLS_DIR", "RANDOM_DIM", "SHORTCUT_AUC", "IDENTITY", "control_scores", "control_table",
           "score_controls"]


IDENTITY = ModelInfo(id="control/identity", revision="one-hot", input="precomputed",
                     settings={"control": CONTROLS["identity"]})
"""The identity control's model record: a table of one-hot gene vectors, never materialised."""


def score_controls(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings, *,
                   names: Sequence[str] = tuple(CONTROLS),
                   progress: bool = True) -> Iterator[tuple[ModelInfo, TaskScores]]:
    """Score controls on `tasks`, yielding (the control's model record, task scores) as each task finishes.

    Records are filed under ``control/<name>`` (`ModelInfo.id`).

    Args:
        data: the data the tasks come from (its HGNC table and gene-set members).
        tasks: the tasks, without controls in their metadata.
        settings: the probe settings every control is fitted with.
        names: which controls (default all of `CONTROLS`).
        progress: show a progress bar per control.

    Raises:
        GenebenchError: an unknown control name.
    """
    from genebench.pipeline import partner_embeddings, task_genes
    from model_adapters.baselines import BagOfWordsAdapter, RandomAdapter

    unknown = sorted(set(names) - set(CONTROLS))
    if unknown:
        raise GenebenchError(f"controls {unknown}: expected names among {list(CONTROLS)}.")
    genes, hgnc = task_genes(tasks), data.hgnc()
    adapters = {"name": lambda: BagOfWordsAdapter("control/name", hgnc=hgnc, source="hgnc"),
                "random": lambda: RandomAdapter("control/random", hgnc=hgnc, dim=RANDOM_DIM)}
    for name in (n for n in adapters if n in names):
        adapter = adapters[name]()
        embeddings = adapter.encode(genes)
        model = embeddings.model.model_copy(update={"settings": {**embeddings.model.settings,
                                                                 "control": CONTROLS[name]}})
        partners = partner_embeddings(tasks, embeddings, data, adapter)
        scored = iter_task_scores(tasks, embeddings, settings, partner_embeddings=partners)
        yield from ((model, scores) for scores in tqdm(scored, total=len(tasks), desc=f"control {name}",
                                                        unit="task", disable=not progress))
    pairs = [task for task in tasks if "identity" in names and len(task.metadata.entity_types) == 2
             and task_type(task.metadata.type).target == "binary"]
    for task in tqdm(pairs, desc="control identity", unit="task", disable=not progress):
        yield IDENTITY, identity_scores(task, settings)


def control_scores(data: BenchmarkData, tasks: Sequence[Task], settings: ProbeSettings) -> dict[str, dict[str, float]]:
    """Each control's main score on each of `tasks` as given (e.g. restricted to the rows a model covers):
    task name -> control name -> score. Tasks a control cannot score are left out of its entries."""
    scores: dict[str, dict[str, float]] = {}
    for model, result in score_controls(data, tasks, settings, progress=False):
        if result.scores:
            scores.setdefault(result.task.name, {})[model.id.split("/", 1)[1]] = result.scores[result.main_score].mean
    return scores


def identity_scores(task: Task, settings: ProbeSettings) -> TaskScores:
    """Score a binary pair task from gene indicators alone (the ``identity`` control).

    Args:
        task: a binary task over (gene, partner) pairs.
        settings: its C, tol and max_iter are the probe's.

    Returns:
        The task's scores, every row covered.
    """
    from sklearn.linear_model import LogisticRegression

    start = time.perf_counter()
    X = _indicators(task.entities, ordered=is_ordered_pair(task))
    labels, folds = np.asarray(task.labels), np.asarray(task.folds)
    n = len(labels)
    result = TaskScores(task=task, main_score=main_score_for(task), coverage=Coverage(n_covered=n, n_task=n,
                                                                                       fraction=1.0))
    result.skipped = check_labels(task.metadata.type, labels, folds, min_covered=settings.min_covered)
    if result.skipped is None:
        readout = np.asarray(task.entities[:, 1], dtype=str) if is_ordered_pair(task) else None
        per_fold, n_iter = [], []
        for fold in range(int(folds.max()) + 1):
            train, test = folds != fold, folds == fold
            probe = LogisticRegression(C=settings.C, tol=settings.tol, max_iter=settings.max_iter)
            probe.fit(X[train], labels[train])
            n_iter.append(int(probe.n_iter_[0]))
            per_fold.append(classification_scores(labels[test], probe.predict_proba(X[test])[:, 1],
                                                  task_type=task.metadata.type,
                                                  groups=None if readout is None else readout[test]))
        scores = summarise_folds(per_fold)
        if np.isfinite(scores[result.main_score].mean):
            result.scores = scores
            result.diagnostics = {"solver": "scikit-learn lbfgs on sparse gene indicators",
                                  "n_features": X.shape[1], "n_iter_max": max(n_iter)}
        else:
            result.skipped = f"{result.main_score} is undefined: no held-out group has both classes"
    result.seconds = time.perf_counter() - start
    return result


def _indicators(entities: np.ndarray, *, ordered: bool) -> scipy.sparse.csr_matrix:
    """Sparse pair rows, shape (n_pairs, n_entities): 1/2 at each gene ("mean"), or one block per side."""
    entities = np.asarray(entities, dtype=str)
    n = len(entities)
    if ordered:
        _, first = np.unique(entities[:, 0], return_inverse=True)
        _, second = np.unique(entities[:, 1], return_inverse=True)
        columns, value, width = np.stack([first, second + first.max() + 1], axis=1), 1.0, first.max() + second.max() + 2
    else:
        names, codes = np.unique(entities, return_inverse=True)
        columns, value, width = codes.reshape(n, 2), 0.5, len(names)
    matrix = scipy.sparse.csr_matrix((np.full(2 * n, value), (np.repeat(np.arange(n), 2), columns.ravel())),
                                     shape=(n, int(width)))
    matrix.sum_duplicates()  # a gene paired with itself: one indicator of 1
    return matrix


def control_table(tasks: Sequence[TaskMetadata]) -> pd.DataFrame:
    """One row per task: each control's main score, the best control and whether it is shortcut-solvable."""
    rows = []
    for meta in tasks:
        best = meta.best_control
        scores = {name: meta.controls.get(name, np.nan) for name in CONTROLS}
        rows.append({"task": meta.name, "type": meta.type, **scores, "best": best[0] if best else None,
                     "shortcut": meta.is_shortcut_solvable})
    return pd.DataFrame(rows, columns=["task", "type", *CONTROLS, "best", "shortcut"])
