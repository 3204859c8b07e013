"""``posharness reproduce chen2023|chen2023-draft|tupe2021|tisa2021``: write the paper's
study file with the user's PEs beside its baselines, then run it (docs/studies.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from posharness.base.errors import OptionError
from posharness.cli.click_options import include_option
from posharness.tasks.papers.studies import SCALES, STUDIES

CORPUS_IN_DATA_DIR = "wikipedia_en_partial"


@click.command()
@click.argument("paper", type=click.Choice(sorted(STUDIES)))
@click.option("--pe", "pes", multiple=True, metavar="NAME",
              help="A PE to put beside the paper's baselines (a zoo name or a plugin PE); "
              "repeatable.")  # fmt: skip
@click.option("--recipe", type=click.Choice(list(SCALES)), default="mini", show_default=True,
              help="smoke: the whole path in minutes on 2 CPU cores (no findings); mini: "
              "bounded to ~2 h on 2 CPU cores; cramming, bert-base: the papers' protocols at "
              "scale.")  # fmt: skip
@click.option("--executor", type=click.Choice(["serial", "ray"]), default="serial",
              show_default=True, help="ray: pretraining jobs and cells as Ray tasks.")  # fmt: skip
@click.option("--corpus", default=None, metavar="PATH|hf:NAME",
              help=f"Pretraining corpus [default: {CORPUS_IN_DATA_DIR}/ in --data-dir].",
)  # fmt: skip
@click.option("--data-dir", type=click.Path(path_type=Path), envvar="POSHARNESS_DATA_DIR",
              default=None, help="Datasets in their usual layouts [env: POSHARNESS_DATA_DIR].",
)  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="The study file to write [default: PAPER-RECIPE.toml here]; its folder "
              "is the study's.")  # fmt: skip
@click.option("--write-only", is_flag=True, help="Write the study file and stop.")
@click.option("--overwrite", is_flag=True, help="Replace a study file that differs.")
@include_option
def reproduce(
    paper: str,
    pes: tuple[str, ...],
    recipe: str,
    executor: str,
    corpus: str | None,
    data_dir: Path | None,
    out: Path | None,
    write_only: bool,
    overwrite: bool,
) -> None:
    """Reproduce a seed paper's tables with your PEs beside its baselines: writes the
    study file (edit and rerun it freely), then runs it like `posharness study run`."""
    from posharness.cli.console import console
    from posharness.study.workflow import run_study
    from posharness.tasks.papers.studies import study_text

    out = out or Path(f"{paper}-{recipe}.toml")
    corpus = _corpus(corpus, data_dir)
    here = out.parent.resolve()
    text = study_text(
        paper,
        [pe for given in pes for pe in given.split(",") if pe.strip()],
        recipe,
        _relative(corpus, here),
        _relative(str(data_dir), here) if data_dir is not None else None,
        executor,
    )
    from posharness.study.plugins import include_line

    line = include_line(out)  # this process's --include files, so a rerun loads them
    if line:
        text = text.replace("[study]\n", f"[study]\n{line}\n", 1)
    if out.exists() and out.read_text(encoding="utf-8") != text and not overwrite:
        raise OptionError(
            f"{out} exists and differs from the study this command writes (edited?): run it "
            f"with `posharness study run {out}`, or pass --overwrite to replace it"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    console().print(f"study file: {out}")
    if write_only:
        return
    run_study(out, lambda line: console().print(line, highlight=False, markup=False))


def _corpus(corpus: str | None, data_dir: Path | None) -> str:
    if corpus is not None:
        return corpus
    if data_dir is not None and (data_dir / CORPUS_IN_DATA_DIR).is_dir():
        return str(data_dir / CORPUS_IN_DATA_DIR)
    raise OptionError(
        "no pretraining corpus: pass --corpus PATH (text, a `datasets` folder or hf:NAME), "
        f"or --data-dir holding {CORPUS_IN_DATA_DIR}/"
    )


def _relative(path: str, base: Path) -> str:
    """A local path as the study file reads it (relative to its folder); hub names kept."""
    if path.startswith("hf:"):
        return path
    return os.path.relpath(Path(path).resolve(), base)
