"""``PEConfig``: a BERT configuration plus the positional scheme and its options.

``scheme`` names the attention-level encoding (or ``ape`` / ``sinusoidal`` / ``nope`` for
the input-only ones); ``absolute`` names what is added to the input embeddings. Most
schemes default to no input positions; ``bert-r`` (t5 + learned) and ``tisa-ape``
(tisa + learned) are the combinations the papers train (presets.py).
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.attenuation import BERT_LIKE_W

SCHEMES = (
    "ape",
    "sinusoidal",
    "rope",
    "alibi",
    "t5",
    "shaw",
    "tupe-a",
    "tupe-r",
    "tisa",
    "attenuated",
    "sequence",
    "nope",
)
ABSOLUTES = ("learned", "sinusoidal", "none")
LEARNABLE_ATTENUATION = ("head", "layer", "fixed")
TUPE = ("tupe-a", "tupe-r")

# Schemes whose input positions are fixed by the scheme itself (None: any of ABSOLUTES).
_FIXED_ABSOLUTE = {
    "ape": "learned",
    "sinusoidal": "sinusoidal",
    "tupe-a": "none",  # TUPE removes the input positions (Ke et al. §3.1)
    "tupe-r": "none",
    "sequence": "none",
    "rope": "none",  # rotary positions only: a pp-term would need rotating too
    "nope": "none",
}

_SIZE_FIELDS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
)
SIZES: dict[str, dict[str, int]] = {
    name: dict(zip(_SIZE_FIELDS, row, strict=True))
    for name, row in {
        # layers, hidden, heads, intermediate, max positions
        "tiny": (2, 32, 2, 64, 64),
        "mini": (4, 256, 4, 1024, 128),
        "small": (6, 512, 8, 2048, 512),
        "base": (12, 768, 12, 3072, 512),
    }.items()
}


def _choices(values: Any) -> str:
    return ", ".join(str(v) for v in values)


class PEConfig(PretrainedConfig):
    """BERT fields (same names and defaults as ``BertConfig``) plus the positional scheme.

    Positional options: ``relative_buckets`` / ``relative_max_distance`` (T5 bias of t5,
    bert-r, tupe-r), ``tie_cls`` (TUPE without the [CLS] reset), ``tisa_kernels`` (S),
    ``attenuation_w`` / ``attenuation_s`` / ``attenuation_learnable`` (Eq. 8; ``None`` w is
    BERT's locality 0.17), ``rope_theta``, ``shaw_max_distance`` (clip k). ``name`` is the
    registered name (for the PE card), ``size`` the preset it was built from.
    """

    model_type = "posharness-pe"

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02
    pad_token_id: int | None = 0
    tie_word_embeddings: bool = True
    classifier_dropout: float | None = None
    scheme: str = "ape"
    absolute: str | None = None
    relative_buckets: int = 32
    relative_max_distance: int = 128
    tie_cls: bool = False
    tisa_kernels: int = 5
    attenuation_w: float | None = None
    attenuation_s: float = 1.0
    attenuation_learnable: str = "head"
    rope_theta: float = 10000.0
    shaw_max_distance: int = 16
    name: str | None = None
    size: str | None = None

    def __post_init__(self, **kwargs: Any) -> None:
        if self.scheme not in SCHEMES:
            raise OptionError(
                f"unknown positional scheme {self.scheme!r}: pick one of {_choices(SCHEMES)}"
            )
        fixed = _FIXED_ABSOLUTE.get(self.scheme)
        if self.absolute is None:
            self.absolute = fixed or "none"
        if self.absolute not in ABSOLUTES:
            raise OptionError(
                f"unknown absolute positions {self.absolute!r}: pick one of {_choices(ABSOLUTES)}"
            )
        if fixed is not None and self.absolute != fixed:
            raise OptionError(
                f"scheme {self.scheme} takes absolute={fixed!r}, got {self.absolute!r}: drop the "
                "option or pick a scheme that combines with input positions (t5, tisa, alibi, ...)"
            )
        if self.attenuation_learnable not in LEARNABLE_ATTENUATION:
            raise OptionError(
                f"unknown attenuation_learnable {self.attenuation_learnable!r}: pick one of "
                f"{_choices(LEARNABLE_ATTENUATION)}"
            )
        if self.attenuation_w is None:
            self.attenuation_w = BERT_LIKE_W
        if not (self.attenuation_w > 0 and self.attenuation_s > 0):
            raise OptionError(
                f"attenuation w and s must be positive, got w={self.attenuation_w}, "
                f"s={self.attenuation_s}: see fit_attenuation for values with a given geometry"
            )
        self._check_positive()
        if self.hidden_size % self.num_attention_heads:
            raise OptionError(
                f"hidden_size {self.hidden_size} is not a multiple of num_attention_heads "
                f"{self.num_attention_heads}: pick sizes that divide"
            )
        if self.scheme == "rope" and self.head_size % 2:
            raise OptionError(
                f"rope needs an even head size, got {self.head_size}: change hidden_size or heads"
            )
        super().__post_init__(**kwargs)

    def _check_positive(self) -> None:
        for field in (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "relative_buckets",
            "relative_max_distance",
            "tisa_kernels",
            "shaw_max_distance",
        ):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise OptionError(
                    f"{field} must be a positive integer, got {value!r}: fix the option"
                )
        if self.relative_buckets % 2:
            raise OptionError(
                f"relative_buckets must be even (half per direction), got {self.relative_buckets}"
            )
        if not self.rope_theta > 0:
            raise OptionError(f"rope_theta must be positive, got {self.rope_theta}: fix the option")

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def bounded(self) -> bool:
        """Whether inputs are limited to ``max_position_embeddings`` (a learned table)."""
        return self.absolute == "learned" or self.scheme in TUPE
