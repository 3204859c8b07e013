"""Table 9 of Chen et al. (App. C.3) for one model: the ten probing tasks, one row per
attention mode, with the paper's BERT and TUPE rows for reference, and the per-layer
curves of every task and mode in one figure."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from posharness.run.flags import FLAG_MARK, flag_section, limit_lines
from posharness.tasks.senteval.catalog import TASKS

MODE_ORDER = ("both", "contextual", "positional")
MODE_SUFFIX = {"both": "", "contextual": "-c", "positional": "-p"}
# Chen et al. (draft), Table 9: test accuracy (%) of the layer chosen on dev, BERT-base and
# TUPE-base; "-c"/"-p" use only the contextual / positional attention weights.
PAPER_TABLE9 = {
    "BERT": (92.55, 23.54, 38.75, 77.21, 77.67, 85.30, 84.50, 83.94, 52.43, 61.22),
    "BERT-c": (89.22, 57.59, 32.86, 56.65, 51.16, 82.94, 78.97, 81.63, 51.86, 50.35),
    "BERT-p": (89.64, 38.27, 33.78, 63.15, 53.68, 67.17, 71.17, 66.73, 51.19, 57.42),
    "TUPE": (90.08, 85.76, 39.14, 78.38, 79.44, 87.13, 86.50, 86.36, 53.78, 62.60),
    "TUPE-c": (91.85, 62.42, 34.21, 58.63, 50.86, 83.43, 80.63, 81.96, 51.75, 50.74),
    "TUPE-p": (90.07, 65.59, 37.74, 77.58, 75.32, 77.67, 82.13, 80.40, 51.96, 62.07),
}
PAPER_ORDER = (
    "sentlen",
    "wc",
    "treedepth",
    "topconst",
    "bshift",
    "tense",
    "subjnum",
    "objnum",
    "somo",
    "coordinv",
)


def write_table9(results: Sequence[Any], folder: Path) -> list[Path]:
    """``table9.md`` and ``table9_layers.png`` in ``folder`` from the tasks' cell results."""
    from posharness.storage.io import atomic_write_text
    from posharness.tasks.senteval.figures import mode_curve_grid

    cells = {(r.mode.name, r.task.name): r for r in results}
    modes = [m for m in MODE_ORDER if any(mode == m for mode, _ in cells)]
    tasks = [t for t in TASKS if any(name == t.name for _, name in cells)]
    if not modes or not tasks:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    model = results[0].model.spec
    table = folder / "table9.md"
    atomic_write_text(table, _markdown(cells, modes, tasks, model))
    panels = []
    for task in tasks:
        curves = {}
        chance = 0.0
        for mode in modes:
            cell = cells.get((mode, task.name))
            if cell is None:
                continue
            curves[mode] = [p["test_accuracy"] for p in cell.details.get("layers", [])]
            chance = cell.metrics["chance"].value
        panels.append((task.title, curves, chance))
    figure = mode_curve_grid(
        panels,
        folder / "table9_layers.png",
        f"SentEval probing: {model}",
        flagged={
            (task.title, mode) for task in tasks for mode in modes if _flagged(cells, mode, task)
        },
    )
    return [table, figure]


def _markdown(cells: dict, modes: list[str], tasks: list, model: str) -> str:
    header = "| model | " + " | ".join(t.title for t in tasks) + " |"
    rule = "|---|" + "---:|" * len(tasks)
    lines = [
        f"# SentEval probing: {model}",
        "",
        *limit_lines(cells.values()),
        "Test accuracy (%) of the layer with the best dev accuracy (Chen et al. App. C.3, "
        f"Table 9 layout; -c: contextual mode, -p: positional mode; {FLAG_MARK}: flagged, "
        "see Flags below). Probe data: " + _sources(cells.values()) + ".",
        "",
        header,
        rule,
    ]
    for mode in modes:
        row = []
        for task in tasks:
            cell = cells.get((mode, task.name))
            row.append(
                "–"
                if cell is None
                else f"{100 * cell.metrics['accuracy'].value:.2f}"
                + (f" {FLAG_MARK}" if cell.flags else "")
            )
        lines.append(f"| {model}{MODE_SUFFIX[mode]} | " + " | ".join(row) + " |")
    for name, values in PAPER_TABLE9.items():
        paper = dict(zip(PAPER_ORDER, values, strict=True))
        lines.append(
            f"| *Chen et al. {name}* | " + " | ".join(f"{paper[t.name]:.2f}" for t in tasks) + " |"
        )
    lines += [
        "",
        "The paper's rows are BERT-base and TUPE-base on the official BookCorpus probing "
        "files; rows built from other corpora compare in pattern, not in value.",
        "",
        "| mode | task | n train/dev/test | best layer | accuracy | control | selectivity "
        "| majority | chance | classifier |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for mode in modes:
        for task in tasks:
            cell = cells.get((mode, task.name))
            if cell is None:
                continue
            m, sizes = cell.metrics, cell.details.get("sizes", {})
            control = m.get("control_accuracy")
            selectivity = m.get("selectivity")
            lines.append(
                f"| {mode} | {task.title} | {sizes.get('tr')}/{sizes.get('va')}/{sizes.get('te')} "
                f"| {int(m['best_layer'].value)} | {100 * m['accuracy'].value:.2f} | "
                f"{'–' if control is None else f'{100 * control.value:.2f}'} | "
                f"{'–' if selectivity is None else f'{100 * selectivity.value:+.2f}'} | "
                f"{100 * m['majority'].value:.2f} | {100 * m['chance'].value:.2f} | "
                f"{cell.details.get('protocol', {}).get('classifier', '')} |"
            )
    return "\n".join(lines + flag_section(cells.values())) + "\n"


def _flagged(cells: dict, mode: str, task: Any) -> bool:
    cell = cells.get((mode, task.name))
    return cell is not None and bool(cell.flags)


def _sources(cells: Any) -> str:
    files = sorted({str(c.task.settings.get("probing_file", "?")) for c in cells})
    folders = sorted({str(Path(f).parent) for f in files})
    return ", ".join(f"`{f}`" for f in folders) or "unknown"
