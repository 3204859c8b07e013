"""``posharness cache info|prune``: see what the feature cache holds and remove entries.

A thin shell over :mod:`posharness.storage.cache_admin`. ``prune`` asks nothing, on a terminal or
not: its selector (``--kind``, ``--older-than`` or ``--all``) is the confirmation, and
``--dry-run`` shows what a selector would remove first.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from posharness.cli.click_options import format_option, include_option, path_option

if TYPE_CHECKING:
    from posharness.storage.cache_admin import KindSummary

_CACHE_DIR_HELP = "The cache folder. [default: $POSHARNESS_CACHE, else the user cache folder]"


def _root(cache_dir: Path | None) -> Path:
    from posharness.storage.cache import default_cache_dir

    return cache_dir or default_cache_dir()


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "–"
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M")


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def _size(count: int) -> str:
    from rich.filesize import decimal

    return decimal(count)


def _entries(count: int) -> str:
    return f"{count} {'entry' if count == 1 else 'entries'}"


def _say(text: str) -> None:
    """One line on stdout, whole and literal (a ``[`` in a path is not rich markup)."""
    from rich.text import Text

    from posharness.cli.console import console

    console().print(Text(text), crop=False, soft_wrap=True)


@click.group()
def cache() -> None:
    """See what the feature cache holds, by kind, and remove entries by kind or age."""


@cache.command()
@path_option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@format_option(
    ("table", "json"),
    "A table with readable sizes, or JSON with exact bytes and ISO 8601 times (UTC).",
)
@include_option
def info(cache_dir: Path | None, output_format: str) -> None:
    """The cache's folder and size, and per kind: entries, size, oldest and newest write."""
    from posharness.storage.cache_admin import scan

    found = scan(_root(cache_dir))
    kinds = found.by_kind()
    if output_format == "json":
        document = {
            "cache": str(found.root),
            "bytes": found.bytes,
            "entries": len(found.entries),
            "in_use": sum(k.in_use for k in kinds),
            "kinds": [
                {"kind": k.kind, "entries": k.entries, "bytes": k.bytes, "in_use": k.in_use,
                 "oldest": _iso(k.oldest), "newest": _iso(k.newest)}
                for k in kinds
            ],
        }  # fmt: skip
        click.echo(json.dumps(document, indent=2))
        return
    _say(f"cache {found.root}: {_entries(len(found.entries))}, {_size(found.bytes)}")
    if kinds:
        _print_kinds(kinds)
    busy = sum(k.in_use for k in kinds)
    if busy:
        _say(f"{_entries(busy)} being written by a running job (never pruned)")


def _print_kinds(kinds: list[KindSummary]) -> None:
    from rich.table import Table
    from rich.text import Text

    from posharness.cli.console import add_whole_column, print_table

    rows = [
        (k.kind, str(k.entries), _size(k.bytes), _when(k.oldest), _when(k.newest)) for k in kinds
    ]
    table = Table()
    add_whole_column(table, "kind", [row[0] for row in rows])
    headers = ("entries", "size", "oldest write (UTC)", "newest write (UTC)")
    for index, header in enumerate(headers, start=1):
        add_whole_column(table, header, [row[index] for row in rows], justify="right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    print_table(table)


@cache.command()
@path_option("--cache-dir", default=None, help=_CACHE_DIR_HELP)
@click.option("--kind", "kinds", multiple=True, metavar="KIND", help="Only this kind; repeatable.")
@click.option(
    "--older-than",
    default=None,
    metavar="AGE",
    help="Only entries last written more than AGE ago: 90m, 12h, 30d, 2w.",
)
@click.option("--all", "everything", is_flag=True, help="Every entry (no other selector).")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@include_option
def prune(
    cache_dir: Path | None,
    kinds: tuple[str, ...],
    older_than: str | None,
    everything: bool,
    dry_run: bool,
) -> None:
    """Remove whole cache entries selected by kind and/or age, or all of them.

    --kind and --older-than together remove the entries that match both. The selector is
    the confirmation: nothing is asked. Removed entries are recomputed when a run needs
    them again; results and leaderboards live elsewhere and are never touched. Entries a
    running job is writing are left alone.
    """
    from posharness.storage.cache_admin import (
        parse_duration,
        remove,
        scan,
        select,
        summarize_entries,
    )

    age = parse_duration(older_than) if older_than is not None else None
    found = scan(_root(cache_dir))
    selection = select(found, kinds, age, everything)
    if dry_run:
        for entry in selection.chosen:
            relative = entry.path.relative_to(found.root)
            _say(f"{relative}  {_size(entry.bytes)}  written {_when(entry.modified)} UTC")
    done = list(selection.chosen) if dry_run else remove(selection.chosen)
    verb = "would remove" if dry_run else "removed"
    total = sum(e.bytes for e in done)
    _say(f"{verb} {_entries(len(done))}, {_size(total)}, from {found.root}")
    for k in summarize_entries(done):
        _say(f"  {k.kind}: {_entries(k.entries)}, {_size(k.bytes)}")
    if selection.in_use:
        _say(f"left {_entries(len(selection.in_use))} that a running job is writing")
