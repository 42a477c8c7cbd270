"""The model record: which model made a table of gene vectors, and how, from the adapter to every result file.

An adapter fills in a `ModelInfo` (`meta`); `make_embeddings` adds what encoding did (dimension, counts,
parameter count, cache key); the pipeline names it (`--name`) and adds the user's metadata; results and the
leaderboard read the same record.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
"""A model id results and the leaderboard accept: 'org/name' (or a bare Hub name), no path."""

_KEYED = ("id", "revision", "input", "pooling", "source_version", "settings")


class ModelInfo(BaseModel):
    """Which model produced a table of gene vectors, and how.

    Attributes:
        id: the name results are filed under, 'org/name' (the adapter's Hub id, or `--name`).
        revision: commit hash, version or file hash of the weights; "unknown" when unpinned.
        input: how a gene became model input (an input kind of `model_adapters.ADAPTERS`).
        pooling: how token vectors became one gene vector ("mean", "cls", "input", "none", ...).
        dim: vector length, when known.
        n_parameters: the model's size (the leaderboard's size filter), when known.
        license: licence of the weights or table, when known.
        reference: a URL describing the model (paper, model card).
        modality: what the model was trained on, in the user's words (e.g. "single-cell expression").
        trust_remote_code: whether the model's own Python code ran.
        source_version: version of the description or sequence source ("" when there is none).
        settings: every other setting that changes the vectors (region, vocabulary, table file, ...).
        notes: what encoding did (genes renamed, descriptions found, inputs cut into chunks, ...).
        cache_key: a short hash of what changes the vectors (see `keyed`); results made from the same
            vectors share it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    revision: str = "unknown"
    input: str
    pooling: str = "none"
    dim: int | None = Field(default=None, ge=0)
    n_parameters: int | None = Field(default=None, ge=0)
    license: str | None = None
    reference: str | None = None
    modality: str | None = None
    trust_remote_code: bool = False
    source_version: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    notes: dict[str, Any] = Field(default_factory=dict)
    cache_key: str = ""

    @field_validator("input")
    @classmethod
    def _known_input(cls, value: str) -> str:
        from genebench.inputs import ADAPTERS

        if value not in ADAPTERS:
            raise ValueError(f"expected an input kind among {list(ADAPTERS)}, found {value!r}")
        return value

    @field_validator("reference")
    @classmethod
    def _web_address(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^\s<>\"']+$", value):
            raise ValueError(f"expected an http(s) URL, found {value!r}")
        return value

    def keyed(self) -> ModelInfo:
        """This record with `cache_key` set from its id, revision, input, pooling, source version and settings."""
        keyed = self.model_dump(include=set(_KEYED))
        digest = hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return self.model_copy(update={"cache_key": digest})


def file_record(path: str | Path) -> dict[str, Any]:
    """What identifies a local file in a public record: its name, size and sha256, never its location.

    Examples:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        ...     _ = f.write(b"x"); f.flush()
        ...     sorted(file_record(f.name))
        ['bytes', 'file', 'sha256']
    """
    from genebench.hashing import file_sha256

    path = Path(path)
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": file_sha256(path)}
