"""How check-pe fails: its exception type, and one line for an exception a scheme's code
raised during a check (what it likely means: a plain tensor where a parameter belongs, a
term of the wrong shape; then what torch said).

The lowest of the check modules: ``check`` (the checks), ``check_terms`` (reading a term)
and ``check_claims`` (the claims) all raise ``PECheckError`` from here, and none of them
imports a module above it, so the three import one way (issue 45, part 4).
"""

from __future__ import annotations

from posharness.base.errors import PosharnessError


class PECheckError(PosharnessError):
    """A registered positional encoding fails one of ``check_pe``'s checks."""


# Messages of faults a scheme's author makes, read from what torch raises, and what they mean.
_STRUCTURAL = (
    (
        "meta tensor",
        "a tensor the scheme holds as a plain attribute, not an nn.Parameter or a registered "
        "buffer (from_pretrained builds the model on the meta device and cannot place it)",
    ),
    (
        "expected device meta",
        "a tensor the scheme holds as a plain attribute, not an nn.Parameter or a registered "
        "buffer (from_pretrained builds the model on the meta device and cannot place it)",
    ),
    (
        "size of tensor",
        "a term of the wrong shape: a LogitTerm returns [B or 1, H or 1, n, n], an input "
        "embedding [B or 1, n, D], a query/key transform the shape of its input",
    ),
    (
        "must match the size",
        "a term of the wrong shape: a LogitTerm returns [B or 1, H or 1, n, n], an input "
        "embedding [B or 1, n, D], a query/key transform the shape of its input",
    ),
    ("shape", "a tensor of the wrong shape in the scheme's forward"),
)


def raised_line(where: str, exc: Exception) -> str:
    """One line for an exception from a scheme's code: what it likely means, then what
    torch said (its first line)."""
    said = (str(exc).strip().splitlines() or [""])[0]
    meaning = next((text for key, text in _STRUCTURAL if key in said), None)
    head = f"{where} raised {type(exc).__name__}"
    return f"{head}: {meaning}: {said}" if meaning else f"{head}: {said}"
