"""After the stages: the study's tables (Markdown, LaTeX, figures), its HTML report and
its manifest, all from the study folder's boards — never from a recomputation, so
``study report`` rebuilds exactly what ``study run`` wrote from the folder alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posharness.storage.hashing import hash_file
from posharness.storage.io import atomic_write_json, atomic_write_text
from posharness.study.captions import caption_note
from posharness.study.dag import EVALUATE, Stage
from posharness.study.dynamics import compute_dynamics
from posharness.study.folder import STUDY_COPY, StudyFolder
from posharness.study.name_checks import listed
from posharness.study.plan import StudyPlan
from posharness.study.render import draw_dynamics, draw_scatter, to_latex, to_markdown
from posharness.study.study_file import Study
from posharness.study.tables import ComputedTable, ModelRow, compute_table

MANIFEST = "manifest.json"


def publish(plan: StudyPlan) -> list[Path]:
    """Write tables, report and manifest from the study's plan and the boards its stages
    wrote; the paths written, for the user. Nothing is resolved again by name: the
    tables' declarations, the models' modes and the pretraining stage (which reads a
    dynamics table's token counts and losses from the runs' logs) are the plan's."""
    study, folder, training = plan.study, plan.folder, plan.training
    every = list(plan.stages)
    stages = [s for s in every if s.step is None]  # [dynamics] stages feed dynamics only
    rows = model_rows(plan, stages)
    missing = {
        task: [portable_text(study, p) for p in found] for task, found in plan.missing.items()
    }
    tasks = frozenset(task for s in stages if s.kind == EVALUATE for task in s.evaluate["tasks"])
    modes = study.modes
    computed = []
    for spec in plan.tables:
        note = caption_note(study, spec, stages)  # this table's cells' limits and protocol
        if spec.kind == "dynamics":
            lengths = set(_probe_lengths(spec, stages).values())
            flat = spec.probe.flat(min(lengths)) if spec.probe and len(lengths) == 1 else None
            computed.append(compute_dynamics(spec, every, training, folder, note, flat, plan.modes))
            continue
        table = compute_table(
            spec, rows, missing, note, tasks | frozenset(missing), modes, _task_modes(stages)
        )
        table.probe_lengths = _probe_lengths(spec, stages)
        computed.append(table)
    written = write_tables(computed, folder)
    boards = [row.board for row in rows if row.board.is_file()]
    if boards:
        written.append(_report(study, folder, boards, computed))
    written.append(write_manifest(folder))
    return written


def _probe_lengths(spec: Any, stages: list[Stage]) -> dict[str, int]:
    """Each row's probe length for a scatter whose x value depends on it: the option its
    evaluation stage gave the probe task, else the task's default."""
    if spec.probe is None:
        return {}
    from posharness.study.name_checks import task_args_for

    probe, lengths = spec.probe, {}
    for stage in stages:
        if stage.kind == EVALUATE and probe.task in stage.evaluate["tasks"]:
            given = task_args_for(probe.task, stage.evaluate.get("task_args") or {})
            lengths[stage.row_label] = int(given.get(probe.option, probe.default))
    return lengths


def _task_modes(stages: list[Stage]) -> frozenset[tuple[str, str]]:
    """The (task, mode) pairs the evaluation stages run: one [[run]] may read the geometry
    in three modes and another the length group in ``both`` only."""
    pairs: set[tuple[str, str]] = set()
    for stage in stages:
        if stage.kind != EVALUATE:
            continue
        modes = listed(stage.evaluate.get("modes") or ["both"])
        pairs.update((task, mode) for task in stage.evaluate["tasks"] for mode in modes)
    return frozenset(pairs)


def portable_text(study: Study, text: str) -> str:
    """A message with this machine's folders named as the study file names them: tables
    and reports are shared, and hold no path of the machine that made them."""
    folders = {str(run["data_dir"]): "<data-dir>" for run in study.runs if run.get("data_dir")}
    folders[str(study.folder)] = "<study>"
    for folder, name in sorted(folders.items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, name)
    return text


def model_rows(plan: StudyPlan, stages: list[Stage]) -> list[ModelRow]:
    """One table row source per evaluated model (and pretraining seed), with its board."""
    folder, baselines = plan.folder, set(plan.study.baselines)
    rows: dict[str, ModelRow] = {}
    for s in stages:
        if s.kind == EVALUATE and s.row_label not in rows:
            baseline = s.model is not None and s.model.label in baselines
            modes = plan.modes.get(s.model.label) if s.model is not None else None
            pe = s.model.label if s.model is not None and s.seed is not None else ""
            rows[s.row_label] = ModelRow(
                s.row_label, folder.board(s.row_label), baseline, modes, pe, s.seed
            )
    return list(rows.values())


def table_file(folder: StudyFolder, table: ComputedTable, suffix: str) -> Path:
    return folder.tables / f"{table.spec.id}{suffix}"


def write_tables(computed: list[ComputedTable], folder: StudyFolder) -> list[Path]:
    written = []
    index = ["# Study tables", ""]
    for table in computed:
        markdown = to_markdown(table)
        atomic_write_text(table_file(folder, table, ".md"), markdown)
        atomic_write_text(table_file(folder, table, ".tex"), to_latex(table))
        written += [table_file(folder, table, ".md"), table_file(folder, table, ".tex")]
        if table.spec.kind == "scatter":
            written.append(draw_scatter(table, table_file(folder, table, ".png")))
        if table.spec.kind == "dynamics":
            written.append(draw_dynamics(table, table_file(folder, table, ".png")))
        index += [markdown, ""]
    if computed:
        atomic_write_text(folder.tables / "README.md", "\n".join(index))
    return written


def _report(
    study: Study, folder: StudyFolder, boards: list[Path], computed: list[ComputedTable]
) -> Path:
    from posharness.report import build_report
    from posharness.report.model import PaperTable

    tables = []
    for table in computed:
        figure = table_file(folder, table, ".png")
        tables.append(
            PaperTable(
                id=table.spec.id,
                title=table.spec.title,
                caption=table.caption,
                header=tuple(table.header),
                rows=tuple(_cells(row) for row in table.rows),
                published=tuple(row.published for row in table.rows),
                notes=tuple(table.notes),
                tests=tuple(line.cells() for line in [*table.pe_tests, *table.tests]),
                files=(
                    ("LaTeX", table_file(folder, table, ".tex")),
                    ("Markdown", table_file(folder, table, ".md")),
                ),
                figure=figure if figure.is_file() else None,
            )
        )
    # results/ holds the cells the boards name (``results/results/<model>/…``, not beneath
    # boards/): without it the report found "0 of 19" result files and drew no heatmaps
    outcome = build_report(
        boards,
        folder.report,
        results=[folder.results] if folder.results.is_dir() else None,
        overwrite=True,
        paper_tables=tables,
        title=f"study {study.name}",
    )
    return outcome.entry


def _cells(row: Any) -> tuple[str, ...]:
    label = f"{row.label} (published)" if row.published else row.label
    return (label, row.mode, *(cell.shown for cell in row.cells))


def write_manifest(folder: StudyFolder) -> Path:
    """Every file the study's tables rest on, with its SHA-256: the study file, the
    plugins it needs (``plugins.json``), boards, results, pretraining cards and logs,
    tables. The report is left out: it is made from these."""
    root = folder.root
    patterns = [STUDY_COPY, "source.json", "plan.json", "plugins.json", "missing_data.json",
                "boards/*",
                "results/**/*",
                "pretrain/*/loss_log.json", "pretrain/*/final/README.md",
                "pretrain/*/final/pretraining.json", "pretrain/*/final/config.json",
                "boards/dynamics/*",
                "tables/*"]  # fmt: skip
    files = sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})
    entries = {str(p.relative_to(root)): hash_file(p) for p in files if not p.name.startswith(".")}
    path = root / MANIFEST
    atomic_write_json(path, {"files": entries})
    return path
