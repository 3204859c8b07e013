"""Model spec strings → loaded adapters.

A spec names a registered model and, optionally, what to load into it:

    minilm                    a registered model with a built-in default
    hf:bert-base-uncased      registered name ``hf``, argument = hub id
    hf:/models/my-bert        registered name ``hf``, argument = local folder
    tupe-r@runs/tupe-r-mini   registered name ``tupe-r``, argument = checkpoint folder
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from posharness.errors import OptionError

if TYPE_CHECKING:
    from posharness.adapter import ModelAdapter


@dataclass(frozen=True)
class ModelSpec:
    text: str
    name: str
    argument: str | None

    @property
    def slug(self) -> str:
        """A file-name-safe form of the spec, used in result and leaderboard names."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.text).strip("-.")
        return slug or "model"


@dataclass(frozen=True)
class LoadOptions:
    """How to materialise a model: the same for every registered factory."""

    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    device: str = "cpu"
    revision: str | None = None
    model_args: tuple[tuple[str, str], ...] = ()  # --model-arg KEY=VALUE, factory-specific
    data_dir: Path | None = None  # where default corpora/datasets are looked for
    cache_dir: Path | None = None  # feature cache for statistics a model computes (None: off)


class ModelFactory(Protocol):
    """What the model registry holds: builds an adapter from a spec's argument."""

    def __call__(self, argument: str | None, options: LoadOptions) -> ModelAdapter: ...


_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.+-]*?)(?:(?P<sep>[:@])(?P<arg>.+))?$")


def parse_model_spec(text: str) -> ModelSpec:
    text = text.strip()
    match = _SPEC.match(text)
    if not text or match is None:
        raise OptionError(
            f"model spec {text!r} is malformed: use NAME, NAME@CHECKPOINT or hf:HUB_ID_OR_FOLDER"
        )
    return ModelSpec(text, match["name"], match["arg"])


def load_model(spec: ModelSpec, options: LoadOptions) -> ModelAdapter:
    from posharness.plugins import models

    factory: ModelFactory = models.get(spec.name)
    adapter = factory(spec.argument, options)
    adapter.spec = spec.text
    return adapter
