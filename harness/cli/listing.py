"""``posharness list models|tasks|groups|pes``: what is registered, and where it came from.

One listing, three shapes: a table for a person at a terminal, one tab-separated line
per entry for ``grep``/``cut`` when stdout is a pipe, and JSON for scripts. Every shape
carries the names whole: a name cut to ``bert-a-star-s…`` is a name nobody can grep for
or paste into ``--model``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, ClassVar

import click

from posharness.cli.click_options import include_option

FORMATS = ("table", "plain", "json")
KINDS = ("models", "tasks", "groups", "pes")


@dataclass(frozen=True)
class ListedModel:
    """A registered model name; ``builder`` is the ``module:function`` that loads it."""

    COLUMNS: ClassVar[tuple[str, ...]] = ("name", "family", "modes", "description", "origin")

    name: str
    family: str
    modes: tuple[str, ...]
    description: str
    origin: str  # built-in | plugin | include
    source: str  # the distribution or --include file it came from
    builder: str

    def row(self) -> tuple[str, ...]:
        modes = ", ".join(self.modes)
        return (self.name, self.family, modes, self.description, _origin(self.origin, self.source))


@dataclass(frozen=True)
class ListedTask:
    """A registered task name; ``groups`` are the group names that run it."""

    COLUMNS: ClassVar[tuple[str, ...]] = ("name", "kind", "description", "origin")

    name: str
    kind: str
    description: str
    origin: str
    source: str
    version: str
    main_metric: str
    groups: tuple[str, ...]
    implementation: str
    # {name, type, default, help} per option, as --task-arg TASK.NAME=VALUE takes them
    options: tuple[dict[str, Any], ...] = ()

    def row(self) -> tuple[str, ...]:
        return (self.name, self.kind, self.description, _origin(self.origin, self.source))


@dataclass(frozen=True)
class ListedGroup:
    """A task group and the tasks ``--tasks GROUP`` runs, nested groups expanded."""

    COLUMNS: ClassVar[tuple[str, ...]] = ("name", "members")

    name: str
    members: tuple[str, ...]

    def row(self) -> tuple[str, ...]:
        return (self.name, ", ".join(self.members))


@dataclass(frozen=True)
class ListedPE:
    """A registered positional scheme: its kind, the modes that kind gives, its code's
    identity (declared version or source hash) and where it came from."""

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "name",
        "kind",
        "contextual",
        "positional",
        "code",
        "origin",
    )

    name: str
    kind: str
    contextual: str  # the definition and whether it is exact, alone (no input positions)
    positional: str
    code: str  # v<version> or src:<hash>
    origin: str
    source: str
    implementation: str
    options: tuple[tuple[str, str], ...] = ()  # (name, default) as --model-arg takes them

    def row(self) -> tuple[str, ...]:
        return (
            self.name,
            self.kind,
            self.contextual,
            self.positional,
            self.code,
            _origin(self.origin, self.source),
        )


Listed = ListedModel | ListedTask | ListedGroup | ListedPE


@dataclass(frozen=True)
class Listing:
    """Everything one ``posharness list`` prints, whichever format is asked for."""

    records: tuple[Listed, ...]
    columns: tuple[str, ...]
    notes: tuple[tuple[str, str], ...] = ()  # (group, members) lines under the tasks table

    def rows(self) -> list[tuple[str, ...]]:
        return [record.row() for record in self.records]

    def as_plain(self) -> str:
        """One line per entry, the table's columns separated by tabs, no header."""
        return "".join("\t".join(map(_one_cell, row)) + "\n" for row in self.rows())

    def as_json(self) -> str:
        """An array of objects, keys in declaration order (name first), so diffs stay small."""
        return json.dumps([asdict(r) for r in self.records], indent=2, ensure_ascii=False) + "\n"


@click.command(name="list")
@click.argument("what", type=click.Choice(KINDS))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="table (default on a terminal), plain (default in a pipe: one line per entry, "
    "tab-separated columns as in the table, no header) or json (every field).",
)
@include_option
def list_command(what: str, output_format: str | None) -> None:
    """Show registered models, tasks, task groups or positional schemes (pes) with their
    origin (built-in, plugin, include)."""
    listing = build_listing(what)
    output_format = output_format or ("table" if _stdout_is_terminal() else "plain")
    if output_format == "table":
        from posharness.cli.console import print_listing_table

        print_listing_table(f"registered {what}", listing.columns, listing.rows(), listing.notes)
    elif output_format == "plain":
        _write(listing.as_plain())
    else:
        _write(listing.as_json())


def build_listing(what: str) -> Listing:
    """The ``what`` registry as records; loads every entry, so plugins that fail show here."""
    from posharness.plugins import models, tasks

    if what == "models":
        listed = tuple(_listed_model(e.name, e.obj, e.origin, e.source) for e in models.entries())
        return Listing(listed, ListedModel.COLUMNS)
    if what == "pes":
        models.load_plugins()  # the zoo's entry point also loads the PE plugins
        return Listing(listed_pes(), ListedPE.COLUMNS)
    groups = {name: tuple(tasks.expand([name])) for name in sorted(tasks.groups())}
    if what == "groups":
        listed_groups = tuple(ListedGroup(name, members) for name, members in groups.items())
        return Listing(listed_groups, ListedGroup.COLUMNS)
    listed_tasks = tuple(
        listed_task(entry.name, entry.obj, entry.origin, entry.source, groups)
        for entry in tasks.entries()
    )
    notes = tuple((name, ", ".join(members)) for name, members in groups.items())
    return Listing(listed_tasks, ListedTask.COLUMNS, notes)


def _listed_model(name: str, obj: Any, origin: str, source: str) -> ListedModel:
    from posharness.contracts.model_spec import ModelEntry

    if isinstance(obj, ModelEntry):
        modes = tuple(mode.strip() for mode in obj.modes.split(",") if mode.strip())
        return ListedModel(name, obj.family, modes, obj.description, origin, source, obj.build)
    # A plugin's plain factory function: it offers `both`; its docstring's first line
    # is its description.
    doc = (obj.__doc__ or "").strip()
    description = doc.splitlines()[0] if doc else ""
    return ListedModel(name, "model", ("both",), description, origin, source, _qualified(obj))


def listed_task(
    name: str, obj: Any, origin: str, source: str, groups: dict[str, tuple[str, ...]]
) -> ListedTask:
    task = obj()
    spec = task.spec
    return ListedTask(
        name=name,
        kind=spec.kind,
        description=spec.description,
        origin=origin,
        source=source,
        version=spec.version,
        main_metric=spec.main_metric,
        groups=tuple(group for group, members in groups.items() if name in members),
        implementation=_qualified(type(task)),
        options=tuple(option.describe() for option in spec.options),
    )


def listed_pes() -> tuple[ListedPE, ...]:
    from posharness.pe import declaration
    from posharness.pe.split import split_of
    from posharness.plugins import positional_encodings
    from posharness.plugins.code_identity import code_identity

    listed = []
    for entry in positional_encodings.entries():
        declared = declaration(entry.obj)
        split = split_of(entry.obj, entry.name, input_positions=False)
        described = {
            mode: f"{definition} ({'exact' if exact else 'approximation'})"
            for mode, (exact, definition, _free) in split.items()
        }
        listed.append(
            ListedPE(
                name=entry.name,
                kind=declared.kind,
                contextual=described["contextual"],
                positional=described.get("positional", "none"),
                code=code_identity(entry.obj, declared.version),
                origin=entry.origin,
                source=entry.source,
                implementation=_qualified(entry.obj),
                options=tuple((key, repr(value)) for key, value in declared.defaults.items()),
            )
        )
    return tuple(listed)


def _qualified(obj: Callable[..., Any]) -> str:
    """``module:qualname`` of a class or function, seen through ``functools.partial``."""
    while isinstance(obj, partial):
        obj = obj.func
    module = getattr(obj, "__module__", None) or "?"
    return f"{module}:{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def _origin(origin: str, source: str) -> str:
    return origin if origin == "built-in" else f"{origin}: {source}"


def _one_cell(text: str) -> str:
    """A cell on one line with no tab, so each entry stays one line of tab-separated fields."""
    return " ".join(text.replace("\t", " ").splitlines())


def _stdout_is_terminal() -> bool:
    return sys.stdout is not None and sys.stdout.isatty()


def _write(text: str) -> None:
    """All of it in one write; a reader that stops early (``grep -q``, ``head``) is not an
    error, so a closed pipe ends the command quietly instead of with a traceback."""
    try:
        click.echo(text, nl=False)
    except BrokenPipeError:
        # Point stdout at devnull so the interpreter's final flush raises nothing either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
