"""The lengths a length task is asked for, and which of them a model can take.

One home for the three length tasks (``passkey``, ``length_mlm``, geometry's
``length_geometry``): the same parsing, the same *not applicable* reason for a length past
the model's positions (a reason, never a zero), and the same one-line error when none fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from posharness.base.errors import OptionError


def parse_lengths(raw: str | int, task: str = "passkey") -> tuple[int, ...]:
    """``"64,128,256"`` as lengths; anything but positive whole numbers is one line."""
    parts = [part.strip() for part in str(raw).split(",")]
    lengths = []
    for part in parts:
        if not part.isdigit() or int(part) < 1:
            raise OptionError(
                f"--task-arg {task}.lengths={raw}: lengths must be positive whole numbers "
                f"separated by commas ({part!r} is not), e.g. {task}.lengths=64,128,256,512"
            )
        lengths.append(int(part))
    return tuple(sorted(set(lengths)))


def beyond_model(length: int, model: Any) -> str | None:
    """Why ``length`` tokens cannot be scored on ``model``, or None when they can."""
    if length > model.max_length:
        return (
            f"not applicable: {length} tokens exceed the model's {model.max_length} "
            "positions (special tokens included)"
        )
    return None


def no_length_applies(
    task: str, lengths: Sequence[int], model: Any, skipped: Mapping[Any, str]
) -> OptionError:
    """The error when every asked length was skipped, each with its reason."""
    reasons = "; ".join(f"{length}: {why}" for length, why in skipped.items())
    return OptionError(
        f"{task}: no length in {','.join(map(str, lengths))} applies to {model.spec} "
        f"({reasons}); pass --task-arg {task}.lengths= with lengths up to {model.max_length}"
    )
