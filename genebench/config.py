"""The run's configuration, one home for `run` and `sweep`: `RunConfig`, reading a YAML within its limits, and the
one-line message of a refused value.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from genebench.catalogue import TaskSelection
from genebench.errors import ConfigError, GenebenchError
from genebench.model_info import MODEL_ID, file_record

if TYPE_CHECKING:
    from genebench.probe.settings import ProbeSettings

SCHEMES = ("paper", "family")
"""The fold schemes, the headline first (`genebench.tasks.metadata.Scheme`)."""
EXAMPLE = "{model: sentence-transformers/all-MiniLM-L6-v2, input: description, adapter: {batch_size: 8}}"
"""A valid model entry, shown beside a refused key."""


@functools.cache
def adapter_settings_model() -> type[BaseModel]:
    """The schema of `adapter:` in a model YAML: every option of every input kind (`genebench.inputs.ADAPTERS`)."""
    from genebench.inputs import options

    fields: dict[str, Any] = {}
    for option in options().values():
        kind = Literal[option.choices] if option.choices else option.type  # type: ignore[valid-type]
        fields[option.name] = (kind | None, Field(default=None, description=option.help))
    return create_model("AdapterSettings", __config__=ConfigDict(extra="forbid"), **fields)


class RunConfig(BaseModel):
    """Everything a run depends on; saved with every result, and loadable from a YAML file (these keys).

    Attributes:
        model: Hub id, local folder, or (precomputed) a table file; default: the input kind's default model.
        input: an input kind of `genebench.inputs.ADAPTERS`.
        name: the id results are filed under, 'org/name' (default: the Hub id; `genebench/<baseline>`);
            required for precomputed tables and local folders.
        revision: the model's revision (commit, tag or branch; `--model-revision`), recorded in results as
            `model.revision` and shown in results tables as `model_revision`.
        adapter: the input kind's options (pooling, description source, region, vocabulary, ...).
        probe: probe settings (`genebench.probe.ProbeSettings` fields).
        include_genes / exclude_genes: files of symbols (one per line) restricting every task's genes.
        common_with: embedding files whose genes every task is restricted to, so models compare on one set.
        reference / license / n_parameters / modality: metadata shown on the leaderboard.
        schemes: the fold schemes to score (`--scheme`; older files say `folds`), each a run of its own: "paper"
            (the paper's folds, the headline, in the folder itself) and "family" (gene families held out, in its
            `folds-family/` sub-folder); default both.
        tasks: the task selection (`TaskSelection`: tasks, family, category, type, no_derived; default every task),
            saved in `run_config.yaml` so `--config` repeats the same tasks; a list of names is `{tasks: [...]}`.
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
    schemes: list[Literal["paper", "family"]] = Field(default_factory=lambda: list(SCHEMES), min_length=1,
                                                      validation_alias=AliasChoices("schemes", "folds"))
    tasks: TaskSelection = Field(default_factory=TaskSelection)

    @field_validator("tasks", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        return {"tasks": [value] if isinstance(value, str) else value} if isinstance(value, (str, list)) else value

    @field_validator("schemes", mode="before")
    @classmethod
    def _one_scheme(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("schemes")
    @classmethod
    def _paper_first(cls, value: list[str]) -> list[str]:
        return [scheme for scheme in SCHEMES if scheme in value]  # each once, the headline first

    @field_validator("common_with", mode="before")
    @classmethod
    def _one_file(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value  # one file, not a list of its characters

    @field_validator("input")
    @classmethod
    def _known_input(cls, value: str) -> str:
        from genebench.inputs import ADAPTERS

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
        from genebench.inputs import ADAPTERS

        if self.model is None:
            self.model = ADAPTERS[self.input].default_model
            if self.model is None:
                raise ValueError(f"--input {self.input} needs --model (a Hub id, local folder or table file)")
        if scheme := next((key for key in ("scheme", "folds") if key in self.probe), None):
            raise ValueError(f"probe.{scheme}: the fold schemes are set with 'schemes' (--scheme), e.g. "
                             "schemes: [paper]")
        known = probe_keys()
        unknown = [key for key in self.probe if key not in known]
        if unknown:
            raise ValueError(f"probe: unknown key '{unknown[0]}'; expected keys among {known}, e.g. probe: {{C: 1.0}}")
        try:
            self.probe_settings()
        except GenebenchError as exc:
            raise ValueError(str(exc)) from None
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
            where = exc.errors()[0]["loc"]
            keys, example = NESTED.get(str(where[0]), (None, None)) if len(where) > 1 else (None, None)
            keys, example = (keys(), example) if keys else (cls.model_fields, EXAMPLE)
            raise GenebenchError(f"{source}: {first_error(exc, keys, example)}") from None

    def probe_settings(self, scheme: str | None = None) -> ProbeSettings:
        """The checked `ProbeSettings` of `probe` under one fold scheme (default: the headline, `schemes[0]`).

        Raises:
            GenebenchError: an unknown or out-of-range probe setting.
        """
        from genebench.probe.settings import ProbeSettings

        try:
            return ProbeSettings(**self.probe, scheme=scheme or self.schemes[0])
        except (TypeError, ValueError) as exc:
            raise GenebenchError(f"probe settings {self.probe}: {exc}") from exc

    def model_id(self) -> str:
        """The id results are filed under: `name`, else the input kind's default name, else the Hub id.

        Raises:
            GenebenchError: a precomputed table or a local folder without `name`.
        """
        from genebench.inputs import ADAPTERS, adapter_settings

        entry = ADAPTERS[self.input]
        if self.name:
            return self.name
        if entry.default_name:
            return entry.default_name.format(**{**adapter_settings(self.input), **self.adapter})
        if entry.needs_name or Path(str(self.model)).expanduser().exists():
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
        merged = {**loaded, **{k: v for k, v in overrides.items() if v not in (None, {}, [], TaskSelection())}}
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
        from genebench.inputs import options

        record = self.to_dict()
        del record["schemes"]  # each result's scheme is its probe's, so one scheme's results do not depend on the other
        del record["tasks"]  # nor on which other tasks the run scored
        record["model"] = _public(self.model)
        for key in ("include_genes", "exclude_genes"):
            record[key] = _public(record[key])
        record["common_with"] = [_public(path) for path in self.common_with]
        files = {name for name, option in options().items() if option.is_file}
        record["adapter"] = {k: _public(v) if k in files else v for k, v in self.adapter.items()}
        return record


def probe_keys() -> list[str]:
    """The keys of `probe:` in a model YAML: `ProbeSettings`' fields but `scheme` (set by `schemes:`)."""
    from dataclasses import fields

    from genebench.probe.settings import ProbeSettings

    return sorted(field.name for field in fields(ProbeSettings) if field.name != "scheme")


NESTED = {"adapter": (lambda: list(adapter_settings_model().model_fields), "adapter: {pooling: mean}"),
          "tasks": (lambda: list(TaskSelection.model_fields), "tasks: {family: [humantfs]}")}
"""Per nested block of a model YAML: its valid keys and an example, shown beside an unknown key there."""


def first_error(exc: ValidationError, keys: Sequence[str], example: str) -> str:
    """One line from a pydantic error: where, and what was expected; an unknown key is shown with the valid `keys`
    and a valid `example`."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown key '{where}'; expected keys among {sorted(keys)}, e.g. {example}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"].endswith("_type") or error["type"].endswith("_parsing"):  # say what was found, and its type
        message += f", found {error['input']!r} ({type(error['input']).__name__})"
    return f"{where}: {message}" if where else message


MAX_CONFIG_BYTES = 1 << 20
"""Largest model YAML read (bytes)."""
MAX_CONFIG_NODES = 10_000
"""Most values a model YAML may hold once its aliases are expanded (a few hundred is typical)."""


def read_yaml(path: str | Path, what: str = "config") -> Any:
    """A model or sweep YAML's content, checked before it is built: at most `MAX_CONFIG_BYTES`, UTF-8, and at most
    `MAX_CONFIG_NODES` values once its aliases are expanded (counted on the composed graph, so an alias bomb
    never expands). An empty file is `{}`.

    Args:
        path: the file.
        what: what it is, naming it in messages ("config", "sweep").

    Raises:
        ConfigError: one line naming the file and what is wrong with it.
    """
    import yaml

    where = f"{what} '{path}'"
    try:
        size = Path(path).stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{where}: {size} bytes, over the {MAX_CONFIG_BYTES} a {what} YAML may have.")
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
        raise ConfigError(f"{where}: nested too deeply to be a {what} YAML.") from exc
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
