"""Option decorators and parsers shared by every command, so ``run`` and a family's
commands (``pretrain``) declare ``--model-arg``, ``--device`` and ``--include`` once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from posharness.base.errors import OptionError

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def split_commas(values: tuple[str, ...]) -> list[str]:
    """``("a,b", "c")`` → ``["a", "b", "c"]``: repeatable options also take lists."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


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
        help="A .py file or folder whose @register_model/@register_task entries to load.",
    )(command)


def model_arg_option(help_text: str) -> Decorator:
    """``--model-arg KEY=VALUE``, repeatable; the command parses it with
    :func:`parse_model_args`."""
    return click.option(
        "--model-arg", "model_args", multiple=True, metavar="KEY=VALUE", help=help_text
    )


def device_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--device", default="auto", show_default=True, metavar="auto|cpu|cuda[:i]|mps"
    )(command)


def parse_model_args(items: tuple[str, ...]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise OptionError(
                f"--model-arg {item!r}: write KEY=VALUE, e.g. absolute=positional-stream"
            )
        parsed[key.strip()] = value.strip()
    return parsed


def parse_task_args(items: tuple[str, ...]) -> dict[str, dict[str, str]]:
    parsed: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        task, dot, option = key.partition(".")
        if not sep or not dot or not task or not option:
            raise OptionError(
                f"--task-arg {item!r}: write TASK.KEY=VALUE, e.g. toeplitz.controls=50"
            )
        parsed.setdefault(task.strip(), {})[option.strip()] = value.strip()
    return parsed


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise OptionError(f"--seed {text!r}: give integers, e.g. 0 or 0,1,2") from None
    if not seeds:
        raise OptionError("--seed is empty: give at least one integer")
    return list(dict.fromkeys(seeds))


def path_option(*names: str, **kwargs: Any) -> Decorator:
    return click.option(*names, type=click.Path(path_type=Path), **kwargs)
