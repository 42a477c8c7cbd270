"""Control baselines: computed at build time from real sources, stored and hash-checked, shown as lift."""

import json
import shutil

import pytest

from genebench.build import add_controls, build_data
from genebench.cli import main
from genebench.controls import RANDOM_DIM, identity_scores, score_controls
from genebench.data import BenchmarkData, open_data
from genebench.errors import SourceFormatError
from genebench.probe.settings import ProbeSettings
from genebench.tasks.metadata import SHORTCUT_AUC

HLA = "HLA class I vs class II"


@pytest.fixture(scope="module")
def hgnc_data(shared_data, tmp_path_factory):
    """The hgnc family built from the real HGNC release, with its controls."""
    return build_data(tmp_path_factory.mktemp("hgnc"), ["hgnc"], sources_dir=shared_data, progress=False)


@pytest.fixture(scope="module")
def gene2gene(shared_data, tmp_path_factory):
    """Gene2Gene and Gene2Gene (cold genes) built from Gene2vec's real predictionData, without controls."""
    return build_data(tmp_path_factory.mktemp("g2g"), ["gene2gene"], sources_dir=shared_data, controls=False,
                      progress=False)


def test_names_solve_hla_class_so_it_is_flagged(hgnc_data):
    meta = hgnc_data.metadata(HLA)
    assert meta.controls["name"] >= SHORTCUT_AUC  # "class I" / "class II" is in the approved names
    assert meta.controls["random"] < 0.75
    assert meta.best_control[0] == "name" and meta.is_shortcut_solvable
    assert "identity" not in meta.controls  # single-gene tasks have no identity control


def test_controls_are_hash_checked_files_outside_the_data_revision(hgnc_data, tmp_path):
    manifest = hgnc_data.manifest
    files = manifest["controls"]["files"]
    assert {f.split("/")[1] for f in files} == {"control__name", "control__random"}
    assert set(files) <= set(manifest["files"])
    hgnc_data.verify()
    copy = tmp_path / "data"
    shutil.copytree(hgnc_data.path, copy)
    again = add_controls(copy, progress=False)
    assert again.revision["data_hash"] == hgnc_data.revision["data_hash"]  # controls are derived, not data
    assert again.metadata(HLA).controls == hgnc_data.metadata(HLA).controls  # seeded: the same scores again
    target = copy / files[0]
    text = target.read_text()
    target.write_text(text.replace('"mean": 0', '"mean": 1', 1) if '"mean": 0' in text else text[:-1] + " ")
    with pytest.raises(SourceFormatError, match="does not match its sha256"):
        BenchmarkData(copy).verify()


@pytest.mark.slow
def test_identity_control_solves_gene2gene_but_not_its_cold_split(gene2gene):
    """Gene2vec's negatives come from genes that rarely have positives: identity alone nearly solves the task."""
    settings = ProbeSettings()
    pairs = gene2gene.load_task("Gene2Gene")
    assert identity_scores(pairs, settings).scores["roc_auc"].mean > 0.9
    cold = gene2gene.load_task("Gene2Gene (cold genes)")
    report = cold.metadata.symbol_report
    assert len(cold.folds) + report["n_cross_group"] == len(pairs.folds)  # every pair is kept or counted
    assert 0.15 < len(cold.folds) / len(pairs.folds) < 0.25
    test, train = cold.entities[cold.folds == 0], cold.entities[cold.folds != 0]
    assert not set(test.ravel()) & set(train.ravel())
    assert abs(identity_scores(cold, settings).scores["roc_auc"].mean - 0.5) < 0.03
    random = {model.id: scores for model, scores in score_controls(gene2gene, [cold], settings, progress=False)}
    random = random["control/random"]
    assert abs(random.scores["roc_auc"].mean - 0.5) < 0.03


def test_perturbqa_tests_unseen_perturbations_so_identity_is_chance():
    """PerturbQA's published split holds out perturbations: no test perturbation is perturbed in training."""
    data = open_data()
    names = [meta.name for meta in data.tasks() if meta.family == "perturbqa"]
    assert len(names) == 10
    for name in names:
        task = data.load_task(name)
        train, test = task.folds == -1, task.folds == 0
        assert test.any() and not set(task.entities[test, 0]) & set(task.entities[train, 0]), name
    task = data.load_task("PerturbQA k562 dir")
    assert identity_scores(task, ProbeSettings()).scores["auc_per_gene"].mean == pytest.approx(0.5)


def test_bundled_snapshot_ships_every_control():
    data = open_data()
    assert data.manifest["controls"]["names"] == ["name", "identity", "random"]
    pairs = [meta for meta in data.tasks() if len(meta.entity_types) == 2]
    assert len(pairs) == 12 and all("identity" in meta.controls for meta in pairs)
    assert all({"name", "random"} <= set(meta.controls) for meta in data.tasks())
    assert data.metadata("HLA class I vs class II").controls["name"] == pytest.approx(1.0)
    assert data.metadata("HLA class I vs class II").is_shortcut_solvable
    assert data.metadata("Gene2Gene").controls["identity"] == pytest.approx(0.976, abs=1e-3)
    cold = data.metadata("Gene2Gene (cold genes)").controls
    assert cold["identity"] == pytest.approx(0.5) and abs(cold["random"] - 0.5) < 0.03
    assert max(meta.controls["random"] for meta in data.tasks() if meta.name != "Gene2Gene") < 0.8
    data.verify()


def test_controls_command_prints_the_table_and_flags(hgnc_data, tmp_path, capsys):
    copy = tmp_path / "data"
    shutil.copytree(hgnc_data.path, copy)
    assert main(["controls", "--data", str(copy), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "1 shortcut-solvable: HLA class I vs class II" in out
    manifest = json.loads((copy / "genebench.json").read_text())
    assert manifest["controls"]["seconds"] > 0 and RANDOM_DIM == 384
    assert main(["controls", "--data", str(copy), "--only", "name", "--quiet"]) == 0
    only = BenchmarkData(copy)
    assert only.manifest["controls"]["names"] == ["name"] and set(only.metadata(HLA).controls) == {"name"}
    assert {path.name for path in (copy / "controls").iterdir()} == {"control__name"}
    assert main(["controls", "--data", str(tmp_path / "nowhere")]) == 2
    assert "no genebench.json" in capsys.readouterr().err


def test_random_control_cannot_rank_held_out_genes():
    """Random vectors say nothing about a held-out gene, so a rare label stays near chance (5 positives per fold).

    A probe whose fold fits start from a fit on every row would remember the held-out positives and score ~1.0.
    """
    from genebench.pipeline import task_genes
    from genebench.probe.engine import iter_task_scores
    from model_adapters.baselines import RandomAdapter

    data = open_data()
    tasks = [data.load_task("Pathways"), data.load_task("Pathways;Digestion and absorption")]
    embeddings = RandomAdapter(hgnc=data.hgnc(), dim=RANDOM_DIM).encode(task_genes(tasks))
    scores = {s.task.name: s.scores["roc_auc"].mean for s in iter_task_scores(tasks, embeddings)}
    assert abs(scores["Pathways"] - 0.5) < 0.02
    assert scores["Pathways;Digestion and absorption"] < 0.8


def test_lift_on_a_partly_covered_task_is_over_controls_rescored_on_its_rows(tmp_path):
    import numpy as np

    from genebench.controls import control_scores
    from genebench.errors import SubmissionError
    from genebench.leaderboard.validate import check_scores
    from genebench.pipeline import run_probes
    from genebench.results import read_result, result_path
    from genebench.tasks.task import Task
    from model_adapters.baselines import RandomAdapter

    data = open_data()
    partly, fully = (data.load_task(name) for name in ("long vs short range TF", "N1 network"))
    genes = sorted({str(g) for task in (partly, fully) for g in task.genes()})
    dropped = set(partly.genes().tolist()[::3])  # a third of the first task's genes get no vector
    embeddings = RandomAdapter("test/random-64", hgnc=data.hgnc(), dim=64).encode(
        [g for g in genes if g not in dropped or g in set(fully.genes().tolist())])
    assert not set(fully.genes().tolist()) - set(embeddings.symbols.tolist())
    settings = ProbeSettings(device="cpu")
    before, _ = run_probes([partly, fully], embeddings, tmp_path, settings=settings, dataset_revision=data.revision,
                           progress=False)  # without the data: the stored controls, as an interrupted run leaves it
    assert "controls_on_covered_rows" not in before.diagnostics
    partial, full = run_probes([partly, fully], embeddings, tmp_path, settings=settings,
                               dataset_revision=data.revision, progress=False, data=data)  # resumes: rescores only
    assert partial.scores == before.scores

    rows = np.flatnonzero(np.isin(partly.entities.astype(str), embeddings.symbols.astype(str)))
    assert 0 < partial.coverage.n_covered == len(rows) < len(partly.folds)
    expected = control_scores(data, [Task(partly.metadata, partly.entities[rows], partly.labels[rows],
                                          partly.folds[rows])], settings)[partly.name]
    assert partial.diagnostics["controls_on_covered_rows"] == expected == partial.controls
    assert read_result(result_path(tmp_path, partial.model, partly.name)) == partial  # what was written
    assert expected != partly.metadata.controls  # the same controls on fewer genes score differently
    assert partial.lift == round(partial.scores["roc_auc"].mean - max(expected.values()), 6)
    check_scores(partial, source="partial.json")  # a submission of it validates: its lift is over these controls
    with pytest.raises(SubmissionError, match="partial.json: lift"):
        check_scores(partial.model_copy(update={"lift": partial.lift + 0.01}), source="partial.json")
    assert "controls_on_covered_rows" not in full.diagnostics  # fully covered: the stored controls, no rework
    assert full.lift == round(full.scores["roc_auc"].mean - max(fully.metadata.controls.values()), 6)
