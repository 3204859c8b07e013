"""A mode split: what one kind of positional encoding contributes to the attention-mode
decomposition — where its attention lives, how its logits split into a contextual and a
positional term, and which named definitions it offers where the split is not unique.

Each split is a small class in its own module (``absolute``, ``rope``, ``t5``,
``deberta``, ``xlnet``, ``roformer``, ``mpnet``, ``modernbert``); ``split_table.py`` maps
transformers ``model_type`` names onto them. (They were called "families" before 0.1's
layering; "family" now means only a package of tasks or models.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from posharness.contracts.adapter import Mode, ModeSupport

if TYPE_CHECKING:
    import torch
    from torch import nn

INSTALLED_ATTR = "posharness_split_installed"  # on each attention module a split installed


@dataclass(frozen=True)
class Definition:
    """One defensible way to split a family's logits, selectable by name."""

    name: str
    description: str  # one line: what gamma and delta are under this definition
    exact: bool  # logits == gamma + delta (+ the stated residual) to float tolerance
    content_free_delta: bool
    needs_reference: bool = False  # statistics from a reference corpus (mean inputs, q, k)

    @classmethod
    def estimate(cls, name: str, description: str, *, needs_reference: bool = True) -> Definition:
        """A definition whose delta is estimated from statistics (corpus means, or the model
        run on a content-free input) instead of read off the model's own terms.

        Every such estimate replaces the words by a mean, so its delta is content-free by
        construction, and none is exact: the residual keeps what the estimate misses.
        """
        return cls(
            name, description, exact=False, content_free_delta=True, needs_reference=needs_reference
        )

    def mode_support(self, reference: str | None = None) -> dict[Mode, ModeSupport]:
        split = ModeSupport(
            exact=self.exact,
            definition=self.name,
            content_free_delta=self.content_free_delta,
            reference_corpus=reference if self.needs_reference else None,
        )
        return {
            Mode.BOTH: ModeSupport(exact=True, definition="model as trained"),
            Mode.CONTEXTUAL: split,
            Mode.POSITIONAL: split,
        }


@dataclass
class Reference:
    """Mean attention input per layer and absolute position over a reference corpus.

    ``inputs[l][t]`` is the mean of what layer l's query projection receives at position
    t (packed sequences, [CLS] first, no padding). Means of projections follow by
    linearity, so one pass serves every definition that needs corpus statistics.
    """

    inputs: list[torch.Tensor]  # per layer [T, D_in], float32, on the model's device
    description: str  # corpus name, content hash, sequences x length
    corpus_hash: str
    extras: Mapping[str, object] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return int(self.inputs[0].shape[0])


class ModeSplit(Protocol):
    name: str  # how results name the PE family, e.g. "learned absolute (input-added)"
    option: str  # the --model-arg key that selects a definition, e.g. "absolute"
    definitions: tuple[Definition, ...]  # the first is the default
    # The split's code version (decompose/versions.py): 1 is the code behind the committed
    # boards and adds nothing to a fingerprint; a bump makes every cell of its models new.
    version: int
    uses_attention_interface: bool  # True: transformers calls decomposed_attention

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        """The self-attention modules in layer order; the mode attribute goes on these."""

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        """Per layer, the module whose forward *input* is that layer's attention input."""

    def install(self, model: nn.Module) -> None:
        """Attach splitters, patch forwards or add hooks. Called once per loaded model."""

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        """Build what the non-``both`` modes need (positional tables, mean q/k)."""

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor | None:
        """The content-free positional logits [L, H, n, n] (after ``prepare``), or None."""


def install_once(modules: Iterable[nn.Module], install: Callable[[nn.Module], None]) -> None:
    """Run ``install`` (patch a forward, add a hook, set a splitter) on each attention module
    not installed before, and mark it: installing a loaded model again must not wrap a
    patched forward twice or add a second hook."""
    for module in modules:
        if getattr(module, INSTALLED_ATTR, False):
            continue
        install(module)
        setattr(module, INSTALLED_ATTR, True)


def base_model(model: nn.Module) -> Any:
    """The transformer body inside any task head, where every split finds its layers:
    transformers' ``base_model`` (the attribute its ``base_model_prefix`` names — ``deberta``,
    ``mpnet``, ``transformer`` for XLNet — or the model itself when it is the body)."""
    return getattr(model, "base_model", model)


def definition_named(family: ModeSplit, name: str | None) -> Definition:
    from posharness.base.errors import OptionError

    if name is None:
        return family.definitions[0]
    for definition in family.definitions:
        if definition.name == name:
            return definition
    known = ", ".join(d.name for d in family.definitions)
    raise OptionError(
        f"--model-arg {family.option}={name}: {family.name} offers the definitions {known}"
    )
