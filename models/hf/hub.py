"""Find a checkpoint on disk: a local folder, or a hub id from the cache or the hub.

The libraries' own fallback, when the hub is unreachable, retries for about 25 s before
failing with a long traceback. Here an unreachable hub is detected with one short
connection attempt, and ``HF_HUB_OFFLINE`` is honoured before any network call, so an
unavailable model fails in seconds with one line that says what to do.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

from posharness.base.errors import ModelLoadError

# Files a checkpoint needs; weights in other formats are not fetched.
CHECKPOINT_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.py"]


def hub_offline() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE", "") or os.environ.get("TRANSFORMERS_OFFLINE", "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def looks_like_path(name: str) -> bool:
    """A name the user meant as a folder (hub ids are ``owner/name`` or ``name``)."""
    return (
        name.startswith(("/", "./", "../", "~"))
        or name.endswith("/")
        or name.count("/") > 1
        or os.sep != "/"
        and os.sep in name
    )


def hub_reachable(timeout: float = 3.0) -> bool:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    parsed = urlparse(endpoint)
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (443 if parsed.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def resolve_checkpoint(name: str, revision: str | None = None) -> tuple[Path, str | None]:
    """Return (local folder, hub commit or None) for a local path or a hub id."""
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(
                f"model path {name} is a file: give the checkpoint folder (with config.json)"
            )
        if not (path / "config.json").exists():
            raise ModelLoadError(
                f"model folder {name} has no config.json: point to a Hugging Face checkpoint "
                "folder (save one with `model.save_pretrained(DIR)`)"
            )
        return path.resolve(), None
    if looks_like_path(name):
        raise ModelLoadError(
            f"model path {name} does not exist: check the path, or use a hub id like "
            "`hf:bert-base-uncased`"
        )
    return _resolve_hub_id(name, revision)


def _resolve_hub_id(repo_id: str, revision: str | None) -> tuple[Path, str | None]:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        folder = snapshot_download(
            repo_id, revision=revision, local_files_only=True, allow_patterns=CHECKPOINT_PATTERNS
        )
        return Path(folder), Path(folder).name
    except HFValidationError as exc:
        raise ModelLoadError(
            f"{repo_id!r} is neither an existing folder nor a valid hub id: check the spelling"
        ) from exc
    except LocalEntryNotFoundError:
        pass
    fix = (
        f"download it where the hub is reachable (`hf download {repo_id}`) and copy the "
        "cache, or pass a local folder as hf:/path/to/checkpoint"
    )
    if hub_offline():
        raise ModelLoadError(
            f"hub model {repo_id!r} is not in the local cache and HF_HUB_OFFLINE is set: {fix}"
        )
    if not hub_reachable():
        raise ModelLoadError(
            f"hub model {repo_id!r} is not in the local cache and the hub is unreachable: {fix}"
        )
    try:
        folder = snapshot_download(repo_id, revision=revision, allow_patterns=CHECKPOINT_PATTERNS)
    except Exception as exc:  # repository missing, gated, network dropped mid-way
        raise ModelLoadError(
            f"could not download {repo_id!r} ({type(exc).__name__}): {fix}"
        ) from exc
    return Path(folder), Path(folder).name
