"""``posharness build-probes shuffle``: the word-swap probe sets, written to a folder,
plugged into the CLI through the ``posharness.commands`` entry point group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from posharness.base.errors import OptionError
from posharness.cli.click_options import click_options, from_cli, include_option
from posharness.cli.console import console
from posharness.run.option_schema import Option, split_commas

# build-probes shuffle's options, declared once (posharness.run.option_schema.Option).
BUILD_OPTIONS: tuple[Option, ...] = (
    Option("snli", None, "SNLI jsonl with constituency parses, e.g. snli_1.0_test.jsonl.", Path,
           required=True),
    Option("out", None, "Folder for the jsonl files.", Path, required=True),
    Option("seed", 0, "Seed of every shuffle.", int, show_default=True),
    Option("probe_names", (), "Subset, comma-separated [default: all six].", flag="--probes",
           metavar="NAMES", multiple=True, parse=split_commas),
)  # fmt: skip


@click.command(name="shuffle")
@click_options(BUILD_OPTIONS)
@include_option
def build_probes_shuffle(**values: Any) -> None:
    """Shuffle-3..6, Random and Shuffle-SR (Chen et al. 2023 §3.5) from SNLI pairs."""
    from posharness.tasks.shuffle.probes import PROBES, build_probes, write_probes
    from posharness.tasks.shuffle.snli import read_snli

    values = from_cli(BUILD_OPTIONS, values)
    seed, out = values["seed"], values["out"]
    if seed < 0:
        raise OptionError(f"--seed {seed}: must not be negative")
    build = build_probes(read_snli(values["snli"]), seed, values["probe_names"] or PROBES)
    written = write_probes(build, out)
    print_probe_summary(build.summary, out, len(written))


def print_probe_summary(summary: dict, out: Path, files: int) -> None:
    """Sizes and exclusions of a probe build, one row per probe."""
    table = Table(title=f"probes from {summary['source']} (seed {summary['seed']})")
    table.add_column("probe", no_wrap=True, min_width=max(map(len, summary["probes"]), default=5))
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("excluded (reason: pairs)", overflow="fold")  # prose wraps, names do not
    for name, probe in summary["probes"].items():
        reasons = ", ".join(f"{k}: {v}" for k, v in probe["excluded"].items()) or "–"
        table.add_row(name, str(probe["size"]), reasons)
    console().print(table)
    console().print(f"wrote {files} files to {out} (parses: {summary['parser']})")
