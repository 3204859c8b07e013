"""The ways a positional encoding can enter a BERT-style encoder, one base class each.

A scheme subclasses exactly one of these (a ``Combination`` names several as its parts; a
class that inherits two is refused) and says nothing else about the modes: the kind
decides how ``contextual`` and ``positional`` are made and how exact they are
(``posharness.pe.split``), in the terms of the seeds — Chen et al.'s (2023, Eq. 4) split
of the attention logits into a contextual term gamma and a positional term delta, and
Dufter et al.'s (2022, Table 1) survey categories for the card:

* :class:`InputEmbedding` — vectors added to the word embeddings (learned or fixed
  absolute positions, Devlin et al. 2019; Vaswani et al. 2017);
* :class:`LogitTerm` — a term added to the logits computed from positions alone (T5
  buckets, ALiBi, TISA's kernels, a clipped bias): delta itself;
* :class:`ContentLogitTerm` — a logit term that also reads the queries (Shaw et al.'s
  relative keys): exact split, but delta depends on content;
* :class:`UntiedProduct` — TUPE's positional query/key product (Ke et al. 2021, Eq. 8),
  a logit term from positions that also rescales gamma by 1/sqrt(2d);
* :class:`QueryKeyTransform` — a position-dependent map of queries and keys (rotary);
* :class:`PositionalAttention` — a positional attention of its own ahead of the content
  attention (Chen et al.'s sequence combination CA(PA(X)));
* :class:`NoPositions` — a model with no positions at all (NoPE);
* :class:`Combination` — several of the kinds above in one scheme, each applied where its
  kind belongs (a query transform beside a content logit term: Dai et al. 2019, Eq. 4).

Every parameter a scheme's module holds is counted as positional by the card (measured
by introspection, never declared), and ``posharness check-pe`` verifies that each of them
changes the positional term, and each property the scheme claims of that term
(``register_pe(..., claims=...)``, ``posharness.pe.CLAIMS``).

Import them from ``posharness.pe``: its ``__all__`` lists them, as it lists the names of
``positions`` and ``split``, and no second list here has to be kept equal to it.
"""

from __future__ import annotations

import functools
import inspect
from typing import ClassVar

import torch
from torch import nn

from posharness.pe import registry


class PositionalEncoding(nn.Module):
    """What every scheme module shares: its kind and how the card and modes describe it.

    Class attributes a scheme may set:

    * ``term`` — the positional term's name in the mode definitions (``drop-<term>``,
      ``<term>``); the registered name when empty;
    * ``title`` — the card's family ("T5 bucketed relative bias");
    * ``reference`` — ``absolute`` | ``relative`` | ``both`` (the survey's reference point);
    * ``absolute`` — the input positions the scheme requires (``"none"``: it forbids any),
      or None when it combines with any (``bert-r`` = t5 + learned absolute);
    * ``bounded`` — whether a table limits the input length;
    * ``per_layer`` — one module per layer (TISA, attenuation) or one for the model.
    """

    kind: ClassVar[str] = ""
    term: ClassVar[str] = ""
    title: ClassVar[str] = ""
    reference: ClassVar[str] = "relative"
    injection: ClassVar[str] = "attention matrix"
    absolute: ClassVar[str | None] = None
    bounded: ClassVar[bool] = False
    per_layer: ClassVar[bool] = False

    @classmethod
    def check_config(cls, config) -> str | None:
        """Why ``config`` cannot build this scheme (one line with the fix), or None."""
        return None

    def init_weights(self, std: float) -> None:
        """Initialise what the encoder's BERT initialisation does not know.

        Called once per module after BERT's initialisation of its children (``nn.Linear``
        and ``nn.Embedding`` ~ N(0, std) with zero biases, ``LayerNorm`` at 1 and 0), so it
        may set this module's own plain ``nn.Parameter``s and buffers and may re-initialise
        its children's tensors too; nothing outside the module. Use
        ``transformers.initialization`` (``init.normal_``, ``init.copy_`` ...), which skips a
        tensor just loaded from a checkpoint, and torch's global generator (check-pe's
        ``seeded``). A non-persistent buffer is rebuilt here after ``from_pretrained``."""


class InputEmbedding(PositionalEncoding):
    """Position vectors added to the word embeddings: ``forward(positions) -> [B or 1, n, D]``.

    ``absolute_name`` is how a configuration asks for it alongside a logit term
    (``absolute="learned"``). Its positional mode is the position-position term
    (p W_Q)(p W_K)^T of each layer (Ke et al. 2021, Eq. 7's fourth term): an approximation.
    """

    kind = registry.INPUT_EMBEDDING
    reference = "absolute"
    injection = "input embedding"
    absolute_name: ClassVar[str] = ""

    def __init__(self, config) -> None:
        super().__init__()
        self.size = config.hidden_size
        self.max_positions = config.max_position_embeddings


class LogitTerm(PositionalEncoding):
    """delta from positions alone: ``forward(positions [B or 1, n]) -> [B or 1, H or 1, n, n]``.

    Already-scaled logits, added to gamma as they are. With ``uses_key_mask`` the forward
    also gets the key mask ([B, 1, 1, n] bool, True on real tokens; None when there is no
    padding), for terms normalised over the real keys (Chen et al.'s attenuation).
    """

    kind = registry.LOGIT_TERM
    uses_key_mask: ClassVar[bool] = False

    def delta(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """The term as mode ``both`` adds it."""
        return self(positions, key_mask) if self.uses_key_mask else self(positions)

    def positional(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """The term mode ``positional`` uses on its own: the same delta (an exact split).
        Override only for a cheaper form of the same numbers; check-pe verifies equality."""
        return self.delta(positions, key_mask)

    def fused_bias(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """What the SDPA path adds to the logits: the same delta (check-pe verifies)."""
        return self.delta(positions, key_mask)


class UntiedProduct(LogitTerm):
    """TUPE's untied positional product (Ke et al. 2021, Eq. 7-8): a logit term from positions
    whose presence rescales the content term to 1/sqrt(2d) (``content_scale_factor``)."""

    kind = registry.UNTIED_PRODUCT
    reference = "absolute"
    absolute = "none"
    bounded = True
    content_scale_factor: ClassVar[int] = 2


class ContentLogitTerm(PositionalEncoding):
    """delta that reads the queries: ``forward(query [B, H, n, d], positions, scale)``.

    The logits still split exactly into gamma + delta, but delta depends on content, so the
    positional mode is not content-free (Shaw et al. 2018's relative keys).
    """

    kind = registry.CONTENT_LOGIT_TERM
    per_layer = True


class QueryKeyTransform(PositionalEncoding):
    """A position-dependent map of queries and keys: ``forward(x [B, H, n, d], positions)``,
    or ``forward(x, positions, role)`` for a map that treats the two sides differently.

    ``role`` is ``"query"`` or ``"key"``: the side ``x`` is. Rotary embeddings apply the same
    map to both (Su et al. 2021) and need no role; xPos scales queries by zeta^(n/B) and
    keys by zeta^(-m/B) (Sun et al. 2022), so their product depends on n - m with a sign.
    The encoder calls :meth:`transform` with the role every time, so no transform depends
    on the order of its calls. Contextual drops the transform (exact); positional keeps only
    the transformed query and key biases, T(b_Q, "query") and T(b_K, "key") (content-free,
    not exact), as the zoo documents for rope.
    """

    kind = registry.QUERY_KEY_TRANSFORM
    absolute = "none"
    injection = "attention matrix (rotates q, k)"

    def transform(self, x: torch.Tensor, positions: torch.Tensor, role: str) -> torch.Tensor:
        """``x`` mapped as the ``role`` side at ``positions``; a ``forward`` without a role
        parameter is applied to both sides alike."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if _takes_role(type(self)):
            return self(x, positions, role)
        return self(x, positions)


ROLES = ("query", "key")


@functools.cache
def _takes_role(cls: type) -> bool:
    """Whether ``cls.forward`` declares the ``role`` parameter (read once per class)."""
    return "role" in inspect.signature(cls.forward).parameters


class PositionalAttention(PositionalEncoding):
    """A positional attention applied before the content attention, CA(PA(X)).

    ``forward(positions, key_mask)`` gives PA's weights [B or 1, H or 1, n, n]. With
    ``weights_are_logits`` (the default) they are a softmax of ``logits(positions,
    key_mask)``, PA's pre-softmax scores, and the fused path runs PA as an SDPA over them;
    a scheme whose weights are themselves the parameters (Chen et al.'s learnable table,
    draft Listing 2: ``scores = pe``, no softmax) sets it False and needs no ``logits``.
    The modes are component ablations (contextual bypasses PA, positional skips CA).
    """

    kind = registry.POSITIONAL_ATTENTION
    absolute = "none"
    per_layer = True
    injection = "positional attention"
    weights_are_logits: ClassVar[bool] = True


class Combination(PositionalEncoding):
    """A scheme of several kinds: ``parts = (A, B)``, registered schemes of different kinds,
    each built and applied where its kind belongs (``posharness.pe.combination``).

    Transformer-XL's learned global query bias beside a term that reads the query and the
    relative position (Dai et al. 2019, Eq. 4) is a ``QueryKeyTransform`` that moves the
    queries only and a ``ContentLogitTerm``; RoPE beside ALiBi is a transform and a logit
    term. The class is never built itself: its parts are, and each keeps its declaration
    (options, claims, code identity). The card and the encoder read the attributes a
    combination does not set itself from its parts (``absolute``, ``bounded`` ...), and its
    modes join its parts' definitions (``posharness.pe.split.combined_split``).
    """

    kind = registry.COMBINATION
    parts: ClassVar[tuple[type[PositionalEncoding], ...]] = ()

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError(
            f"{type(self).__name__} is a combination: the encoder builds its parts, not it"
        )

    @classmethod
    def check_config(cls, config) -> str | None:
        """The first part's objection to ``config``, or None."""
        for part in cls.parts:
            problem = part.check_config(config)
            if problem:
                return problem
        return None


class NoPositions(PositionalEncoding):
    """No positional information at all (NoPE): there is no positional mode."""

    kind = registry.POSITION_FREE
    reference = "none"
    injection = "none"
    absolute = "none"
