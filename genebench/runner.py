"""The main job: encode the genes a task selection needs, probe every task, and write results and figures."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from genebench.atomic import write_atomic
from genebench.constants import INPUT_KINDS
from genebench.data import BenchmarkData
from genebench.embeddings import GeneEmbeddings
from genebench.errors import GenebenchError, ResultsError
from genebench.results import ModelInfo, load_results, summary_table

if TYPE_CHECKING:
    from genebench.probe.settings import ProbeSettings

logger = logging.getLogger(__name__)

RUN_FILE = "run_config.yaml"
DEFAULT_MODELS = {"description": "sentence-transformers/all-MiniLM-L6-v2", "bag-of-words": "bag-of-words",
                  "random": "random"}


@dataclass
class RunConfig:
    """Everything a run depends on; saved with every result, and loadable from a YAML file.

    Attributes:
        model: Hub id, local folder, or (precomputed) a table file.
        input: one of `INPUT_KINDS`.
        revision: model revision (commit, tag or branch).
        adapter: further adapter settings (pooling, description source, region, vocabulary, ...).
        probe: probe settings (`genebench.probe.ProbeSettings` fields).
        include_genes / exclude_genes: files of symbols (one per line) restricting every task's genes.
        common_with: embedding files whose genes every task is restricted to, so models compare on one set.
    """

    model: str
    input: str
    revision: str | None = None
    adapter: dict[str, Any] = field(default_factory=dict)
    probe: dict[str, Any] = field(default_factory=dict)
    include_genes: str | None = None
    exclude_genes: str | None = None
    common_with: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.input not in INPUT_KINDS:
            import difflib

            close = difflib.get_close_matches(self.input, INPUT_KINDS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise GenebenchError(f"input '{self.input}' is not known.{hint} Expected one of: {', '.join(INPUT_KINDS)}.")
        self.probe_settings()

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

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> RunConfig:
        """Read a model YAML (the keys of this class); `overrides` that are not None win."""
        import yaml

        try:
            loaded = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise GenebenchError(f"config '{path}': cannot be read as YAML ({exc}).") from exc
        unknown = sorted(set(loaded) - set(cls.__dataclass_fields__))
        if not isinstance(loaded, dict) or unknown:
            raise GenebenchError(f"config '{path}': unknown keys {unknown}; expected keys among "
                                 f"{sorted(cls.__dataclass_fields__)}.")
        merged = {**loaded, **{k: v for k, v in overrides.items() if v not in (None, {}, [])}}
        for key in ("adapter", "probe"):
            merged[key] = {**loaded.get(key, {}), **overrides.get(key, {})}
        missing = [k for k in ("model", "input") if not merged.get(k)]
        if missing:
            raise GenebenchError(f"config '{path}': missing {missing}; give them in the file or on the command line.")
        return cls(**merged)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def make_encoder(config: RunConfig, data: BenchmarkData):
    """The adapter for `config`, wrapped in the embedding cache."""
    from model_adapters import adapter_settings, get_adapter
    from model_adapters.cache import CachedEncoder

    settings = dict(config.adapter)
    if config.revision and "revision" in adapter_settings(config.input):
        settings["revision"] = config.revision
    if config.input in ("description", "bag-of-words") and settings.get("source", "refseq") == "refseq":
        settings.setdefault("descriptions", str(data.descriptions("refseq")))
    encoder = get_adapter(config.input, config.model, hgnc=data.hgnc(), **settings)
    return CachedEncoder(encoder) if config.input != "precomputed" else encoder


def task_genes(tasks: list) -> list[str]:
    """Every gene symbol the tasks need, sorted."""
    genes: set[str] = set()
    for task in tasks:
        genes.update(map(str, task.genes()))
    return sorted(genes)


def partner_embeddings(tasks: list, embeddings: GeneEmbeddings, data: BenchmarkData, encoder) -> GeneEmbeddings | None:
    """Vectors for the non-gene side of pair tasks: gene sets (mean of their genes) and diseases (their text).

    Diseases need a text encoder (`--input description`); otherwise their tasks are skipped by the engine.
    """
    import numpy as np

    kinds = {(t.metadata.family, t.metadata.entity_types[1]) for t in tasks if len(t.metadata.entity_types) == 2}
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    index = {symbol: row for row, symbol in enumerate(map(str, embeddings.symbols))}
    for family, kind in sorted(kinds):
        if kind == "gene set":
            for name, genes in data.auxiliary(family, "set_mapping")[["cluster", "genes"]].itertuples(index=False):
                rows = [index[g] for g in genes if g in index]
                if rows:
                    ids.append(str(name))
                    vectors.append(embeddings.vectors[rows].mean(axis=0))
        elif kind == "disease":
            adapter = getattr(encoder, "encoder", encoder)
            if not hasattr(adapter, "encode_entities"):
                logger.warning("%s tasks need disease vectors, which only --input description gives; skipping them",
                               family)
                continue
            diseases = data.auxiliary(family, "diseases")
            texts = [f"Disease {name}: {text}".strip() for name, text in zip(diseases["name"], diseases["description"])]
            encoded = adapter.encode_entities(diseases["id"].astype(str).tolist(), texts)
            ids += list(map(str, encoded.symbols))
            vectors += list(encoded.vectors)
    if not ids:
        return None
    return GeneEmbeddings(symbols=np.asarray(ids, dtype=object), vectors=np.stack(vectors), model=embeddings.model)


def restrict(embeddings: GeneEmbeddings, config: RunConfig) -> GeneEmbeddings:
    """Apply the common-gene-set options."""
    from genebench.probe.engine import restrict_genes

    include = _read_symbols(config.include_genes) if config.include_genes else None
    exclude = _read_symbols(config.exclude_genes) if config.exclude_genes else None
    others = [GeneEmbeddings.load(path) for path in config.common_with]
    if include is None and exclude is None and not others:
        return embeddings
    return restrict_genes(embeddings, include=include, exclude=exclude, intersect=others)


def _read_symbols(path: str) -> list[str]:
    try:
        return [line.strip() for line in Path(path).read_text().splitlines() if line.strip()]
    except OSError as exc:
        raise GenebenchError(f"gene list '{path}': cannot be read ({exc}); pass a file with one symbol per line.") \
            from exc


def model_info(embeddings: GeneEmbeddings, config: RunConfig) -> ModelInfo:
    """The `ModelInfo` results record, from what the adapter reported."""
    model = embeddings.model
    settings = {k: v for k, v in model.items() if k not in ("model_id", "revision", "input")}
    return ModelInfo(id=config.model, revision=str(model.get("revision") or config.revision or "unknown"),
                     adapter=config.input, settings=settings)


def check_output(out: Path, config: RunConfig, *, overwrite: str) -> None:
    """Refuse an output folder that holds another model's run, unless results are to be overwritten."""
    import yaml

    marker = out / RUN_FILE
    identity = ("model", "input", "revision", "adapter")
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


def model_results(out: Path, model: ModelInfo) -> pd.DataFrame:
    """One model's rows of `load_results(out)` (a results folder may hold several models)."""
    results = load_results(out)
    return results[(results["model"] == model.id) & (results["revision"] == model.revision)]


def paper_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std of each task's main score (AUC) per category and per task type, with coverage."""
    table = summary_table(results)
    table = table.assign(**{"AUC (mean ± std)": table["cell"], "coverage": table["coverage"].map("{:.1%}".format)})
    return table[["by", "group", "n_tasks", "AUC (mean ± std)", "coverage"]]

