"""Leaderboards and their result files, read into the report's view model.

Every board is read, and every result file it names is found and checked, before a
figure is drawn or a file written: bad input fails in one line with nothing half-written.
Figures are only requested here (``drawn``); the figure store draws what it lacks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from posharness.base.errors import DataError, OptionError
from posharness.boards import leaderboard as lb
from posharness.boards import views as board_views
from posharness.boards.example_bundle import bundle_path
from posharness.contracts.cell_key import task_of_file
from posharness.report import drawn
from posharness.report.artifacts import cell_files, is_image, summary_folders
from posharness.report.catalogue import OTHER, TaskCatalogue
from posharness.report.comparison import compare_boards
from posharness.report.locate import Found, ResultLocator
from posharness.report.model import (
    BoardView,
    CellFacts,
    FigureRef,
    KindSection,
    Provenance,
    RowView,
    ScatterView,
    Study,
    TaskView,
    when,
)

# How the report names a row setting where its key would read badly.
SETTING_NAMES = {"reference": "reference corpus", "split": "split definition"}
LOCALITY, SYMMETRY = "locality_symmetry/locality", "locality_symmetry/symmetry"
# Chen et al. (2023), Fig. 2: locality against symmetry; for the attention in each mode,
# and for the positional term alone (the matrix the paper measures).
DEFAULT_SCATTERS = (
    (LOCALITY, SYMMETRY, "Locality and symmetry of the attention, per model and mode"),
    (
        "locality_symmetry/positional_term_locality",
        "locality_symmetry/positional_term_symmetry",
        "Locality and symmetry of the positional term (Chen et al. 2023, Fig. 2)",
    ),
)


@dataclass(frozen=True)
class ReportInputs:
    boards: tuple[Path, ...]
    results: tuple[Path, ...] = ()
    comparisons: tuple[tuple[Path, Path], ...] = ()
    all_metrics: bool = False
    scatters: tuple[tuple[str, str, str], ...] = DEFAULT_SCATTERS
    shown_from: Path | None = None  # boards inside this folder are named relative to it


@dataclass
class _Board:
    """One board as read: its rows' results at hand, by row position and named path."""

    path: Path  # absolute
    given: str  # as the user wrote it, for the pages
    board: lb.Leaderboard
    slug: str
    found: dict[int, dict[str, Found]] = field(default_factory=dict)
    missing: dict[int, list[str]] = field(default_factory=dict)


def collect(inputs: ReportInputs) -> Study:
    paths = _unique([*inputs.boards, *(p for pair in inputs.comparisons for p in pair)])
    if not paths:
        raise OptionError("no leaderboard given: pass leaderboard files, e.g. leaderboards/*.json")
    boards = [
        _Board(_key(path), _shown(path, inputs.shown_from), lb.load(path), slug)
        for path, slug in zip(paths, _slugs(paths), strict=True)
    ]
    locator = ResultLocator(list(inputs.results))
    catalogue = TaskCatalogue()
    for board in boards:
        _locate(board, locator, catalogue)
    wanted = sum(len(m) for b in boards for m in b.missing.values())
    if inputs.results and locator.found_under_results == 0 and wanted:
        folders = ", ".join(str(f) for f in inputs.results)
        raise DataError(
            f"--results {folders} holds none of the {wanted} result files the leaderboards "
            "name and lack: pass the --output-dir the boards were built from"
        )
    study = Study([], [], [])
    views = {b.path: _board_view(b, inputs, catalogue, study) for b in boards}
    study.boards = list(views.values())
    for x, y, title in inputs.scatters:
        series = [(view.name, view.rows) for view in study.boards]
        request, points = drawn.scatter(title, x, y, series)
        figure = _request(study, request, f"{title}: {y} against {x}, every board")
        study.scatters.append(ScatterView(x, y, title, figure, points))
    slugs: set[str] = set()
    for a, b in inputs.comparisons:
        left, right = (next(x for x in boards if x.path == _key(p)) for p in (a, b))
        slug = _fresh(f"{left.slug}--{right.slug}", slugs)
        study.comparisons.append(
            compare_boards(
                slug,
                (views[left.path], views[right.path]),
                (left.board, right.board),
                (left.path, right.path),
                (left.found, right.found),
                inputs.all_metrics,
            )
        )
    return study


def _key(path: Path) -> Path:
    return path.absolute()


def _shown(path: Path, base: Path | None) -> str:
    """The path as the user gave it; inside ``base`` (a study's folder, which holds the
    report), relative to it, so the pages name no folder of the machine they were made on."""
    if base is not None and _key(path).is_relative_to(_key(base)):
        return _key(path).relative_to(_key(base)).as_posix()
    return str(path)


def _unique(paths: list[Path]) -> list[Path]:
    """Each board once, in the order first given (``--compare`` boards join the report)."""
    seen: dict[Path, Path] = {}
    for path in paths:
        seen.setdefault(_key(path), path)
    return list(seen.values())


def _slugs(paths: list[Path]) -> list[str]:
    taken: set[str] = set()
    return [
        _fresh(re.sub(r"[^a-z0-9._-]+", "-", p.stem.lower()).strip("-.") or "board", taken)
        for p in paths
    ]


def _fresh(slug: str, taken: set[str]) -> str:
    candidate, n = slug, 1
    while candidate in taken:
        n += 1
        candidate = f"{slug}-{n}"
    taken.add(candidate)
    return candidate


def _locate(board: _Board, locator: ResultLocator, catalogue: TaskCatalogue) -> None:
    for position, row in enumerate(board.board.rows):
        for relative in row.results:
            found = locator.locate(board.path, relative, row)
            if found is None:
                board.missing.setdefault(position, []).append(relative)
            else:
                board.found.setdefault(position, {})[relative] = found
                catalogue.learn(found.result.task)


def _board_view(
    board: _Board, inputs: ReportInputs, catalogue: TaskCatalogue, study: Study
) -> BoardView:
    columns = board_views.visible_columns(board.board, inputs.all_metrics)
    _, cells = board_views.table_cells(board.board, False)  # the labels other views use
    rows, figures_by_task, missing_by_task = [], defaultdict(list), defaultdict(list)
    result_folders: dict[Path, str] = {}
    for position, row in enumerate(board.board.rows):
        label = cells[position][1]
        mode_label = row.mode_label
        found = sorted(board.found.get(position, {}).values(), key=lambda f: f.result.seed)
        provenance = {}
        for task in dict.fromkeys(c.task for c in board.board.columns if c.key in row.scores):
            mine = [f for f in found if f.result.task.name == task]
            for item in mine:
                files = cell_files(item, f"{label} · {row.mode} · seed {item.result.seed}")
                study.copies.extend(files.copies)
                figures_by_task[task].extend(files.figures)
                missing_by_task[task].extend(files.missing)
                result_folders.setdefault(item.path.parent, label)
            provenance[task] = Provenance(
                anchor=f"p{position}-{re.sub(r'[^A-Za-z0-9_-]', '-', task)}",
                row=row,
                task=task,
                cells=tuple(CellFacts(f"{f.prefix}.json", f.result) for f in mine),
                missing=tuple(
                    p for p in board.missing.get(position, []) if task_of_file(p) == task
                ),
                options=row.settings.get("options", {}).get(task, {}),
            )
        rows.append(RowView(position, row, label, mode_label, provenance))
    sections = _kind_sections(
        board, rows, columns, catalogue, study, figures_by_task, missing_by_task
    )
    sections = _with_summaries(sections, result_folders, catalogue, study)
    found_all = [f for by_path in board.found.values() for f in by_path.values()]
    board_figures = []
    for x, y, title in inputs.scatters:
        request, _ = drawn.scatter(f"{board.board.name}: {title}", x, y, [(board.board.name, rows)])
        figure = _request(study, request, f"{title}: {y} against {x}")
        if figure is not None:
            board_figures.append(figure)
    return BoardView(
        name=board.board.name,
        slug=board.slug,
        source=board.given,
        path=board.path,
        created_at=board.board.created_at,
        rows=tuple(rows),
        kinds=tuple(sections),
        results_named=sum(len(r.results) for r in board.board.rows),
        results_at_hand=len(found_all),
        bundle=bundle_path(board.path).is_file(),
        how_made=_how_made(board.board, found_all),
        figures=tuple(board_figures),
    )


def _kind_sections(
    board: _Board,
    rows: list[RowView],
    columns: list[lb.Column],
    catalogue: TaskCatalogue,
    study: Study,
    figures_by_task: dict[str, list[FigureRef]],
    missing_by_task: dict[str, list[str]],
) -> list[KindSection]:
    by_kind: dict[str, list[TaskView]] = defaultdict(list)
    for task in dict.fromkeys(c.task for c in columns):
        mine = tuple(c for c in columns if c.task == task)
        request = drawn.dots(f"{board.board.name} · {task}", rows, mine)
        dots = _request(study, request, f"{task}: each row's metrics with their intervals")
        view = TaskView(
            name=task,
            kind=catalogue.kind(task),
            description=catalogue.description(task),
            columns=mine,
            figures=((dots,) if dots else ())
            + tuple(f for f in figures_by_task.get(task, ()) if is_image(f.href)),
            files=tuple(f for f in figures_by_task.get(task, ()) if not is_image(f.href)),
            missing_figures=tuple(missing_by_task.get(task, ())),
        )
        by_kind[view.kind].append(view)
    order = sorted(by_kind, key=lambda f: (f == OTHER, f))
    return [
        KindSection(
            kind=kind,
            anchor="kind-" + re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-"),
            tasks=tuple(by_kind[kind]),
            rows=tuple(
                r
                for r in rows
                if any(c.key in r.row.scores for t in by_kind[kind] for c in t.columns)
            ),
        )
        for kind in order
    ]


def _with_summaries(
    sections: list[KindSection],
    folders: dict[Path, str],
    catalogue: TaskCatalogue,
    study: Study,
) -> list[KindSection]:
    """A run's views across modes (Fig. 5, Table 3, Table 9 …) go to their task's kind."""
    figures: dict[str, list[FigureRef]] = defaultdict(list)
    tables: dict[str, list[FigureRef]] = defaultdict(list)
    for summary in summary_folders(sorted(folders), folders):
        kind = catalogue.kind_of_summary(summary.prefix)
        if kind not in {s.kind for s in sections}:
            kind = sections[-1].kind if sections else OTHER
        study.copies.extend(summary.copies)
        figures[kind].extend(summary.figures)
        tables[kind].extend(summary.tables)
    return [
        KindSection(
            s.kind,
            s.anchor,
            s.tasks,
            s.rows,
            tuple(figures.get(s.kind, ())),
            tuple(tables.get(s.kind, ())),
        )
        for s in sections
    ]


def _request(study: Study, request, caption: str) -> FigureRef | None:
    if request is None:
        return None
    study.figures[request.href] = request
    return FigureRef(request.href, caption, "drawn")


def _how_made(board: lb.Leaderboard, found: list[Found]) -> tuple[str, ...]:
    """Environment and settings, from the results at hand and the board's rows."""
    lines: dict[str, None] = {}
    for item in sorted(found, key=lambda f: str(f.path)):
        env = item.result.environment
        git = f" (git {env.git_hash[:10]})" if env.git_hash else ""
        packages = ", ".join(
            f"{name} {env.packages[name]}"
            for name in ("torch", "transformers")
            if name in env.packages
        )
        parts = [f"posharness {env.posharness}{git}", f"Python {env.python}", packages, env.device]
        parts += [
            env.dtype or "",
            f"attention {env.attn_implementation}" if env.attn_implementation else "",
        ]
        lines.setdefault(", ".join(p for p in parts if p), None)
    if found:
        started = min(f.result.timings.started_at for f in found)
        finished = max(f.result.timings.finished_at for f in found)
        lines.setdefault(f"cells run {when(started)} – {when(finished)}", None)
    if board.results_note:  # the board says its result files are not shipped with it
        lines.setdefault(board.results_note, None)
    for row in board.rows:
        for key, value in row.key.settings().items():
            name = SETTING_NAMES.get(key, key.replace("_", " "))
            lines.setdefault(f"{name} {value}", None)
        for task, options in sorted(row.settings.get("options", {}).items()):
            text = ", ".join(f"{task}.{k}={v}" for k, v in sorted(options.items()))
            lines.setdefault(f"options: {text}", None)
    return tuple(lines)
