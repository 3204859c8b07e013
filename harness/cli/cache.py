"""``posharness cache info|prune``: see what the feature cache holds and remove entries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from posharness.cli.options import path_option


def _root(cache_dir: Path | None) -> Path:
    from posharness.cache import default_cache_dir
    from posharness.cache_admin import check_cache_folder

    root = cache_dir or default_cache_dir()
    check_cache_folder(root)
    return root


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "–"
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M")


@click.group()
def cache() -> None:
    """See what the feature cache holds, by kind, and remove entries by kind or age."""


@cache.command()
@path_option("--cache-dir", default=None, help="[default: $POSHARNESS_CACHE or the user cache]")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table")
def info(cache_dir: Path | None, output_format: str) -> None:
    """Size, entry count, oldest and newest write of each kind of entry."""
    from rich.table import Table

    from posharness.cache_admin import entries, human_bytes, summarize
    from posharness.cli.console import add_whole_column, console, print_table

    root = _root(cache_dir)
    kinds = summarize(entries(root))
    total = sum(k.bytes for k in kinds)
    if output_format == "json":
        document = {
            "cache": str(root),
            "bytes": total,
            "entries": sum(k.entries for k in kinds),
            "kinds": [
                {"kind": k.kind, "entries": k.entries, "bytes": k.bytes,
                 "oldest": _when(k.oldest), "newest": _when(k.newest)}
                for k in kinds
            ],
        }  # fmt: skip
        click.echo(json.dumps(document, indent=2))
        return
    table = Table(title=f"cache {root}: {human_bytes(total)}")
    add_whole_column(table, "kind", [k.kind for k in kinds])
    for header, cells in (
        ("entries", [str(k.entries) for k in kinds]),
        ("size", [human_bytes(k.bytes) for k in kinds]),
        ("oldest write", [_when(k.oldest) for k in kinds]),
        ("newest write", [_when(k.newest) for k in kinds]),
    ):
        add_whole_column(table, header, cells, justify="right")
    for k in kinds:
        table.add_row(
            k.kind, str(k.entries), human_bytes(k.bytes), _when(k.oldest), _when(k.newest)
        )
    print_table(table)
    if not kinds:
        console().print("the cache is empty")


@cache.command()
@path_option("--cache-dir", default=None, help="[default: $POSHARNESS_CACHE or the user cache]")
@click.option("--kind", "kinds", multiple=True, metavar="KIND", help="Only this kind; repeatable.")
@click.option(
    "--older-than", default=None, metavar="AGE", help="Last written before AGE: 90m, 12h, 30d, 2w."
)
@click.option("--all", "everything", is_flag=True, help="Every entry (with no other selector).")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
def prune(
    cache_dir: Path | None,
    kinds: tuple[str, ...],
    older_than: str | None,
    everything: bool,
    dry_run: bool,
) -> None:
    """Remove whole cache entries selected by kind and/or age.

    The selector is the confirmation: nothing is asked. Entries are recomputed when a
    run needs them again; results and leaderboards are never touched.
    """
    from posharness.cache_admin import human_bytes, parse_duration, remove, select, summarize
    from posharness.cli.console import console

    root = _root(cache_dir)
    age = parse_duration(older_than) if older_than is not None else None
    chosen = select(root, kinds, age, everything)
    done = chosen if dry_run else remove(chosen)
    verb = "would remove" if dry_run else "removed"
    total = sum(e.bytes for e in done)
    console().print(f"{verb} {len(done)} entries, {human_bytes(total)}, from {root}")
    for k in summarize(done):
        console().print(f"  {k.kind}: {k.entries} entries, {human_bytes(k.bytes)}")
