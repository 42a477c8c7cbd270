"""The probe engine: batched linear probes over gene embeddings, with validation and settings."""

from genebench.probe.engine import (
    ProbeEngine,
    TaskScores,
    evaluate_task,
    evaluate_tasks,
    iter_task_scores,
    main_score_for,
    task_units,
)
from genebench.probe.settings import ProbeSettings
from genebench.probe.solvers import Basis, LogisticFit, fit_logistic, fit_ridge
from genebench.probe.validation import check_dims, check_embeddings, check_labels

__all__ = [
    "Basis",
    "LogisticFit",
    "ProbeEngine",
    "ProbeSettings",
    "TaskScores",
    "check_dims",
    "check_embeddings",
    "check_labels",
    "evaluate_task",
    "evaluate_tasks",
    "fit_logistic",
    "fit_ridge",
    "iter_task_scores",
    "main_score_for",
    "task_units",
]
