"""The code identities a zoo model of a given configuration runs (its scheme, its parts,
its absolute positions), for the fingerprint (``identity.py`` says why code enters it).

Kept apart from ``identity.py`` because it resolves a configuration's schemes through
the encoder's config module, while the encoder asks ``identity`` for a scheme's
identity: with both in one module the two would import each other.
"""

from __future__ import annotations

from typing import Any

from posharness.models.zoo import identity
from posharness.models.zoo.encoder.config import absolute_class, scheme_class
from posharness.pe import registry
from posharness.plugins.registry import BUILTIN


def code_identity(config: Any) -> dict[str, str]:
    """The identities of the code a model of ``config`` runs, beyond the baseline; empty
    for built-in schemes at version 1 (so old fingerprints stay valid)."""
    parts = {}
    if identity.ENCODER_VERSION != 1:
        parts["encoder"] = f"v{identity.ENCODER_VERSION}"
    used = [("scheme", scheme_class(config.scheme))]
    if registry.declaration(used[0][1]).kind == registry.COMBINATION:  # each part's code too
        used += [(f"part {registry.declaration(p).name}", p) for p in used[0][1].parts]
    if config.absolute != "none":
        used.append(("absolute", absolute_class(config.absolute)))
    for role, scheme in used:
        code = identity.scheme_identity(scheme)
        if registry.declaration(scheme).origin != BUILTIN or code != identity.BASELINE:
            parts[role] = f"{registry.declaration(scheme).name}:{code}"
    return parts
