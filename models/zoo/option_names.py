"""The zoo's option names and their types, importable without torch or transformers.

A typo in ``--model-arg`` (``relative_bucket=64``) is the cheapest mistake to catch and
must be caught first (issue 40, part 4: names, options and sizes before any heavy
import). ``PEConfig`` is a ``transformers.PretrainedConfig`` and the schemes are torch
modules, so reading the option names from them costs the whole import (about 13 s on two
loaded cores); this module holds the same names as plain tables instead:

* ``OPTION_TYPES``: ``PEConfig``'s settable fields and their annotations, the types the
  ``KEY=VALUE`` text is converted to (``encoder/options.py``);
* ``BUILTIN_SCHEME_EXTRAS``: the options a built-in scheme declares with ``register_pe``
  beyond ``PEConfig``'s fields (xPos's gamma and scale base, the weight table's target
  geometry).

``tests/unit/models/zoo/test_option_names.py`` compares both tables with ``PEConfig`` and
the built-in declarations, so they cannot drift apart. A plugin scheme's options are read
from its declaration, importing the plugin (its own cost, paid only when a key is not a
known name).
"""

from __future__ import annotations

from collections.abc import Mapping

from posharness.pe import registry
from posharness.plugins.registry import BUILTIN

# PEConfig's fields a user may set (models/zoo/encoder/config.py), with their annotations;
# name, size, scheme, vocab_size, pad_token_id, pe_options and pe_origin are fixed by the
# registered name, the size preset or the vocabulary, never by hand.
OPTION_TYPES: dict[str, str] = {
    "hidden_size": "int",
    "num_hidden_layers": "int",
    "num_attention_heads": "int",
    "intermediate_size": "int",
    "hidden_act": "str",
    "hidden_dropout_prob": "float",
    "attention_probs_dropout_prob": "float",
    "max_position_embeddings": "int",
    "type_vocab_size": "int",
    "layer_norm_eps": "float",
    "initializer_range": "float",
    "tie_word_embeddings": "bool",
    "classifier_dropout": "float | None",
    "absolute": "str | None",
    "relative_buckets": "int",
    "relative_max_distance": "int",
    "tie_cls": "bool",
    "tisa_kernels": "int",
    "attenuation_w": "float | None",
    "attenuation_s": "float",
    "attenuation_learnable": "str",
    "rope_theta": "float",
    "shaw_max_distance": "int",
}
# The target geometry of an attenuated scheme (Chen et al. §3.3.2), fitted to w and s.
GEOMETRY_KEYS = ("locality", "symmetry", "fit_length")
# Built-in scheme -> {option: type name} of its declared options that are no PEConfig field.
BUILTIN_SCHEME_EXTRAS: dict[str, dict[str, str]] = {
    "attenuated-table": {"table_locality": "float", "table_symmetry": "float"},
    "sequence-table": {"table_locality": "float", "table_symmetry": "float"},
    "xpos": {"xpos_gamma": "float", "xpos_scale_base": "float"},
}


def scheme_option_types(name: str, pairs: Mapping[str, str]) -> dict[str, str]:
    """Type names of the options model ``name``'s scheme declares beyond ``PEConfig``'s.

    Empty when every key is a known name already (nothing to look up) or ``name`` is no
    zoo model. A built-in scheme's come from ``BUILTIN_SCHEME_EXTRAS`` (no import); a
    plugin scheme's from its declaration.
    """
    if not set(pairs) - set(OPTION_TYPES) - set(GEOMETRY_KEYS):
        return {}
    if name not in registry.pe_variants:
        return {}
    scheme = registry.variant(name).scheme
    if scheme not in registry.positional_encodings:
        return {}  # the unknown scheme is reported where the model is built
    if registry.positional_encodings.entry(scheme).origin == BUILTIN:
        if scheme in BUILTIN_SCHEME_EXTRAS:
            return dict(BUILTIN_SCHEME_EXTRAS[scheme])
        return {}
    defaults = registry.declaration(registry.scheme(scheme)).defaults
    return {key: type(value).__name__ for key, value in defaults.items() if key not in OPTION_TYPES}
