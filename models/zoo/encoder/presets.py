"""``config_for``: a registered model name at a size preset, as a ``PEConfig``.

The names are the PE variants of the registry (``posharness.pe.register_variant``; the
built-in ones in ``posharness.models.zoo.variants``): ``NAMED_MODELS`` is a live view of
them, so a plugin's models are named exactly like the papers' ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.config import SIZES, PEConfig, scheme_class
from posharness.pe import registry
from posharness.plugins.registry import BUILTIN, INCLUDE


class _NamedModels(Mapping[str, dict[str, Any]]):
    """Model name -> {"scheme": ..., options}, read from the variant registry on each use."""

    def __getitem__(self, name: str) -> dict[str, Any]:
        if name not in registry.pe_variants:
            raise KeyError(name)
        found = registry.variant(name)
        return {"scheme": found.scheme, **found.options}

    def __iter__(self) -> Iterator[str]:
        return iter(registry.pe_variants.names())

    def __len__(self) -> int:
        return len(registry.pe_variants.names())


NAMED_MODELS: Mapping[str, dict[str, Any]] = _NamedModels()

# PEConfig's own fields plus the label fields every transformers config takes.
_NOT_SET_BY_HAND = {"name", "size", "pe_options", "pe_origin"}
_OPTION_FIELDS = (frozenset(vars(PEConfig)["__annotations__"]) - _NOT_SET_BY_HAND) | {
    "num_labels",
    "id2label",
    "label2id",
    "problem_type",
}


def config_for(
    name: str, size: str = "mini", vocab_size: int = 30522, **overrides: Any
) -> PEConfig:
    """The configuration of registered model ``name`` at preset ``size``.

    ``overrides`` set any ``PEConfig`` field (e.g. ``max_position_embeddings=256``,
    ``attenuation_w=0.1``) or an option the scheme declares; an unknown one is refused
    rather than silently stored.
    """
    if name not in NAMED_MODELS:
        raise OptionError(
            f"unknown PE model {name!r}: pick one of {', '.join(NAMED_MODELS)}, or register "
            "one with posharness.pe.register_pe / register_variant (docs/new_pe.md)"
        )
    if size not in SIZES:
        raise OptionError(f"unknown size {size!r}: pick one of {', '.join(SIZES)}")
    named = dict(NAMED_MODELS[name])
    scheme = scheme_class(named["scheme"])
    declared = registry.declaration(scheme)
    plugin_options = {k: v for k, v in {**named, **overrides}.items() if _scheme_only(k, declared)}
    unknown = sorted(set(overrides) - _OPTION_FIELDS - set(plugin_options))
    if unknown:
        raise OptionError(
            f"unknown PEConfig option(s) {', '.join(unknown)}: pick from "
            f"{', '.join(sorted(_OPTION_FIELDS | set(declared.defaults)))}"
        )
    foreign = sorted(set(overrides) & _scheme_option_fields() - set(declared.defaults))
    if foreign:
        takes = ", ".join(declared.defaults) or "no options"
        raise OptionError(
            f"option {foreign[0]} does not apply to {name} (scheme {declared.name} takes "
            f"{takes}): drop it, or pick a model whose scheme takes it"
        )
    fields = {**SIZES[size], **named, "vocab_size": vocab_size, **overrides}
    for key in plugin_options:
        fields.pop(key)
    if plugin_options:
        fields["pe_options"] = plugin_options
    if declared.origin != BUILTIN:
        fields["pe_origin"] = origin_record(declared, scheme)
    return PEConfig(name=name, size=size, **fields)


def scheme_options_of(name: str) -> tuple[list[str], list[str]]:
    """(the model fields any zoo model takes, the options of ``name``'s own scheme); every
    field when ``name`` is not a zoo model."""
    if name not in NAMED_MODELS:
        return sorted(_OPTION_FIELDS), []
    declared = registry.declaration(scheme_class(NAMED_MODELS[name]["scheme"]))
    return sorted(_OPTION_FIELDS - _scheme_option_fields()), list(declared.defaults)


def _scheme_option_fields() -> set[str]:
    """The ``PEConfig`` fields that are some built-in scheme's options (relative_buckets,
    tisa_kernels, ...): given to a model whose scheme does not take them, they would be
    stored in its config.json and change nothing but its fingerprint."""
    fields = set()
    for entry in registry.positional_encodings.entries():
        if entry.origin == BUILTIN:
            fields |= set(registry.declaration(entry.obj).defaults) & _OPTION_FIELDS
    return fields


def _scheme_only(key: str, declared: registry.Declaration) -> bool:
    """An option the scheme declares that is no ``PEConfig`` field (a plugin's)."""
    return key in declared.defaults and key not in _OPTION_FIELDS


def origin_record(declared: registry.Declaration, scheme: Any) -> dict[str, str]:
    """What a checkpoint stores of where its scheme came from: the included file's name or
    the distribution and its version, the code's identity (declared version or source
    hash), and the fix when the plugin is gone."""
    from posharness.models.zoo.identity import scheme_identity

    code = scheme_identity(scheme)
    if declared.origin == INCLUDE:
        from pathlib import Path

        file = Path(declared.source).name
        return {
            "origin": "the file",
            "source": file,
            "code": code,
            "fix": f"pass --include {file}",
        }
    from importlib.metadata import PackageNotFoundError, version

    dist = declared.source
    try:
        release = f"{dist} {version(dist)}"
    except PackageNotFoundError:
        release = dist
    return {
        "origin": "the plugin distribution",
        "source": release,
        "code": code,
        "fix": f"pip install {dist}",
    }
