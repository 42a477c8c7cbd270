"""Publish a built data folder on the Hugging Face Hub."""

from __future__ import annotations

from pathlib import Path

from genebench.data import BenchmarkData
from genebench.errors import GenebenchError
from genebench.network import require_hub


def push_data(
    folder: str | Path, repo_id: str, *, private: bool = False, message: str = "Upload genebench data"
) -> str:
    """Verify `folder` against its manifest and upload it, unchanged and in one commit, to a dataset repo.

    Returns:
        The URL of the commit.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError
    from huggingface_hub.utils import validate_repo_id

    data = BenchmarkData(folder)
    data.verify()
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise GenebenchError(f"--repo '{repo_id}': {exc}") from exc
    require_hub(f"push to '{repo_id}'")
    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                                   commit_message=f"{message} (data revision {data.data_hash})",
                                   ignore_patterns=[".*", "**/.*"])
    except (HfHubHTTPError, OSError) as exc:
        raise GenebenchError(
            f"push to '{repo_id}' failed ({type(exc).__name__}: {str(exc).splitlines()[0]}); check your token "
            "(`hf auth login`) and network, then rerun: the upload is one commit, so nothing half-made is left "
            "on the Hub."
        ) from exc
    return str(commit.commit_url if hasattr(commit, "commit_url") else commit)
