"""``posharness build-probes senteval``: the ten SentEval probing tasks (Conneau et al.
2018) rebuilt from the user's corpora into a folder, plugged into the CLI through the
``posharness.commands`` entry point group. A thin shell around
:func:`posharness.tasks.senteval.building.build.build_senteval`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from posharness.base.errors import OptionError
from posharness.cli.click_options import click_options, from_cli, include_option
from posharness.run.option_schema import Option, split_commas

if TYPE_CHECKING:
    from posharness.tasks.senteval.building.build import SentevalBuild

_NO_PARSE = ("no_parse", "no_constituency_parse")
_CORPUS = {"type": Path, "multiple": True}  # a corpus option: files, repeatable
# build-probes senteval's options, declared once (posharness.run.option_schema.Option).
BUILD_OPTIONS: tuple[Option, ...] = (
    Option("out", None, "Folder for the ten probing files.", Path, required=True),
    Option("snli", (), "SNLI jsonl with parses (repeatable).", **_CORPUS),
    Option("ptb", (), "Penn-Treebank bracketed trees (repeatable).", **_CORPUS),
    Option("conllu", (), "CoNLL-U with UD features (repeatable).", **_CORPUS),
    Option("text", (), "Raw text, WikiText or WikiExtractor output (repeatable).", **_CORPUS),
    Option("seed", 0, "Seed of every sampling choice.", int, show_default=True),
    Option("task_names", (), "Subset, comma-separated [default: all ten].", flag="--tasks",
           metavar="NAMES", multiple=True, parse=split_commas),
    Option("sizes", "100000,10000,10000", "Examples per split (the paper's by default).",
           metavar="TR,VA,TE", show_default=True),
    Option("max_text_sentences", None, "Read at most N sentences from the --text files (all "
           "together).", int, metavar="N"),
)  # fmt: skip


@click.command(name="senteval")
@click_options(BUILD_OPTIONS)
@include_option
def build_probes_senteval(**values: Any) -> None:
    """The ten SentEval probing tasks rebuilt from your corpora.

    SentLen, WC, TreeDepth, TopConst, BShift, Tense, SubjNum, ObjNum, SOMO and CoordInv
    (Conneau et al. 2018, §3) from SNLI parses, PTB trees, CoNLL-U and raw text, written
    as SentEval's files (split, label, sentence) with provenance and a manifest. See
    docs/tasks/senteval_build.md.
    """
    from posharness.cli.console import err_console
    from posharness.tasks.senteval.building.build import ALL_TASKS, BuildRequest, build_senteval
    from posharness.tasks.senteval.building.write import check_out, write_senteval

    values = from_cli(BUILD_OPTIONS, values)
    out = values["out"]
    request = BuildRequest(
        **{corpus: tuple(values[corpus]) for corpus in ("snli", "ptb", "conllu", "text")},
        seed=values["seed"],
        tasks=tuple(values["task_names"]) or ALL_TASKS,
        sizes=_sizes(values["sizes"]),
        max_text_sentences=values["max_text_sentences"],
    )
    check_out(out)  # refuse a wrong folder before minutes of work
    started = time.monotonic()

    def report(line: str) -> None:
        err_console().print(f"[dim]{time.monotonic() - started:6.1f}s {line}[/dim]")

    build = build_senteval(request, report=report)
    written = write_senteval(build, out)
    print_build_summary(build, out, len(written))


def _sizes(value: str) -> dict[str, int]:
    from posharness.tasks.senteval.catalog import SPLITS

    parts = [part.strip() for part in value.split(",")]
    if len(parts) != len(SPLITS) or not all(part.lstrip("-").isdigit() for part in parts):
        raise OptionError(
            f"--sizes {value}: give three sizes TRAIN,DEV,TEST, e.g. 100000,10000,10000"
        )
    sizes = dict(zip(SPLITS, (int(part) for part in parts), strict=True))
    if any(size < 1 for size in sizes.values()):
        raise OptionError(f"--sizes {value}: every size must be positive")
    return sizes


def print_build_summary(build: SentevalBuild, out: Path, files: int) -> None:
    """One row per task: sizes per split, shortfall against the request, top exclusions."""
    from rich.table import Table

    from posharness.cli.console import console
    from posharness.tasks.senteval.building.write import task_record
    from posharness.tasks.senteval.catalog import SPLITS

    requested = build.request.sizes
    table = Table(
        title=f"SentEval probing tasks (seed {build.request.seed}, requested "
        f"{'/'.join(f'{requested[s]:,}' for s in SPLITS)})"
    )
    table.add_column("task", no_wrap=True, min_width=max(map(len, build.results), default=4))
    for column in ("train", "dev", "test", "classes", "shortfall"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("main exclusions", overflow="fold")  # prose wraps, names and counts do not
    for name, result in build.results.items():
        record = task_record(result, requested, build.pool.sources)
        sizes, shortfall = record["sizes"], sum(record["shortfall"].values())
        # sentences without the needed parse are expected; the manifest counts them
        reasons = [item for item in record["excluded"].items() if item[0] not in _NO_PARSE][:2]
        table.add_row(
            name,
            *(f"{sizes[split]:,}" for split in SPLITS),
            str(record["classes"]),
            f"{shortfall:,}" if shortfall else "–",
            ", ".join(f"{reason} {_compact(count)}" for reason, count in reasons) or "–",
        )
    console().print(table)
    console().print(
        f"wrote {files} files to {out} ({len(build.pool.sentences):,} distinct sentences of "
        "5-28 tokens; details in manifest.json)"
    )


def _compact(count: int) -> str:
    """6239 -> 6.2k, 29226 -> 29k: counts that fit a narrow column."""
    if count < 1000:
        return str(count)
    return f"{count / 1000:.1f}k" if count < 10_000 else f"{count // 1000}k"
