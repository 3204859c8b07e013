"""The public Python API: everything ``posharness run`` does, callable from a notebook.

    import posharness

    outcome = posharness.evaluate(
        models=["minilm"], tasks=["locality_symmetry"], modes=["both", "positional"],
        data_dir="../shared/data", output_dir="results",
    )
    outcome.leaderboard.rows            # the merged leaderboard, also written to disk
    outcome.cells[0].result.metrics     # one cell's typed result

    model = posharness.load_model("minilm")                # a ModelAdapter
    task = posharness.get_task("dep_heads")                # a Task

The command line is a thin shell over :func:`evaluate`; a Python caller gets the same
result files, the same leaderboard merge and the same cross-mode summaries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from posharness.boards.leaderboard import Leaderboard, MergeSummary
    from posharness.contracts.adapter import ModelAdapter
    from posharness.contracts.task import Task
    from posharness.run.cell import CellOutcome, Reporter
    from posharness.run.plan import Cell


@dataclass(frozen=True)
class Evaluation:
    """What one :func:`evaluate` call produced."""

    cells: list[CellOutcome]  # every cell of the grid, run now or finished before
    leaderboard: Leaderboard | None  # None when the grid was empty (or not the main process)
    leaderboard_path: Path | None
    # what the merge into an existing leaderboard did (rows added, scores replaced …);
    # None when the leaderboard was new. Truthy exactly when the board existed.
    merged: MergeSummary | None
    summaries: list[Path]  # cross-mode and cross-task views (tables, figures)
    replaced_unreadable: str | None = None  # why an unreadable leaderboard was replaced

    @property
    def ran(self) -> int:
        return sum(not c.skipped for c in self.cells)


def evaluate(
    models: str | Sequence[str],
    tasks: str | Sequence[str],
    modes: str | Sequence[str] = ("both",),
    seeds: int | Sequence[int] = (0,),
    *,
    output_dir: str | Path = "results",
    leaderboard: str | Path | None = None,
    cache_dir: str | Path | None = "default",
    batch_size: int | str = "auto",
    device: str = "auto",
    dtype: str = "auto",
    limit: int | None = None,
    train_limit: int | None = None,
    overwrite: bool = False,
    allow_missing: bool = False,
    task_args: Mapping[str, Mapping[str, Any]] | None = None,
    model_args: Mapping[str, Any] | None = None,
    data_dir: str | Path | None = None,
    reporter: Reporter | None = None,
    executor: str = "serial",
    ray_address: str | None = None,
    cpus_per_cell: float = 1.0,
    gpus_per_cell: float = 0.0,
) -> Evaluation:
    """Plan the grid, run the cells not finished yet, write results, merge the leaderboard
    and write the summaries.

    ``cache_dir="default"`` uses ``$POSHARNESS_CACHE`` or the user cache folder; ``None``
    turns the feature cache off. ``leaderboard`` defaults to ``<output_dir>/<model>.json``.
    Bad input raises a :class:`posharness.base.errors.PosharnessError` before any work.
    The keywords are ``posharness run``'s options (:data:`posharness.run.option_schema.RUN_OPTIONS`,
    where each is declared once with its help); a test keeps this signature equal to them.
    ``executor="ray"`` runs the pending cells as Ray tasks (``ray_address`` None starts a
    local cluster); cells that fail there are listed in a :class:`CellsFailed` raised after
    the leaderboard and summaries of the others are written.
    """
    arguments = dict(locals())  # evaluate()'s keywords, first: RUN_OPTIONS checks each
    from posharness.base.distributed import is_main_process
    from posharness.base.errors import CellsFailed
    from posharness.run.option_schema import config_from
    from posharness.run.runner import run

    config = config_from(arguments)
    board_path = _path(leaderboard)
    if board_path is not None:  # found before any compute, not after it
        check_leaderboard_path(board_path)
    # --overwrite asks for the new settings to replace the old: nothing to refuse then.
    admit = None if overwrite else (lambda cells: _admit(cells, board_path, config.output_dir))
    progress = reporter.progress if reporter is not None else None
    try:
        outcomes = run(config, reporter, admit)
    except CellsFailed as failed:  # the cells that finished still reach their board
        if failed.outcomes:
            _record(failed.outcomes, board_path, config.output_dir, overwrite, progress)
        raise
    if not outcomes or not is_main_process():  # under a launch, the main process records
        return Evaluation(outcomes, None, None, False, [])
    return _record(outcomes, board_path, config.output_dir, overwrite, progress)


def _admit(cells: list[Cell], board: Path | None, output_dir: Path) -> None:
    # Imported when there are planned cells to admit: a plan that fails first loads no board
    # code (the failing command stays as quick as before the layering).
    from posharness.boards.admission import admit_cells

    admit_cells(cells, board, output_dir)


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def _record(
    outcomes: list[CellOutcome],
    leaderboard: Path | None,
    output_dir: Path,
    replace_settings: bool = False,
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> Evaluation:
    """Merge the cells into their leaderboard and write the cross-mode summaries.

    The default board lives beside the results it is built from (``<output-dir>/
    <model>.json``), never in the repository's committed ``leaderboards/`` unless a
    ``leaderboard`` path says so.
    """
    from posharness.boards import leaderboard as lb
    from posharness.boards.admission import default_board
    from posharness.run.summaries import summarize

    path = leaderboard or default_board([o.cell for o in outcomes], output_dir)
    fresh = lb.build([(o.cell.path, o.result) for o in outcomes], path.stem, path)
    # Read, merged and written under the board's lock: runs finishing together keep
    # each other's rows (docs/concurrency.md).
    saved = lb.merge_and_save(fresh, path, replace_settings)
    summaries = summarize(outcomes, progress)
    return Evaluation(
        outcomes, saved.board, path, saved.merged, summaries, saved.replaced_unreadable
    )


def check_leaderboard_path(path: Path) -> None:
    """A leaderboard that could not be written fails here, before any cell runs."""
    from posharness.base.errors import OutputError
    from posharness.storage.io import check_writable_file

    if path.is_dir():
        raise OutputError(
            f"--leaderboard {path} is a folder: give a file path, e.g. {path / 'board.json'}"
        )
    check_writable_file(path, "--leaderboard")


def load_model(spec: str, **options: Any) -> ModelAdapter:
    """A model adapter from a spec string (``minilm``, ``hf:/dir``, ``tupe-r@ckpt``).

    ``options`` are :class:`posharness.contracts.model_spec.LoadOptions` fields (``device``,
    ``dtype``, ``model_args`` as a mapping, ``data_dir``, ``cache_dir``).
    """
    from dataclasses import fields

    from posharness.base.device import resolve_device
    from posharness.base.errors import OptionError
    from posharness.contracts.model_spec import LoadOptions, parse_model_spec
    from posharness.contracts.model_spec import build_adapter as load

    known = {f.name for f in fields(LoadOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise OptionError(
            f"load_model got unknown option {unknown[0]!r}: choose from {', '.join(sorted(known))}"
        )
    model_args = options.pop("model_args", {}) or {}
    options["device"] = resolve_device(options.get("device", "auto"))
    for key in ("data_dir", "cache_dir"):
        if options.get(key) is not None:
            options[key] = Path(options[key])
    pairs = tuple(sorted((str(k), str(v)) for k, v in dict(model_args).items()))
    return load(parse_model_spec(spec), LoadOptions(**{**options, "model_args": pairs}))


def get_task(name: str) -> Task:
    """A registered task by name (``posharness list tasks`` shows them)."""
    from posharness.plugins import tasks

    return tasks.get(name)()
