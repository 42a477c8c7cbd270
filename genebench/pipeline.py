"""The main job, one way through: select tasks, restrict genes, encode, build partner vectors, probe, write.

`run` is what `genebench run` does; each step is a function of its own, so a notebook can stop after any of
them (`encode` is `genebench encode`). Results are written one file per task as each finishes, so a rerun
resumes. The run returns data (results, vectors, seconds per phase) and logs; what is printed is `genebench.report`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from genebench.config import RunConfig
from genebench.controls.added import added_over_names
from genebench.controls.covered import controls_current, controls_on, stored_predictions
from genebench.controls.lift import lift
from genebench.data import BenchmarkData
from genebench.embeddings import GeneEmbeddings
from genebench.errors import EmbeddingError, GenebenchError, ResultsError
from genebench.genes import restrict, task_genes
from genebench.inputs import ADAPTERS, CACHE, adapter_settings, get_adapter, load_target
from genebench.lock import folder_lock
from genebench.model_info import ModelInfo
from genebench.parallel import core_threads
from genebench.partners import partner_embeddings
from genebench.progress import Timer
from genebench.progress import progress as progress_counter
from genebench.results import (
    COVERED_CONTROLS,
    OverwriteStrategy,
    TaskResult,
    result_path,
    results_frame,
    write_result,
)
from genebench.run_context import RunContext, SharedScores, shared_tasks
from genebench.run_folder import RunFolder, scheme_folder
from genebench.run_identity import RunIdentity
from genebench.tasks.metadata import Scheme
from genebench.tasks.task import Task
from genebench.wording import counted

if TYPE_CHECKING:
    from genebench.distributed import RayEngine
    from genebench.probe.engine import TaskScores

logger = logging.getLogger(__name__)

PHASES = ("select", "read", "partners", "probe", "controls", "write")
"""The phases a run times (`Run.seconds`): reading is encoding, or reading a table."""


# -- select -----------------------------------------------------------------------------------------------------

def select_tasks(data: BenchmarkData, names: Sequence[str], scheme: Scheme = "paper") -> list[Task]:
    """Load the named tasks with the folds of one scheme.

    Raises:
        GenebenchError: `names` is empty.
    """
    if not names:
        raise GenebenchError("no task matches the selection; list them with `genebench tasks`.")
    return [data.load_task(name, scheme) for name in names]


# -- encode -----------------------------------------------------------------------------------------------------

def make_encoder(config: RunConfig, data: BenchmarkData, engine: RayEngine | None = None):
    """The adapter for `config`, wrapped in the embedding cache when its input kind is cached, which encodes on
    `engine` when one is given."""
    entry = ADAPTERS[config.input]
    settings = dict(config.adapter)
    if config.revision and "revision" in adapter_settings(config.input):
        settings["revision"] = config.revision
    if entry.reads_descriptions and settings.get("source", "refseq") == "refseq":
        settings.setdefault("descriptions", str(data.descriptions("refseq")))
    encoder = get_adapter(config.input, config.model, hgnc=data.hgnc(), **settings)
    return load_target(CACHE)(encoder, engine=engine) if entry.is_cached else encoder


def model_record(encoded: ModelInfo, config: RunConfig) -> ModelInfo:
    """The adapter's record under the run's name, with the user's metadata (which wins over the adapter's)."""
    extra = {k: getattr(config, k) for k in ("reference", "license", "n_parameters", "modality")
             if getattr(config, k) is not None}
    return encoded.model_copy(update={"id": config.model_id(), **extra})


def encode(config: RunConfig, data: BenchmarkData, genes: Sequence[str], encoder=None, *,
           engine: RayEngine | None = None) -> GeneEmbeddings:
    """Vectors for `genes` (encoded on `engine` when given), their model record named and annotated as `config`
    says (for inputs made from descriptions, `notes["descriptions"]`: how many genes got a full one)."""
    encoder = encoder or make_encoder(config, data, engine)
    logger.info("encoding %d genes with %s (%s input)", len(genes), config.model, config.input)
    embeddings = encoder.encode(list(genes))
    if genes and not len(embeddings.symbols):
        reasons = ", ".join(f"{k} {len(v)}" for k, v in embeddings.missing.items() if v) or "no reason given"
        raise EmbeddingError(f"{config.model} ({config.input} input) gave a vector for none of the {len(genes)} genes "
                             f"the tasks need ({reasons}); check the model and its input kind.")
    embeddings.model = model_record(embeddings.model, config)
    describe = ADAPTERS[config.input].describe
    if describe is not None:
        counts = load_target(describe)(encoder, embeddings, genes)
        embeddings.model = embeddings.model.model_copy(
            update={"notes": {**embeddings.model.notes, "descriptions": counts}})
    return embeddings


# -- probe and write ---------------------------------------------------------------------------------------------

def to_result(scores: TaskScores, *, model: ModelInfo, probe: dict[str, Any], provenance: dict[str, Any],
              config: dict[str, Any], controls: dict[str, float] | None = None, **extra: Any) -> TaskResult:
    """The `TaskResult` of one scored task, complete; scores that are not finite or out of range make it skipped,
    saying why.

    Its lift is over `controls` (the controls on the rows the model covers, `controls_on`), or over the task's
    stored ones when None; `extra` are further `TaskResult` fields (`added_over_names`).
    """
    from genebench import __version__
    from genebench.metrics import score_problem

    skipped, kept, diagnostics = scores.skipped, scores.scores, scores.diagnostics
    problems = [p for m, s in kept.items() if (p := score_problem(m, s.folds, s.mean, s.std))]
    if problems:
        skipped, kept = f"the probe gave no valid score: {problems[0]}; try other probe settings", {}
        logger.warning("task '%s' skipped: %s", scores.task.name, skipped)
    if controls is not None and kept and scores.coverage.n_covered < scores.coverage.n_task:
        diagnostics = {**diagnostics, COVERED_CONTROLS: controls}
    main = kept.get(scores.main_score)
    return TaskResult(genebench_version=__version__, task=scores.task.metadata, provenance=provenance,
                      model=model, probe=probe, coverage=scores.coverage, scores=kept,
                      main_score=scores.main_score, skipped=skipped,
                      lift=lift(None if main is None else main.mean,
                                controls if controls is not None else scores.task.metadata.controls),
                      timing={"probe_seconds": round(scores.seconds, 4)},
                      date=datetime.now(timezone.utc).isoformat(timespec="seconds"), config=config,
                      diagnostics=diagnostics, **extra)


def run_probes(tasks: Sequence[Task], embeddings: GeneEmbeddings, out_dir: str | Path,
               context: RunContext) -> list[TaskResult]:
    """Score every task and write one result file per task as soon as it finishes, complete (its lift final).

    Tasks that cannot be scored (too few covered genes, a single-class fold, one gene family under family folds,
    ...) get a result whose `skipped` says why; the run goes on. Results already on disk are kept when they are
    this run's (`RunFolder.kept`) and their lift is over the controls now in `context.data`, so rerunning an
    interrupted run only computes what is missing, and never rewrites a kept file.

    Args:
        tasks: the tasks to score, loaded with the folds of `context.settings.scheme`.
        embeddings: gene symbol -> vector table, with its `ModelInfo` as `model` (what every adapter returns).
        out_dir: the results root (see `genebench.results.write_result`).
        context: what the run's tasks share.

    Returns:
        One `TaskResult` per task, in the order of `tasks` (kept ones read back from disk).

    Raises:
        ResultsError: `embeddings` carries no model record.
    """
    from genebench.probe.engine import iter_task_scores

    if embeddings.model is None:
        raise ResultsError("embeddings: expected a model record (`embeddings.model`, a ModelInfo) to file results "
                           "under; set embeddings.model = ModelInfo(id='org/name', input=...).")
    model, config, timer, settings, data = (embeddings.model, context.config, context.timer, context.settings,
                                            context.data)
    provenance, shared, engine = context.provenance, context.shared, context.engine
    probe = settings.to_dict()
    folder = RunFolder(out_dir, RunIdentity.of_run(model, probe, provenance), context.overwrite)
    results: dict[str, TaskResult] = {}
    for task in tasks:
        kept = folder.kept(result_path(out_dir, model, task.name), provenance=provenance, config=config)
        if kept is not None and (data is None or controls_current(kept, data, task, settings.scheme)):
            results[task.name] = kept
    pending = [task for task in tasks if task.name not in results]
    taken = {task.name: found for task in pending if shared is not None and (found := shared.take(task)) is not None}
    probed = [task for task in pending if task.name not in taken]
    needed = {task.metadata.parent for task in probed if task.metadata.parent}
    parents = [task for task in tasks if task.name in needed and task.name in results]
    logger.info("%s folds: %s to score, %d already done", settings.scheme, counted(len(pending), "task"), len(results))

    def finish(scores: TaskScores) -> TaskResult:  # on a pool thread, while this one takes the next scores
        with timer.phase("controls"):
            extra = _against_controls(scores, data, settings.scheme) if data is not None else {}
        return to_result(scores, model=model, probe=probe, provenance=provenance, config=config, **extra)

    counter = progress_counter(len(pending), f"probing ({settings.scheme} folds)", "task",
                               enabled=context.progress and bool(pending))
    with counter as bar, core_threads() as pool:
        scorer = engine.iter_task_scores if engine is not None else iter_task_scores
        scored = chain(taken.values(), scorer([*parents, *probed], embeddings, settings,
                                     partner_embeddings=context.partner_embeddings))
        finishing: dict[Future, str] = {}
        while True:
            with timer.phase("probe"):
                scores = next(scored, None)  # None, again and again, once every task is probed
            if scores is not None and scores.task.name not in results:
                if shared is not None:
                    shared.keep(scores)
                finishing[pool.submit(finish, scores)] = scores.task.name
            elif scores is None and not finishing:
                break
            for future in wait(finishing, timeout=0 if scores is not None else None, return_when=FIRST_COMPLETED)[0]:
                name = finishing.pop(future)
                results[name] = future.result()
                with timer.phase("write"):  # on this thread alone: one writer
                    write_result(results[name], out_dir)
                bar.set_postfix_str(name[:40])
                bar.update()
    return [results[task.name] for task in tasks]


def _against_controls(scores: TaskScores, data: BenchmarkData, scheme: Scheme) -> dict[str, Any]:
    """What a scored task's result needs from the controls: `controls` on its covered rows, and under family folds
    `added_over_names` (over the name control's stored predictions, resampled by gene family)."""
    if scores.skipped is not None or scores.rows is None:
        return {}
    task, predictions = scores.task, stored_predictions(data, scores.task, scheme)  # decoded and checked once
    found = {"controls": controls_on(data, task, scores.rows, scheme, predictions=predictions)}
    name = predictions.get("name") if scheme == "family" else None
    if name is not None:
        found["added_over_names"] = added_over_names(task, scores.rows, scores.held_out, name, data.gene_families)
    return found


# -- the whole job ----------------------------------------------------------------------------------------------

@dataclass
class Run:
    """What `run` did: the headline scheme's results (in task order) and every scheme's, the model they are filed
    under, the vectors probed, how many genes the tasks needed, and the seconds of each phase (`PHASES`)."""

    results: list[TaskResult]
    model: ModelInfo
    embeddings: GeneEmbeddings
    partners: GeneEmbeddings | None
    by_scheme: dict[str, list[TaskResult]] = field(default_factory=dict)
    n_genes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def frame(self) -> pd.DataFrame:
        """Every scheme's results as `load_results` would read them back (its `folds` column tells them apart)."""
        return results_frame([result for results in self.by_scheme.values() for result in results] or self.results)


def run(config: RunConfig, data: BenchmarkData, task_names: Sequence[str], out: str | Path, *,
        overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING, progress: bool = True,
        engine: RayEngine | None = None) -> Run:
    """Select, restrict, encode, build partner vectors, probe and write: the whole main job, under each fold scheme
    of `config.schemes` (one run each, in `scheme_folder(out, scheme)`; the genes are encoded once).

    Each scheme's run identity is made once, from the model's record before anything is encoded, and its folder
    is checked against it (`RunFolder.check`). The run's config is saved once the model has encoded, so a failed
    setup leaves the folder free. With a `RayEngine`, encoding and probing run on its cluster and this process
    writes every file.
    """
    from genebench.report import coverage_line

    out, timer = Path(out), Timer()
    with folder_lock(out, what="genebench run"):
        encoder = make_encoder(config, data, engine)
        with timer.phase("read"):
            model = model_record(encoder.meta.keyed(), config)  # a bad model id fails here, before any task loads
        folders = {scheme: RunFolder(scheme_folder(out, scheme), RunIdentity.of_run(
            model, config.probe_settings(scheme).to_dict(), data.provenance), overwrite) for scheme in config.schemes}
        for folder in folders.values():
            folder.check(config)
        with timer.phase("select"):
            tasks = {scheme: select_tasks(data, task_names, scheme) for scheme in config.schemes}
            genes = task_genes(tasks[config.schemes[0]])
            kept = restrict(genes, include_genes=config.include_genes, exclude_genes=config.exclude_genes,
                            common_with=config.common_with)
        with timer.phase("read"):
            embeddings = encode(config, data, kept, encoder)
        logger.info(coverage_line(embeddings, len(genes)))
        with timer.phase("partners"):
            partners = partner_embeddings(tasks[config.schemes[0]], embeddings, data, encoder)
        by_scheme, shared = {}, SharedScores(shared_tasks(tasks)) if len(tasks) > 1 else None
        for scheme, folder in folders.items():
            folder.save_config(config)
            by_scheme[scheme] = run_probes(tasks[scheme], embeddings, folder.out, RunContext(
                data.provenance, config.probe_settings(scheme), config.record(), overwrite, progress, partners, engine,
                data, timer, shared))
    seconds = {phase: round(timer.seconds.get(phase, 0.0), 3) for phase in PHASES}
    return Run(results=by_scheme[config.schemes[0]], model=embeddings.model, embeddings=embeddings, partners=partners,
               by_scheme=by_scheme, n_genes=len(genes), seconds=seconds)
