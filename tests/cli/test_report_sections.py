"""`report` draws every section it prints: a run scored under family folds alone gets its own figures, drawn by the
run's figure code from the same rows as its table."""

import pytest

from genebench.cli import main
from genebench.report import by_scheme, category_tables, headline_figure, report_sections
from genebench.results import load_results, summarised_rows, vote_means

TASKS = ["long vs short range TF", "HLA class I vs class II", "dosage sensitive vs insensitive TF"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections")
    for seed, folds in ((1, ["paper", "family"]), (2, ["family"])):
        assert main(["run", "--input", "random", "--seed", str(seed), "--name", f"test/random-{seed}", "--scheme",
                     *folds, "--tasks", *TASKS, "--out", str(root / f"m{seed}")]) == 0
    assert main(["report", str(root / "m1"), str(root / "m2"), "--out", str(root / "report")]) == 0
    return root


def test_a_family_only_section_gets_its_own_figures(report, capsys):
    results = load_results([report / "m1", report / "m2"])
    sections = report_sections(results)
    assert list(sections) == list(category_tables(results)) == ["paper folds", "family folds only"]
    alone, beside = sections["family folds only"]
    assert beside is None and set(alone["label"]) == {"test/random-2"} and set(alone["scheme"]) == {"family"}
    out = report / "report"
    for stem in ("heatmap", "categories", "heatmap_family_folds_only", "categories_family_folds_only"):
        assert (out / f"{stem}.png").stat().st_size > 1000 and (out / f"{stem}.svg").stat().st_size > 1000
    page = (out / "report.html").read_text()
    assert "<img src='categories_family_folds_only.svg' alt='mean AUC by category, family folds only'>" in page
    figure = headline_figure(by_scheme(alone))  # what write_report drew for the section: one model, family folds
    shown = [text.get_text() for ax in figure.axes for text in ax.texts]
    means = vote_means(summarised_rows(alone[alone["is_main"]]), ["category"]).set_index("category")["mean"]
    assert len(means) and all(any(text.startswith(f"{mean:.3f}  n=") for text in shown) for mean in means)
    assert figure.texts[0].get_text() == "test/random-2: by category, family folds"
