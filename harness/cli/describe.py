"""``posharness describe TASK``: one task in full — what it measures, its version, metrics,
the data it reads and every option ``--task-arg TASK.KEY=VALUE`` takes, with its type,
default and help (declared once in the task's ``TaskSpec.options``). A group name shows
the tasks it runs."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import click

from posharness.cli.click_options import format_option, include_option


@click.command(name="describe")
@click.argument("name", metavar="TASK|GROUP")
@format_option(
    ("text", "json"),
    "text for a person, json (the fields of `list tasks --format json`) for scripts.",
)
@include_option
def describe(name: str, output_format: str) -> None:
    """Show a task: description, version, metrics, data and its options with their help."""
    from posharness.cli.listing import listed_task
    from posharness.plugins import tasks

    groups = {group: tuple(tasks.expand([group])) for group in sorted(tasks.groups())}
    if name in groups:  # a group has no spec of its own: name what it runs
        _describe_group(name, groups[name], output_format)
        return
    entry = tasks.entry(name)  # an unknown name fails with close matches
    factory = tasks.get(entry.name)
    listed = listed_task(entry.name, factory, entry.origin, entry.source, groups)
    spec = factory().spec
    record = {
        **asdict(listed),
        "headline_metrics": list(spec.headline_metrics or (spec.main_metric,)),
        "data_source": spec.data_source,
        "needs": sorted(spec.needs),
        "requires": [ability.__name__ for ability in spec.requires],
        "borrows": {source: list(keys) for source, keys in spec.borrows.items()},
    }
    if output_format == "json":
        click.echo(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        click.echo(as_text(record))


def _describe_group(name: str, members: tuple[str, ...], output_format: str) -> None:
    if output_format == "json":
        click.echo(json.dumps({"name": name, "members": list(members)}, indent=2))
        return
    click.echo(
        f"{name}: a group of {len(members)} tasks, run together by --tasks {name}: "
        f"{', '.join(members)}\n(`posharness describe {members[0]}` shows one of them; "
        f"--task-arg {name}.KEY=VALUE sets KEY for all of them)"
    )


def as_text(record: dict[str, Any]) -> str:
    """The record as lines a person reads top to bottom; options as an aligned table."""
    name = record["name"]
    lines = [
        f"{name}: {record['description']}",
        f"  kind        {record['kind']}",
        f"  version     {record['version']}",
        f"  metrics     {record['main_metric']} (main); "
        f"headline: {', '.join(record['headline_metrics'])}",
        f"  data        {record['data_source']}",
    ]
    if record["needs"] or record["requires"]:
        lines.append(f"  needs       {', '.join([*record['needs'], *record['requires']])}")
    if record["groups"]:
        lines.append(f"  groups      {', '.join(record['groups'])}")
    origin = record["origin"] if record["origin"] == "built-in" else record["source"]
    lines.append(f"  origin      {origin} ({record['implementation']})")
    options = record["options"]
    if not options:
        lines.append("options: none")
        return "\n".join(lines)
    lines.append(f"options (--task-arg {name}.KEY=VALUE):")
    width = max(len(o["name"]) for o in options)
    types = max(len(o["type"]) for o in options)
    defaults = max(len(repr(o["default"])) for o in options)
    for option in options:
        lines.append(
            f"  {option['name']:<{width}}  {option['type']:<{types}}  "
            f"{option['default']!r:<{defaults}}  {option['help']}".rstrip()
        )
    for source, keys in record["borrows"].items():
        lines.append(f"  ({', '.join(keys)} also from --task-arg {source}.KEY)")
    return "\n".join(lines)
