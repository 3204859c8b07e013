"""``posharness build-probes shuffle``: the word-swap probe sets, written to a folder,
plugged into the CLI through the ``posharness.commands`` entry point group."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from posharness.base.errors import OptionError
from posharness.cli.console import console
from posharness.cli.options import split_commas


@click.command(name="shuffle")
@click.option(
    "--snli",
    "snli",
    type=click.Path(path_type=Path),
    required=True,
    help="SNLI jsonl with constituency parses, e.g. snli_1.0_test.jsonl.",
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the jsonl files."
)
@click.option("--seed", default=0, show_default=True, help="Seed of every shuffle.")
@click.option(
    "--probes",
    "probe_names",
    multiple=True,
    metavar="NAMES",
    help="Subset, comma-separated [default: all six].",
)
def build_probes_shuffle(snli: Path, out: Path, seed: int, probe_names: tuple[str, ...]) -> None:
    """Shuffle-3..6, Random and Shuffle-SR (Chen et al. 2023 §3.5) from SNLI pairs."""
    from posharness.tasks.shuffle.probes import PROBES, build_probes, write_probes
    from posharness.tasks.shuffle.snli import read_snli

    if seed < 0:
        raise OptionError(f"--seed {seed}: must not be negative")
    build = build_probes(read_snli(snli), seed, split_commas(probe_names) or PROBES)
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
