"""``posharness check-pe``: the zoo family's command, plugged into the CLI through the
``posharness.commands`` entry point group."""

from __future__ import annotations

from typing import Any

import click

from posharness.cli.click_options import include_option


@click.command(name="check-pe")
@click.argument("names", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Check every registered PE model.")
@click.option(
    "--model-arg",
    "model_args",
    multiple=True,
    metavar="KEY=VALUE",
    help="A scheme option, e.g. relative_buckets=64; repeatable.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the tiny random model.")
@include_option
def check_pe(names: tuple[str, ...], every: bool, model_args: tuple[str, ...], seed: int) -> None:
    """Verify PE models on a tiny random model in float64: seeded init, structure, positions
    used, logits = gamma + delta, modes as defined, SDPA = eager, save/reload, the card's
    count, and each property the scheme claims for its term (register_pe claims=)."""
    from posharness.base.errors import OptionError
    from posharness.cli.console import console
    from posharness.models.zoo.check import PECheckError, check_pe
    from posharness.models.zoo.encoder.options import pe_options
    from posharness.pe import variants
    from posharness.run.option_schema import parse_model_args

    chosen = list(variants()) if every else list(names)
    if not chosen:
        raise OptionError("check-pe needs a PE model name (e.g. check-pe tupe-r) or --all")
    pairs = parse_model_args(model_args)
    failures: list[str] = []
    for name in chosen:
        options: dict[str, Any] = pe_options(name, pairs)
        for outcome in check_pe(name, seed, **options):
            mark = "[green]ok[/green]" if outcome.passed else "[red]FAIL[/red]"
            line = f"{name:<18} {outcome.name:<9} {mark}  {outcome.detail}"
            console().print(line, soft_wrap=True)
            if not outcome.passed:
                failures.append(f"{name}: {outcome.name}: {outcome.detail}")
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise PECheckError(failures[0] + more)
