"""The run's figure is the headline: per category, paper-fold and family-fold AUC beside the best control, and added
over names with its interval, every value drawn as the tables print it; an honest axis; --exclude-flagged draws a
figure of its own."""

import numpy as np
import pytest

from genebench.cli import main
from genebench.report import axis_start, by_scheme, headline_figure, metric_label
from genebench.results import added_summary, format_added, load_results, summarised_rows, vote_means

TASKS = ["long vs short range TF", "HLA class I vs class II", "dosage sensitive vs insensitive TF"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figure") / "out"
    assert main(["run", "--input", "random", "--tasks", *TASKS, "--exclude-flagged", "--out", str(out)]) == 0
    return out


def texts(figure) -> list[str]:
    return [text.get_text() for ax in figure.axes for text in ax.texts]


def test_the_headline_figure_draws_both_schemes_and_added_over_names(run):
    results = load_results(run)
    schemes = by_scheme(results)
    figure = headline_figure(schemes)
    shown = texts(figure)
    for scheme, rows in schemes.items():
        scored = summarised_rows(rows[rows["is_main"]])
        for category, mean in vote_means(scored, ["category"]).set_index("category")["mean"].items():
            assert any(text.startswith(f"{mean:.3f}  n=") for text in shown), (scheme, category)
    family = summarised_rows(schemes["family"][schemes["family"]["is_main"]])
    for category in family["category"].unique():
        assert format_added(*added_summary(family[family["category"] == category])) in shown
    assert "paper folds and family folds" in figure.texts[0].get_text()
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["paper folds", "family folds",
                                                                     "best control, same tasks"]
    auc, gain = figure.axes
    low = auc.get_xlim()[0]
    assert low == 0.5 or f"the axis starts at {low:g}, below chance" in auc.get_xlabel()
    assert "added over names (family folds)" in gain.get_xlabel()


def test_exclude_flagged_draws_its_own_figure(run):
    assert (run / "figures" / "categories_without_flagged.png").stat().st_size > 1000
    assert not (run / "figures" / "categories.png").exists()  # no figure of other tasks under a run's name


def test_axis_and_metric_labels_say_what_they_show(run):
    assert axis_start(np.array([0.55, 0.9])) == (0.5, "")
    assert axis_start(np.array([0.47]))[0] == 0.4
    results = load_results(run)
    assert metric_label(results) == "ROC AUC"
    perturb = results.assign(metric=np.where(results["is_main"], "auc_per_gene", results["metric"]))
    assert "auc_per_gene" in metric_label(perturb)
