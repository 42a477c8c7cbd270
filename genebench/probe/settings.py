"""Probe settings: one frozen record with declared bounds, recorded with every result."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, get_args

from genebench.metrics import MULTILABEL_AUC
from genebench.tasks.metadata import FOLD_SCHEMES, Scheme

Scale = Literal["none", "standard"]
"""How probe features are scaled: "none" (raw, the paper's protocol) or "standard" (per fold)."""

_BOUNDS: dict[str, tuple[float, float | None, str]] = {
    "C": (0.0, None, "(0, inf)"),
    "tol": (0.0, None, "(0, inf)"),
    "max_iter": (1, None, "[1, inf)"),
    "memory": (1, 100, "[1, 100]"),
    "ridge_alpha": (0.0, None, "(0, inf)"),
    "min_covered": (2, None, "[2, inf)"),
}
"""Parameter -> (lower, upper, interval as written). A lower bound of 0.0 is open, an integer one closed."""

_CHOICES: dict[str, tuple[str, ...]] = {
    "scale": get_args(Scale),
    "scheme": FOLD_SCHEMES,
    "categorical": ("multinomial", "ovr"),
    "pair_mode": ("mean", "concat"),
    "ordered_pair_mode": ("concat", "mean"),
    "device": ("auto", "cpu", "cuda"),
    "multilabel_auc": MULTILABEL_AUC,
}


@dataclass(frozen=True)
class ProbeSettings:
    """How every probe is fitted. The defaults are the paper's: `LogisticRegression(C=1, max_iter=5000)` on the
    raw features.

    Args:
        scale: "none" fits the raw features (the paper's protocol); "standard" standardises each fold's
            features with its training rows first (genebench before 0.2; it moves small tasks' AUC by up to 0.08).
        C: inverse L2 strength of the logistic probes, as in scikit-learn's `LogisticRegression`
            (the objective is ``mean(log loss) + ||w||^2 / (2 C n_train)``; the intercept is not penalised).
        tol: stop when every entry of that objective's gradient is at most `tol` in absolute value
            (scikit-learn's lbfgs `gtol`).
        max_iter: iteration cap per solve; iterations used are recorded with each result.
        memory: L-BFGS history length.
        categorical: "multinomial" (one softmax probe; recommended) or "ovr" (one probe per class,
            probabilities renormalised as scikit-learn does).
        pair_mode: unordered gene pairs: "mean" of the two vectors (the reference) or "concat".
        ordered_pair_mode: ordered pairs scored per read-out gene (PerturbQA: perturbed gene, read-out
            gene): "concat" (default, keeps which gene is which) or "mean".
        ridge_alpha: L2 strength of the ridge probe for regression tasks.
        min_covered: a task with fewer covered rows is skipped (recorded in its result).
        scheme: the fold scheme: "paper" (the paper's label-stratified folds) or "family" (gene families held out
            together). Pair and train-test tasks keep their own split under both.
        device: "cpu" (numpy), "cuda" (torch on the GPU) or "auto" (cuda when torch sees one).
        multilabel_auc: "probabilities" (default) or "predictions": multi-label ROC AUC from hard 0/1 predictions,
            the reference's (`genebench.metrics.MULTILABEL_AUC`), to reproduce the paper, not to measure a model.
            Recorded in `to_dict` (and so in the run identity) only when not the default.

    Examples:
        >>> ProbeSettings(C=0.5).C
        0.5
    """

    scale: Scale = "none"
    C: float = 1.0
    tol: float = 1e-4
    max_iter: int = 5000
    memory: int = 10
    categorical: Literal["multinomial", "ovr"] = "multinomial"
    pair_mode: Literal["mean", "concat"] = "mean"
    ordered_pair_mode: Literal["concat", "mean"] = "concat"
    ridge_alpha: float = 1.0
    min_covered: int = 10
    scheme: Scheme = "paper"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    multilabel_auc: Literal["probabilities", "predictions"] = "probabilities"

    def __post_init__(self) -> None:
        for name, (low, high, interval) in _BOUNDS.items():
            value = getattr(self, name)
            is_int = isinstance(low, int)
            ok = isinstance(value, int if is_int else (int, float)) and not isinstance(value, bool)
            if ok:
                ok = math.isfinite(value) and (value >= low if is_int else value > low) and (high is None
                                                                                             or value <= high)
            if not ok:
                kind = "an int" if is_int else "a finite number"
                raise ValueError(f"ProbeSettings.{name}: expected {kind} in {interval}, found {value!r}; pass a value "
                                 "in range.")
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"ProbeSettings.{name}: expected one of {list(choices)}, found {value!r}.")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (recorded in each result's `probe`); `multilabel_auc` only when it is not
        the default, so runs made before it existed keep their identity."""
        settings = asdict(self)
        if settings["multilabel_auc"] == "probabilities":
            del settings["multilabel_auc"]
        return settings

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ProbeSettings:
        """Settings from a dict such as a result's `probe`; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"ProbeSettings: unknown settings {unknown}; expected some of {sorted(known)}.")
        return cls(**values)
