"""Run options are declared once (posharness.run.option_schema.RUN_OPTIONS): ``posharness run``'s
click options, ``posharness.evaluate()``'s written-out signature and ``RunConfig`` must
agree with it and with each other, name for name and default for default."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import click
import pytest

from posharness.api import evaluate
from posharness.base.errors import OptionError
from posharness.cli.click_options import from_cli
from posharness.cli.run_command import run
from posharness.contracts.task import TaskSpec, resolve_options
from posharness.contracts.task_options import TaskOption
from posharness.run.config import RunConfig
from posharness.run.option_schema import EVALUATE, RUN, RUN_OPTIONS, config_from, options_of

CLI_ONLY = {"no_cache"}  # folded into cache_dir=None
API_ONLY = {"reporter"}  # a Python callback, no command-line form
BY_NAME = {option.name: option for option in RUN_OPTIONS}


def _normal(name: str, value):
    """A default as the config would hold it (tuples and lists, str and Path alike)."""
    option = BY_NAME[name]
    return option.check(name, value) if option.check else value


def test_the_cli_and_evaluate_take_the_same_options_with_the_same_defaults():
    cli = {param.name: param for param in run.params if param.expose_value}
    signature = inspect.signature(evaluate).parameters
    assert set(cli) - CLI_ONLY == set(signature) - API_ONLY
    context = click.Context(run)  # the defaults as the command reads them, types applied
    given = {name: p.get_default(context) for name, p in cli.items() if not p.required}
    cli_defaults = from_cli(RUN_OPTIONS, given)
    for name, parameter in signature.items():
        if name in API_ONLY:
            continue
        if parameter.default is inspect.Parameter.empty:  # a required argument
            assert cli[name].required, name
            continue
        assert not cli[name].required, name
        assert _normal(name, cli_defaults[name]) == _normal(name, parameter.default), name
        assert parameter.default == BY_NAME[name].default, name


def test_run_config_has_a_field_per_option_that_reaches_the_plan():
    fields = {field.name: field for field in dataclasses.fields(RunConfig)}
    assert set(fields) == {o.name for o in options_of(EVALUATE) if o.in_config}
    # RunConfig's own defaults are the checked API defaults, except cache_dir: RunConfig()
    # built directly means no cache, evaluate()'s "default" means the user cache folder.
    for name, field in fields.items():
        if name in {"models", "tasks", "cache_dir"}:
            continue
        default = (
            field.default_factory()
            if field.default_factory is not dataclasses.MISSING
            else field.default
        )  # noqa: E501
        assert default == _normal(name, BY_NAME[name].default), name


def test_every_option_has_help_and_a_command():
    for option in RUN_OPTIONS:
        assert option.commands <= {RUN, EVALUATE}, option.name  # empty: both
        assert option.help, option.name


def test_config_from_checks_api_values_in_one_line():
    given = {"toeplitz": {"controls": 5}}
    config = config_from(
        {
            "models": "minilm",
            "tasks": ["toeplitz"],
            "seeds": 3,
            "cache_dir": None,
            "task_args": given,
        }
    )
    assert config.models == ["minilm"] and config.seeds == [3]
    assert config.output_dir == Path("results") and config.cache_dir is None
    assert config.task_args == {"toeplitz": {"controls": "5"}}
    for bad in ({"limit": "5"}, {"seeds": ["a"]}, {"overwrite": "yes"}, {"cpus_per_cell": "1"}):
        with pytest.raises(OptionError) as caught:
            config_from({"models": "m", "tasks": "t", **bad})
        assert "\n" not in str(caught.value) and next(iter(bad)) in str(caught.value)


def test_task_options_are_declared_with_type_default_and_help():
    spec = TaskSpec("demo", "1", "test", "d", "x", defaults={"plain": 2},
                    options=(TaskOption("words", 100, "Probe words."),))  # fmt: skip
    assert spec.defaults == {"words": 100, "plain": 2}
    assert [(o.name, o.type_name, o.help) for o in spec.options] == [
        ("words", "int", "Probe words."),
        ("plain", "int", ""),
    ]
    assert resolve_options(spec, {"words": "7"}) == {"words": 7, "plain": 2}
    with pytest.raises(OptionError) as caught:
        resolve_options(spec, {"wrods": "7"})
    assert "words (int, default 100: Probe words.)" in str(caught.value)
    with pytest.raises(TypeError):
        TaskOption("n", 1, type=float)  # a declared type never changes a resolved value
