"""``posharness pretrain``'s options are declared once (PRETRAIN_OPTIONS, the schema of
posharness.run.option_schema); the ones that fill PretrainSettings must keep its defaults, so the
command line and a Python caller train the same recipe unless told otherwise."""

from __future__ import annotations

import dataclasses

from posharness.models.pretrain.commands import PRETRAIN_OPTIONS, pretrain
from posharness.models.pretrain.loop import PretrainSettings

RESOLVED_FIRST = {"device"}  # "auto" on the command line, resolved before the settings
# No default in the settings: the command requires it unless a --recipe supplies it.
FROM_THE_RECIPE = {"steps"}


def test_options_that_fill_the_settings_keep_their_defaults():
    settings = {field.name: field for field in dataclasses.fields(PretrainSettings)}
    shared = [o for o in PRETRAIN_OPTIONS if o.name in settings and o.name not in RESOLVED_FIRST]
    assert {o.name for o in shared} >= {"steps", "batch_size", "learning_rate", "seed", "bf16"}
    for option in shared:
        if not option.required and option.name not in FROM_THE_RECIPE:
            assert option.default == settings[option.name].default, option.name


def test_the_command_takes_every_declared_option_under_its_flag():
    flags = {param.name: param.opts for param in pretrain.params if param.expose_value}
    assert flags == {option.name: [option.cli_flag] for option in PRETRAIN_OPTIONS}


def test_every_option_says_what_it_does():
    assert [o.name for o in PRETRAIN_OPTIONS if not o.help] == []
