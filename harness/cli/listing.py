"""``posharness list models|tasks``: what is registered, and where it came from."""

from __future__ import annotations

import click

from posharness.cli.options import include_option


@click.command(name="list")
@click.argument("what", type=click.Choice(["models", "tasks"]))
@include_option
def list_command(what: str) -> None:
    """Show registered models or tasks with their origin (built-in, plugin, include)."""
    from posharness.cli.console import print_registry

    print_registry(what)
