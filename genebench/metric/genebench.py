"""genebench as an `evaluate` metric: a thin, typed shell over `genebench.metrics`.

Load it offline with ``evaluate.load("<path to this file or its folder>", config_name)`` or use the
class directly (``Genebench(config_name="binary")``). One config per task type; the math lives in
plain functions in `genebench.metrics`, so only this module pays for importing `evaluate`.
"""

import datasets
import evaluate
import numpy as np

from genebench import metrics
from genebench.tasks.types import task_type

_CITATION = """\
@article{kantor2024genes,
  title={Does your model understand genes? A benchmark of gene properties for biological and text models},
  author={Kan-Tor, Yoav and Danziger, Michael Morris and Zohar, Eden and Ninio, Matan and Shimoni, Yishai},
  journal={arXiv preprint arXiv:2412.04075},
  year={2024}
}
@inproceedings{wu2025perturbqa,
  title={Contextualizing biological perturbation experiments through language},
  author={Wu, Menghua and others},
  booktitle={ICLR},
  year={2025}
}
"""

_DESCRIPTION = """\
The genebench metrics for linear probes of gene representations. ROC AUC is the primary score and is
always computed from predicted probabilities: one-vs-rest and weighted over classes for categorical
tasks, weighted over labels for multi-label tasks. Weighted F1, precision and recall and accuracy are
computed from thresholded (0.5) or most-probable predictions. The `perturbqa` config adds PerturbQA's
`auc_per_gene`; `regression` gives R2, RMSE and Spearman; `summary` gives ROUGE-1 recall and BERTScore
for gene-set summaries (install the `text` extra for it: `pip install -e ".[text]"` in the genebench clone).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: probabilities. `binary`, `perturbqa`: P(positive) per row. `categorical`: one probability
        per class per row. `multi-label`: one probability per label per row. `regression`: predicted values.
        `summary`: generated summaries (strings).
    references: `binary`, `perturbqa`: 0/1. `categorical`: class indices. `multi-label`: multi-hot rows.
        `regression`: true values. `summary`: reference summaries.
    groups: `perturbqa` only: the read-out gene of each row.
    bertscore_model: `summary` only: Hub id or local folder of the BERTScore model (default roberta-large).
    bertscore_layers: `summary` only: which layer to use (required for models bert-score does not know).
Returns:
    A dict of metric name -> value.
Examples:
    >>> metric = Genebench(config_name="binary")
    >>> metric.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[0, 0, 1, 1])["roc_auc"]
    0.75
"""

_FEATURES = {
    "binary": {"predictions": datasets.Value("float64"), "references": datasets.Value("int32")},
    "perturbqa": {"predictions": datasets.Value("float64"), "references": datasets.Value("int32")},
    "categorical": {"predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": datasets.Value("int32")},
    "multi-label": {"predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": datasets.Sequence(datasets.Value("int32"))},
    "regression": {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")},
    "summary": {"predictions": datasets.Value("string"), "references": datasets.Value("string")},
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Genebench(evaluate.Metric):
    """The genebench metric; `config_name`: binary, categorical, multi-label, perturbqa, regression or summary."""

    def _info(self):
        if self.config_name not in _FEATURES:
            raise KeyError(f"genebench metric: expected a config_name in {sorted(_FEATURES)}, found "
                           f"{self.config_name!r}; pass it as evaluate.load(path, config_name).")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_FEATURES[self.config_name]),
            reference_urls=["https://arxiv.org/abs/2412.04075", "https://arxiv.org/abs/2502.21290"],
        )

    def _compute(self, predictions, references, groups=None, bertscore_model="roberta-large",
                 bertscore_layers=None):
        if self.config_name == "summary":
            scores = {"rouge1_recall": metrics.rouge1_recall(predictions, references)}
            return scores | metrics.bertscore(predictions, references, model_type=bertscore_model,
                                              num_layers=bertscore_layers)
        y_score, y_true = np.asarray(predictions, dtype=np.float64), np.asarray(references)
        if self.config_name == "perturbqa":
            if groups is None:
                raise ValueError("genebench metric 'perturbqa': expected groups= (the read-out gene of each row), "
                                 "found none.")
            return metrics.classification_scores(y_true, y_score, task_type="binary", groups=np.asarray(groups))
        if not task_type(self.config_name).is_classification:
            return metrics.regression_scores(y_true, y_score)
        return metrics.classification_scores(y_true, y_score, task_type=self.config_name)
