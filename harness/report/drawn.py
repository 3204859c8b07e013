"""Which figures the report draws, and the exact data each is drawn from.

A request carries everything its drawing depends on and nothing else (no paths, no
times), so its content key changes exactly when the picture would: one changed number
redraws the figures that show it and no other.
"""

from __future__ import annotations

from collections.abc import Sequence

from posharness.boards.compare import model_name
from posharness.boards.leaderboard import Column, Score
from posharness.report.figure_store import FigureRequest
from posharness.report.model import RowView


def interval(score: Score) -> tuple[float | None, float | None]:
    """The task's own 95 % interval with one seed, mean ± sd over several."""
    if score.ci_low is not None and score.ci_high is not None:
        return score.ci_low, score.ci_high
    if score.sd is not None:
        return score.mean - score.sd, score.mean + score.sd
    return None, None


def flagged(view: RowView, key: str) -> bool:
    """Whether the row's cell behind column ``key`` (``task/metric``) is flagged."""
    return bool(view.row.flags.get(key.split("/", 1)[0]))


def dots(title: str, rows: Sequence[RowView], columns: Sequence[Column]) -> FigureRequest | None:
    """One panel per metric, one line per row that has any of them; each panel says which
    of its values come from a flagged cell, so the drawing marks them."""
    shown = [r for r in rows if any(c.key in r.row.scores for c in columns)]
    if not shown or not columns:
        return None
    panels = []
    for column in columns:
        values = []
        for view in shown:
            score = view.row.scores.get(column.key)
            values.append(None if score is None else [score.mean, *interval(score)])
        marks = [column.key in v.row.scores and flagged(v, column.key) for v in shown]
        panels.append({"metric": column.metric, "values": values, "flagged": marks})
    return FigureRequest(
        "dots",
        {
            "title": title,
            "labels": [f"{v.label} · {v.row.mode}" for v in shown],
            "modes": [v.row.mode for v in shown],
            "panels": panels,
        },
    )


def scatter(
    title: str, x: str, y: str, series: Sequence[tuple[str, Sequence[RowView]]]
) -> tuple[FigureRequest | None, int]:
    """Metric ``x`` against ``y``, one point per (model, mode) that has both; rows of one
    model with the same two values (a positional term that no mode changes) are one point
    whose marker names all their modes. A point's last field says whether a cell behind
    it is flagged."""
    drawn, count = [], 0
    for name, rows in series:
        points: dict[tuple[str, float, float], list] = {}
        for view in rows:
            sx, sy = view.row.scores.get(x), view.row.scores.get(y)
            if sx is None or sy is None:
                continue
            key = (model_name(view.label), sx.mean, sy.mean)
            marked = flagged(view, x) or flagged(view, y)
            if key in points:
                points[key][1] += f"+{view.row.mode}"
                points[key][8] = points[key][8] or marked
                continue
            points[key] = [
                key[0], view.row.mode, sx.mean, sy.mean, *interval(sx), *interval(sy), marked
            ]  # fmt: skip
        if points:
            drawn.append({"name": name, "points": list(points.values())})
            count += len(points)
    if not drawn:
        return None, 0
    return FigureRequest("scatter", {"title": title, "x": x, "y": y, "series": drawn}), count
