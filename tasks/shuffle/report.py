"""Table 3 of Chen et al. (2023) for one model: every probe's Δ, one row per attention mode.

Written after a run from the result files of the ``shuffle`` tasks, as Markdown (with the
paper's BERT-base row for reference) and as a bar chart of the deltas with their paired
95 % intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from posharness.run.flags import FLAG_MARK, flag_section, limit_lines
from posharness.tasks.shuffle.probes import PROBES

TITLES = {
    **{f"shuffle_{x}": f"Shuffle-{x}" for x in (3, 4, 5, 6)},
    "shuffle_random": "Random",
    "shuffle_sr": "Shuffle-SR",
}
# Chen et al. 2023 Table 3 (Shuffle-6 from the draft's Table 2): BERT-base fine-tuned on
# full SNLI train; accuracy on the originals and Δ in points.
PAPER_BERT = {
    "original": 89.8,
    "shuffle_3": -0.4,
    "shuffle_4": -0.6,
    "shuffle_5": -0.3,
    "shuffle_6": -0.5,
    "shuffle_random": -2.7,
    "shuffle_sr": -63.9,
}
MODE_ORDER = ("both", "contextual", "positional")
FIGURE_VERSION = 1  # bump when figures.delta_bars draws differently, so charts are redrawn


def write_table3(results: Sequence[Any], folder: Path) -> list[Path]:
    """``table3.md`` and ``table3.png`` in ``folder`` from the probes' cell results."""
    from posharness.storage.io import atomic_write_text
    from posharness.tasks.shuffle.figures import delta_bars

    cells = {(r.mode.name, r.task.name): r for r in results}
    modes = [m for m in MODE_ORDER if any(mode == m for mode, _ in cells)]
    probes = [p for p in PROBES if any(task == p for _, task in cells)]
    if not modes or not probes:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / "table3.md"
    atomic_write_text(table, _markdown(cells, modes, probes, results[0].model.spec))
    series = {mode: [_delta_point(cells.get((mode, probe))) for probe in probes] for mode in modes}
    drawn = {
        "titles": [TITLES[p] for p in probes],
        "series": series,
        "paper": {"Chen et al. BERT-base": [PAPER_BERT[p] for p in probes]},
        "title": f"Word-swap probes on SNLI: {results[0].model.spec}",
        "flagged": sorted(
            [mode, TITLES[probe]] for (mode, probe), cell in cells.items() if cell.flags
        ),
    }
    chart = folder / "table3.png"
    if _unchanged(chart, drawn):  # a finished rerun redraws nothing (issue 40, part 4)
        return [table, chart]
    delta_bars(
        drawn["titles"],
        series,
        drawn["paper"],
        chart,
        drawn["title"],
        flagged={(mode, title) for mode, title in drawn["flagged"]},
    )
    _remember(chart, drawn)
    return [table, chart]


def _inputs_file(chart: Path) -> Path:
    return chart.with_name(f".{chart.name}.inputs")


def _unchanged(chart: Path, drawn: dict[str, Any]) -> bool:
    """Whether ``chart`` was drawn from exactly these inputs by this code."""
    from posharness.storage.hashing import hash_obj

    try:
        kept = _inputs_file(chart).read_text().strip()
    except OSError:
        return False
    return chart.is_file() and kept == hash_obj({**drawn, "code": FIGURE_VERSION})


def _remember(chart: Path, drawn: dict[str, Any]) -> None:
    from posharness.storage.hashing import hash_obj
    from posharness.storage.io import atomic_write_text

    atomic_write_text(_inputs_file(chart), hash_obj({**drawn, "code": FIGURE_VERSION}) + "\n")


def _delta_point(cell: Any) -> tuple[float, float | None, float | None] | None:
    if cell is None:
        return None
    delta = cell.metrics["delta"]
    low = None if delta.ci_low is None else 100 * delta.ci_low
    high = None if delta.ci_high is None else 100 * delta.ci_high
    return 100 * delta.value, low, high


def _markdown(cells: dict, modes: list[str], probes: list[str], model: str) -> str:
    lines = [
        f"# Word-swap probes: {model}",
        "",
        *limit_lines(cells.values()),
        "Accuracy (%) on each probe's original pairs and Δ = changed − original, in points, "
        "with the paired 95 % bootstrap interval; * p < 0.05 by the exact McNemar test; "
        f"{FLAG_MARK} the cell is flagged (see Flags below): not a finding.",
        "",
        "| mode | " + " | ".join(f"{TITLES[p]} orig | Δ" for p in probes) + " |",
        "|---|" + "---:|---:|" * len(probes),
    ]
    for mode in modes:
        parts = []
        for probe in probes:
            cell = cells.get((mode, probe))
            if cell is None:
                parts.append("– | –")
                continue
            m = cell.metrics
            delta = m["delta"]
            interval = (
                f" [{100 * delta.ci_low:+.1f}, {100 * delta.ci_high:+.1f}]"
                if delta.ci_low is not None and delta.ci_high is not None
                else ""
            )
            parts.append(
                f"{100 * m['original_accuracy'].value:.1f} | "
                f"{100 * delta.value:+.1f}{interval}{_stars(m['mcnemar_p'].value)}"
                + (f" {FLAG_MARK}" if cell.flags else "")
            )
        lines.append(f"| {mode} | " + " | ".join(parts) + " |")
    paper = " | ".join(f"{PAPER_BERT['original']:.1f} | {PAPER_BERT[p]:+.1f}" for p in probes)
    lines.append(f"| *Chen et al. BERT-base* | {paper} |")
    lines += [
        "",
        "| mode | probe | n | original | changed | Δ | flips → wrong | flips → right "
        "| McNemar p | still entailment |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in modes:
        for probe in probes:
            cell = cells.get((mode, probe))
            if cell is None:
                continue
            m = cell.metrics
            still = m.get("still_entailment")
            lines.append(
                f"| {mode} | {TITLES[probe]} | {m['delta'].n} | "
                f"{100 * m['original_accuracy'].value:.1f} | "
                f"{100 * m['shuffled_accuracy'].value:.1f} | {100 * m['delta'].value:+.1f} | "
                f"{int(m['flipped_to_wrong'].value)} | {int(m['flipped_to_right'].value)} | "
                f"{m['mcnemar_p'].value:.2g} | "
                f"{'' if still is None else f'{100 * still.value:.1f}'} |"
            )
    return "\n".join(lines + flag_section(cells.values())) + "\n"


def _stars(p: float) -> str:
    return "*" if p < 0.05 else ""
