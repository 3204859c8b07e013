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
    assert f"about {hours:.1f} h at --size {DEFAULT_SIZE}" in advice
    minutes = re.search(r"--size tiny --steps \d+` takes about (\d+) min: minutes", advice)
    assert minutes and int(minutes[1]) == round(estimated_seconds(QUICK_STEPS, "tiny") / 60)


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
