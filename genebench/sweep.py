"""A sweep: many models scored on one task selection with one probe setting, each in its own results folder.

A sweep file (YAML) holds a list of model entries in the model YAML schema (`genebench run --config`), and
what every model shares::

    models:
      - {model: sentence-transformers/all-MiniLM-L6-v2, input: description}
      - {model: facebook/esm2_t6_8M_UR50D, input: protein, adapter: {batch_size: 8}}
      - {input: random, adapter: {dim: 384}}
    tasks: {family: [humantfs, reactome]}   # the task selection of `genebench run` (default: every task), or a
                                             # list of task names: tasks: ["TF vs non-TF", Pathways]
    probe: {C: 1.0}                          # shared probe settings
    schemes: [paper, family]                 # the fold schemes each model is scored under (default: both)
    data: null                               # built data folder or Hub id (default: the bundled snapshot)
    hub_revision: null                       # its Hub revision: branch, tag or commit (was data_revision)

Each model runs the main job (`genebench.pipeline.run`) into `OUT/<org__name>-<input>-<hash>/`, the hash
being that of its entry, so reordering entries keeps folders. A model that finished (all its tasks, with
the same data, tasks, probe and entry) is skipped on rerun; an interrupted one resumes. One report over
every model is written to `OUT/report/` at the end.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from genebench.atomic import write_atomic
from genebench.catalogue import TaskSelection
from genebench.config import RunConfig, first_error, read_yaml
from genebench.errors import GenebenchError
from genebench.pipeline import run
from genebench.results import OverwriteStrategy, model_dir_name

if TYPE_CHECKING:
    from genebench.data import BenchmarkData
    from genebench.distributed import RayEngine

logger = logging.getLogger(__name__)

DONE_FILE = "sweep_done.yaml"
"""Written in a model's folder when all its tasks are scored: what they were scored with."""
REPORT_DIR = "report"
EXAMPLE = "{models: [{input: random, adapter: {dim: 64}}], tasks: [TF vs non-TF], probe: {C: 1.0}}"
"""A valid sweep file, shown beside a refused key."""


class SweepFile(BaseModel):
    """The schema of a sweep file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    models: list[dict[str, Any]] = Field(min_length=1)
    tasks: TaskSelection = Field(default_factory=TaskSelection)
    probe: dict[str, Any] = Field(default_factory=dict)
    schemes: list[str] | str | None = Field(default=None, validation_alias=AliasChoices("schemes", "folds"))
    data: str | None = None
    hub_revision: str | None = Field(default=None, validation_alias=AliasChoices("hub_revision", "data_revision"))

    @field_validator("tasks", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """A list of task names (or one name) is `{tasks: [...]}`; an empty list selects nothing and is refused."""
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            if not value:
                raise ValueError("an empty list selects no task; give task names, e.g. tasks: [TF vs non-TF], or "
                                 "leave 'tasks' out to score every task")
            return {"tasks": value}
        return value


@dataclass(frozen=True)
class Sweep:
    """A checked sweep: one `RunConfig` per model (shared probe settings merged in) and what they share."""

    configs: list[RunConfig]
    tasks: TaskSelection
    data: str | None = None
    hub_revision: str | None = None

    @classmethod
    def from_yaml(cls, path: str | Path) -> Sweep:
        """Read and check a sweep file.

        Raises:
            GenebenchError: unreadable YAML, an unknown key (shown with a valid example), an invalid model entry
                (named by its position), probe settings inside an entry, or two entries that resolve to one model
                id (both named).
        """
        loaded = read_yaml(path, "sweep")
        try:
            sweep = SweepFile.model_validate(loaded)
        except ValidationError as exc:
            raise GenebenchError(f"sweep '{path}': {first_error(exc, SweepFile.model_fields, EXAMPLE)}") from None
        configs = []
        for i, entry in enumerate(sweep.models):
            source = f"sweep '{path}' models[{i}]"
            if not isinstance(entry, dict):
                raise GenebenchError(f"{source}: expected a model entry (model, input, adapter, ...), found {entry!r}.")
            for shared in ("probe", "schemes", "folds"):
                if shared in entry:
                    raise GenebenchError(f"{source}: {shared} settings are shared by every model of a sweep; move "
                                         f"them to the top-level '{shared}'.")
            schemes = {"schemes": sweep.schemes} if sweep.schemes is not None else {}
            configs.append(RunConfig.build(source, **entry, probe=sweep.probe, **schemes))
        ids = [config.model_id() for config in configs]
        twice = next(((i, j) for j, model in enumerate(ids) for i in range(j) if ids[i] == model), None)
        if twice:
            i, j = twice
            raise GenebenchError(f"sweep '{path}': models[{i}] and models[{j}] both resolve to the model id "
                                 f"'{ids[i]}', so one would hide the other; give them distinct `name:`s, or drop one.")
        return cls(configs=configs, tasks=sweep.tasks, data=sweep.data, hub_revision=sweep.hub_revision)


def model_folder(config: RunConfig) -> str:
    """A model's results folder in a sweep: `<org__name>-<input>-<hash of its entry>`."""
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"{model_dir_name(config.model_id())}-{config.input}-{digest}"


def _fingerprint(config: RunConfig, task_names: list[str], data: BenchmarkData) -> dict[str, Any]:
    from genebench import __version__

    return {"genebench_version": __version__, "config": config.record(), "tasks": task_names,
            "data_hash": data.data_hash}


def is_finished(folder: Path, fingerprint: dict[str, Any]) -> bool:
    """Whether `folder` holds a finished run of exactly this model, task list, data and probe."""
    import yaml

    try:
        return yaml.safe_load((folder / DONE_FILE).read_text()) == fingerprint
    except (OSError, yaml.YAMLError):
        return False


@dataclass
class SweepOutcome:
    """What a sweep did: each model's folder and status ("scored", "skipped" or the failure), and the report."""

    folders: dict[str, Path]
    status: dict[str, str]
    report: list[Path]


def run_sweep(sweep: Sweep, out: str | Path, *, engine: RayEngine | None = None,
              overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING,
              progress: bool = True) -> SweepOutcome:
    """Score every model of `sweep` into its folder under `out`, then write one report over all of them.

    A model that fails (a setup error, a failed worker) is reported and the others still run; every
    finished result is kept.

    Args:
        sweep: the checked sweep.
        out: the sweep's folder (one subfolder per model, and `report/`).
        engine: where encoding and probing run (a connected `RayEngine`); None runs here.
        overwrite: what to do with results already there (see `OverwriteStrategy`); "always" reruns finished
            models too.
        progress: show progress bars.

    Raises:
        GenebenchError: after the report is written, when one or more models failed (each named).
    """
    import yaml

    from genebench.data import open_data
    from genebench.pipeline import select_tasks
    from genebench.report import write_report
    from genebench.results import load_results

    out = Path(out)
    overwrite = OverwriteStrategy.from_str(overwrite)
    data = open_data(sweep.data, hub_revision=sweep.hub_revision)
    names = [meta.name for meta in sweep.tasks.select(data)]
    select_tasks(data, names)  # an empty selection fails here, before any model runs
    folders = {config.model_id(): out / model_folder(config) for config in sweep.configs}
    status: dict[str, str] = {}
    for i, config in enumerate(sweep.configs, 1):
        folder, model = out / model_folder(config), config.model_id()
        fingerprint = _fingerprint(config, names, data)
        if overwrite is not OverwriteStrategy.ALWAYS and is_finished(folder, fingerprint):
            print(f"[{i}/{len(sweep.configs)}] {model} ({config.input}): finished before, skipped ({folder})")
            status[model] = "skipped"
            continue
        print(f"[{i}/{len(sweep.configs)}] {model} ({config.input}) on {len(names)} tasks -> {folder}")
        try:
            run(config, data, names, folder, overwrite=overwrite, progress=progress, engine=engine)
        except GenebenchError as exc:
            status[model] = str(exc).splitlines()[0]
            logger.error("%s (%s input) failed: %s", model, config.input, status[model])
            continue
        write_atomic(folder / DONE_FILE, yaml.safe_dump(fingerprint, sort_keys=False))
        status[model] = "scored"
    scored = [folder for folder in folders.values() if folder.is_dir() and any(folder.rglob("*.json"))]
    report = write_report(load_results(scored), out / REPORT_DIR) if scored else []
    failed = {model: why for model, why in status.items() if why not in ("scored", "skipped")}
    if failed:
        raise GenebenchError(f"{len(failed)} of {len(status)} models failed (finished results and the report are "
                             f"written; rerun to retry them): " + "; ".join(f"{m}: {w}" for m, w in failed.items()))
    return SweepOutcome(folders=folders, status=status, report=report)
