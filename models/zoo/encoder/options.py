"""Zoo options typed from ``KEY=VALUE`` text, for ``pretrain`` and ``init=random`` alike.

A researcher changes one positional option at a time (the T5 bucket count, TISA's
kernels, the attenuation's w and s, TUPE's tie-cls) and must do it the same way whether
the model is about to be pretrained or measured untrained. ``PEConfig`` already knows
each option's type, so the text is converted by its annotation here; the configuration's
own validation then judges the values.

Chen et al. describe BERT-A* by the geometry it should have, not by w and s, so
``locality=`` and ``symmetry=`` are accepted for the attenuated schemes and turned into
Eq. 8's parameters by ``fit_attenuation`` at ``fit_length`` tokens (128 unless given,
the length of the identical-word probe).

The option names and their types are in ``posharness.models.zoo.option_names``, which
imports neither torch nor transformers: checking a name costs no import of the zoo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.attenuation import fit_attenuation
from posharness.models.zoo.encoder.presets import NAMED_MODELS

# The names and types live in a module that imports no torch, so that a planner checks a
# --model-arg before the zoo is imported; re-exported here for the zoo's own callers.
from posharness.models.zoo.option_names import (  # noqa: F401 (re-exported)
    GEOMETRY_KEYS,
    OPTION_TYPES,
    scheme_option_types,
)

_ATTENUATED = ("attenuated", "sequence")
_TABLES = ("attenuated-table", "sequence-table")  # fitted at the model's positions
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


def pe_options(name: str, pairs: Mapping[str, str]) -> dict[str, Any]:
    """``PEConfig`` overrides for zoo model ``name`` from the user's ``KEY=VALUE`` pairs.

    A plugin scheme's own options are typed by their declared defaults (``register_pe``).
    """
    types = {**scheme_option_types(name, pairs), **OPTION_TYPES}
    unknown = sorted(set(pairs) - set(types) - set(GEOMETRY_KEYS))
    if unknown:
        raise OptionError(
            f"unknown zoo option {unknown[0]!r}: {name} takes {', '.join(_options_of(name))}"
            ", or locality=/symmetry= for an attenuated scheme"
        )
    options = {key: _typed(key, value, types[key]) for key, value in pairs.items() if key in types}
    geometry = {key: pairs[key] for key in GEOMETRY_KEYS if key in pairs}
    if geometry:
        options.update(_fitted_attenuation(name, geometry, options))
    return options


def _options_of(name: str) -> list[str]:
    """The options model ``name`` takes: the model fields, then its scheme's own."""
    from posharness.models.zoo.encoder.presets import scheme_options_of

    generic, own = scheme_options_of(name)
    return [*sorted(set(generic) & set(OPTION_TYPES)), *own]


def _typed(key: str, text: str, annotation: str) -> Any:
    text = text.strip()
    if "None" in annotation and text.lower() in ("none", "null"):
        return None
    base = annotation.split("|")[0].strip()
    if base == "bool":
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise OptionError(f"zoo option {key}={text!r}: write true or false")
    if base in ("int", "float"):
        try:
            return int(text) if base == "int" else float(text)
        except ValueError:
            raise OptionError(f"zoo option {key}={text!r}: expected a number ({base})") from None
    return text


def _fitted_attenuation(
    name: str, geometry: Mapping[str, str], options: Mapping[str, Any]
) -> dict[str, float]:
    scheme = NAMED_MODELS.get(name, {}).get("scheme")
    if scheme in _TABLES:
        return _table_geometry(geometry)
    if scheme not in _ATTENUATED:
        raise OptionError(
            f"locality=/symmetry= set the attenuation of bert-a-star models; {name} has "
            f"scheme {scheme}: drop them"
        )
    clash = sorted({"attenuation_w", "attenuation_s"} & set(options))
    if clash:
        raise OptionError(
            f"give either locality=/symmetry= or {clash[0]}=, not both: the fit sets w and s"
        )
    if "locality" not in geometry:
        raise OptionError("symmetry= needs locality= too: the fit sets w from the locality")
    locality = _typed("locality", geometry["locality"], "float")
    symmetry = _typed("symmetry", geometry.get("symmetry", "1"), "float")
    length = _typed("fit_length", geometry.get("fit_length", "128"), "int")
    try:
        w, s = fit_attenuation(locality, symmetry, length)
    except ValueError as exc:
        raise OptionError(f"locality={locality}, symmetry={symmetry}: {exc}") from None
    return {"attenuation_w": w, "attenuation_s": s}


def _table_geometry(geometry: Mapping[str, str]) -> dict[str, float]:
    """A weight table's target geometry: the table fits w and s itself, at the model's n
    positions (Chen et al. §3.3.2), so a separate fit length would contradict it."""
    if "fit_length" in geometry:
        raise OptionError(
            "fit_length= does not apply to a positional weight table: it is fitted at the "
            "model's positions (max_position_embeddings); drop fit_length"
        )
    if "locality" not in geometry:
        raise OptionError("symmetry= needs locality= too: the fit sets w from the locality")
    return {
        "table_locality": _typed("locality", geometry["locality"], "float"),
        "table_symmetry": _typed("symmetry", geometry.get("symmetry", "1"), "float"),
    }
