"""Score the controls of `genebench.controls.table` on every task of a data folder, under each fold scheme, and store
them: the control table and each control's held-out predictions (`genebench.controls.stored`), swapped in whole.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from genebench import __version__
from genebench.atomic import write_atomic
from genebench.controls.covered import score_values
from genebench.controls.fit import SeedScores, control_settings, fit_controls, held_out_values
from genebench.controls.stored import (
    CONTROL_SCORES,
    CONTROL_SCORES_SCHEMA,
    CONTROLS_DIR,
    decode_predictions,
    encode_predictions,
)
from genebench.controls.table import CONTROLS, RANDOM_MAX_SE, RANDOM_MAX_SEEDS, RANDOM_SEEDS
from genebench.data import BenchmarkData, tables_hash
from genebench.data_folder import commit_manifest, manifest_of, swap, write_parquet
from genebench.errors import GenebenchError
from genebench.probe.settings import ProbeSettings
from genebench.tasks.metadata import FOLD_SCHEMES
from genebench.tasks.task import Task

logger = logging.getLogger(__name__)

SEEDED = [name for name, control in CONTROLS.items() if control.seeded]
"""The controls stored as scores over seeds."""


def add_controls(out: str | Path, *, settings: ProbeSettings | None = None, names: Sequence[str] | None = None,
                 schemes: Sequence[str] = FOLD_SCHEMES, keep_seeds: bool = False,
                 progress: bool = True) -> BenchmarkData:
    """Score the control baselines (`genebench.controls`) on every task of a data folder under each fold scheme and
    store their table and predictions.

    They go to `out/controls/` (swapped in whole; the rows of controls and schemes not rescored are kept) and into the
    manifest, which checks them by sha256 like every file. They are derived from the data, so the data revision stays
    the same. Pair and train-test tasks keep their split under family folds, so their family rows are the paper ones.

    Args:
        out: a built data folder.
        settings: the probe settings of every control (default: the probe's defaults).
        names: which controls to score (default all); the folder's other controls are kept.
        schemes: the fold schemes to score (default both); family rows need paper rows, which are scored too when the
            folder has none.
        keep_seeds: keep the random control's stored seeds (count, mean and spread per task) and add only the seeds
            `genebench.controls.random_seeds_left` asks for after them.
        progress: show progress bars.

    Returns:
        The folder opened again, its task metadata carrying the control scores.

    Raises:
        GenebenchError: `keep_seeds` on controls scored with other probe settings or another data hash.
    """
    out = Path(out)
    data, settings = BenchmarkData(out), settings or ProbeSettings()
    names = list(names or CONTROLS)
    old = data.control_table
    if keep_seeds:
        _check_kept_seeds(data, settings)
    schemes = [scheme for scheme in FOLD_SCHEMES if scheme in schemes]
    if "family" in schemes and "paper" not in schemes and not (
            (old["folds"] == "paper") & old["control"].isin(names)).any():
        logger.info("the folder has no paper-fold controls, which family folds share for pair tasks: scoring both")
        schemes = list(FOLD_SCHEMES)
    kept = old[~(old["folds"].isin(schemes) & old["control"].isin(names))]
    staging = out / f".staging-{CONTROLS_DIR}-{uuid.uuid4().hex[:8]}"
    start = time.perf_counter()
    try:
        staging.mkdir(parents=True)
        for relative in sorted(set(kept["file"].dropna())):
            shutil.copy2(out / relative, staging / Path(relative).name)
        table = [kept] if len(kept) else []
        for scheme in schemes:
            paper = pd.concat(table, ignore_index=True) if scheme == "family" else None
            stored = old[(old["folds"] == scheme) & old["control"].isin(SEEDED) & old["score"].notna()]
            scored = {(row.task, row.control): SeedScores(int(row.n_seeds), float(row.score), float(row.spread))
                      for row in stored.itertuples()} if keep_seeds else {}
            table.append(_score_scheme(data, scheme, names, settings, staging, paper=paper, scored=scored,
                                       progress=progress))
        frame = pd.concat(table, ignore_index=True).sort_values(["folds", "task", "control"], kind="stable")
        write_parquet(pa.Table.from_pandas(frame, schema=CONTROL_SCORES_SCHEMA, preserve_index=False),
                       staging / Path(CONTROL_SCORES).name)
        swap(staging, out / CONTROLS_DIR)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    seconds = time.perf_counter() - start
    logger.info("scored the controls on %d tasks in %.1f s", len(data.tasks()), seconds)
    manifest = manifest_of(out)
    files = sorted({CONTROL_SCORES, *frame["file"].dropna()})
    present = [name for name in CONTROLS if name in set(frame["control"])]
    manifest["controls"] = {"files": files, "names": present, "folds": sorted(set(frame["folds"])),
                            "data_hash": tables_hash(manifest), "random_seeds": list(RANDOM_SEEDS),
                            "random_max_se": RANDOM_MAX_SE, "random_max_seeds": RANDOM_MAX_SEEDS,
                            "probe": settings.to_dict(),
                            "tol": {name: control_settings(CONTROLS[name], settings).tol for name in present},
                            "seconds": round(seconds, 1), "genebench_version": __version__}
    commit_manifest(out, manifest)
    data = BenchmarkData(out)
    manifest["controls"]["shortcut_solvable"] = {
        scheme: {meta.name: list(meta.best_control) for meta in data.tasks(scheme) if meta.is_shortcut_solvable}
        for scheme in manifest["controls"]["folds"]}
    commit_manifest(out, manifest)  # the card lists them
    return BenchmarkData(out)


def _check_kept_seeds(data: BenchmarkData, settings: ProbeSettings) -> None:
    """Refuse to add seeds to stored random scores that other probe settings or another data hash produced."""
    stored = data.manifest.get("controls", {})
    found = {"probe": stored.get("probe"), "data_hash": stored.get("data_hash")}
    expected = {"probe": settings.to_dict(), "data_hash": tables_hash(data.manifest)}
    if found != expected:
        raise GenebenchError(f"data folder '{data.path}': its random control was scored with {found}, expected "
                             f"{expected}; rescore it from seed 0 (drop --keep-seeds).")


def _score_scheme(data: BenchmarkData, scheme: str, names: list[str], settings: ProbeSettings, staging: Path, *,
                  paper: pd.DataFrame | None, progress: bool, scored: dict[tuple[str, str], SeedScores]
                  ) -> pd.DataFrame:
    """Fit the controls under one fold scheme: write their predictions to `staging` and return their table rows
    (`CONTROL_SCORES_SCHEMA`). Under family folds, tasks without their own family folds copy `paper`'s rows. The
    seeded controls start from the seeds in `scored` ((task, control) -> seeds scored already)."""
    metas = data.tasks(scheme)
    fitted = [meta for meta in metas if scheme == "paper" or (meta.has_family_folds and not meta.family_unscorable)]
    tasks = {meta.name: data.load_task(meta.name, scheme) for meta in fitted}
    blocks: dict[str, list[np.ndarray]] = {}  # file -> its blocks, in order
    offsets: dict[tuple[str, str], tuple[str, int, np.ndarray, list[float]]] = {}
    seeds = {key: scores for key, scores in scored.items() if key[0] in tasks}
    skipped: dict[tuple[str, str], str] = {}
    for control, _, result in fit_controls(data, list(tasks.values()), settings, names=names, scored=scored,
                                           progress=progress):
        key = (result.task.name, control)
        if result.skipped is not None or not result.scores:
            skipped[key] = result.skipped or "no score"
        elif not CONTROLS[control].seeded and not result.task.metadata.is_derived:
            stored, center, decoded, file = _stored_block(held_out_values(result.task, result),
                                                          _readers(tasks, result.task),
                                                          f"{CONTROLS_DIR}/{control}-{scheme}")
            offsets[key] = (file, sum(block.size for block in blocks.setdefault(file, [])), decoded, center)
            blocks[file].append(stored.ravel())
        elif CONTROLS[control].seeded:
            seeds[key] = seeds.get(key, SeedScores()).add(result.scores[result.main_score].mean)
    for file, parts in blocks.items():
        flat = pa.array(np.concatenate(parts), from_pandas=True)  # NaN -> null
        write_atomic(staging / Path(file).name, lambda part, flat=flat: pq.write_table(
            pa.table({"value": flat}), part, compression="zstd", use_dictionary=False,
            column_encoding={"value": "BYTE_STREAM_SPLIT"}))
    rows = []
    for meta in metas:
        if meta.name not in tasks:
            if meta.family_unscorable or paper is None:
                rows += [_control_row(scheme, meta.name, control, skipped=meta.family_unscorable)
                         for control in names if CONTROLS[control].applies(meta)]
            continue
        task = tasks[meta.name]
        source = meta.parent if meta.is_derived else meta.name
        column = data.metadata(source).label_names.index(meta.label_names[1]) if meta.is_derived else -1
        for control in names:
            key = (meta.name, control)
            if (source, control) in offsets:
                file, offset, values, center = offsets[(source, control)]
                score = score_values(task, _column(values, column))
                rows.append(_control_row(scheme, meta.name, control, score=score, skipped=skipped.get(key),
                                         file=file, offset=offset, shape=values.shape, column=column,
                                         center=center))
            elif key in seeds:
                rows.append(_control_row(scheme, meta.name, control, score=seeds[key].mean, spread=seeds[key].spread,
                                         n_seeds=seeds[key].n))
            elif key in skipped:
                rows.append(_control_row(scheme, meta.name, control, skipped=skipped[key]))
    frame = pd.DataFrame(rows, columns=CONTROL_SCORES_SCHEMA.names)
    if paper is not None:  # pair and train-test tasks: their family folds are their paper folds
        shared = paper[(paper["folds"] == "paper") & paper["control"].isin(names)
                       & paper["task"].isin([m.name for m in metas if not m.has_family_folds])]
        frame = pd.concat([frame, shared.assign(folds=scheme)], ignore_index=True)
    return frame


FLOAT16_TOLERANCE = 1e-3
"""The largest change of a control's score that float16 storage may make (the probe's own agreement with
scikit-learn); a block that float16 would move more is stored as float32."""


def _readers(tasks: dict[str, Task], task: Task) -> list[tuple[Task, int]]:
    """The tasks scored from `task`'s stored block, each with its column (-1: the whole block): the task itself
    and the binary tasks derived from its labels."""
    derived = [other for other in tasks.values()
               if other.metadata.is_derived and other.metadata.parent == task.metadata.name]
    return [(task, -1), *((other, task.metadata.label_names.index(other.metadata.label_names[1]))
                          for other in derived)]


def _stored_block(values: np.ndarray, readers: list[tuple[Task, int]], stem: str
                  ) -> tuple[np.ndarray, list[float], np.ndarray, str]:
    """`values` as stored, their centers, the values read back from them, and their file: float16 (`<stem>.parquet`)
    when every reader's score from the stored values is within `FLOAT16_TOLERANCE` of its score from `values`, else
    float32 (`<stem>-float32.parquet`)."""
    stored, center = encode_predictions(values)
    decoded = decode_predictions(stored, center)
    if all(not abs(score_values(task, _column(values, column)) - score_values(task, _column(decoded, column)))
           > FLOAT16_TOLERANCE for task, column in readers):  # NaNs (unscorable) compare False: float16 is kept
        return stored, center, decoded, f"{stem}.parquet"
    stored, center = encode_predictions(values, np.float32)
    return stored, center, decode_predictions(stored, center), f"{stem}-float32.parquet"


def _column(values: np.ndarray, column: int) -> np.ndarray:
    """A stored block's column `column`, or the whole block (-1)."""
    return values[:, column] if column >= 0 else values


def _control_row(scheme: str, task: str, control: str, *, score: float = float("nan"), spread: float = float("nan"),
                 n_seeds: int = 1, skipped: str | None = None, file: str | None = None, offset: int = 0,
                 shape: tuple[int, int] = (0, 0), column: int = -1, center: list[float] | None = None
                 ) -> dict[str, Any]:
    """One row of the control table (`CONTROL_SCORES_SCHEMA`); a score that is not finite is recorded as skipped."""
    if not np.isfinite(score) and skipped is None:
        skipped = "the stored predictions cannot be scored"
    return {"folds": scheme, "task": task, "control": control, "score": score if np.isfinite(score) else None,
            "spread": spread if np.isfinite(spread) else None, "n_seeds": n_seeds, "skipped": skipped, "file": file,
            "offset": offset, "n_rows": shape[0], "n_columns": shape[1], "column": column, "center": center or []}


