"""Run probes over many tasks, writing each result as its task finishes, so a rerun resumes."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from genebench.embeddings import GeneEmbeddings
from genebench.errors import ResultsError
from genebench.probe.engine import TaskScores, iter_task_scores
from genebench.probe.settings import ProbeSettings
from genebench.results import ModelInfo, OverwriteStrategy, TaskResult, read_result, result_path, write_result
from genebench.tasks.task import Task

logger = logging.getLogger(__name__)


def _model_info(model_info: ModelInfo | dict[str, Any] | None, embeddings: GeneEmbeddings) -> ModelInfo:
    if isinstance(model_info, ModelInfo):
        return model_info
    source = model_info if model_info is not None else embeddings.model
    fields = {key: source[key] for key in ("id", "revision", "adapter", "settings") if key in source}
    if "id" not in fields or "adapter" not in fields:
        raise ResultsError(f"model info: expected at least 'id' and 'adapter', found {sorted(source)}; pass "
                           "model_info=ModelInfo(id=..., revision=..., adapter=...).")
    return ModelInfo(**fields)


def _is_current(path: Path, *, model: ModelInfo, probe: dict[str, Any], dataset_revision: dict[str, Any],
                config: dict[str, Any], overwrite: OverwriteStrategy) -> TaskResult | None:
    """The existing result to keep for this task, or None when it must be (re)computed.

    A result is kept only when it was made from the same vectors (their cache key), probe settings, data
    and run config, so a resumed run never mixes results of two settings.
    """
    if overwrite is OverwriteStrategy.ALWAYS or not path.is_file():
        return None
    if overwrite is OverwriteStrategy.NEVER:
        return read_result(path)
    try:
        existing = read_result(path)
    except ResultsError as exc:
        logger.warning("%s; recomputing it", exc)
        return None
    same_vectors = existing.model.settings.get("cache_key") == model.settings.get("cache_key")
    if not same_vectors or existing.probe != probe or existing.dataset_revision != dataset_revision \
            or existing.config != config:
        logger.info("result '%s' was made from other vectors, probe settings, data or run config; recomputing it",
                    path)
        return None
    return existing


def to_result(scores: TaskScores, *, model: ModelInfo, probe: dict[str, Any], dataset_revision: dict[str, Any],
              config: dict[str, Any]) -> TaskResult:
    """The `TaskResult` of one scored task."""
    from genebench import __version__

    return TaskResult(genebench_version=__version__, task=scores.task.metadata, dataset_revision=dataset_revision,
                      model=model, probe=probe, coverage=scores.coverage, scores=scores.scores,
                      main_score=scores.main_score, skipped=scores.skipped,
                      timing={"probe_seconds": round(scores.seconds, 4)},
                      date=datetime.now(timezone.utc).isoformat(timespec="seconds"), config=config,
                      diagnostics=scores.diagnostics)


def run_probes(tasks: Sequence[Task], embeddings: GeneEmbeddings, out_dir: str | Path, *,
               settings: ProbeSettings | None = None, model_info: ModelInfo | dict[str, Any] | None = None,
               dataset_revision: dict[str, Any], config: dict[str, Any] | None = None,
               overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING, progress: bool = True,
               partner_embeddings: GeneEmbeddings | None = None) -> list[TaskResult]:
    """Score every task and write one result file per task as soon as it finishes.

    Tasks that cannot be scored (too few covered genes, a single-class fold, ...) get a result whose
    `skipped` says why; the run goes on. Results already on disk are kept according to `overwrite`, so
    rerunning an interrupted run only computes what is missing.

    Args:
        tasks: the tasks to score.
        embeddings: gene symbol -> vector table.
        out_dir: the results root (see `genebench.results.write_result`).
        settings: probe settings (defaults when None).
        model_info: the model's id, revision, adapter and settings (from `embeddings.model` when None).
        dataset_revision: source versions and the built data's hash.
        config: the run configuration, recorded with every result.
        overwrite: "only-missing" (default), "always" or "never" (see `OverwriteStrategy`).
        progress: show a tqdm progress bar.
        partner_embeddings: vectors for non-gene entities of pair tasks.

    Returns:
        One `TaskResult` per task, in the order of `tasks` (kept ones read back from disk).
    """
    settings = settings or ProbeSettings()
    overwrite = OverwriteStrategy.from_str(overwrite)
    model = _model_info(model_info, embeddings)
    probe = settings.to_dict()
    results: dict[str, TaskResult] = {}
    for task in tasks:
        kept = _is_current(result_path(out_dir, model, task.name), model=model, probe=probe,
                           dataset_revision=dataset_revision, config=config or {}, overwrite=overwrite)
        if kept is not None:
            results[task.name] = kept
    pending = [task for task in tasks if task.name not in results]
    needed = {task.metadata.parent for task in pending if task.metadata.parent}
    parents = [task for task in tasks if task.name in needed and task.name in results]
    logger.info("%d tasks to score, %d already done", len(pending), len(results))
    with tqdm(total=len(pending), desc="probing", unit="task", disable=not progress) as bar:
        for scores in iter_task_scores([*parents, *pending], embeddings, settings,
                                       partner_embeddings=partner_embeddings):
            if scores.task.name in results:
                continue
            result = to_result(scores, model=model, probe=probe, dataset_revision=dataset_revision,
                               config=config or {})
            write_result(result, out_dir)
            results[scores.task.name] = result
            bar.set_postfix_str(scores.task.name[:40])
            bar.update()
    return [results[task.name] for task in tasks]
