"""What the harness needs from an encoder: the ``ModelAdapter`` protocol and its data types.

A protocol, not a base class, so an outside model plugs in without inheriting from us.
Every adapter speaks the same small vocabulary:

* ``tokenize`` turns text into :class:`TokenizedText` (ids, special-token mask, word ids);
* ``encode`` runs one padded :class:`EncoderBatch` in one attention :class:`Mode`;
* ``modes`` says which modes exist and whether each split is exact (docs/modes.md);
* ``fingerprint`` names the exact weights/config/tokenizer/dtype/attention code, and is
  part of every cache key and result, so two models can never share a score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic.dataclasses import dataclass as pydantic_dataclass

if TYPE_CHECKING:
    import torch


class Mode(StrEnum):
    """How attention logits are assembled (Chen et al. 2023 §3.4; docs/modes.md)."""

    BOTH = "both"  # the model as trained: softmax(gamma + delta)
    CONTEXTUAL = "contextual"  # drop delta: softmax(gamma)
    POSITIONAL = "positional"  # zero gamma before the softmax: softmax(delta)


@pydantic_dataclass(frozen=True)
class ModeSupport:
    """How faithfully a model realises one mode.

    ``exact`` is True when logits split into gamma + delta with no residual;
    otherwise ``definition`` names the approximation used (e.g. ``tisa-mean-word``).
    ``content_free_delta`` says whether the positional term ignores token identity;
    ``reference_corpus`` names (with its content hash) the corpus a definition took
    statistics from, so two results built on different corpora never look alike.
    """

    exact: bool
    definition: str | None = None
    content_free_delta: bool | None = None
    reference_corpus: str | None = None


@dataclass(frozen=True)
class PECard:
    """A positional encoding described in the survey's terms (Dufter et al. 2022, Table 1)."""

    family: str  # e.g. "learned absolute", "T5 bias", "TUPE-R"
    reference_point: str  # absolute | relative | both
    injection: str  # input embedding | attention matrix
    recurring: bool  # injected in every layer?
    learnable: bool
    positional_parameters: int | None  # number of parameters that encode position
    unbounded_length: bool  # works beyond the longest training length?


@dataclass(frozen=True)
class TokenizedText:
    """One model input before padding; word ids map each piece to its word (None: special)."""

    input_ids: tuple[int, ...]
    special_tokens_mask: tuple[bool, ...]
    word_ids: tuple[int | None, ...]
    token_type_ids: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class EncoderBatch:
    """A padded batch. ``attention_mask`` is 1 for real tokens, 0 for padding."""

    input_ids: torch.Tensor  # [B, T] long
    attention_mask: torch.Tensor  # [B, T] long
    special_tokens_mask: torch.Tensor  # [B, T] bool, False on padding
    word_ids: list[tuple[int | None, ...]]
    token_type_ids: torch.Tensor | None = None

    @property
    def size(self) -> int:
        return int(self.input_ids.shape[0])

    def to(self, device: Any) -> EncoderBatch:
        move = lambda t: None if t is None else t.to(device)  # noqa: E731
        return EncoderBatch(
            move(self.input_ids),
            move(self.attention_mask),
            move(self.special_tokens_mask),
            self.word_ids,
            move(self.token_type_ids),
        )


@dataclass
class EncoderOutput:
    """Per-layer outputs of one batch, on the model's device.

    ``hidden_states`` has layers + 1 entries (the embeddings first), each [B, T, D];
    ``attentions`` has one entry per layer, each [B, H, T, T], rows sum to 1 over real keys.
    """

    hidden_states: tuple[torch.Tensor, ...] | None
    attentions: tuple[torch.Tensor, ...] | None
    attention_mask: torch.Tensor
    special_tokens_mask: torch.Tensor
    word_ids: list[tuple[int | None, ...]]
    attn_implementation: str = "unknown"
    extras: dict[str, Any] = field(default_factory=dict)


HIDDEN = "hidden"
ATTENTIONS = "attentions"
# The content-free positional term (``HasPositionalTerm.positional_scores``): a task that
# reads it depends on the positional mode's definition and reference corpus in every
# mode, so that identity joins its cells' identity.
POSITIONAL_TERM = "positional_term"


def mode_identity(model: ModelAdapter, mode: Mode, want: frozenset[str] | None = None) -> str:
    """The mode as part of a cache key or cell id (``run.identity.key_of`` hashes it into
    the cell's key): its definition and corpus count, and, for calls that ask for
    ``want``, the fused attention path where it runs.

    Two positional runs of one checkpoint under different definitions (or reference
    corpora) give different numbers, so they must never share a cache entry or a result.
    Fused SDPA and eager attention agree only to float tolerance, so an SDPA call is keyed
    apart too; eager adds nothing, which keeps every key written before SDPA valid.
    """
    support = model.modes.get(mode)
    base = str(mode)
    if mode is not Mode.BOTH and support is not None:
        base = f"{mode}|{support.definition}|{support.reference_corpus}"
    if want is not None and attention_path_of(model, mode, want) == "sdpa":
        base += "|sdpa"
    return base


def attention_path_of(model: ModelAdapter, mode: Mode, want: frozenset[str]) -> str | None:
    """``"sdpa"`` or ``"eager"`` for a model that says (:class:`ReportsAttentionPath`),
    else None; raises the model's one-line error where a forced path cannot be run."""
    if isinstance(model, ReportsAttentionPath):
        return model.attention_path(mode, want)
    return None


@runtime_checkable
class ModelAdapter(Protocol):
    """The encoder-side contract every task relies on."""

    spec: str  # how the user named it, e.g. "hf:/models/bert"
    modes: Mapping[Mode, ModeSupport]
    pad_token_id: int
    num_layers: int
    num_heads: int
    max_length: int  # longest input the positions allow, special tokens included

    def fingerprint(self) -> str:
        """Stable hash of weights identity, config, tokenizer, dtype and attention code."""

    def pe_card(self) -> PECard: ...

    def describe(self) -> dict[str, Any]:
        """Facts recorded with every result: dtype, device, attention implementation."""

    def to(self, device: str) -> ModelAdapter: ...

    def tokenize(self, texts: Sequence[str] | Sequence[Sequence[str]]) -> list[TokenizedText]:
        """Text (or pre-split words) → model inputs with special tokens and word ids."""

    def wrap_token_ids(self, token_ids: Sequence[int]) -> TokenizedText:
        """Add the model's special tokens around already-chosen vocabulary ids."""

    def probe_vocabulary(self) -> list[tuple[str, int]]:
        """Whole-word vocabulary items usable for identical-word probing.

        No special tokens, no continuation pieces (``##x``), no single characters.
        """

    def encode(self, batch: EncoderBatch, mode: Mode, want: frozenset[str]) -> EncoderOutput:
        """Run one batch; ``want`` ⊆ {"hidden", "attentions"}."""

    def position_embeddings(self) -> torch.Tensor | None:
        """The absolute position table [positions, D] (learned or fixed: sinusoidal, TUPE's
        p), or None if there is none."""


# -- optional abilities: each its own protocol, checked with isinstance when a run is
# planned, so a task that needs one fails before any work with a line naming both.
@runtime_checkable
class HasPositionalTerm(Protocol):
    """The model can state its content-free positional term (geometry's ``positional_term_*``)."""

    def positional_scores(self, length: int) -> torch.Tensor | None:
        """The content-free positional logits delta, [layers, heads, n, n], or None.

        Exact where the family's delta is a parameter (T5 bias, XLNet's v·W_R r), estimated
        under the mode's named definition elsewhere (TISA extraction, RoPE mean-qk).
        """


@runtime_checkable
class HasPositionalAttention(Protocol):
    """The model's positional mode attends with weights that are not softmax(delta): a
    positional attention ahead of the content one (Chen et al.'s draft, CA(PA(X)), whose PA
    may be a learned table used as it is). Geometry measures these weights, never a softmax
    of them."""

    def positional_attention(self, length: int) -> torch.Tensor | None:
        """PA's weights [layers, heads, n, n] when positional mode attends with them, else
        None (the attention is softmax of ``positional_scores``)."""


@runtime_checkable
class FineTunable(Protocol):
    """The model can be fine-tuned: tokenised pairs in, a trainable classifier out."""

    def tokenize_pairs(
        self, first: Sequence[str], second: Sequence[str] | None, max_length: int
    ) -> list[TokenizedText]:
        """Sentences (``second=None``) or sentence pairs, truncated to ``max_length``."""

    def for_classification(self, num_labels: int, mode: Mode) -> torch.nn.Module:
        """A trainable copy of the encoder with a fresh head, attention fixed to ``mode``.

        ``forward(input_ids, attention_mask, token_type_ids=None) -> logits [B, labels]``;
        ``num_labels=1`` is a regression head. Fine-tuned in ``positional`` mode it is
        Chen et al.'s BERT-p.
        """


@dataclass(frozen=True)
class MaskedLM:
    """A model with its pretrained masked-LM head, ready to score in one attention mode:
    ``logits(input_ids, attention_mask) -> [B, T, vocab]``, and the ids masking needs."""

    logits: Callable[[Any, Any], Any]
    mask_token_id: int
    vocab_size: int


@runtime_checkable
class HasMaskedLM(Protocol):
    """The model can be scored as a masked language model (``length_mlm``)."""

    def for_masked_lm(self, mode: Mode) -> MaskedLM:
        """The encoder with its pretrained head, attention fixed to ``mode``, in eval mode
        on the adapter's device. A checkpoint without a head is a one-line
        :class:`posharness.base.errors.OptionError`, never a random head."""


@runtime_checkable
class KnowsMaskedLMHead(Protocol):
    """A ``HasMaskedLM`` model that can tell without loading weights whether its
    checkpoint has the head (from its configuration), so a plan leaves a masked-LM task
    out before any cell runs instead of failing in the middle of a run."""

    def masked_lm_head_missing(self) -> str | None:
        """Why the checkpoint has no masked-LM head, or None when it has one (or the
        configuration cannot say)."""


@runtime_checkable
class ChecksModes(Protocol):
    """The model can tell, before any work, that a mode it lists cannot run as asked
    (e.g. a split definition that needs a reference corpus none was given for)."""

    def check_mode(self, mode: Mode) -> None:
        """Raise a :class:`posharness.base.errors.PosharnessError` naming the fix, or return."""


@runtime_checkable
class ReportsAttentionPath(Protocol):
    """The model runs attention either fused (SDPA, no weights) or eager, per request, and
    says which, so each result can record it (``ModeInfo.attention_path``)."""

    def attention_path(self, mode: Mode, want: frozenset[str]) -> str:
        """``"sdpa"`` or ``"eager"``: what ``encode(batch, mode, want)`` runs; with ``want``
        empty, also what a ``for_classification`` model trains with."""


@runtime_checkable
class ShowsProgress(Protocol):
    """The model has long steps of its own (a pass over a reference corpus for split
    statistics) and shows them through the runner's progress display when given one."""

    def set_progress(self, progress: Callable[[str, int], Callable[[int], None]] | None) -> None:
        """``progress(label, total)`` returns ``advance(n)``; None silences it."""


def capability_name(protocol: type) -> str:
    """``FineTunable`` → "FineTunable (tokenize_pairs, for_classification)" for messages."""
    members = [name for name in vars(protocol) if not name.startswith("_")]
    return f"{protocol.__name__} ({', '.join(members)})"
