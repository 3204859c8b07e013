"""The per-model switchboard: install a family once, then switch modes at will.

It owns the user's choices (``--model-arg`` definition, reference corpus and layout,
attention path), turns them into the ``ModeSupport`` every result records, and prepares
the statistics a definition needs the first time a non-``both`` mode (or the positional
scores) is asked for — so runs in mode ``both`` never pay for them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError, PosharnessError
from posharness.contracts.adapter import Mode, ModeSupport
from posharness.models.decompose.core import register_attention_function, set_modes, set_paths
from posharness.models.decompose.mode_split import (
    Definition,
    ModeSplit,
    Reference,
    definition_named,
)
from posharness.models.decompose.paths import ATTENTION_KEY, AUTO, EAGER, resolve_path
from posharness.models.decompose.reference import (
    DEFAULT_SEQUENCES,
    ReferenceCorpus,
    find_reference_corpus,
)

if TYPE_CHECKING:
    import torch
    from torch import nn

REFERENCE_KEYS = ("reference_corpus", "reference_sequences", "reference_length")


@dataclass(frozen=True)
class ReferenceLayout:
    corpus: ReferenceCorpus
    sequences: int
    length: int

    @property
    def label(self) -> str:
        return f"{self.corpus.label}, {self.sequences}x{self.length} tokens"


def known_model_args(family: ModeSplit) -> tuple[str, ...]:
    return (family.option, *REFERENCE_KEYS)


def _positive_int(key: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise OptionError(f"--model-arg {key}={raw}: expected a positive integer")
    return value


class Decomposition:
    """One family, one chosen definition, (where needed) one reference corpus, and the
    attention path choice (paths.py: ``auto``, ``eager`` or ``sdpa``)."""

    def __init__(
        self,
        family: ModeSplit,
        args: Mapping[str, str],
        data_dir: Path | None,
        max_length: int,
        spec: str,
        attention: str = AUTO,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        known = known_model_args(family)
        for key in args:
            if key not in known:
                choices = [*known, ATTENTION_KEY]  # the path choice is read earlier
                close = difflib.get_close_matches(key, choices, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]}? " if close else ""
                raise OptionError(
                    f"--model-arg {key}: {hint}{spec} ({family.name}) takes {', '.join(choices)}"
                )
        self.family = family
        self.attention = attention
        # Why this checkpoint can never fuse (DeBERTa v1 talking heads), read from its
        # config so planning knows the path without loading weights.
        says = getattr(family, "eager_reason", None)
        self.eager_reason: str | None = says(config or {}) if says is not None else None
        self.definition: Definition = definition_named(family, args.get(family.option))
        self.layout: ReferenceLayout | None = None
        self.missing_reference: PosharnessError | None = None
        if self.definition.needs_reference:
            sequences = _positive_int(
                "reference_sequences", args.get("reference_sequences", str(DEFAULT_SEQUENCES))
            )
            length = _positive_int(
                "reference_length", args.get("reference_length", str(min(max_length, 512)))
            )
            if length > max_length:
                raise OptionError(
                    f"--model-arg reference_length={length} exceeds the model's {max_length} "
                    "positions"
                )
            try:
                corpus = find_reference_corpus(
                    args.get("reference_corpus"),
                    data_dir,
                    f"{spec}'s split definition {self.definition.name}",
                )
                self.layout = ReferenceLayout(corpus, sequences, length)
            except PosharnessError as exc:
                if args.get("reference_corpus"):
                    raise  # a corpus the user named must exist
                self.missing_reference = exc  # mode `both` does not need it
        self.installed = False
        self.prepared = False

    # -- what results record ------------------------------------------------------------
    @property
    def modes(self) -> dict[Mode, ModeSupport]:
        label = self.layout.label if self.layout is not None else None
        return self.definition.mode_support(label)

    def describe(self) -> dict[str, object]:
        return {
            "family": self.family.name,
            "definition": self.definition.name,
            "definition_description": self.definition.description,
            "reference": self.layout.label if self.layout is not None else None,
        }

    def check_ready(self, mode: Mode) -> None:
        """Fail before any work if ``mode`` needs a corpus that is not there."""
        if mode is not Mode.BOTH and self.missing_reference is not None:
            raise self._missing_reference_error()

    def _missing_reference_error(self) -> PosharnessError:
        assert self.missing_reference is not None
        alternatives = [d.name for d in self.family.definitions if not d.needs_reference]
        hint = (
            f", or --model-arg {self.family.option}={alternatives[0]} (needs no corpus)"
            if alternatives
            else ""
        )
        return type(self.missing_reference)(f"{self.missing_reference}{hint}")

    # -- running ------------------------------------------------------------------------
    def install(self, model: nn.Module) -> None:
        if self.installed:
            return
        if self.family.uses_attention_interface:
            register_attention_function()
            model.set_attn_implementation("posharness")
        self.family.install(model)
        self.installed = True

    def prepare(self, model: nn.Module, make_reference: Callable[[ReferenceLayout], Reference]):
        """The definition's statistics, always from eager forwards in mode ``both``: they
        are cached under a key that names no path, so they must not depend on which path
        the cells before them happened to set (a resumed run starts in another mode)."""
        if self.prepared:
            return
        reference = None
        modules = self.family.attention_modules(model)
        set_modes(modules, Mode.BOTH)
        set_paths(modules, EAGER)
        if self.definition.needs_reference:
            if self.layout is None:
                raise self._missing_reference_error()
            reference = make_reference(self.layout)
        self.family.prepare(model, self.definition, reference)
        self.prepared = True

    def set_mode(self, model: nn.Module, mode: Mode) -> None:
        """The mode, and the path of calls that return no weights (a call that returns
        them runs eager whatever is set here)."""
        modules = self.family.attention_modules(model)
        set_modes(modules, mode)
        set_paths(modules, self.attention_path(mode, want_weights=False))

    def attention_path(self, mode: Mode, want_weights: bool) -> str:
        """``sdpa`` or ``eager``: what a forward runs in ``mode`` (the same in every mode).

        Every family expresses every mode in SDPA; a checkpoint its family says cannot
        (DeBERTa v1 talking heads) stays eager under ``auto``, and ``sdpa`` refuses it.
        """
        return resolve_path(self.attention, want_weights, self.eager_reason)

    def positional_scores(self, model: nn.Module, length: int) -> torch.Tensor | None:
        return self.family.positional_scores(model, length, self.definition)
