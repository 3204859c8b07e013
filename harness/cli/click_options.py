"""Click options derived from declared :class:`~posharness.run.option_schema.Option` lists, and
the options every command shares (``--include``), so ``run``, ``pretrain`` and the
``build-probes`` commands write no option twice."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from posharness.run.option_schema import (
    SAME,
    Option,
    options_of,
    parse_model_args,
    parse_seeds,
    parse_task_args,
    split_commas,
)

__all__ = [
    "click_options",
    "from_cli",
    "include_option",
    "parse_model_args",
    "parse_seeds",
    "parse_task_args",
    "path_option",
    "results_option",
    "split_commas",
]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def click_options(options: Sequence[Option], command: str | None = None) -> Decorator:
    """Every option (of ``command``, when given) as a click option, in declared order."""
    chosen = options if command is None else options_of(command, options)

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(chosen):
            function = click.option(option.cli_flag, option.name, **_click_kwargs(option))(function)
        return function

    return decorate


def _click_kwargs(option: Option) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"help": option.help or None, "metavar": option.metavar}
    if option.type is bool:
        return {"is_flag": True, "help": option.help or None}
    if option.choices:
        kwargs["type"] = click.Choice(list(option.choices))
    elif option.type is Path:
        kwargs["type"] = click.Path(path_type=Path)
    elif option.type is not str:
        kwargs["type"] = option.type
    if option.multiple:
        kwargs["multiple"] = True
    if option.required:
        kwargs["required"] = True
    else:
        kwargs["default"] = option.default if option.cli_default is SAME else option.cli_default
        kwargs["show_default"] = option.show_default
    if option.envvar:
        kwargs["envvar"] = option.envvar
    return kwargs


def from_cli(options: Sequence[Option], values: Mapping[str, Any]) -> dict[str, Any]:
    """What click read, as the API's values: parsed, and ``None`` (not given) → default."""
    by_name = {option.name: option for option in options}
    api: dict[str, Any] = {}
    for name, value in values.items():
        option = by_name[name]
        if value is None:
            api[name] = option.default
        else:
            api[name] = option.parse(value) if option.parse else value
    return api


def include_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--include PATH`` on every command: import a .py file or folder of plugins first."""

    def load(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
        if value:
            from posharness.plugins import include_paths

            include_paths(value)
        return value

    return click.option(
        "--include",
        "include",
        multiple=True,
        metavar="PATH",
        expose_value=False,
        is_eager=True,
        callback=load,
        help="A .py file or folder of plugins to import first: its @register_pe, "
        "@register_variant, @register_model and @register_task entries (docs/new_pe.md).",
    )(command)


def format_option(
    choices: tuple[str, ...], help: str | None = None, dest: str = "output_format"
) -> Decorator:
    """``--format`` with its choices, the first being the default: one spelling for every
    command that prints something a script may want to read."""
    return click.option(
        "--format",
        dest,
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help=help,
    )


def path_option(*names: str, **kwargs: Any) -> Decorator:
    return click.option(*names, type=click.Path(path_type=Path), **kwargs)


def results_option(help: str) -> Decorator:
    """``--results DIR``, repeatable: where the boards' result files are now. ``compare``
    and ``report`` take the same folders under the same name and type, so they declare
    the option once; only the help, which names each command's fallback, differs."""
    return path_option("--results", "results", multiple=True, metavar="DIR", help=help)
