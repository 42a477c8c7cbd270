"""Submissions on the Hub: open one pull request per submission, and read back every merged one.

A submissions repository is a Hub dataset repo holding `results/<org__model>/<revision>/*.json` (family folds:
`results/folds-family/<org__model>/<revision>/*.json`). A submission
is a single commit opened as a pull request, so a failed upload leaves nothing behind, and merged pull requests
are what `main` holds.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from huggingface_hub import CommitInfo, CommitOperationAdd, HfApi
from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError

from genebench.errors import SubmissionError
from genebench.leaderboard.validate import (
    MAX_FILE_BYTES,
    MAX_SUBMISSION_BYTES,
    ModelRun,
    check_safe_name,
    folder_scheme,
)
from genebench.network import require_hub

logger = logging.getLogger(__name__)

RESULTS_PREFIX = "results"
"""Folder of the submissions repository that holds the results."""
REPO_TYPE = "dataset"
MAX_LEADERBOARD_BYTES = 16 * MAX_SUBMISSION_BYTES
"""Largest total size of all merged results read by `download_submissions` (bytes)."""


def _reason(exc: HfHubHTTPError) -> str:
    """One line: the HTTP status and the Hub's own message."""
    message = " ".join((exc.server_message or str(exc).splitlines()[0]).split())
    return f"HTTP {exc.response.status_code}: {message}"


def _results_on_main(api: HfApi, repo_id: str) -> dict[str, int]:
    """Map each file under `results/` on `main` to its size; empty when the folder does not exist yet."""
    try:
        entries = list(
            api.list_repo_tree(
                repo_id, path_in_repo=RESULTS_PREFIX, recursive=True, repo_type=REPO_TYPE, revision="main"
            )
        )
    except RepositoryNotFoundError:
        raise SubmissionError(
            f"submissions repo {repo_id!r}: expected an existing Hub dataset repo, found none; create it with "
            f"`hf repo create {repo_id} --repo-type dataset` or check --repo and your token."
        ) from None
    except EntryNotFoundError:
        return {}
    except HfHubHTTPError as exc:
        raise SubmissionError(
            f"submissions repo {repo_id!r}: could not list its files ({_reason(exc)}); retry later."
        ) from None
    return {entry.path: entry.size for entry in entries if hasattr(entry, "size")}


def submit_runs(
    runs: Sequence[ModelRun], repo_id: str, *, endpoint: str | None = None, token: str | None = None
) -> CommitInfo:
    """Open a pull request adding validated runs to a submissions repo, all files in one commit.

    Args:
        runs: Runs returned by `validate_results`.
        repo_id: The submissions dataset repo, `org/name`.
        endpoint: Hub endpoint; default `HF_ENDPOINT` or https://huggingface.co.
        token: Hub token; default the stored or `HF_TOKEN` token.

    Returns:
        The commit, with `pr_url` set.

    Raises:
        SubmissionError: If a run is already on `main`, or the Hub refuses the commit.
    """
    if not runs:
        raise SubmissionError("submission: expected at least one validated run, found none; pass a results folder.")
    require_hub(f"submit to {repo_id!r}", endpoint=endpoint)
    api = HfApi(endpoint=endpoint, token=token)
    existing = _results_on_main(api, repo_id)
    existing_runs = {PurePosixPath(path).parent.relative_to(RESULTS_PREFIX).as_posix() for path in existing}
    if duplicates := sorted(run.folder for run in runs if run.folder in existing_runs):
        raise SubmissionError(
            f"submission to {repo_id!r}: {duplicates} already on the leaderboard (main); duplicates are rejected. "
            "Submit a new model revision instead."
        )
    operations = [
        CommitOperationAdd(
            path_in_repo=f"{RESULTS_PREFIX}/{relative}", path_or_fileobj=(run.root / relative).read_bytes()
        )
        for run in runs
        for relative in run.files
    ]
    names = ", ".join(run.key for run in runs)
    try:
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=f"Submit {names}"[:200],
            commit_description=f"genebench submission: {len(operations)} files for {names}.",
            repo_type=REPO_TYPE,
            create_pr=True,
        )
    except HfHubHTTPError as exc:
        raise SubmissionError(
            f"submission to {repo_id!r}: the Hub refused the commit ({_reason(exc)}); nothing was committed, "
            "retry the same command."
        ) from None
    logger.info("Opened %s with %d files.", commit.pr_url, len(operations))
    return commit


def download_submissions(
    repo_id: str, dest: str | Path, *, endpoint: str | None = None, token: str | None = None
) -> Path:
    """Download every merged submission (the `results/` folder on `main`) into `dest`.

    Paths and sizes are checked from the listing before anything is downloaded.

    Returns:
        The local `results` folder, ready for `validate_results`.
    """
    require_hub(f"read submissions of {repo_id!r}", endpoint=endpoint)
    api = HfApi(endpoint=endpoint, token=token)
    files = _results_on_main(api, repo_id)
    if not files:
        raise SubmissionError(
            f"submissions repo {repo_id!r}: expected merged results under {RESULTS_PREFIX}/ on main, found none; "
            "merge a submission pull request first."
        )
    total = 0
    for path, size in files.items():
        parts = PurePosixPath(path).parts
        if folder_scheme(parts[1:-1]) is None:
            raise SubmissionError(
                f"submissions repo {repo_id!r} file {path!r}: expected {RESULTS_PREFIX}/<org__model>/<revision>/"
                f"<task>.json (family folds: {RESULTS_PREFIX}/folds-family/<org__model>/<revision>/<task>.json); "
                "remove it from the repo."
            )
        for part in parts[1:]:
            check_safe_name(part, what=f"submissions repo {repo_id!r} path component")
        if size > MAX_FILE_BYTES:
            raise SubmissionError(
                f"submissions repo {repo_id!r} file {path!r}: expected at most {MAX_FILE_BYTES} bytes, found {size}; "
                "remove it from the repo."
            )
        total += size
    if total > MAX_LEADERBOARD_BYTES:
        raise SubmissionError(
            f"submissions repo {repo_id!r}: expected at most {MAX_LEADERBOARD_BYTES} bytes of results, found {total}; "
            "remove oversized submissions from the repo."
        )
    dest = Path(dest)
    try:
        for path in sorted(files):
            api.hf_hub_download(repo_id, path, repo_type=REPO_TYPE, revision="main", local_dir=dest)
    except HfHubHTTPError as exc:
        raise SubmissionError(f"submissions repo {repo_id!r}: download failed ({_reason(exc)}); retry later.") from None
    logger.info("Downloaded %d files from %s.", len(files), repo_id)
    return dest / RESULTS_PREFIX
