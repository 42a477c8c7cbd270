"""The main job's one way through (select, restrict, encode, partner vectors, probe, write) on the bundled snapshot."""

import json
from pathlib import Path

import numpy as np
import pytest

from genebench.config import RunConfig
from genebench.constants import SNAPSHOT_DIR
from genebench.data import BenchmarkData
from genebench.errors import GenebenchError
from genebench.pipeline import run, select_tasks, task_genes
from genebench.results import read_result
from genebench.run_context import shared_tasks

SET_TASK = "PerturbQA k562_set dir"


@pytest.fixture(scope="module")
def data() -> BenchmarkData:
    return BenchmarkData(SNAPSHOT_DIR)


def test_excluded_genes_never_reach_a_gene_set_vector(data, tmp_path):
    genes = set(task_genes(select_tasks(data, [SET_TASK])))
    clusters = data.auxiliary("perturbqa", "set_mapping")
    cluster, members = next((c, [g for g in m if g in genes]) for c, m in clusters[["cluster", "genes"]].itertuples(
        index=False) if sum(g in genes for g in m) >= 3)
    (tmp_path / "exclude.txt").write_text(members[0] + "\n")
    config = RunConfig(model="random", input="random", adapter={"dim": 8}, exclude_genes=str(tmp_path / "exclude.txt"))
    done = run(config, data, [SET_TASK], tmp_path / "results", progress=False)
    assert members[0] not in set(done.embeddings.symbols)
    rows = {s: v for s, v in zip(done.embeddings.symbols, done.embeddings.vectors)}
    vector = done.partners.vectors[list(done.partners.symbols).index(cluster)]
    np.testing.assert_allclose(vector, np.mean([rows[g] for g in members[1:]], axis=0), rtol=1e-6)
    assert done.results[0].skipped is None and done.results[0].coverage.n_covered < done.results[0].coverage.n_task


def test_a_precomputed_run_is_named_and_its_results_hold_no_local_path(data, tmp_path):
    table = tmp_path / "private" / "gene2vec.txt"
    table.parent.mkdir()
    genes = task_genes(select_tasks(data, ["HLA class I vs class II"]))
    rng = np.random.default_rng(0)
    table.write_text("".join(f"{g} " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) + "\n" for g in genes))
    (tmp_path / "exclude.txt").write_text("HLA-A\n")
    with pytest.raises(GenebenchError, match="is a local file or folder: name it with --name ORG/NAME"):
        RunConfig(model=str(table), input="precomputed")
    config = RunConfig(model=str(table), input="precomputed", name="my-lab/gene2vec", license="MIT",
                       reference="https://example.org/gene2vec", exclude_genes=str(tmp_path / "exclude.txt"))
    out = tmp_path / "results"
    done = run(config, data, ["HLA class I vs class II"], out, progress=False)
    model = done.results[0].model
    assert (model.id, model.license, model.reference) == ("my-lab/gene2vec", "MIT", "https://example.org/gene2vec")
    assert model.settings["table"]["file"] == "gene2vec.txt"
    assert model.revision == model.settings["table"]["sha256"][:12]
    files = list(out.glob("*/*/*.json"))  # the paper's folds; family folds' in folds-family/, a run of their own
    assert len(files) == 2 and read_result(next(p for p in files if p.name != "model_meta.json")) == done.results[0]
    family = [read_result(p) for p in (out / "folds-family").rglob("*.json") if p.name != "model_meta.json"]
    assert [(r.probe["scheme"], r.skipped is not None) for r in family] == [("family", True)]  # HLA: one family
    for path in out.rglob("*.json"):
        assert str(tmp_path) not in path.read_text(), path
    assert json.loads(next(p for p in files if p.name == "model_meta.json").read_text())["id"] == "my-lab/gene2vec"
    assert str(Path(table)) in (out / "run_config.yaml").read_text()  # the local record repeats the run


def test_a_precomputed_table_and_a_baseline_make_one_leaderboard(data, tmp_path):
    from genebench.leaderboard.site import leaderboard_data
    from genebench.leaderboard.validate import validate_results

    task = ["HLA class I vs class II"]
    baseline = run(RunConfig(input="random", adapter={"dim": 16}), data, task, tmp_path / "results", progress=False)
    table = tmp_path / "emb.parquet"
    baseline.embeddings.save(table)  # a table from elsewhere: genebench encode's format
    run(RunConfig(model=str(table), input="precomputed", name="my-lab/table", modality="single-cell expression"),
        data, task, tmp_path / "results", progress=False, overwrite="always")
    runs = validate_results(tmp_path / "results")
    models = {m["id"]: m for m in leaderboard_data(runs)["models"]}
    assert set(models) == {"genebench/random-16", "my-lab/table"}
    assert (models["my-lab/table"]["input"], models["my-lab/table"]["modality"]) == ("precomputed",
                                                                                     "single-cell expression")
    assert models["genebench/random-16"]["modality"] == "random"


def test_names_default_sensibly_and_must_look_like_org_name():
    assert RunConfig(model="random", input="random", adapter={"dim": 64}).model_id() == "genebench/random-64"
    assert RunConfig(model="bag-of-words", input="bag-of-words").model_id() == "genebench/bag-of-words"
    assert RunConfig(model="org/model", input="description").model_id() == "org/model"
    with pytest.raises(GenebenchError, match="^command line: name: expected 'org/name' .* found 'my table'"):
        RunConfig.build(model="random", input="random", name="my table")


def test_the_yaml_schema_comes_from_the_adapters_options(tmp_path):
    config = tmp_path / "model.yaml"
    config.write_text("input: random\nname: my-lab/noise\nadapter: {dim: 8, seed: 2}\nlicense: MIT\n")
    loaded = RunConfig.from_yaml(config)
    assert (loaded.model, loaded.adapter, loaded.model_id()) == ("random", {"dim": 8, "seed": 2}, "my-lab/noise")
    assert RunConfig.from_yaml(config, adapter={"seed": 5}).adapter == {"dim": 8, "seed": 5}
    for text, message in (
        ("input: random\nadapter: {dims: 8}\n", "unknown key 'adapter.dims'"),
        ("input: random\nadapter: {dim: eight}\n", "adapter.dim: Input should be a valid integer"),
        ("input: random\nadapter: {region: exon}\n", "adapter.region: Input should be 'gene' or 'cds'"),
        ("input: randm\n", "unknown input kind 'randm'. Did you mean: 'random'"),
        ("input: random\nn_parameters: -3\n", "n_parameters: Input should be greater than or equal to 0"),
        ("input: random\nlearning_rate: 3\n", r"unknown key 'learning_rate'; expected keys among \[.*\], e.g. \{mod"),
        ("- random\n", "expected a mapping of keys"),
    ):
        config.write_text(text)
        with pytest.raises(GenebenchError, match=f"^config '{config}': .*{message}"):
            RunConfig.from_yaml(config)


def test_each_fold_scheme_is_a_run_of_its_own_and_the_papers_comes_first():
    assert RunConfig(input="random").schemes == ["paper", "family"]
    assert RunConfig(input="random", schemes=["family", "paper", "family"]).schemes == ["paper", "family"]
    assert RunConfig(input="random", schemes="family").schemes == ["family"]
    assert RunConfig(input="random", folds="family").schemes == ["family"]  # the old key, still read
    assert RunConfig(input="random", schemes=["family"]).probe_settings().scheme == "family"
    assert RunConfig(input="random").probe_settings("family").to_dict()["scheme"] == "family"
    assert "schemes" not in RunConfig(input="random").record()  # a result's scheme is its probe's
    for values, message in (({"probe": {"scheme": "family"}}, "probe.scheme: the fold schemes are set with 'schemes'"),
                            ({"probe": {"folds": "family"}}, "probe.folds: the fold schemes are set with 'schemes'"),
                            ({"schemes": ["families"]}, "schemes.0: Input should be 'paper' or 'family'"),
                            ({"schemes": []}, "schemes: List should have at least 1 item")):
        with pytest.raises(GenebenchError, match=f"^command line: {message}"):
            RunConfig.build(input="random", **values)


def test_the_tasks_both_schemes_probe_alike_are_the_pair_and_train_test_ones(data):
    names = [meta.name for meta in data.tasks()]
    tasks = {scheme: select_tasks(data, names, scheme) for scheme in ("paper", "family")}
    expected = {task.name for task in tasks["paper"] if task.entities.ndim == 2}
    assert len(expected) == 12 and {"Gene2Gene (cold genes)", "PerturbQA k562 de"} <= expected
    assert shared_tasks(tasks) == expected


def test_a_task_probed_alike_under_both_schemes_is_probed_once_and_scored_as_under_one(data, tmp_path):
    names = ["PerturbQA hepg2 dir", "long vs short range TF"]
    both = run(RunConfig(input="random", adapter={"dim": 8}), data, names, tmp_path / "both", progress=False)
    alone = run(RunConfig(input="random", adapter={"dim": 8}, schemes=["family"]), data, names, tmp_path / "alone",
                progress=False)
    paper, family, single = ({r.task.name: r for r in results}
                             for results in (both.by_scheme["paper"], both.by_scheme["family"], alone.results))
    for name in names:
        assert family[name].skipped is None and family[name].probe["scheme"] == "family"
        assert (family[name].scores, family[name].lift) == (single[name].scores, single[name].lift)
        assert family[name].added_over_names == single[name].added_over_names
    assert family[names[0]].scores == paper[names[0]].scores
    assert family[names[0]].timing == paper[names[0]].timing  # the one probe's seconds: the paper scheme's
    assert family[names[1]].timing != paper[names[1]].timing  # family folds of its own: probed again


def test_a_resumed_run_recomputes_a_kept_result_whose_controls_are_not_the_datas(data, tmp_path, caplog):
    task = "HLA class I vs class II"
    (tmp_path / "exclude.txt").write_text("HLA-A\n")  # covered in part: its lift is over the controls on its rows
    config = RunConfig(input="random", adapter={"dim": 8}, schemes=["paper"],
                       exclude_genes=str(tmp_path / "exclude.txt"))
    out = tmp_path / "results"
    first = run(config, data, [task, "TF vs non-TF"], out, progress=False).results
    path = next(p for p in out.rglob("HLA*.json"))
    edited = json.loads(path.read_text())
    edited["diagnostics"]["controls_on_covered_rows"] = {"name": 0.123456}  # what an older control file gave
    edited["lift"] = round(edited["scores"][edited["main_score"]]["mean"] - 0.123456, 6)
    path.write_text(json.dumps(edited))
    untouched = next(p for p in out.rglob("TF*.json")).read_bytes()
    caplog.set_level("INFO")
    again = run(config, data, [task, "TF vs non-TF"], out, progress=False).results
    assert "1 task to score, 1 already done" in caplog.text
    assert again[0].controls == first[0].controls != {"name": 0.123456}
    assert again[0].lift == first[0].lift and read_result(path).lift == first[0].lift
    assert next(p for p in out.rglob("TF*.json")).read_bytes() == untouched
