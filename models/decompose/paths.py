"""Which attention code runs: the fused ``scaled_dot_product_attention`` kernel or eager.

Every mode changes only which logits meet the softmax, and every family can hand those
logits to SDPA as (query, key, additive mask) — the modified queries/keys for gamma, the
positional term in the mask, zero queries where gamma is dropped (docs/attention_paths.md).
SDPA never materialises the attention weights, so a call that must return them (the
analysis tasks) runs eager. The user's choice, ``--model-arg attention=...``:

* ``auto`` (default): SDPA whenever the weights are not requested, eager when they are;
* ``eager``: always eager (today's path), for comparisons and debugging;
* ``sdpa``: SDPA or an error — a request for weights, or a model whose attention cannot
  be fused, is refused in one line instead of silently running eager.

The paths agree to float tolerance, not bit for bit, so a cell or cache entry computed
through SDPA is keyed apart from an eager one (``posharness.contracts.adapter.mode_identity``), and
each result records the path that ran (``ModeInfo.attention_path``).
"""

from __future__ import annotations

from posharness.base.errors import OptionError

AUTO = "auto"
EAGER = "eager"
SDPA = "sdpa"
CHOICES = (AUTO, EAGER, SDPA)
ATTENTION_KEY = "attention"  # the --model-arg that carries the choice


def attention_choice(raw: str | None) -> str:
    """The user's ``--model-arg attention=`` value, checked (None: ``auto``)."""
    if raw is None:
        return AUTO
    choice = raw.strip().lower()
    if choice not in CHOICES:
        raise OptionError(f"--model-arg attention={raw}: pick one of {', '.join(CHOICES)}")
    return choice


def resolve_path(choice: str, want_weights: bool, eager_reason: str | None = None) -> str:
    """The path a call runs under ``choice``; ``eager_reason`` says why a model can't fuse."""
    if choice == SDPA:
        if want_weights:
            raise OptionError(
                "--model-arg attention=sdpa cannot return attention weights, which this "
                "task reads: use attention=auto (eager only where weights are needed)"
            )
        if eager_reason is not None:
            raise OptionError(f"--model-arg attention=sdpa: {eager_reason}: use attention=auto")
    if choice == EAGER or want_weights or eager_reason is not None:
        return EAGER
    return SDPA
