"""What makes results one run: the model, its revision, the vectors, the probe settings and the data hash.

A run builds its `RunIdentity` once, from its model record before anything is encoded; a result file carries the
same record (`genebench.results.TaskResult.identity`). Results of two identities are never kept, resumed or
summarised together.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from genebench.comparability import data_hash_of

if TYPE_CHECKING:
    from genebench.model_info import ModelInfo


@dataclass(frozen=True)
class RunIdentity:
    """One run's identity.

    Attributes:
        model: the id results are filed under ('org/name').
        model_revision: the model's revision (`ModelInfo.revision`: a commit, or a table's sha256 prefix).
        vectors: the cache key of the model's record (adapter, input and settings: which vectors).
        probe: the probe settings (`ProbeSettings.to_dict()`, the fold scheme included).
        data_hash: the data's hash (`genebench.comparability.data_hash_of`).
    """

    model: str
    model_revision: str
    vectors: str
    probe: Mapping[str, Any]
    data_hash: str

    @classmethod
    def of_run(cls, model: ModelInfo, probe: Mapping[str, Any], provenance: Mapping[str, Any]) -> RunIdentity:
        """The identity of a run of `model` (its keyed record under the run's name, as results carry it) with these
        probe settings and data."""
        return cls(model=model.id, model_revision=model.revision, vectors=model.cache_key, probe=dict(probe),
                   data_hash=data_hash_of(provenance))

    def as_dict(self) -> dict[str, Any]:
        """A plain dict of the fields (what `TaskResult.run_identity` gives)."""
        return asdict(self)

    @property
    def run_id(self) -> str:
        """A short hash of the identity."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True, default=str).encode()).hexdigest()[:12]
