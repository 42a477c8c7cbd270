"""One results folder, checked against one run: what it may hold, which results a rerun keeps, and its config.

A folder holds one run per model: `check` refuses (or with `--overwrite always` clears) what this run's results
would be mixed with, before anything is probed; `kept` says, per task, whether the result already there is this
run's and stays.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genebench.atomic import write_atomic
from genebench.errors import ResultsError
from genebench.results import (
    OverwriteStrategy,
    TaskResult,
    identity_difference,
    model_dir_name,
    read_result,
    result_files,
)
from genebench.run_identity import RunIdentity

if TYPE_CHECKING:
    from genebench.config import RunConfig

logger = logging.getLogger(__name__)

FOLDS_DIR = "folds-{scheme}"
"""The sub-folder of a run's folder holding the results of a fold scheme other than the paper's."""
RUN_FILE = "run_config.yaml"
"""The run's config, saved in its folder; `--config` reads it back to repeat the run."""
_CONFIG_IDENTITY = ("model", "input", "name", "revision", "adapter")
"""The config keys that say which model a folder's `RUN_FILE` ran."""


def scheme_folder(out: str | Path, scheme: str) -> Path:
    """Where a fold scheme's results go: the paper's in `out` itself, another's in its `FOLDS_DIR` sub-folder.

    Examples:
        >>> scheme_folder("results", "family").as_posix()
        'results/folds-family'
    """
    return Path(out) if scheme == "paper" else Path(out) / FOLDS_DIR.format(scheme=scheme)


class RunFolder:
    """A run's results folder.

    Args:
        out: the folder.
        identity: the run's identity.
        overwrite: what to do with results already there.
    """

    def __init__(self, out: str | Path, identity: RunIdentity, overwrite: OverwriteStrategy | str) -> None:
        self.out = Path(out)
        self.identity = identity
        self.overwrite = OverwriteStrategy.from_str(overwrite)

    def check(self, config: RunConfig) -> None:
        """Refuse a folder this run's results would be mixed with: another model's run (its `RUN_FILE`), a JSON
        that is not a readable result (except a damaged one of this model, which the run recomputes), or results
        of this model from another run (with `--overwrite always`, those are removed instead).

        Raises:
            ResultsError: naming the folder, the file or what differs, and what to do.
        """
        if not self.out.is_dir():
            return
        always = self.overwrite is OverwriteStrategy.ALWAYS
        marker = self.out / RUN_FILE
        if marker.exists() and not always:
            import yaml

            theirs = yaml.safe_load(marker.read_text()) or {}
            if any(theirs.get(key) != getattr(config, key) for key in _CONFIG_IDENTITY):
                raise ResultsError(f"output folder '{self.out}' holds the results of another run ({theirs.get('model')}"
                                   f", input {theirs.get('input')}); pass another --out, or --overwrite always to "
                                   "replace them.")
        stale = self._other_runs()
        if not stale:
            return
        mine = self.identity.as_dict()
        difference = identity_difference(mine, stale[0][1].as_dict())
        if not always:
            raise ResultsError(
                f"output folder '{self.out}' holds {len(stale)} results of {self.identity.model} from another run "
                f"(this run vs theirs: {difference}); they would be mixed with this run's. Pass another --out, or "
                "--overwrite always to replace them.")
        for path, _ in stale:
            path.unlink()
        logger.warning("removed %d results of %s from another run (%s) in '%s' (--overwrite always)", len(stale),
                       self.identity.model, difference, self.out)

    def _other_runs(self) -> list[tuple[Path, RunIdentity]]:
        """This model's results of this fold scheme from another run, with their identity (another scheme's are a
        run of their own, in their sub-folder); raises on a foreign unreadable JSON."""
        own = self.out / model_dir_name(self.identity.model)
        stale = []
        for path in result_files(self.out):
            try:
                result = read_result(path)
            except ResultsError as exc:
                if own in path.parents:
                    continue  # this model's own damaged result: recomputed by the run
                reason = str(exc.__cause__ or exc).splitlines()[0][:120]
                raise ResultsError(f"output folder '{self.out}': '{path.relative_to(self.out).as_posix()}' is not a "
                                   f"genebench result ({reason}); move it out of the folder, it would break every "
                                   "report of it.") from exc
            theirs = result.identity
            other_scheme = result.scheme != self.identity.probe.get("scheme", "paper")
            if result.model.id == self.identity.model and theirs != self.identity and not other_scheme:
                stale.append((path, theirs))
        return stale

    def kept(self, path: Path, *, provenance: dict[str, Any], config: dict[str, Any]) -> TaskResult | None:
        """The result at `path` to keep, or None when it must be (re)computed: kept only when it is this run's
        (its identity, full data revision and run config), so a resumed run never mixes two settings."""
        if self.overwrite is OverwriteStrategy.ALWAYS or not path.is_file():
            return None
        if self.overwrite is OverwriteStrategy.NEVER:
            return read_result(path)
        try:
            existing = read_result(path)
        except ResultsError as exc:
            logger.warning("%s; recomputing it", exc)
            return None
        if (existing.identity != self.identity or existing.provenance != provenance
                or existing.config != config):
            logger.info("result '%s' was made from other vectors, probe settings, data or run config; recomputing it",
                        path)
            return None
        return existing

    def save_config(self, config: RunConfig) -> None:
        """Save the run's config as `RUN_FILE` (atomically)."""
        import yaml

        write_atomic(self.out / RUN_FILE, yaml.safe_dump(config.to_dict(), sort_keys=False))
