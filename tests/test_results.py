"""Result files: layout, atomic writes, tidy loading, the summary table, and resumable runs."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "probe"))

from dataclasses import replace  # noqa: E402

from synthetic_world import World  # noqa: E402

from genebench.errors import ResultsError  # noqa: E402
from genebench.leaderboard.validate import check_scores  # noqa: E402
from genebench.model_info import ModelInfo  # noqa: E402
from genebench.pipeline import RunContext, run_probes  # noqa: E402
from genebench.probe import ProbeSettings  # noqa: E402
from genebench.results import (  # noqa: E402
    META_FILE,
    OverwriteStrategy,
    load_results,
    read_result,
    result_path,
    results_frame,
    summary_table,
    task_file_name,
)

MODEL = ModelInfo(id="org/model", revision="abc123", input="random", settings={"pooling": "mean"})
PROVENANCE = {"sources": {"synthetic": "1"}, "data_hash": "deadbeef"}
CPU = ProbeSettings(device="cpu")


@pytest.fixture
def tasks():
    world = World()
    multi = world.multilabel()
    tiny = world.binary("tiny", n=8)
    return world, [world.binary("TF vs non-TF"), multi, world.derived(multi, 0), world.categorical(), tiny]


def _run(world, tasks, out, **kw):
    embeddings = replace(world.embeddings, model=kw.pop("model_info", MODEL))
    return run_probes(tasks, embeddings, out, RunContext(PROVENANCE, settings=kw.pop("settings", CPU),
                                                         config=kw.pop("config", {"tasks": "test"}), progress=False,
                                                         **kw))


def test_layout_and_content(tasks, tmp_path):
    world, task_list = tasks
    results = _run(world, task_list, tmp_path)
    folder = tmp_path / "org__model" / "abc123"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [META_FILE, *(task_file_name(t.name) for t in task_list)])
    assert json.loads((folder / META_FILE).read_text())["id"] == "org/model"
    assert not list(tmp_path.rglob("*.tmp"))
    first = read_result(result_path(tmp_path, MODEL, "TF vs non-TF"))
    assert first == results[0]
    assert first.probe == CPU.to_dict()
    assert first.provenance == PROVENANCE
    assert first.main_score == "roc_auc" and first.scores["roc_auc"].mean > 0.85
    assert first.diagnostics["n_not_converged"] == 0
    assert first.timing["probe_seconds"] >= 0
    for result in results:
        check_scores(result, source=result.task.name)  # the leaderboard's own validation accepts them
    assert results[-1].skipped == "too few covered rows: 8 < min_covered=10"


def test_rerun_resumes_and_overwrite_strategies(tasks, tmp_path):
    world, task_list = tasks
    _run(world, task_list, tmp_path)
    paths = [result_path(tmp_path, MODEL, t.name) for t in task_list]
    stamps = [p.stat().st_mtime_ns for p in paths]
    paths[1].unlink()  # the multi-label parent is lost; its derived task is still on disk
    paths[3].write_text("{not json")  # a corrupted file
    again = _run(world, task_list, tmp_path)
    now = [p.stat().st_mtime_ns for p in paths]
    assert [a == b for a, b in zip(stamps, now)] == [True, False, True, False, True]
    assert again[1].task.name == "multi" and again[1].scores
    assert again[3].scores  # recomputed
    _run(world, task_list, tmp_path, overwrite="never", settings=ProbeSettings(device="cpu", C=0.5))
    assert [p.stat().st_mtime_ns for p in paths] == now
    changed = _run(world, task_list, tmp_path, settings=ProbeSettings(device="cpu", C=0.5))
    assert all(r.probe["C"] == 0.5 for r in changed)
    stamps = [p.stat().st_mtime_ns for p in paths]
    _run(world, task_list[:1], tmp_path, overwrite=OverwriteStrategy.ALWAYS,
         settings=ProbeSettings(device="cpu", C=0.5))
    assert paths[0].stat().st_mtime_ns != stamps[0] and paths[1].stat().st_mtime_ns == stamps[1]


def test_a_rerun_from_other_vectors_or_config_recomputes_instead_of_mixing(tasks, tmp_path):
    world, task_list = tasks
    keyed = MODEL.model_copy(update={"cache_key": "float32-vectors"})
    _run(world, task_list[:1], tmp_path, model_info=keyed)
    path = result_path(tmp_path, MODEL, task_list[0].name)
    stamp = path.stat().st_mtime_ns
    _run(world, task_list[:1], tmp_path, model_info=keyed)
    assert path.stat().st_mtime_ns == stamp  # same vectors and config: kept
    bf16 = MODEL.model_copy(update={"cache_key": "bfloat16-vectors"})
    _run(world, task_list[:1], tmp_path, model_info=bf16)
    assert read_result(path).model.cache_key == "bfloat16-vectors"
    stamp = path.stat().st_mtime_ns
    _run(world, task_list[:1], tmp_path, model_info=bf16, config={"tasks": "test", "exclude_genes": "genes.txt"})
    assert path.stat().st_mtime_ns != stamp and read_result(path).config["exclude_genes"] == "genes.txt"


def test_never_refuses_a_corrupted_file(tasks, tmp_path):
    world, task_list = tasks
    _run(world, task_list[:1], tmp_path)
    result_path(tmp_path, MODEL, task_list[0].name).write_text("[]")
    with pytest.raises(ResultsError, match="expected a genebench TaskResult JSON.*delete it and rerun"):
        _run(world, task_list[:1], tmp_path, overwrite="never")


def test_overwrite_strategy_names_valid_values():
    assert OverwriteStrategy.from_str("only-missing") is OverwriteStrategy.ONLY_MISSING
    with pytest.raises(ValueError, match=r"expected one of \['always', 'never', 'only-missing'\], found 'sometimes'"):
        OverwriteStrategy.from_str("sometimes")


def test_load_results_and_summary_table(tasks, tmp_path):
    world, task_list = tasks
    _run(world, task_list, tmp_path)
    df = load_results(tmp_path)
    assert set(df["task"]) == {t.name for t in task_list}
    main = df[df["is_main"]]
    assert len(main) == 4 and set(main["metric"]) == {"roc_auc"}
    tiny = df[df["task"] == "tiny"]
    assert len(tiny) == 1 and tiny["metric"].isna().all() and tiny["skipped"].str.startswith("too few").all()
    table = summary_table(df)
    by_type = table[table["by"] == "type"].set_index("group")
    aucs = main.set_index("task")["mean"]
    assert by_type.loc["binary", "n_tasks"] == 1
    assert by_type.loc["binary", "mean"] == pytest.approx(aucs["TF vs non-TF"])
    category = table[table["by"] == "category"].iloc[0]
    votes = main.assign(vote=main["parent"].fillna(main["task"])).groupby("vote")["mean"].mean()
    assert category["n_tasks"] == 4 and category["n_votes"] == len(votes) < 4  # a parent and its labels: one vote
    assert category["mean"] == pytest.approx(votes.mean()) and category["mean"] != pytest.approx(aucs.mean())
    assert category["std"] == pytest.approx(np.std(votes))
    assert category["cell"] == f"{votes.mean():.3f} ± {np.std(votes):.3f}"


def test_load_results_errors(tmp_path):
    with pytest.raises(ResultsError, match="expected a folder of result JSON files"):
        load_results(tmp_path / "absent")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ResultsError, match=r"result file '.*bad.json': expected a genebench TaskResult JSON"):
        load_results(tmp_path)
    with pytest.raises(ResultsError, match="expected columns"):
        summary_table(__import__("pandas").DataFrame({"x": [1]}))


def test_results_are_filed_under_the_model_record_the_embeddings_carry(tasks, tmp_path):
    world, task_list = tasks
    with pytest.raises(ResultsError, match=r"expected a model record \(`embeddings.model`, a ModelInfo\)"):
        run_probes(task_list[:1], replace(world.embeddings, model=None), tmp_path,
                   RunContext(PROVENANCE, progress=False))
    from model_adapters.baselines import RandomAdapter

    hgnc = __import__("pandas").DataFrame({"symbol": world.genes})
    embeddings = RandomAdapter(hgnc=hgnc, dim=16).encode(world.genes)
    results = run_probes(task_list[:1], embeddings, tmp_path, RunContext(PROVENANCE, settings=CPU, progress=False))
    assert results[0].model == embeddings.model and results[0].model.revision == "seed=0"
    assert (tmp_path / "random" / "seed=0" / task_file_name(task_list[0].name)).is_file()


def test_the_summary_from_memory_equals_the_one_read_back(tasks, tmp_path):
    world, task_list = tasks
    results = _run(world, task_list, tmp_path)
    in_memory = results_frame(results).sort_values(["path", "metric"], ignore_index=True)
    read_back = load_results(tmp_path).sort_values(["path", "metric"], ignore_index=True)
    __import__("pandas").testing.assert_frame_equal(in_memory, read_back)
    assert summary_table(in_memory).equals(summary_table(read_back))


def test_summary_takes_each_tasks_main_score():
    import pandas as pd

    df = pd.DataFrame({
        "model": "m", "model_revision": "1", "category": "regulatory functions", "type": "binary", "coverage": 1.0,
        "task": ["TF vs non-TF", "PerturbQA k562 de", "PerturbQA k562 de"],
        "metric": ["roc_auc", "roc_auc", "auc_per_gene"], "is_main": [True, False, True], "mean": [0.9, 0.8, 0.5],
    })
    row = summary_table(df, by=("category",)).iloc[0]
    assert row["n_tasks"] == 2 and row["mean"] == pytest.approx(0.7)
    assert summary_table(df, by=("category",), metric="roc_auc").iloc[0]["mean"] == pytest.approx(0.85)


def _family_copies(results, tasks, seed=0):
    """`results` as if scored under family folds: the scheme in `probe`, a name control in the task's controls, and
    added over names computed by `genebench.controls.added` from seeded name logits and model scores."""
    from genebench.controls.added import added_over_names
    from genebench.tasks.types import task_type

    rng = np.random.default_rng(seed)
    copies = []
    for result, task in zip(results, tasks):
        if result.skipped is not None:
            copies.append(result.model_copy(update={"probe": {**result.probe, "scheme": "family"}}))
            continue
        target = task_type(task.metadata.type).target
        truth = (task.labels[:, None] == np.arange(len(task.metadata.label_names)) if target == "multiclass"
                 else task.labels.reshape(len(task.labels), -1)).astype(float)
        names = truth + rng.normal(0, 1.5, truth.shape)
        model = 1 / (1 + np.exp(-(truth + rng.normal(0, 1.5, truth.shape))))
        if target == "multiclass":
            names = names - np.log(np.exp(names).sum(axis=1, keepdims=True))
            model = model / model.sum(axis=1, keepdims=True)
        rows = np.arange(len(task.labels))
        added = added_over_names(task, rows, model[:, 0] if target == "binary" else model,
                                 names[:, 0] if target == "binary" else names)
        meta = result.task.model_copy(update={"controls": {"name": 0.95 if task.name == "TF vs non-TF" else 0.7}})
        lift = round(result.scores[result.main_score].mean - max(meta.controls.values()), 6)  # over these controls
        copies.append(result.model_copy(update={"probe": {**result.probe, "scheme": "family"}, "task": meta,
                                                "added_over_names": added, "lift": lift}))
    return copies


def test_two_fold_schemes_load_side_by_side_and_never_mix_in_a_summary(tasks, tmp_path):
    from genebench.report import category_table, compare, paper_table, per_task_table, printed_tables
    from genebench.results import added_summary, summarised_rows, write_result

    world, task_list = tasks
    paper = _run(world, task_list, tmp_path / "paper")
    for result in _family_copies(paper, task_list):
        write_result(result, tmp_path / "family")
    both = load_results(tmp_path)  # one root, both runs of one model: two schemes, not two runs
    assert sorted(both["scheme"].unique()) == ["family", "paper"]
    with pytest.raises(ResultsError, match=r"one fold scheme, found \['family', 'paper'\]"):
        summary_table(both)
    family = both[both["scheme"] == "family"]
    rows = summarised_rows(family)
    mean, low, high = added_summary(rows)
    assert low < mean < high and np.isfinite(mean)
    understanding = added_summary(rows, names_below=0.9)  # "TF vs non-TF" (name control 0.95) left out
    kept = rows[(rows["task"] != "TF vs non-TF") & rows["added"].notna()]
    votes = kept.groupby("vote")["added"].mean()
    assert understanding[0] == pytest.approx(votes.mean())
    table = category_table(both)
    low, high = understanding[1:]
    assert table.loc[0, "understanding (family folds)"] == f"{understanding[0]:+.3f} [{low:+.3f}, {high:+.3f}]"
    # the family copies keep their scores
    assert table.loc[0, "AUC (family folds)"] == table.loc[0, "AUC (paper folds)"] != "–"
    assert [(title, list(t.columns)[:2]) for title, t in printed_tables(both)][:2] == [
        ("paper folds: overall", ["model", "rank (paper folds)"]),
        ("paper folds: family folds beside", ["model", "AUC (family folds)"])]
    run = paper_table(both)
    assert list(run.columns) == ["by", "group", "paper tasks", "paper AUC", "paper lift", "family tasks", "family AUC",
                                 "family lift", "added over names (family)", "coverage"]
    assert "org/model added" in per_task_table(both).columns
    other = load_results(tmp_path).assign(model="org/other")
    text = compare(__import__("pandas").concat([both, other]), "org/model", "org/other", n_boot=100).to_text()
    assert "added over names, A - B (paired by gene): +0.000 [+0.000, +0.000]" in text


def _as_old_format(document: dict) -> dict:
    """A result document as genebench wrote it before names meant one thing: the provenance under
    `dataset_revision`, the fold scheme under `probe.folds`."""
    old = dict(document)
    old["dataset_revision"] = old.pop("provenance")
    old["probe"] = {("folds" if key == "scheme" else key): value for key, value in old["probe"].items()}
    return old


def test_old_result_files_read_as_the_same_table_as_new_ones(tasks, tmp_path):
    import shutil

    world, task_list = tasks
    _run(world, task_list, tmp_path / "new")
    shutil.copytree(tmp_path / "new", tmp_path / "old")
    files = sorted(p for p in (tmp_path / "old").rglob("*.json") if p.name != META_FILE)
    for path in files:
        path.write_text(json.dumps(_as_old_format(json.loads(path.read_text()))))
    document = json.loads(files[0].read_text())
    assert "dataset_revision" in document and document["probe"]["folds"] == "paper"
    old, new = load_results(tmp_path / "old"), load_results(tmp_path / "new")
    __import__("pandas").testing.assert_frame_equal(old, new)
    assert set(new["data_hash"]) == {PROVENANCE["data_hash"]} and set(new["scheme"]) == {"paper"}
    assert set(new["model_revision"]) == {MODEL.revision}
    result = read_result(files[0])
    assert result.provenance == PROVENANCE and result.scheme == "paper"
    written = json.loads(result.model_dump_json())  # written back under today's names
    assert "dataset_revision" not in written and "folds" not in written["probe"]
    stamps = [p.stat().st_mtime_ns for p in files]
    _run(world, task_list, tmp_path / "old")  # a rerun over old files resumes from them: nothing recomputed
    assert [p.stat().st_mtime_ns for p in files] == stamps


def test_code_written_against_the_old_task_folds_name_still_reads_the_fold_ids(tasks):
    task = tasks[1][0]
    with pytest.warns(FutureWarning, match="Task.folds is now Task.fold_ids"):
        assert task.folds is task.fold_ids
