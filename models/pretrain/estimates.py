"""How long a suggested pretraining takes, said where it is suggested.

An error that said "make one with ``posharness pretrain … --steps 2000``" hid that this
means hours on a small machine (issue 40: 6 h at the default size on 2 cores, found only
by ``--plan-only``). Measuring a warm-up costs a model build and a tokenizer (a minute or
more on 2 cores), too much for an error message, so an advice quotes seconds per step
measured once per size and stored here with the machine and the date, and names the cheap
variant (``--size tiny``, few steps) that gives a first number in minutes.
``posharness pretrain --plan-only`` measures the machine at hand.

How the figures were measured: ``posharness pretrain --model tupe-r --corpus wikitext-2
--size SIZE --steps 2000 --plan-only --device cpu``, the defaults an advice proposes
(global batch 32, 128 tokens, fp32, eager, a 30,522-piece vocabulary; the output layer
over that vocabulary is most of ``tiny``'s cost). The rate grows with the cores' load: on
idle cores expect about half of these times.
"""

from __future__ import annotations

from posharness.base.progress_lines import duration

# Seconds per optimizer step on CPU at the defaults above (``--plan-only``'s warm-up).
MEASURED_ON = "2 cores of an Intel Xeon @ 2.50GHz at load 6, 2026-11-28"
SECONDS_PER_STEP: dict[str, float] = {"tiny": 8.18, "mini": 15.7, "base": 75.0}
DEFAULT_SIZE = "mini"  # what `posharness pretrain` builds without --size
QUICK_STEPS = 100  # the cheap variant: a first number, not a trained model


def estimated_seconds(steps: int, size: str = DEFAULT_SIZE) -> float | None:
    """The stored estimate of ``steps`` steps at ``size``; None for a size not measured."""
    per_step = SECONDS_PER_STEP.get(size)
    return None if per_step is None else per_step * steps


def time_note(steps: int, size: str = DEFAULT_SIZE) -> str:
    """``about 8.7 h at --size mini on 2 CPU cores (…)``, or how to measure it."""
    seconds = estimated_seconds(steps, size)
    if seconds is None:
        return "`--plan-only` says how long it takes here"
    return (
        f"about {duration(seconds)} at --size {size} on a CPU ({MEASURED_ON}; "
        "`--plan-only` measures this machine)"
    )


def quick_variant(name: str, corpus: str = "CORPUS", steps: int = QUICK_STEPS) -> str:
    """The cheap pretraining that gives a first number in minutes, with its time."""
    seconds = estimated_seconds(steps, "tiny")
    assert seconds is not None
    return (
        f"`posharness pretrain --model {name} --corpus {corpus} --size tiny --steps {steps}` "
        f"takes about {duration(seconds)}: minutes, a smoke model rather than a trained one"
    )


def pretraining_advice(name: str, steps: int, corpus: str = "CORPUS") -> str:
    """What an advice proposing ``--steps steps`` at the default size adds: its time and
    the cheap variant, e.g. ``about 8.7 h at --size mini on a CPU (…); for a first number
    `posharness pretrain … --size tiny --steps 100` takes about 14 min: minutes, …``."""
    return f"{time_note(steps)}; for a first number {quick_variant(name, corpus)}"
