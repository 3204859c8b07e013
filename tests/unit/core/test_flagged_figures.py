"""A flagged cell is marked on every figure that shows it, not only in tables: a degenerate
Shuffle-SR classifier's +100 bar is hatched, a flagged probe's layer curves are marked,
and the report's own plots ring the flagged values."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.contracts.examples import Example
from posharness.contracts.results import Metric
from posharness.run.flags import FLAG_HATCH, FLAG_MARK, degenerate_flags, flag_marks
from tests.result_factory import synthetic_result

DEGENERATE = ["degenerate classifier: prediction is 'entailment' for 100 % of 500 examples"]


@pytest.fixture
def drawn(monkeypatch) -> list:
    """Every figure the task figure modules save, kept open (drawn) for inspection."""
    from posharness.stats.plotting import pyplot
    from posharness.tasks.dep_heads import figures as dep_figures
    from posharness.tasks.senteval import figures as senteval_figures
    from posharness.tasks.shuffle import figures as shuffle_figures

    figures: list = []

    def keep(fig, path, **_):
        fig.canvas.draw()
        figures.append(fig)
        return path

    for module in (dep_figures, senteval_figures, shuffle_figures):
        monkeypatch.setattr(module, "save_figure", keep)
    yield figures
    for fig in figures:
        pyplot().close(fig)


def probe_cell(mode: str, task: str, delta: float, flags: list[str]):
    metrics = {
        "delta": Metric(delta, ci_low=delta - 0.01, ci_high=delta + 0.01, n=500),
        "original_accuracy": Metric(0.0 if flags else 0.8, n=500),
        "shuffled_accuracy": Metric(delta if flags else 0.5, n=500),
        "mcnemar_p": Metric(1e-90 if flags else 0.2, n=500),
        "flipped_to_wrong": Metric(0.0, n=500),
        "flipped_to_right": Metric(500.0 if flags else 10.0, n=500),
    }
    result = synthetic_result(spec="m", fingerprint="f", task=task, metrics=metrics, mode=mode)
    return result.model_copy(update={"flags": flags})


def test_a_degenerate_shuffle_sr_bar_is_hatched_and_marked_in_table3(drawn, tmp_path: Path):
    from posharness.tasks.shuffle.report import write_table3

    cells = [
        probe_cell("both", "shuffle_sr", 1.0, DEGENERATE),  # Δ +100: one class throughout
        probe_cell("positional", "shuffle_sr", -0.3, []),
        probe_cell("both", "shuffle_3", -0.01, []),
    ]
    write_table3(cells, tmp_path)
    (fig,) = drawn
    (ax,) = [a for a in fig.axes if a.patches]
    hatched = [p for p in ax.patches if p.get_hatch() == FLAG_HATCH]
    assert len(hatched) == 1 and hatched[0].get_height() == pytest.approx(100.0)
    assert any(t.get_text() == FLAG_MARK for t in flag_marks(fig) if hasattr(t, "get_text"))
    table = (tmp_path / "table3.md").read_text()
    assert f"+100.0 [+99.0, +101.0]* {FLAG_MARK}" in table  # the table's cell says it too
    assert f"-30.0 [-31.0, -29.0] {FLAG_MARK}" not in table


def test_bars_of_cells_without_flags_carry_no_mark(drawn, tmp_path: Path):
    from posharness.tasks.shuffle.figures import delta_bars

    delta_bars(["a", "b"], {"both": [(1.0, 0.0, 2.0), None]}, {}, tmp_path / "d.png", "t")
    (fig,) = drawn
    assert flag_marks(fig) == []
    assert not any(p.get_hatch() for p in fig.axes[0].patches)


def test_a_flagged_probe_marks_its_layer_curve(drawn, tmp_path: Path):
    from posharness.tasks.senteval.figures import layer_curve

    layer_curve("BShift", [0.5, 0.7], [0.5, 0.6], {"chance": 0.5}, tmp_path / "a.png")
    layer_curve("BShift", [0.5, 0.7], [0.5, 0.6], {"chance": 0.5}, tmp_path / "b.png", True)
    clean, marked = drawn
    assert flag_marks(clean) == []
    assert len([a for a in flag_marks(marked) if hasattr(a, "get_xydata")]) == 2  # dev, test
    assert marked.axes[0].get_title().endswith(FLAG_MARK)


def test_the_table9_grid_marks_only_the_flagged_task_and_mode(drawn, tmp_path: Path):
    from posharness.tasks.senteval.figures import mode_curve_grid

    curves = {"both": [0.5, 0.6, 0.7], "positional": [0.4, 0.5, 0.5]}
    panels = [("SentLen", curves, 0.17), ("BShift", curves, 0.5)]
    mode_curve_grid(panels, tmp_path / "g.png", "t", flagged={("BShift", "positional")})
    (fig,) = drawn
    titles = [ax.get_title() for ax in fig.axes if ax.lines]
    assert titles == ["SentLen", f"BShift {FLAG_MARK}"]
    sentlen, bshift = (ax for ax in fig.axes if ax.lines)
    assert not [a for a in flag_marks(fig) if a.axes is sentlen]
    assert [a for a in flag_marks(fig) if a.axes is bshift]


def test_the_dependency_chart_dashes_a_flagged_mode(drawn, tmp_path: Path):
    from posharness.tasks.dep_heads.figures import accuracy_by_distance

    points = [("nsubj", 1.5, 0.9), ("obj", 2.5, 0.7)]
    series = {"both": points, "positional": points}
    accuracy_by_distance(series, tmp_path / "a.png", "t", flagged={"positional"})
    (fig,) = drawn
    (line,) = [a for a in flag_marks(fig) if hasattr(a, "get_linestyle")]
    assert line.get_linestyle() == "--" and line.get_label() == f"positional {FLAG_MARK}"


@pytest.mark.parametrize(
    ("n", "predictions", "marked"),
    [(16, "ab", True), (200, "a", True), (200, "ab", False)],
    ids=["16 test sentences", "one class", "healthy"],
)
def test_a_probe_cell_marks_its_layers_png_when_the_runner_will_flag_it(
    drawn, tmp_path: Path, n: int, predictions: str, marked: bool
):
    """layers.png is drawn inside the run, before the runner adds the generic flags: the
    same function of the same metrics and examples decides its mark there."""
    from types import SimpleNamespace

    from posharness.tasks.senteval.scoring import _curve_figure

    metrics = {name: Metric(0.5, n=n) for name in ("accuracy", "majority", "chance")}
    examples = [Example(id=str(i), prediction=predictions[i % len(predictions)]) for i in range(n)]
    assert bool(degenerate_flags("accuracy", metrics, examples)) is marked
    curve = [
        {"dev_accuracy": 0.5, "test_accuracy": 0.5},
        {"dev_accuracy": 0.6, "test_accuracy": 0.5},
    ]
    _curve_figure(SimpleNamespace(title="BShift"), curve, metrics, tmp_path, examples)
    (fig,) = drawn
    assert bool(flag_marks(fig)) is marked


def report_rows(flag_task: str | None):
    from posharness.boards.leaderboard import Row, Score
    from posharness.report.model import RowView

    def row(mode: str, flagged: bool) -> RowView:
        scores = {
            "locality_symmetry/locality": Score(mean=0.02, n_seeds=1),
            "locality_symmetry/symmetry": Score(mean=0.97, n_seeds=1),
        }
        flags = {flag_task: ["near-uniform attention: x"]} if flagged and flag_task else {}
        made = Row(
            model="zoo",
            fingerprint="f",
            mode=mode,
            exact=True,
            pe_family="learned absolute",
            scores=scores,
            results=[],
            flags=flags,
        )
        return RowView(0, made, "zoo", mode, {})

    return [row("both", False), row("contextual", True)]


def test_the_report_dots_ring_flagged_values_in_the_svg():
    from posharness.boards.leaderboard import Column
    from posharness.report import drawn
    from posharness.report.figures import draw

    columns = [Column(task="locality_symmetry", metric="locality", headline=True)]
    request = drawn.dots("zoo", report_rows("locality_symmetry"), columns)
    assert request is not None and request.data["panels"][0]["flagged"] == [False, True]
    assert 'id="posharness-flagged' in draw(request.kind, request.data)
    clean = drawn.dots("zoo", report_rows(None), columns)
    assert clean is not None and 'id="posharness-flagged' not in draw(clean.kind, clean.data)


def test_the_report_scatter_rings_a_point_whose_cell_is_flagged():
    from posharness.report import drawn
    from posharness.report.figures import draw

    x, y = "locality_symmetry/locality", "locality_symmetry/symmetry"
    request, count = drawn.scatter("t", x, y, [("zoo", report_rows("locality_symmetry"))])
    assert request is not None and count == 1  # both modes on one spot: one point
    (point,) = request.data["series"][0]["points"]
    assert point[1] == "both+contextual" and point[8] is True  # one flagged cell marks it
    assert 'id="posharness-flagged' in draw(request.kind, request.data)
    other, _ = drawn.scatter("t", x, y, [("zoo", report_rows("dep_heads"))])
    assert other is not None and other.data["series"][0]["points"][0][8] is False
