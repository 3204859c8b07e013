"""``PEConfig``: a BERT configuration plus the positional scheme and its options.

``scheme`` names a scheme registered with ``posharness.pe.register_pe`` (the built-ins are
in ``posharness.models.zoo.schemes``); ``absolute`` names what is added to the input
embeddings. Most schemes default to no input positions; ``bert-r`` (t5 + learned) and
``tisa-ape`` (tisa + learned) are the combinations the papers train (variants.py). The
built-in schemes' options are fields of their own (as checkpoints have always stored
them); a plugin scheme's options live in ``pe_options`` and its origin in ``pe_origin``,
so a checkpoint of it loaded without the plugin says which plugin to install.
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.attenuation import BERT_LIKE_W
from posharness.pe import registry

# Input positions by their configuration name; an input-embedding scheme registered by a
# plugin is named by its scheme name.
ABSOLUTE_SCHEMES = {"learned": "ape", "sinusoidal": "sinusoidal"}

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
        # Turc et al. (2019)'s 4-layer, 128-wide grid point (with BERT-mini's 4 heads of 32):
        # the width at which 2 CPU cores train a model to attend in minutes (cpu-hour recipe)
        "narrow": (4, 128, 4, 512, 128),
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
    pe_options: dict[str, Any] | None = None
    pe_origin: dict[str, str] | None = None
    name: str | None = None
    size: str | None = None

    def __post_init__(self, **kwargs: Any) -> None:
        scheme = scheme_class(self.scheme, self.pe_origin)
        fixed = scheme_absolute(scheme)
        if self.absolute is None:
            self.absolute = fixed or "none"
        if fixed is not None and self.absolute != fixed:
            raise OptionError(
                f"scheme {self.scheme} takes absolute={fixed!r}, got {self.absolute!r}: drop the "
                "option or pick a scheme that combines with input positions (t5, tisa, alibi, ...)"
            )
        if self.absolute != "none":
            absolute_class(self.absolute)  # refuses an unknown name in one line
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
        problem = scheme.check_config(self) if hasattr(scheme, "check_config") else None
        if problem:
            raise OptionError(problem)
        super().__post_init__(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """Without the plugin fields when unset, so a built-in scheme's config.json (and the
        fingerprint hashed from it) is byte-identical to what it was before they existed."""
        data = super().to_dict()
        for key in ("pe_options", "pe_origin"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

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
        """Whether inputs are limited to ``max_position_embeddings`` (a position table)."""
        if getattr(scheme_class(self.scheme), "bounded", False):
            return True
        return self.absolute != "none" and absolute_class(self.absolute).bounded


def scheme_class(name: str, origin: dict[str, str] | None = None) -> Any:
    """The registered scheme ``name``; unknown: one line naming the plugin it came from."""
    if name in registry.positional_encodings:
        return registry.scheme(name)
    if origin:
        raise OptionError(
            f"unknown positional scheme {name!r}: it comes from {origin.get('origin', 'a')} "
            f"{origin.get('source', '?')}: {origin.get('fix', 'install or --include it')}"
        )
    raise OptionError(
        f"unknown positional scheme {name!r}: pick one of "
        f"{_choices(registry.scheme_names())}, or register it with posharness.pe.register_pe "
        "(docs/new_pe.md)"
    )


def _scheme_named_by_absolute(absolute: str) -> str | None:
    """The registered input-embedding scheme whose ``absolute_name`` is ``absolute``."""
    for entry in registry.positional_encodings.entries():
        if getattr(entry.obj, "kind", None) == registry.INPUT_EMBEDDING and (
            getattr(entry.obj, "absolute_name", "") == absolute
        ):
            return entry.name
    return None


def scheme_absolute(scheme: Any) -> str | None:
    """The input positions a scheme fixes (an input embedding fixes itself), or None."""
    if getattr(scheme, "kind", None) == registry.INPUT_EMBEDDING:
        return scheme.absolute_name or registry.declaration(scheme).name
    return getattr(scheme, "absolute", None)


def absolute_class(absolute: str) -> Any:
    """The input-embedding scheme ``absolute`` names (``learned``, ``sinusoidal``, a plugin's)."""
    name = ABSOLUTE_SCHEMES.get(absolute, absolute)
    known = ["none", *ABSOLUTE_SCHEMES]
    if name not in registry.positional_encodings:
        name = _scheme_named_by_absolute(absolute) or name
    if name not in registry.positional_encodings:
        raise OptionError(
            f"unknown absolute positions {absolute!r}: pick one of {_choices(known)} or an "
            "input-embedding scheme's name"
        )
    found = registry.scheme(name)
    if getattr(found, "kind", None) != registry.INPUT_EMBEDDING:
        raise OptionError(
            f"absolute={absolute!r} names a {registry.declaration(found).kind} scheme, not input "
            f"positions: pick one of {_choices(known)}"
        )
    return found
