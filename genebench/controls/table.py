"""The table of controls: what each one reads, what it guards against, and how it is fitted and stored.

A control is one `Control` record here plus its feature function in `genebench.controls.features`; everything else
(fitting under each fold scheme, storage, covered-row scoring, lift, added over names) reads this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from genebench.registry import Registry
from genebench.tasks.metadata import SHORTCUT_AUC, TaskMetadata
from genebench.tasks.types import task_type

RANDOM_DIM = 384
"""Width of the random control: the median width of the models the README evaluates (Gene2vec 200, Geneformer
256, ESM-2 8M 320, MiniLM 384, BGE-small 384, Nucleotide Transformer 512, ESM-2 650M 1280)."""
RANDOM_SEEDS = (0, 1, 2, 3, 4)
"""The random control's first round of seeds, on every task; each further round is the next as many seeds."""
RANDOM_MAX_SE = 0.01
"""Seeds are added to a task's random control while the standard error of its mean is above this."""
RANDOM_MAX_SEEDS = 100
"""The most seeds the random control is scored with on one task."""
STORED_TOL = 1e-6
"""The stopping tolerance of the controls whose predictions are stored: at the probe's 1e-4 a small task's score can
stop 0.005 short of scikit-learn's optimum (0.6067 against 0.6013 on "long vs short range TF"); at 1e-6 it is within
1e-4 of it (`tests/test_controls.py`)."""


def _every_task(meta: TaskMetadata) -> bool:
    return True


@dataclass(frozen=True)
class Control:
    """One control baseline.

    Attributes:
        name: its name in the control table, results and reports.
        features: what it reads, in a few words.
        guards: what a model's score over it rules out.
        target: its feature function, "module:function" (`genebench.controls.features`), imported when it is
            fitted: (data, tasks, settings, seed) -> task scores with held-out predictions, one per task.
        applies: which tasks it is fitted on.
        seeded: scored over seeds (`RANDOM_SEEDS` and more, see `genebench.controls.fit.random_seeds_left`) and
            stored as their mean and spread, without predictions; else fitted once and its held-out predictions
            stored, so that covered rows and added over names are scored without a refit.
        tol: the probe's stopping tolerance for this control (`ProbeSettings.tol`); None keeps the settings'. A
            control whose score every model is compared with is fitted to its optimum (`STORED_TOL`).
    """

    name: str
    features: str
    guards: str
    target: str
    applies: Callable[[TaskMetadata], bool] = _every_task
    seeded: bool = False
    tol: float | None = None


CONTROLS: Registry[Control] = Registry("control", {control.name: control for control in (
    Control("name", "words of the HGNC symbol, approved name, previous symbols and aliases, character n-grams of "
            "the symbols, and all-MiniLM-L6-v2's vector of 'Gene symbol <symbol> full name <name>'",
            "labels that a gene's names spell out (\"kinase\", \"class I\", a family's symbol "
            "stem)", "genebench.controls.features:names", tol=STORED_TOL),
    Control("identity", "one indicator per gene of a pair (pair tasks)",
            "pairs solved by knowing which genes they hold: each gene's propensity to be labelled positive",
            "genebench.controls.features:identity", tol=STORED_TOL,
            applies=lambda meta: len(meta.entity_types) == 2 and task_type(meta.type).is_binary),
    Control("random", f"seeded random vectors of {RANDOM_DIM} dimensions (mean over {len(RANDOM_SEEDS)} seeds, more "
            f"until its standard error is at most {RANDOM_MAX_SE})", "scores that chance and the probe alone reach",
            "genebench.controls.features:random_vectors", seeded=True),
)})
"""Control name -> its record, in the order they are fitted and shown."""

STORED_PREDICTIONS = tuple(name for name, control in CONTROLS.items() if not control.seeded)
"""Controls whose per-row held-out predictions are stored (`genebench.controls.stored`)."""


def control_table(tasks: list[TaskMetadata]) -> pd.DataFrame:
    """One row per task: each control's main score, the best control and whether it is shortcut-solvable
    (a control reaches `SHORTCUT_AUC`)."""
    rows = []
    for meta in tasks:
        best = meta.best_control
        scores = {name: meta.controls.get(name, float("nan")) for name in CONTROLS}
        rows.append({"task": meta.name, "type": meta.type, **scores, "best": best[0] if best else None,
                     "shortcut": meta.is_shortcut_solvable})
    return pd.DataFrame(rows, columns=["task", "type", *CONTROLS, "best", "shortcut"])


__all__ = ["CONTROLS", "RANDOM_DIM", "RANDOM_MAX_SE", "RANDOM_MAX_SEEDS", "RANDOM_SEEDS", "SHORTCUT_AUC",
           "STORED_PREDICTIONS", "Control", "control_table"]
