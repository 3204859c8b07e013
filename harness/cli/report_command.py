"""``posharness report BOARDS… -o DIR``: a static HTML (or Markdown) report, a thin shell
over :func:`posharness.report.build_report`."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.click_options import format_option, include_option, path_option, results_option


def _scatter(values: tuple[str, ...]) -> tuple[tuple[str, str, str], ...] | None:
    from posharness.base.errors import OptionError

    pairs = []
    for value in values:
        x, sep, y = value.partition(",")
        if not sep or "/" not in x or "/" not in y:
            raise OptionError(
                f"--scatter {value!r}: write X,Y as TASK/METRIC pairs, e.g. "
                "locality_symmetry/locality,locality_symmetry/symmetry"
            )
        pairs.append((x.strip(), y.strip(), f"{y.strip()} against {x.strip()}"))
    return tuple(pairs) or None


@click.command()
@click.argument("boards", nargs=-1, type=click.Path(path_type=Path))
@path_option("-o", "--output", default=Path("report"), show_default=True, help="Report folder.")
@results_option(
    "Where the boards' result files are now (a run's --output-dir), when not where "
    "the boards name them; repeatable."
)
@click.option(
    "--compare",
    "comparisons",
    nargs=2,
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="A B",
    help="A comparison page B − A with paired tests; repeatable. Both join the report.",
)
@format_option(
    ("html", "md"), "HTML pages, or the same tables and figure links as Markdown.", dest="fmt"
)
@click.option("--overwrite", is_flag=True, help="Replace an existing folder that is no report.")
@click.option("--all-metrics", is_flag=True, help="Every metric, not only the headline ones.")
@click.option(
    "--scatter",
    "scatters",
    multiple=True,
    metavar="X,Y",
    help="Metric pairs to plot against each other, one point per (model, mode) "
    "[default: locality_symmetry's locality,symmetry and the positional term's].",
)
@path_option(
    "--cache-dir",
    default=None,
    help="Figure cache [default: $POSHARNESS_CACHE or the user cache dir].",
)
@click.option(
    "--no-cache", is_flag=True, help="Draw every figure; neither read nor write the cache."
)
@click.option("--timestamp", is_flag=True, help="Write the build time into the pages.")
@include_option
def report(
    boards: tuple[Path, ...],
    output: Path,
    results: tuple[Path, ...],
    comparisons: tuple[tuple[Path, Path], ...],
    fmt: str,
    overwrite: bool,
    all_metrics: bool,
    scatters: tuple[str, ...],
    cache_dir: Path | None,
    no_cache: bool,
    timestamp: bool,
) -> None:
    """A static report of leaderboards: tables, figures, provenance, paired comparisons.

    One folder, no server and nothing fetched: open DIR/index.html from the file system.
    A previous report in DIR is replaced at once; any other existing folder only with
    --overwrite.
    """
    from posharness.base.errors import OptionError
    from posharness.cli.console import console
    from posharness.report import DEFAULT_SCATTERS, build_report
    from posharness.storage.cache import default_cache_dir

    if not boards and not comparisons:
        raise OptionError("no leaderboard given: pass leaderboard files, e.g. leaderboards/*.json")
    outcome = build_report(
        list(boards),
        output,
        results=list(results),
        comparisons=list(comparisons),
        fmt="md" if fmt == "md" else "html",
        overwrite=overwrite,
        all_metrics=all_metrics,
        scatters=_scatter(scatters) or DEFAULT_SCATTERS,
        cache_dir=None if no_cache else (cache_dir or default_cache_dir()),
        timestamp=timestamp,
    )
    console().print(
        f"wrote {outcome.entry} ({outcome.pages} pages; figures: {outcome.figures_drawn} drawn, "
        f"{outcome.figures_reused} from the cache; {outcome.files_copied} files copied) "
        f"in {outcome.seconds:.2f} s"
    )
