"""Control baselines: computed at build time from real sources, stored and hash-checked, shown as lift."""

import json
import shutil

import numpy as np
import pytest

from genebench.build import build_data
from genebench.cli import main
from genebench.controls.build import add_controls
from genebench.controls.covered import covered_control_scores, score_values
from genebench.controls.features import identity_scores
from genebench.controls.fit import SeedScores, fit_controls, held_out_values, random_seeds_left
from genebench.controls.stored import CONTROL_SCORES, decode_predictions, encode_predictions
from genebench.controls.table import RANDOM_DIM, RANDOM_MAX_SE, RANDOM_MAX_SEEDS, RANDOM_SEEDS
from genebench.data import BenchmarkData, open_data
from genebench.errors import GenebenchError, SourceFormatError
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


@pytest.mark.shared_data
def test_names_solve_hla_class_so_it_is_flagged_but_family_folds_cannot_score_it(hgnc_data):
    meta = hgnc_data.metadata(HLA)
    assert meta.controls["name"] >= SHORTCUT_AUC  # "class I" / "class II" is in the approved names
    assert meta.controls["random"] < 0.75
    assert meta.best_control[0] == "name" and meta.is_shortcut_solvable
    assert "identity" not in meta.controls  # single-gene tasks have no identity control
    assert meta.family_report["n_families"] == 2 and meta.family_report["labels_missing_a_fold"]
    assert meta.family_unscorable.startswith("labels cannot be split by gene family: 44 genes in 2 families")
    assert hgnc_data.metadata(HLA, "family").controls == {}  # never scored under family folds
    skipped = hgnc_data.control_table.query("folds == 'family'")["skipped"]
    assert (skipped == meta.family_unscorable).all()


@pytest.mark.shared_data
def test_controls_are_hash_checked_files_outside_the_data_revision(hgnc_data, tmp_path):
    manifest = hgnc_data.manifest
    files = manifest["controls"]["files"]
    assert files == ["controls/name-paper.parquet", CONTROL_SCORES]  # HLA has no family folds: no family file
    assert set(files) <= set(manifest["files"]) and manifest["controls"]["random_seeds"] == list(RANDOM_SEEDS)
    hgnc_data.verify()
    copy = tmp_path / "data"
    shutil.copytree(hgnc_data.path, copy)
    again = add_controls(copy, progress=False)
    assert again.data_hash == hgnc_data.data_hash  # controls are derived, not data
    assert again.metadata(HLA).controls == hgnc_data.metadata(HLA).controls  # seeded: the same scores again
    for relative in (CONTROL_SCORES, "controls/name-paper.parquet"):
        damaged = tmp_path / relative.replace("/", "_")
        shutil.copytree(copy, damaged)
        raw = bytearray((damaged / relative).read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        (damaged / relative).write_bytes(bytes(raw))
        opened = BenchmarkData(damaged)
        with pytest.raises(SourceFormatError, match=f"'{relative}' does not match its sha256"):
            opened.tasks()  # refused like any data file, never read as "no controls"
            opened.control_predictions(HLA)


@pytest.mark.slow
def test_identity_control_solves_gene2gene_but_not_its_cold_split(gene2gene):
    """Gene2vec's negatives come from genes that rarely have positives: identity alone nearly solves the task."""
    settings = ProbeSettings()
    pairs = gene2gene.load_task("Gene2Gene")
    assert identity_scores(pairs, settings).scores["roc_auc"].mean > 0.9
    cold = gene2gene.load_task("Gene2Gene (cold genes)")
    report = cold.metadata.symbol_report
    assert len(cold.fold_ids) + report["n_cross_group"] == len(pairs.fold_ids)  # every pair is kept or counted
    assert 0.15 < len(cold.fold_ids) / len(pairs.fold_ids) < 0.25
    test, train = cold.entities[cold.fold_ids == 0], cold.entities[cold.fold_ids != 0]
    assert not set(test.ravel()) & set(train.ravel())
    assert abs(identity_scores(cold, settings).scores["roc_auc"].mean - 0.5) < 0.03
    random = [scores.scores["roc_auc"].mean for name, _, scores in fit_controls(gene2gene, [cold], settings,
                                                                                 names=["random"], progress=False)]
    assert len(random) == len(RANDOM_SEEDS) and abs(np.mean(random) - 0.5) < 0.03


def test_perturbqa_tests_unseen_perturbations_so_identity_is_chance():
    """PerturbQA's published split holds out perturbations: no test perturbation is perturbed in training."""
    data = open_data()
    names = [meta.name for meta in data.tasks() if meta.family == "perturbqa"]
    assert len(names) == 10
    for name in names:
        task = data.load_task(name)
        train, test = task.fold_ids == -1, task.fold_ids == 0
        assert test.any() and not set(task.entities[test, 0]) & set(task.entities[train, 0]), name
    task = data.load_task("PerturbQA k562 dir")
    assert identity_scores(task, ProbeSettings()).scores["auc_per_gene"].mean == pytest.approx(0.5)


def test_bundled_snapshot_ships_every_control_under_both_fold_schemes():
    data = open_data()
    assert data.manifest["controls"]["names"] == ["name", "identity", "random"]
    assert data.manifest["controls"]["folds"] == ["family", "paper"]
    pairs = [meta for meta in data.tasks() if len(meta.entity_types) == 2]
    assert len(pairs) == 12 and all("identity" in meta.controls for meta in pairs)
    assert all({"name", "random"} <= set(meta.controls) for meta in data.tasks())
    assert data.metadata("HLA class I vs class II").controls["name"] == pytest.approx(1.0)
    assert data.metadata("HLA class I vs class II").is_shortcut_solvable
    assert data.metadata("Gene2Gene").controls["identity"] == pytest.approx(0.976, abs=1e-3)
    cold = data.metadata("Gene2Gene (cold genes)").controls
    assert cold["identity"] == pytest.approx(0.5) and abs(cold["random"] - 0.5) < 0.03
    assert max(meta.controls["random"] for meta in data.tasks() if meta.name != "Gene2Gene") < 0.8
    # random vectors know nothing of a held-out gene, so their mean is off chance by seed noise only: seeds are added
    # to a task until the mean's standard error is at most RANDOM_MAX_SE, and then it is within 0.03 of chance on
    # every task family folds score (5 seeds left three small tasks at 0.446, 0.455 and 0.463)
    random = data.control_table.query("control == 'random' and score.notna()")
    standard_error = random["spread"] / np.sqrt(random["n_seeds"] - 1)  # spread: ddof=0
    assert ((standard_error <= RANDOM_MAX_SE) | (random["n_seeds"] == RANDOM_MAX_SEEDS)).all()
    assert random["n_seeds"].min() == len(RANDOM_SEEDS) and random["n_seeds"].max() > len(RANDOM_SEEDS)
    off = {meta.name: meta.controls["random"] for meta in data.tasks("family") if meta.has_family_folds
           and not meta.family_unscorable and abs(meta.controls["random"] - 0.5) >= 0.03}
    assert not off
    assert data.metadata("Gene2Gene", "family").controls == data.metadata("Gene2Gene").controls  # one split
    data.verify()


def test_name_control_falls_under_family_folds_but_still_reads_kinase_from_names():
    """Family folds stop the name control from scoring held-out paralogs by family lookup; where the name states
    the label ("kinase"), it still solves the task and the flag stays."""
    data = open_data()
    dosage = "dosage sensitive vs insensitive TF"
    assert data.metadata(dosage).controls["name"] == pytest.approx(0.886, abs=2e-3)
    assert data.metadata(dosage, "family").controls["name"] < 0.80
    kinase = data.metadata("UniProt keyword Molecular function;Serine/threonine-protein kinase", "family")
    assert kinase.controls["name"] >= SHORTCUT_AUC and kinase.is_shortcut_solvable
    paper, family = (data.load_task(dosage, folds) for folds in ("paper", "family"))
    assert np.array_equal(paper.entities, family.entities) and not np.array_equal(paper.fold_ids, family.fold_ids)
    hgnc = data.hgnc().set_index("symbol")["gene_group_id"]
    for k in range(5):  # no HGNC group of a held-out gene's family is trained on
        held = {hgnc[g] for g in family.entities[family.fold_ids == k]}
        assert not held & {hgnc[g] for g in family.entities[family.fold_ids != k]} - {""}


@pytest.mark.parametrize("name, folds", [("TF vs non-TF", "paper"), ("RNA tissue specificity", "family"),
                                         ("Pathways", "family"), ("Pathways;Immune System", "family"),
                                         ("Gene2Gene (cold genes)", "paper"), ("PerturbQA k562 dir", "family")])
def test_stored_predictions_give_the_stored_score_and_any_subset_its_metric(name, folds):
    """S4/S5: the control's held-out predictions per row; on all rows the stored score, on a subset the probe's
    metric over that subset (no refit)."""
    from genebench.metrics import roc_auc

    data = open_data()
    task = data.load_task(name, folds)
    predictions = data.control_predictions(name, folds)
    width = len(task.metadata.label_names) if task.labels.ndim == 2 or task.metadata.type == "categorical" else 0
    assert predictions["name"].shape == ((len(task.fold_ids), width) if width else (len(task.fold_ids),))
    assert predictions["name"].dtype == np.float32 and "random" not in predictions
    everything = covered_control_scores(data, task, np.arange(len(task.fold_ids)), folds)
    assert everything == task.metadata.controls  # the stored scores were computed from these predictions
    rows = np.flatnonzero(np.random.default_rng(0).random(len(task.fold_ids)) < 0.8)
    covered = covered_control_scores(data, task, rows, folds)
    assert covered["random"] == task.metadata.controls["random"]  # counted with its stored mean over seeds
    if task.metadata.type == "binary" and task.metadata.evaluation == "cv":
        labels, values, split = task.labels[rows], predictions["name"][rows], task.fold_ids[rows]
        by_hand = np.mean([roc_auc(labels[split == k], values[split == k], task_type="binary") for k in range(5)])
        assert covered["name"] == pytest.approx(by_hand, abs=1e-12)
    assert covered["name"] != everything["name"]


def test_a_block_float16_would_move_is_stored_as_float32():
    """Two clusters of logits far apart, ranked within each by a few thousandths: float16 (steps of 1/64 at 25) ties
    them, which moves a 132-gene task's AUC; smooth logits keep float16 (the snapshot's usual case)."""
    from genebench.controls.build import FLOAT16_TOLERANCE, _stored_block

    task = open_data().load_task("bivalent vs non-methylated")
    rng = np.random.default_rng(0)
    clustered = (np.where(rng.random(len(task.labels)) < 0.5, -25.0, 25.0) + 0.004 * task.labels
                 + 0.003 * rng.random(len(task.labels))).astype(np.float32)[:, None]
    smooth = (task.labels + rng.normal(size=len(task.labels))).astype(np.float32)[:, None]
    exact = {"clustered": score_values(task, clustered), "smooth": score_values(task, smooth)}
    half = {key: score_values(task, decode_predictions(*encode_predictions(v))) for key, v in
            (("clustered", clustered), ("smooth", smooth))}
    assert abs(half["clustered"] - exact["clustered"]) > 0.01 and abs(half["smooth"] - exact["smooth"]) < 1e-4
    stored, center, decoded, file = _stored_block(clustered, [(task, -1)], "controls/name-paper")
    assert file == "controls/name-paper-float32.parquet" and stored.dtype == np.float32
    assert np.array_equal(decoded, decode_predictions(stored, center), equal_nan=True)
    assert abs(score_values(task, decoded) - exact["clustered"]) <= FLOAT16_TOLERANCE
    assert _stored_block(smooth, [(task, -1)], "controls/name-paper")[3] == "controls/name-paper.parquet"


def test_held_out_values_are_logits_or_log_probabilities():
    data = open_data()
    task = data.load_task("Chromosome")
    from genebench.probe.engine import TaskScores
    from genebench.results import Coverage

    proba = np.full((len(task.fold_ids), len(task.metadata.label_names)), 1 / len(task.metadata.label_names))
    proba[0] = np.linspace(1, 2, proba.shape[1]) / np.linspace(1, 2, proba.shape[1]).sum()
    rows = np.arange(len(task.fold_ids))
    values = held_out_values(task, TaskScores(task, "roc_auc", Coverage(n_covered=len(rows), n_task=len(rows),
                                                                        fraction=1.0), held_out=proba, rows=rows))
    assert np.allclose(np.exp(values).sum(axis=1), 1, atol=1e-6)  # categorical: log-probabilities
    gap = np.flatnonzero(task.fold_ids != 1)  # fold 1 left without rows: its AUC, so the mean, is undefined
    assert np.isnan(score_values(task, values, gap)) and np.isfinite(score_values(task, values, rows))


@pytest.mark.shared_data
def test_keeping_the_random_seeds_adds_only_what_the_rule_asks(hgnc_data, tmp_path):
    """HLA (44 genes) under paper folds: one seed's score spreads by 0.12, so the build scored seeds up to the cap
    (standard error 0.012); keeping them adds none, and other probe settings are refused."""
    stored = hgnc_data.control_table.query("folds == 'paper' and control == 'random'").iloc[0]
    assert stored["n_seeds"] == RANDOM_MAX_SEEDS and abs(stored["score"] - 0.5) < 0.03
    copy = tmp_path / "data"
    shutil.copytree(hgnc_data.path, copy)
    kept = add_controls(copy, names=["random"], keep_seeds=True, progress=False)
    assert kept.control_table.equals(hgnc_data.control_table)
    with pytest.raises(GenebenchError, match="drop --keep-seeds"):
        add_controls(copy, settings=ProbeSettings(C=0.5), names=["random"], keep_seeds=True, progress=False)


@pytest.mark.shared_data
def test_controls_command_prints_the_table_and_flags(hgnc_data, tmp_path, capsys):
    copy = tmp_path / "data"
    shutil.copytree(hgnc_data.path, copy)
    assert main(["controls", "--data", str(copy), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "paper folds: controls for 1 task; 1 shortcut-solvable task" in out
    assert "family folds: controls for 1 task; 0 shortcut-solvable tasks" in out
    manifest = json.loads((copy / "genebench.json").read_text())
    assert manifest["controls"]["seconds"] > 0 and RANDOM_DIM == 384
    assert main(["controls", "--data", str(copy), "--only", "name", "--folds", "paper", "--quiet"]) == 0
    only = BenchmarkData(copy)  # name rescored, random kept
    assert only.manifest["controls"]["names"] == ["name", "random"]
    assert only.metadata(HLA).controls == BenchmarkData(hgnc_data.path).metadata(HLA).controls
    assert {path.name for path in (copy / "controls").iterdir()} == {"scores.parquet", "name-paper.parquet"}
    assert main(["controls", "--data", str(tmp_path / "nowhere")]) == 2
    assert "no genebench.json" in capsys.readouterr().err


def _seed_scores(scores: list[float]) -> SeedScores:
    seeds = SeedScores()
    for score in scores:
        seeds = seeds.add(score)
    return seeds


@pytest.mark.slow
def test_random_control_adds_seeds_to_a_small_task_until_its_mean_is_precise():
    """"long vs short range TF" (9-10 positives per family fold): one seed's score spreads by ~0.09, so 5 seeds are
    too few (their mean was 0.446); the rule adds rounds of seeds until the mean is precise, as in the snapshot."""
    data = open_data()
    name = "long vs short range TF"
    task = data.load_task(name, "family")
    scores = [s.scores["roc_auc"].mean for _, _, s in fit_controls(data, [task], ProbeSettings(), names=["random"],
                                                                   progress=False)]
    last_round = len(scores) - len(RANDOM_SEEDS)
    assert last_round > 0 and random_seeds_left(_seed_scores(scores[:last_round]))
    assert not random_seeds_left(_seed_scores(scores)) and abs(np.mean(scores) - 0.5) < 0.03
    stored = data.control_table.query("folds == 'family' and task == @name and control == 'random'").iloc[0]
    # the snapshot fitted it beside other tasks: a larger vector table preconditions the solver differently, which
    # moves a seed's AUC on this small task by a few 1e-3 (the mean of 80 seeds by 8e-4)
    assert stored["n_seeds"] == len(scores) and stored["score"] == pytest.approx(np.mean(scores), abs=2e-3)


def test_random_control_cannot_rank_held_out_genes():
    """Random vectors say nothing about a held-out gene, so a rare label stays near chance (5 positives per fold).

    A probe whose fold fits start from a fit on every row would remember the held-out positives and score ~1.0.
    """
    from genebench.genes import task_genes
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

    from genebench.errors import SubmissionError
    from genebench.leaderboard.validate import check_scores
    from genebench.pipeline import RunContext, run_probes
    from genebench.results import read_result, result_path
    from model_adapters.baselines import RandomAdapter

    data = open_data()
    partly, fully = (data.load_task(name) for name in ("long vs short range TF", "N1 network"))
    genes = sorted({str(g) for task in (partly, fully) for g in task.genes()})
    dropped = set(partly.genes().tolist()[::3])  # a third of the first task's genes get no vector
    embeddings = RandomAdapter("test/random-64", hgnc=data.hgnc(), dim=64).encode(
        [g for g in genes if g not in dropped or g in set(fully.genes().tolist())])
    assert not set(fully.genes().tolist()) - set(embeddings.symbols.tolist())
    settings = ProbeSettings(device="cpu")
    before, _ = run_probes([partly, fully], embeddings, tmp_path, RunContext(data.provenance, settings,
                           progress=False))  # without the data: the stored controls, as an interrupted run leaves it
    assert "controls_on_covered_rows" not in before.diagnostics
    partial, full = run_probes([partly, fully], embeddings, tmp_path, RunContext(
        data.provenance, settings, progress=False, data=data))  # its controls: recomputed
    assert partial.scores == before.scores

    rows = np.flatnonzero(np.isin(partly.entities.astype(str), embeddings.symbols.astype(str)))
    assert 0 < partial.coverage.n_covered == len(rows) < len(partly.fold_ids)
    expected = covered_control_scores(data, partly, rows, "paper")  # from the stored predictions, no refit
    assert partial.diagnostics["controls_on_covered_rows"] == expected == partial.controls
    assert read_result(result_path(tmp_path, partial.model, partly.name)) == partial  # what was written
    assert expected != partly.metadata.controls  # the same controls on fewer genes score differently
    assert partial.lift == round(partial.scores["roc_auc"].mean - max(expected.values()), 6)
    check_scores(partial, source="partial.json")  # a submission of it validates: its lift is over these controls
    with pytest.raises(SubmissionError, match="partial.json: lift"):
        check_scores(partial.model_copy(update={"lift": partial.lift + 0.01}), source="partial.json")
    assert "controls_on_covered_rows" not in full.diagnostics  # fully covered: the stored controls, no rework
    assert full.lift == round(full.scores["roc_auc"].mean - max(fully.metadata.controls.values()), 6)


def test_tasks_command_shows_the_flag_under_each_fold_scheme(capsys):
    assert main(["tasks", "--family", "hgnc", "humantfs", "genecorpus", "--format", "csv"]) == 0
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("name")
    paper, family = "shortcut (paper folds)", "shortcut (family folds)"
    assert table.loc[HLA, paper] == "name 1.000" and pd.isna(table.loc[HLA, family])  # unscorable there
    assert table.loc["TF vs non-TF", paper] == "name 0.941"
    assert pd.isna(table.loc["dosage sensitive vs insensitive TF", family])
    assert main(["tasks", "--flagged", "--folds", "family"]) == 0
    out = capsys.readouterr().out
    data = open_data()
    flagged = [meta.name for meta in data.tasks("family") if meta.is_shortcut_solvable]
    assert f"{len(flagged)} shortcut-solvable tasks under family folds" in out
    assert "UniProt keyword Molecular function;Serine/threonine-protein kinase" in out and HLA not in out



def test_name_control_reads_words_symbol_characters_and_what_the_name_means():
    """The name control's features: words of the names, character n-grams of the symbols (a family's stem), and
    all-MiniLM-L6-v2's vector of the HGNC description, the same vector a names-only MiniLM run gets."""
    from genebench.controls.features import NAME_CHARACTERS, NAME_SENTENCE_MODEL, NAME_WORDS, NameFeatures
    from genebench.inputs import get_adapter

    hgnc = open_data().hgnc()
    sentences = get_adapter("description", NAME_SENTENCE_MODEL, hgnc=hgnc, source="hgnc", runtime="numpy",
                            dtype="float32")
    genes = ["ZNF100", "ZNF101", "KRT1", "NOT-A-GENE"]
    read = NameFeatures(hgnc, sentences).encode(genes)
    assert list(read.symbols) == genes[:3] and read.missing == {"unknown_symbol": ["NOT-A-GENE"]}
    assert read.vectors.shape == (3, NAME_WORDS + NAME_CHARACTERS + 384)
    words, characters = read.vectors[:, :NAME_WORDS], read.vectors[:, NAME_WORDS:NAME_WORDS + NAME_CHARACTERS]
    assert set(np.unique(words[:, :])) <= {0.0, 1.0} and words[0] @ words[1] >= 3  # "zinc finger protein"
    assert characters[0] @ characters[1] > characters[0] @ characters[2]  # the "ZNF" stem
    np.testing.assert_array_equal(read.vectors[:, -384:], sentences.encode(genes[:3]).vectors)


@pytest.mark.slow
@pytest.mark.parametrize("folds", ["paper", "family"])
def test_stored_name_control_is_at_scikit_learns_optimum_on_a_small_task(folds):
    """A control every model is compared with is fitted to its optimum: on "long vs short range TF" (174 genes, 3,456
    name features) the stored score is within 0.002 of scikit-learn's on the same folds and features."""
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from genebench.controls.features import NAME_SENTENCE_MODEL, NameFeatures
    from genebench.inputs import get_adapter

    data = open_data()
    task = data.load_task("long vs short range TF", folds)
    hgnc = data.hgnc()
    sentences = get_adapter("description", NAME_SENTENCE_MODEL, hgnc=hgnc, source="hgnc", runtime="numpy",
                            dtype="float32")
    read = NameFeatures(hgnc, sentences).encode(list(task.entities))
    assert list(read.symbols) == list(task.entities)
    aucs = []
    for k in range(5):
        train, test = task.fold_ids != k, task.fold_ids == k
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs at tol 1e-9 may say it stopped at max_iter
            fit = LogisticRegression(C=1.0, tol=1e-9, max_iter=100_000).fit(read.vectors[train], task.labels[train])
        aucs.append(roc_auc_score(task.labels[test], fit.predict_proba(read.vectors[test])[:, 1]))
    assert data.metadata(task.name, folds).controls["name"] == pytest.approx(np.mean(aucs), abs=2e-3)
