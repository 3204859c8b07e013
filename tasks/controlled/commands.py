"""``posharness controlled sweep|report|train-vectors``: Chen et al.'s controlled experiment.

``sweep`` runs §3.3.1's sweep and writes a study folder (results/, boards/, tables/);
``report FOLDER`` rebuilds boards and tables from ``FOLDER/results/controlled.json``
alone; ``train-vectors`` makes the word2vec stand-in for GloVe (standin.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from posharness.cli.click_options import include_option

RESULTS = Path("results") / "controlled.json"


@click.group(name="controlled")
def controlled() -> None:
    """Chen et al. 2023 §3.3.1: accuracy against the locality and symmetry of a fixed
    positional attention over static word vectors (Figure 3, Figure A1)."""


@controlled.command(name="sweep")
@click.option("--vectors", required=True, metavar="FILE",
              help="GloVe .txt, word2vec .txt/.bin or fastText .vec.")  # fmt: skip
@click.option("--out", "folder", type=click.Path(path_type=Path), required=True,
              help="Study folder to write (results/, boards/, tables/).")  # fmt: skip
@click.option("--data-dir", type=click.Path(path_type=Path), envvar="POSHARNESS_DATA_DIR",
              default=None, help="Datasets folder [env: POSHARNESS_DATA_DIR].")  # fmt: skip
@click.option("--task-arg", "pairs", multiple=True, metavar="KEY=VALUE",
              help="Any option of `posharness describe chen_controlled` (repeatable).")  # fmt: skip
@click.option("--seed", default=0, show_default=True, help="Seed of the repeats.")
@include_option
def sweep(vectors: str, folder: Path, data_dir: Path | None, pairs: tuple[str, ...], seed: int):
    """Run the sweep and write its study folder."""
    from posharness.base.errors import OptionError
    from posharness.tasks.controlled.data import downstream_dir
    from posharness.tasks.controlled.references import PAPER, measured
    from posharness.tasks.controlled.sweep import run_sweep
    from posharness.tasks.controlled.task import NAME, OPTIONS, config_from

    options = {o.name: o.default for o in OPTIONS}
    by_name = {o.name: o for o in OPTIONS}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in by_name:
            raise click.UsageError(f"--task-arg {pair}: expected KEY=VALUE with KEY one of "
                                   f"{', '.join(by_name)}")  # fmt: skip
        options[key] = by_name[key].read(NAME, value)
    options["vectors"] = vectors
    path = folder / RESULTS
    path.parent.mkdir(parents=True, exist_ok=True)
    references = {"paper": PAPER, "measured": measured()}

    def save(result: dict) -> None:  # after every chunk: a run stopped early keeps its work
        result["started"] = started
        result["references"] = references
        path.write_text(json.dumps(result, indent=1) + "\n")

    try:
        config = config_from(options, seed)
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        result = run_sweep(
            config,
            downstream_dir(data_dir, str(options["data"])),
            log=lambda line: click.echo(line, err=True),
            save=save,
        )
    except OptionError as exc:
        raise click.ClickException(str(exc)) from None
    save(result)
    written = _report(folder)
    click.echo(f"wrote {path} and {len(written)} tables/boards in {folder} "
               f"({result['timing']['total_s']:.0f} s)")  # fmt: skip


@controlled.command(name="report")
@click.argument("folder", type=click.Path(path_type=Path, exists=True, file_okay=False))
@include_option
def report(folder: Path) -> None:
    """Rebuild FOLDER's boards and tables from FOLDER/results/controlled.json alone."""
    written = _report(folder)
    click.echo(f"rebuilt {len(written)} files in {folder}")


def _report(folder: Path) -> list[Path]:
    from posharness.tasks.controlled.report import write_tables
    from posharness.tasks.controlled.statements import check_statements

    source = folder / RESULTS
    if not source.is_file():
        raise click.ClickException(f"{source} not found: run `posharness controlled sweep` first")
    result = json.loads(source.read_text())
    written = write_tables(result, folder / "tables")
    board = folder / "boards" / "controlled.json"
    board.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        "experiment": result["experiment"],
        "vectors": result["vectors"],
        "datasets": result["datasets"],
        "statements": check_statements(result),
        "references": result.get("references", {}),
        "timing": {
            "total_s": result["timing"]["total_s"],
            **{k: c["timing"] for k, c in result["curves"].items()},
        },  # fmt: skip
    }
    board.write_text(json.dumps(summary, indent=1) + "\n")
    return [*written, board]


@controlled.command(name="train-vectors")
@click.argument("corpus", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--setting", "pairs", multiple=True, metavar="KEY=VALUE",
              help="A gensim Word2Vec setting (vector_size, window, epochs...).")  # fmt: skip
@include_option
def train_vectors(corpus: Path, out: Path, pairs: tuple[str, ...]) -> None:
    """Train the word2vec stand-in for GloVe on a WikiExtractor CORPUS; write OUT (binary)
    and OUT.json (its settings). Name its numbers "word2vec stand-in", never GloVe."""
    from posharness.tasks.controlled.standin import DEFAULT_SETTINGS, train_standin

    overrides = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in DEFAULT_SETTINGS:
            raise click.UsageError(
                f"--setting {key}: expected one of {', '.join(DEFAULT_SETTINGS)}"
            )
        overrides[key] = type(DEFAULT_SETTINGS[key])(value)
    click.echo(json.dumps(train_standin(corpus, out, **overrides), indent=2))
