"""What the classifier builder and the reference-statistics pass need of a loaded encoder.

``adapter.HFEncoderAdapter`` calls both (``for_classification``,
``reference_statistics``) and passes itself; naming the attributes they read as a
``Protocol`` here keeps the two helpers from importing the adapter that imports them, so
the Hugging Face package imports one way (issue 45, part 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from posharness.contracts.adapter import Mode, TokenizedText
from posharness.models.decompose.controller import Decomposition, ReferenceLayout


class LoadedEncoder(Protocol):
    """A checkpoint folder with its parsed config, loaded model and tokenizer."""

    folder: Path
    config_dict: dict[str, Any]
    cache_dir: Path | None

    @property
    def model(self) -> Any: ...

    @property
    def tokenizer(self) -> Any: ...

    def fingerprint(self) -> str: ...

    def wrap_token_ids(self, token_ids: Sequence[int]) -> TokenizedText: ...

    def check_mode(self, mode: Mode) -> None: ...

    def fresh_decomposition(self) -> Decomposition | None: ...

    def reference_statistics(self, layout: ReferenceLayout) -> Any: ...
