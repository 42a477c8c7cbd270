"""The main job, one way through: select tasks, restrict genes, encode, build partner vectors, probe, write.

`run` is what `genebench run` does; each step is a function of its own, so a notebook can stop after any of
them (`encode` is `genebench encode`). Results are written one file per task as each finishes, so a rerun
resumes; the summary is made from the results in memory.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from genebench.atomic import remove_stale_temporaries, write_atomic
from genebench.comparability import revision_id
from genebench.data import BenchmarkData
from genebench.embeddings import GeneEmbeddings
from genebench.errors import ConfigError, EmbeddingError, GenebenchError, ResultsError
from genebench.lock import folder_lock
from genebench.model_info import MODEL_ID, ModelInfo, file_record
from genebench.progress import progress as progress_counter
from genebench.results import (
    COVERED_CONTROLS,
    MetricScores,
    OverwriteStrategy,
    TaskResult,
    format_lift,
    identity_difference,
    model_dir_name,
    read_result,
    result_files,
    result_path,
    results_frame,
    summary_table,
    write_result,
)
from genebench.tasks.metadata import best_of
from genebench.tasks.task import Task
from genebench.wording import counted

if TYPE_CHECKING:
    from genebench.distributed import RayEngine
    from genebench.probe.engine import TaskScores
    from genebench.probe.settings import ProbeSettings

logger = logging.getLogger(__name__)

RUN_FILE = "run_config.yaml"


@functools.cache
def adapter_settings_model() -> type[BaseModel]:
    """The schema of `adapter:` in a model YAML: every option of every input kind (`model_adapters.ADAPTERS`)."""
    from model_adapters import options

    fields: dict[str, Any] = {}
    for option in options().values():
        kind = Literal[option.choices] if option.choices else option.type  # type: ignore[valid-type]
        fields[option.name] = (kind | None, Field(default=None, description=option.help))
    return create_model("AdapterSettings", __config__=ConfigDict(extra="forbid"), **fields)


class RunConfig(BaseModel):
    """Everything a run depends on; saved with every result, and loadable from a YAML file (these keys).

    Attributes:
        model: Hub id, local folder, or (precomputed) a table file; default: the input kind's default model.
        input: an input kind of `model_adapters.ADAPTERS`.
        name: the id results are filed under, 'org/name' (default: the Hub id; `genebench/<baseline>`);
            required for precomputed tables and local folders.
        revision: model revision (commit, tag or branch).
        adapter: the input kind's options (pooling, description source, region, vocabulary, ...).
        probe: probe settings (`genebench.probe.ProbeSettings` fields).
        include_genes / exclude_genes: files of symbols (one per line) restricting every task's genes.
        common_with: embedding files whose genes every task is restricted to, so models compare on one set.
        reference / license / n_parameters / modality: metadata shown on the leaderboard.
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    input: str
    name: str | None = None
    revision: str | None = None
    adapter: dict[str, Any] = Field(default_factory=dict)
    probe: dict[str, Any] = Field(default_factory=dict)
    include_genes: str | None = None
    exclude_genes: str | None = None
    common_with: list[str] = Field(default_factory=list)
    reference: str | None = None
    license: str | None = None
    n_parameters: int | None = Field(default=None, ge=0)
    modality: str | None = None

    @field_validator("common_with", mode="before")
    @classmethod
    def _one_file(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value  # one file, not a list of its characters

    @field_validator("input")
    @classmethod
    def _known_input(cls, value: str) -> str:
        from model_adapters import ADAPTERS

        return value if ADAPTERS[value] else value  # an unknown kind raises, with close matches

    @field_validator("adapter")
    @classmethod
    def _known_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        return adapter_settings_model()(**value).model_dump(exclude_none=True)

    @field_validator("name")
    @classmethod
    def _org_name(cls, value: str | None) -> str | None:
        if value is not None and not MODEL_ID.fullmatch(value):
            raise ValueError(f"expected 'org/name' (letters, digits, '.', '_', '-'), found {value!r}; e.g. "
                             "--name my-lab/gene2vec-200")
        return value

    @model_validator(mode="after")
    def _complete(self) -> RunConfig:
        from model_adapters import ADAPTERS

        if self.model is None:
            self.model = ADAPTERS[self.input].default_model
            if self.model is None:
                raise ValueError(f"--input {self.input} needs --model (a Hub id, local folder or table file)")
        self.probe_settings()
        self.model_id()
        return self

    @classmethod
    def build(cls, source: str = "command line", **values: Any) -> RunConfig:
        """Validate `values`, turning any error into one `GenebenchError` line that names `source`.

        Raises:
            GenebenchError: an unknown key or option, a value of the wrong type, or a missing model.
        """
        try:
            return cls(**values)
        except ValidationError as exc:
            raise GenebenchError(f"{source}: {_first_error(exc)}") from None

    def probe_settings(self) -> ProbeSettings:
        """The checked `ProbeSettings` of `probe`.

        Raises:
            GenebenchError: an unknown or out-of-range probe setting.
        """
        from genebench.probe.settings import ProbeSettings

        try:
            return ProbeSettings(**self.probe)
        except (TypeError, ValueError) as exc:
            raise GenebenchError(f"probe settings {self.probe}: {exc}") from exc

    def model_id(self) -> str:
        """The id results are filed under: `name`, else the input kind's default name, else the Hub id.

        Raises:
            GenebenchError: a precomputed table or a local folder without `name`.
        """
        from model_adapters import ADAPTERS, adapter_settings

        entry = ADAPTERS[self.input]
        if self.name:
            return self.name
        if entry.default_name:
            return entry.default_name.format(**{**adapter_settings(self.input), **self.adapter})
        if self.input == "precomputed" or Path(str(self.model)).expanduser().exists():
            raise GenebenchError(f"--model '{self.model}' is a local file or folder: name it with --name ORG/NAME "
                                 "(or `name:` in the YAML), the id its results and the leaderboard show.")
        return str(self.model)

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> RunConfig:
        """Read a model YAML (the keys of this class); `overrides` that are not None win."""
        loaded = read_yaml(path)
        if not isinstance(loaded, dict):
            raise GenebenchError(f"config '{path}': expected a mapping of keys among {sorted(cls.model_fields)}, "
                                 f"found {type(loaded).__name__}.")
        merged = {**loaded, **{k: v for k, v in overrides.items() if v not in (None, {}, [])}}
        for key in ("adapter", "probe"):
            if isinstance(loaded.get(key) or {}, dict):  # anything else is left for validation to name
                merged[key] = {**(loaded.get(key) or {}), **overrides.get(key, {})}
        if not merged.get("input"):
            raise GenebenchError(f"config '{path}': missing 'input'; give it in the file or with --input.")
        return cls.build(f"config '{path}'", **merged)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (what `run_config.yaml` holds, local paths included, so `--config` repeats the run)."""
        return self.model_dump(mode="json")

    def record(self) -> dict[str, Any]:
        """What results record: `to_dict` with every local file as its name, size and sha256, never its path."""
        from model_adapters import options

        record = self.to_dict()
        record["model"] = _public(self.model)
        for key in ("include_genes", "exclude_genes"):
            record[key] = _public(record[key])
        record["common_with"] = [_public(path) for path in self.common_with]
        files = {name for name, option in options().items() if option.is_file}
        record["adapter"] = {k: _public(v) if k in files else v for k, v in self.adapter.items()}
        return record


def _first_error(exc: ValidationError) -> str:
    """One line from a pydantic error: where, and what was expected."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown key '{where}'; expected keys among {sorted(RunConfig.model_fields)} (adapter options: see " \
               "`genebench run --help`)."
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"].endswith("_type") or error["type"].endswith("_parsing"):  # say what was found, and its type
        message += f", found {error['input']!r} ({type(error['input']).__name__})"
    return f"{where}: {message}" if where else message


MAX_CONFIG_BYTES = 1 << 20
"""Largest model YAML read (bytes)."""
MAX_CONFIG_NODES = 10_000
"""Most values a model YAML may hold once its aliases are expanded (a few hundred is typical)."""


def read_yaml(path: str | Path) -> Any:
    """A model YAML's content, checked before it is built: at most `MAX_CONFIG_BYTES`, UTF-8, and at most
    `MAX_CONFIG_NODES` values once its aliases are expanded (counted on the composed graph, so an alias bomb
    never expands). An empty file is `{}`.

    Raises:
        ConfigError: one line naming the file and what is wrong with it.
    """
    import yaml

    where = f"config '{path}'"
    try:
        size = Path(path).stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{where}: {size} bytes, over the {MAX_CONFIG_BYTES} a model YAML may have.")
        text = Path(path).read_text(encoding="utf-8")
        if _expanded_size(yaml.compose(text, Loader=yaml.SafeLoader), MAX_CONFIG_NODES) > MAX_CONFIG_NODES:
            raise ConfigError(f"{where}: its aliases expand to over {MAX_CONFIG_NODES} values (an alias bomb?); "
                              "write the settings out.")
        loaded = yaml.safe_load(text)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read ({exc.strerror or exc}).") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: expected UTF-8 text, found undecodable bytes ({exc.reason}).") from exc
    except RecursionError as exc:
        raise ConfigError(f"{where}: nested too deeply to be a model YAML.") from exc
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())[:200]
        raise ConfigError(f"{where}: cannot be read as YAML ({reason}).") from exc
    return {} if loaded is None else loaded


def _expanded_size(root: Any, limit: int) -> int:
    """How many values a composed YAML node stands for with every alias expanded (stops counting past `limit`)."""
    import yaml

    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if depth > 100:
            raise RecursionError
        sizes[id(node)] = limit + 1  # a node reached again while it is being counted: a cycle
        if isinstance(node, yaml.MappingNode):
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(item, depth + 1) for item in node.value)
        else:
            total = 1
        sizes[id(node)] = min(total, limit + 1)
        return sizes[id(node)]

    return 0 if root is None else size(root, 0)


def _public(value: Any) -> Any:
    """A local file as `file_record`, a local folder as its name; anything else as is."""
    if not isinstance(value, str) or not value:
        return value
    path = Path(value).expanduser()
    if path.is_file():
        return file_record(path)
    return {"folder": path.name} if path.is_dir() else value


# -- select -----------------------------------------------------------------------------------------------------

def select_tasks(data: BenchmarkData, names: Sequence[str]) -> list[Task]:
    """Load the named tasks.

    Raises:
        GenebenchError: `names` is empty.
    """
    if not names:
        raise GenebenchError("no task matches the selection; list them with `genebench tasks`.")
    return [data.load_task(name) for name in names]


def task_genes(tasks: Sequence[Task]) -> list[str]:
    """Every gene symbol the tasks need, sorted (the first entity of pair tasks, and gene partners)."""
    genes: set[str] = set()
    read = set()  # derived tasks share their parent's entity array: read each array once
    for task in tasks:
        key = (id(task.entities), tuple(task.metadata.entity_types))
        if key not in read:
            read.add(key)
            genes.update(map(str, task.genes()))
    return sorted(genes)


# -- restrict ---------------------------------------------------------------------------------------------------

def restrict(genes: Sequence[str], config: RunConfig) -> list[str]:
    """The genes left after `include_genes`, `exclude_genes` and `common_with`, in order.

    Restricting comes before encoding and before partner vectors, so an excluded gene is neither encoded nor
    part of a gene set's vector.
    """
    include = set(_read_symbols(config.include_genes, "include_genes")) if config.include_genes else None
    exclude = set(_read_symbols(config.exclude_genes, "exclude_genes")) if config.exclude_genes else set()
    common = [set(map(str, GeneEmbeddings.load(path).symbols)) for path in config.common_with]
    kept = [g for g in genes if (include is None or g in include) and g not in exclude
            and all(g in other for other in common)]
    if genes and not kept:
        used = [f"{name} '{value}'" for name, value in (("include_genes", config.include_genes),
                                                         ("exclude_genes", config.exclude_genes)) if value]
        used += [f"common_with {config.common_with}"] if common else []
        raise ConfigError(f"the selected tasks need {len(genes)} genes, but {' and '.join(used)} leave none of them; "
                          "check the gene lists hold current HGNC symbols.")
    if len(kept) < len(genes):
        logger.info("gene options keep %d of %d genes", len(kept), len(genes))
    return kept


def _read_symbols(path: str, option: str) -> list[str]:
    """The symbols of a gene list file: UTF-8 text, one symbol per line."""
    where = f"gene list '{path}' ({option})"
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read ({exc.strerror or exc}); pass a file with one symbol per line.") \
            from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise ConfigError(f"{where}: expected a text file with one symbol per line, found binary data.")
    symbols = [line.strip() for line in text.splitlines() if line.strip()]
    if not symbols:
        raise ConfigError(f"{where}: holds no symbols; pass a file with one symbol per line, or drop the option.")
    return symbols


# -- encode -----------------------------------------------------------------------------------------------------

def make_encoder(config: RunConfig, data: BenchmarkData, engine: RayEngine | None = None):
    """The adapter for `config`, wrapped in the embedding cache (precomputed tables are read as they are), which
    encodes on `engine` when one is given."""
    from model_adapters import adapter_settings, get_adapter
    from model_adapters.cache import CachedEncoder

    settings = dict(config.adapter)
    if config.revision and "revision" in adapter_settings(config.input):
        settings["revision"] = config.revision
    if "source" in adapter_settings(config.input) and settings.get("source", "refseq") == "refseq":
        settings.setdefault("descriptions", str(data.descriptions("refseq")))
    encoder = get_adapter(config.input, config.model, hgnc=data.hgnc(), **settings)
    return CachedEncoder(encoder, engine=engine) if config.input != "precomputed" else encoder


def model_record(encoded: ModelInfo, config: RunConfig) -> ModelInfo:
    """The adapter's record under the run's name, with the user's metadata (which wins over the adapter's)."""
    extra = {k: getattr(config, k) for k in ("reference", "license", "n_parameters", "modality")
             if getattr(config, k) is not None}
    return encoded.model_copy(update={"id": config.model_id(), **extra})


def encode(config: RunConfig, data: BenchmarkData, genes: Sequence[str], encoder=None, *,
           engine: RayEngine | None = None) -> GeneEmbeddings:
    """Vectors for `genes` (encoded on `engine` when given), their model record named and annotated as `config`
    says."""
    encoder = encoder or make_encoder(config, data, engine)
    logger.info("encoding %d genes with %s (%s input)", len(genes), config.model, config.input)
    embeddings = encoder.encode(list(genes))
    if genes and not len(embeddings.symbols):
        reasons = ", ".join(f"{k} {len(v)}" for k, v in embeddings.missing.items() if v) or "no reason given"
        raise EmbeddingError(f"{config.model} ({config.input} input) gave a vector for none of the {len(genes)} genes "
                             f"the tasks need ({reasons}); check the model and its input kind.")
    embeddings.model = model_record(embeddings.model, config)
    if (described := description_coverage(encoder, embeddings, genes)) is not None:
        embeddings.model = embeddings.model.model_copy(
            update={"notes": {**embeddings.model.notes, "descriptions": described}})
    return embeddings


def description_coverage(encoder, embeddings: GeneEmbeddings, genes: Sequence[str]) -> dict[str, int] | None:
    """For inputs made from descriptions: how many of the HGNC genes asked for got a full description, their
    symbol and name only, or no text; None for other inputs. Warns when under half are full."""
    from model_adapters.base import UNKNOWN_SYMBOL
    from model_adapters.description_sources import DescriptionSource

    source = getattr(getattr(encoder, "encoder", encoder), "source", None)
    if not isinstance(source, DescriptionSource):
        return None
    unknown = set(embeddings.missing.get(UNKNOWN_SYMBOL, ()))
    counts = source.coverage([gene for gene in genes if gene not in unknown])
    total = sum(counts.values())
    if counts["full"] < total / 2:
        logger.warning("description source '%s' describes only %d of %d genes in full (%.1f%%); the others are "
                       "encoded from their symbol and name only (%d) or not at all (%d), so the scores say little "
                       "about the descriptions.", source.source, counts["full"], total,
                       100 * counts["full"] / max(total, 1), counts["name_only"], counts["missing"])
    return counts


# -- partner vectors --------------------------------------------------------------------------------------------

def partner_embeddings(tasks: Sequence[Task], embeddings: GeneEmbeddings, data: BenchmarkData,
                       encoder) -> GeneEmbeddings | None:
    """Vectors for the non-gene side of pair tasks, from the families that own those entities.

    Each family with such tasks builds them (`FamilyBuilder.partner_vectors`): gene sets from the (restricted)
    gene vectors, diseases from their text. None when no selected task needs them.
    """
    import numpy as np

    from dataset_builders import get_builder_class

    families = sorted({t.metadata.family for t in tasks if len(t.metadata.entity_types) == 2
                       and t.metadata.entity_types[1] != "gene"})
    parts = [part for family in families
             if (part := get_builder_class(family).partner_vectors(data, embeddings, encoder)) is not None]
    if not parts:
        return None
    return GeneEmbeddings(symbols=np.concatenate([p.symbols for p in parts]),
                          vectors=np.concatenate([p.vectors for p in parts]), model=embeddings.model)


# -- probe and write --------------------------------------------------------------------------------------------

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
    if existing.model.cache_key != model.cache_key or existing.probe != probe \
            or existing.dataset_revision != dataset_revision or existing.config != config:
        logger.info("result '%s' was made from other vectors, probe settings, data or run config; recomputing it",
                    path)
        return None
    return existing


def to_result(scores: TaskScores, *, model: ModelInfo, probe: dict[str, Any], dataset_revision: dict[str, Any],
              config: dict[str, Any]) -> TaskResult:
    """The `TaskResult` of one scored task; scores that are not finite or out of range make it skipped, saying why.

    Its lift is over the task's stored controls (see `with_covered_controls` for a task covered in part).
    """
    from genebench import __version__
    from genebench.metrics import score_problem

    skipped, kept = scores.skipped, scores.scores
    problems = [p for m, s in kept.items() if (p := score_problem(m, s.folds, s.mean, s.std))]
    if problems:
        skipped, kept = f"the probe gave no valid score: {problems[0]}; try other probe settings", {}
        logger.warning("task '%s' skipped: %s", scores.task.name, skipped)
    return TaskResult(genebench_version=__version__, task=scores.task.metadata, dataset_revision=dataset_revision,
                      model=model, probe=probe, coverage=scores.coverage, scores=kept,
                      main_score=scores.main_score, skipped=skipped,
                      lift=_lift(kept.get(scores.main_score), scores.task.metadata.best_control),
                      timing={"probe_seconds": round(scores.seconds, 4)},
                      date=datetime.now(timezone.utc).isoformat(timespec="seconds"), config=config,
                      diagnostics=scores.diagnostics)


def needs_covered_controls(result: TaskResult) -> bool:
    """Whether a scored result with controls covers its task in part and has no controls rescored on its rows
    yet: its lift must wait for them."""
    return bool(result.task.controls) and bool(result.scores) and \
        0 < result.coverage.n_covered < result.coverage.n_task and COVERED_CONTROLS not in result.diagnostics


def with_covered_controls(result: TaskResult, controls: dict[str, float]) -> TaskResult:
    """`result` with `controls` (scored on its covered rows) recorded, and its lift over their best (None when no
    control could be scored on those rows)."""
    lift = _lift(result.scores[result.main_score], best_of(controls))
    return result.model_copy(update={"lift": lift, "diagnostics": {**result.diagnostics, COVERED_CONTROLS: controls}})


def _lift(main: MetricScores | None, best: tuple[str, float] | None) -> float | None:
    """The main score minus the best control's, or None without either."""
    return None if main is None or best is None else round(main.mean - best[1], 6)


def controls_on_covered_rows(data: BenchmarkData, covered: Sequence[tuple[Task, Sequence[str]]],
                             settings: ProbeSettings) -> dict[str, dict[str, float]]:
    """The controls rescored on the rows of each (task, its missing genes) that hold no missing gene, so a lift
    compares model and control on the same genes and folds: task name -> control -> score."""
    from genebench.controls import control_scores

    restricted = []
    for task, missing in covered:
        entities = task.entities if task.entities.ndim == 2 else task.entities[:, None]
        rows = np.flatnonzero(~np.isin(entities.astype(str), list(missing)).any(axis=1))
        restricted.append(Task(task.metadata, task.entities[rows], task.labels[rows], task.folds[rows]))
    logger.info("rescoring the controls of %d partly covered tasks on the rows they cover", len(restricted))
    return control_scores(data, restricted, settings)


def run_probes(tasks: Sequence[Task], embeddings: GeneEmbeddings, out_dir: str | Path, *,
               settings: ProbeSettings | None = None, dataset_revision: dict[str, Any],
               config: dict[str, Any] | None = None,
               overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING, progress: bool = True,
               partner_embeddings: GeneEmbeddings | None = None, engine: RayEngine | None = None,
               data: BenchmarkData | None = None) -> list[TaskResult]:
    """Score every task and write one result file per task as soon as it finishes.

    Tasks that cannot be scored (too few covered genes, a single-class fold, ...) get a result whose
    `skipped` says why; the run goes on. Results already on disk are kept according to `overwrite`, so
    rerunning an interrupted run only computes what is missing.

    Args:
        tasks: the tasks to score.
        embeddings: gene symbol -> vector table, with its `ModelInfo` as `model` (what every adapter returns).
        out_dir: the results root (see `genebench.results.write_result`).
        settings: probe settings (defaults when None).
        dataset_revision: source versions and the built data's hash.
        config: the run configuration, recorded with every result (`RunConfig.record()`).
        overwrite: "only-missing" (default), "always" or "never" (see `OverwriteStrategy`).
        progress: show progress (a bar on a terminal, a line a minute elsewhere; see `genebench.progress`).
        partner_embeddings: vectors for non-gene entities of pair tasks.
        engine: where the probes run: None here, one task after another; a `RayEngine` on its cluster, the
            results coming back here (the only writer) as they finish. Scores are the same either way.
        data: the tasks' data; given, the lift on a task the model covers in part is over the controls rescored
            on its covered rows (`controls_on_covered_rows`, once every task is probed; an interrupted run's are
            rescored on resume), else over the stored controls.

    Returns:
        One `TaskResult` per task, in the order of `tasks` (kept ones read back from disk).

    Raises:
        ResultsError: `embeddings` carries no model record.
    """
    from genebench.probe.engine import iter_task_scores
    from genebench.probe.settings import ProbeSettings

    if embeddings.model is None:
        raise ResultsError("embeddings: expected a model record (`embeddings.model`, a ModelInfo) to file results "
                           "under; set embeddings.model = ModelInfo(id='org/name', input=...).")
    model, config = embeddings.model, config or {}
    settings = settings or ProbeSettings()
    overwrite = OverwriteStrategy.from_str(overwrite)
    probe = settings.to_dict()
    results: dict[str, TaskResult] = {}
    for task in tasks:
        kept = _is_current(result_path(out_dir, model, task.name), model=model, probe=probe,
                           dataset_revision=dataset_revision, config=config, overwrite=overwrite)
        if kept is not None:
            results[task.name] = kept
    pending = [task for task in tasks if task.name not in results]
    needed = {task.metadata.parent for task in pending if task.metadata.parent}
    parents = [task for task in tasks if task.name in needed and task.name in results]
    logger.info("%s to score, %d already done", counted(len(pending), "task"), len(results))
    with progress_counter(len(pending), "probing", "task", enabled=progress) as bar:
        scorer = engine.iter_task_scores if engine is not None else iter_task_scores
        for scores in scorer([*parents, *pending], embeddings, settings, partner_embeddings=partner_embeddings):
            if scores.task.name in results:
                continue
            result = to_result(scores, model=model, probe=probe, dataset_revision=dataset_revision, config=config)
            if data is not None and needs_covered_controls(result):
                result = result.model_copy(update={"lift": None})  # until the controls are rescored, below
            write_result(result, out_dir)
            results[scores.task.name] = result
            bar.set_postfix_str(scores.task.name[:40])
            bar.update()
    waiting = [result for result in results.values() if needs_covered_controls(result)] if data is not None else []
    if waiting:  # tasks covered in part, this run's or an interrupted one's: their controls on the same rows
        by_name = {task.name: task for task in tasks}
        rescored = controls_on_covered_rows(data, [(by_name[r.task.name], r.coverage.missing_genes) for r in waiting],
                                            settings)
        for result in waiting:
            results[result.task.name] = with_covered_controls(result, rescored.get(result.task.name, {}))
            write_result(results[result.task.name], out_dir)
    return [results[task.name] for task in tasks]


def check_run_identity(out: Path, identity: dict[str, Any], *, overwrite: OverwriteStrategy) -> None:
    """Refuse to write into a folder holding results this run's would be mixed with, before anything is probed.

    Every result JSON in `out` must be readable (an unrelated or damaged JSON would break every later report),
    except a damaged file of this model, which the run recomputes. Results of the same model whose run identity
    (`TaskResult.run_identity`, compared on the keys of `identity`) differs are refused, or with
    `--overwrite always` removed, so the folder keeps one run per model.

    Raises:
        ResultsError: naming the file or what differs, and what to do.
    """
    if not out.is_dir():
        return
    own = out / model_dir_name(identity["model"])
    stale = []
    for path in result_files(out):
        try:
            result = read_result(path)
        except ResultsError as exc:
            if own in path.parents:
                continue  # this model's own damaged result: recomputed by the run
            reason = str(exc.__cause__ or exc).splitlines()[0][:120]
            raise ResultsError(f"output folder '{out}': '{path.relative_to(out).as_posix()}' is not a genebench "
                               f"result ({reason}); move it out of the folder, it would break every report of it.") \
                from exc
        theirs = result.run_identity
        if result.model.id == identity["model"] and any(theirs[key] != identity[key] for key in identity):
            stale.append((path, theirs))
    if not stale:
        return
    difference = identity_difference(identity, stale[0][1])
    if overwrite is not OverwriteStrategy.ALWAYS:
        raise ResultsError(
            f"output folder '{out}' holds {len(stale)} results of {identity['model']} from another run (this run vs "
            f"theirs: {difference}); they would be mixed with this run's. Pass another --out, or --overwrite always "
            "to replace them."
        )
    for path, _ in stale:
        path.unlink()
    logger.warning("removed %d results of %s from another run (%s) in '%s' (--overwrite always)", len(stale),
                   identity["model"], difference, out)


def check_output(out: Path, config: RunConfig, *, overwrite: str) -> None:
    """Refuse an output folder that holds another model's run, unless results are to be overwritten."""
    import yaml

    marker = out / RUN_FILE
    identity = ("model", "input", "name", "revision", "adapter")
    if marker.exists() and overwrite != "always":
        theirs = yaml.safe_load(marker.read_text()) or {}
        if any(theirs.get(key) != getattr(config, key) for key in identity):
            raise ResultsError(
                f"output folder '{out}' holds the results of another run ({theirs.get('model')}, input "
                f"{theirs.get('input')}); pass another --out, or --overwrite always to replace them."
            )


def save_run_config(out: Path, config: RunConfig) -> None:
    """Save the run's config as `run_config.yaml` in `out` (atomically); `--config` reads it back to repeat the run."""
    import yaml

    write_atomic(out / RUN_FILE, yaml.safe_dump(config.to_dict(), sort_keys=False))


def paper_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std of each task's main score (AUC) per category and per task type, with the mean lift over the best
    control (see `genebench.controls`) and coverage."""
    table = summary_table(results)
    table = table.assign(**{"AUC (mean ± std)": table["cell"], "lift": table["lift"].map(format_lift),
                            "coverage": table["coverage"].map("{:.1%}".format)})
    return table[["by", "group", "n_tasks", "AUC (mean ± std)", "lift", "coverage"]]


# -- the whole job ----------------------------------------------------------------------------------------------

@dataclass
class Run:
    """What `run` did: the results (in task order), the model they are filed under, and the vectors probed."""

    results: list[TaskResult]
    model: ModelInfo
    embeddings: GeneEmbeddings
    partners: GeneEmbeddings | None

    @property
    def frame(self) -> pd.DataFrame:
        """The results as `load_results` would read them back."""
        return results_frame(self.results)


def run(config: RunConfig, data: BenchmarkData, task_names: Sequence[str], out: str | Path, *,
        overwrite: OverwriteStrategy | str = OverwriteStrategy.ONLY_MISSING, progress: bool = True,
        engine: RayEngine | None = None) -> Run:
    """Select, restrict, encode, build partner vectors, probe and write: the whole main job.

    The run's config is saved in `out` once the model has encoded, so a failed setup leaves the folder free.
    With a `RayEngine`, encoding and probing run on its cluster and this process writes every file.
    """
    out = Path(out)
    overwrite = OverwriteStrategy.from_str(overwrite)
    with folder_lock(out, what="genebench run"):
        if removed := remove_stale_temporaries(out):
            logger.warning("removed %d temporary files of an earlier run that was killed", removed)
        check_output(out, config, overwrite=overwrite.value)
        probe = config.probe_settings().to_dict()
        check_run_identity(out, {"model": config.model_id(), "probe": probe, "data": revision_id(data.revision)},
                           overwrite=overwrite)
        encoder = make_encoder(config, data, engine)
        encoder.meta  # noqa: B018 (resolves the model first, so a bad model id fails before any task loads)
        tasks = select_tasks(data, task_names)
        genes = task_genes(tasks)
        kept = restrict(genes, config)
        embeddings = encode(config, data, kept, encoder)
        report_coverage(embeddings, len(genes))
        check_run_identity(out, {"model": embeddings.model.id, "revision": embeddings.model.revision,
                                 "vectors": embeddings.model.cache_key, "probe": probe,
                                 "data": revision_id(data.revision)}, overwrite=overwrite)
        partners = partner_embeddings(tasks, embeddings, data, encoder)
        save_run_config(out, config)
        results = run_probes(tasks, embeddings, out, settings=config.probe_settings(), dataset_revision=data.revision,
                             config=config.record(), overwrite=overwrite, progress=progress,
                             partner_embeddings=partners, engine=engine, data=data)
    return Run(results=results, model=embeddings.model, embeddings=embeddings, partners=partners)


def report_coverage(embeddings: GeneEmbeddings, n_genes: int) -> None:
    """Print how many of the genes asked for got a vector, and why the others did not."""
    missing = sum(len(v) for v in embeddings.missing.values())
    reasons = ", ".join(f"{k} {len(v)}" for k, v in embeddings.missing.items())
    print(f"encoded {len(embeddings.symbols)} of {n_genes} genes ({len(embeddings.symbols) / max(n_genes, 1):.1%})"
          + (f"; {missing} without a vector: {reasons}" if missing else ""))
    if embeddings.model is not None and "descriptions" in embeddings.model.notes:
        print(descriptions_line(embeddings.model.notes["descriptions"]))


def descriptions_line(counts: dict[str, int]) -> str:
    """ "descriptions: 13017 full (65.4%), 6896 name only (34.6%), 0 missing".

    Examples:
        >>> descriptions_line({"full": 3, "name_only": 1, "missing": 0})
        'descriptions: 3 full (75.0%), 1 name only (25.0%), 0 missing (0.0%)'
    """
    total = max(sum(counts.values()), 1)
    return "descriptions: " + ", ".join(f"{counts[key]} {label} ({counts[key] / total:.1%})" for key, label in
                                         (("full", "full"), ("name_only", "name only"), ("missing", "missing")))
