"""How long a suggested pretraining takes, said where it is suggested.

An error that said "make one with ``posharness pretrain … --steps 2000``" hid that this
means hours on a small machine (issue 40), and the advice that followed it offered a
``--size tiny --steps 100`` smoke model that took 10.5 min and learned nothing (final loss
9.40, about ln 30,522: the unigram guess) while the one recipe the repository shows
learning where to attend on a CPU, ``--recipe cpu-hour --size narrow``, went unnamed
(issue 45). The advice now leads with that recipe and its measured time, then the smoke
model, then the default.

Measuring a warm-up costs a model build and a tokenizer (a minute or more on 2 cores), too
much for an error message, so every time here is a recorded one, read from
:mod:`posharness.base.timings` (the one table of times the project quotes) with the
machine, the load and the date it was measured at, and said to be measured elsewhere:
the machine at hand may be faster or slower, and ``posharness pretrain --plan-only``
measures it (where it cannot, on a machine without the corpus or the device, the
recorded figure is all there is, and the advice still gives it).
"""

from __future__ import annotations

from pathlib import Path

from posharness.base.timings import (
    CPU_HOUR_ALONE,
    CPU_HOUR_SHARED,
    PRETRAIN_SECONDS_PER_STEP,
    TWO_CORES,
    pretrain_steps,
)

# Seconds per optimizer step on CPU at the default settings (kept under its old name).
SECONDS_PER_STEP: dict[str, float] = PRETRAIN_SECONDS_PER_STEP
MEASURED_ON = TWO_CORES
DEFAULT_SIZE = "mini"  # what `posharness pretrain` builds without --size
QUICK_STEPS = 100  # the smoke variant: a model that runs, not one that has learned
LEARNING_RECIPE, LEARNING_SIZE = "cpu-hour", "narrow"  # learns order on a CPU (issue 41)
ELSEWHERE = (
    f"times recorded elsewhere, on {TWO_CORES}, not measured here: "
    "`posharness pretrain --plan-only` measures this machine"
)


def estimated_seconds(steps: int, size: str = DEFAULT_SIZE) -> float | None:
    """The stored estimate of ``steps`` steps at ``size``; None for a size not measured."""
    timing = pretrain_steps(size, steps)
    return None if timing is None else timing.seconds


def time_note(steps: int, size: str = DEFAULT_SIZE) -> str:
    """``about 8.7 h on 2 CPU cores at load 6, 15.7 s a step at --size mini``, or how to
    measure it."""
    timing = pretrain_steps(size, steps)
    if timing is None:
        return "`--plan-only` says how long it takes here"
    return f"{timing.quote()} at --size {size}"


def learning_command(name: str, corpus: str = "CORPUS") -> str:
    """The pretraining that learns where to attend on a CPU (``--recipe cpu-hour``)."""
    return (
        f"posharness pretrain --model {name} --recipe {LEARNING_RECIPE} "
        f"--size {LEARNING_SIZE} --corpus {corpus}"
    )


def learning_time() -> str:
    """``about 5–7 min on 2 CPU cores with nothing else running, …; about 14 min …``."""
    return f"{CPU_HOUR_ALONE.quote()}; {CPU_HOUR_SHARED.quote()}"


def quick_variant(name: str, corpus: str = "CORPUS", steps: int = QUICK_STEPS) -> str:
    """The smoke pretraining: the whole path in minutes, a model that has learned nothing."""
    timing = pretrain_steps("tiny", steps)
    assert timing is not None
    return (
        f"`posharness pretrain --model {name} --corpus {corpus} --size tiny --steps {steps}` "
        f"({timing.quote()}) is a smoke model: it runs every command but learns nothing"
    )


def pretraining_advice(name: str, steps: int, corpus: str = "CORPUS") -> str:
    """What an advice that lacks a checkpoint of ``name`` proposes, in order: the recipe
    that learns order on a CPU with its recorded time, the smoke model, then the default
    at ``steps`` steps with its time."""
    return (
        f"`{learning_command(name, corpus)}` learns where to attend "
        f"({learning_time()}); {quick_variant(name, corpus)}; the default "
        f"`posharness pretrain --model {name} --corpus {corpus} --steps {steps}` takes "
        f"{time_note(steps)} ({ELSEWHERE})"
    )


def missing_checkpoint_advice(name: str, runs: Path, steps: int, corpus: str = "CORPUS") -> str:
    """The one line a zoo name without a checkpoint in ``runs`` fails with: how to make
    one (:func:`pretraining_advice`), or the other two ways to run it."""
    return (
        f"model {name} has no checkpoint in {runs}: make one: "
        f"{pretraining_advice(name, steps, corpus)} ({corpus}: a plain-text file or a "
        f"WikiExtractor folder; --model {name} then uses it); or pass "
        f"{name}@CHECKPOINT_FOLDER, or add --model-arg init=random for an untrained one"
    )
