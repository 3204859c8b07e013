"""An advice that proposes a pretraining says how long it takes and names a variant of
minutes (issue 40, part 5): the stored per-size rates, the time they give for the
suggested 2000 steps, and a cheap command that pretrain's own options accept."""

from __future__ import annotations

import re
import shlex

import click

from posharness.models.pretrain.commands import pretrain
from posharness.models.pretrain.estimates import (
    DEFAULT_SIZE,
    QUICK_STEPS,
    SECONDS_PER_STEP,
    estimated_seconds,
    pretraining_advice,
)
from posharness.models.zoo.encoder.config import SIZES


def test_every_stored_rate_is_of_a_real_size_and_grows_with_it() -> None:
    assert set(SECONDS_PER_STEP) <= set(SIZES) and DEFAULT_SIZE in SECONDS_PER_STEP
    assert SECONDS_PER_STEP["tiny"] < SECONDS_PER_STEP["mini"] < SECONDS_PER_STEP["base"]


def test_the_advice_states_hours_for_the_default_and_minutes_for_the_cheap_variant() -> None:
    advice = pretraining_advice("tupe-r", 2000)
    hours = estimated_seconds(2000) / 3600
    assert f"about {hours:.1f} h on 2 CPU cores" in advice and f"at --size {DEFAULT_SIZE}" in advice
    minutes = re.search(r"--size tiny --steps \d+` \(about (\d+) min", advice)
    assert minutes and int(minutes[1]) == round(estimated_seconds(QUICK_STEPS, "tiny") / 60)


def test_the_advice_leads_with_the_recipe_that_learns_then_the_smoke_model() -> None:
    """Issue 45: `--recipe cpu-hour --size narrow` learns order on a CPU in minutes; the
    smoke model learned nothing (loss 9.40, the unigram guess) and comes second."""
    advice = pretraining_advice("tupe-r", 2000)
    order = [
        advice.index("--recipe cpu-hour --size narrow"),
        advice.index("--size tiny --steps"),
        advice.index("--steps 2000`"),
    ]
    assert order == sorted(order)
    assert "learns nothing" in advice and "recorded elsewhere" in advice


def test_the_learning_command_is_one_pretrain_accepts() -> None:
    from posharness.models.pretrain.estimates import learning_command

    argv = shlex.split(learning_command("tupe-r"))[2:]
    context = pretrain.make_context("pretrain", argv)  # parses, runs nothing
    assert context.params["recipe"] == "cpu-hour" and context.params["size"] == "narrow"


def test_the_cheap_variant_is_a_command_pretrain_accepts() -> None:
    command = re.search(
        r"`(posharness pretrain [^`]+--size tiny[^`]*)`", pretraining_advice("nope", 2000)
    )
    assert command
    argv = shlex.split(command[1])[2:]
    context = pretrain.make_context("pretrain", argv)  # parses, runs nothing
    assert context.params["size"] == "tiny" and context.params["steps"] == QUICK_STEPS
    assert isinstance(context.command, click.Command)


def test_a_size_without_a_stored_rate_points_to_plan_only() -> None:
    from posharness.models.pretrain.estimates import time_note

    assert estimated_seconds(10, "small") is None
    assert "--plan-only" in time_note(10, "small")
