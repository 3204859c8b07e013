"""``posharness report``: pages, figures, provenance and comparisons from boards and results.

The study the tests report on is written here: two runs (A, B) of two models in two modes
on a geometry task (locality, symmetry) and a 0/1 probe with per-example outputs, a
figure per cell and a cross-mode summary folder — small, but every path of the report.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from posharness.boards import leaderboard as lb
from posharness.boards.compare import compare_files
from posharness.contracts.results import Environment, Metric, ModeInfo, Timings
from posharness.report import build_report
from posharness.report.collect import ReportInputs, collect
from tests.cli_helpers import cli, one_line_error
from tests.result_factory import save_cell, synthetic_result, write_examples

ROOT = Path(__file__).resolve().parents[3]
COMMITTED = sorted((ROOT / "leaderboards").glob("*.json"))
MODELS = {"m-one": "f1aaaaaaaaaaaaaa", "m-two": "f2bbbbbbbbbbbbbb"}
MODES = ("both", "positional")


def png(path: Path, shade: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (48, 32), (shade, 90, 200 - shade))
    for x in range(48):
        image.putpixel((x, x % 32), (250, 250, 250))
    image.save(path)


REPORT_ENVIRONMENT = Environment(
    posharness="0.1.0",
    python="3.11",
    platform="linux",
    packages={"torch": "2"},
    device="cpu",
    dtype="float32",
    git_hash="0123456789abcdef",
)
REPORT_TIMINGS = Timings(
    started_at="2026-01-01T00:00:00", finished_at="2026-01-01T00:00:01", total_s=1.0
)


def cell(folder: Path, model: str, mode: str, task: str, metrics: dict[str, Metric], **kw) -> None:
    stem = folder / model / f"{task}__{mode}__seed0"
    stem.mkdir(parents=True, exist_ok=True)
    artifacts = []
    if kw.get("figure"):
        png(stem / "heatmap.png", 40 + (mode == "both") * 80)
        artifacts.append(f"{stem.name}/heatmap.png")
    examples = kw.get("examples")
    examples_file = None
    if examples is not None:
        examples_file = write_examples(
            stem, ({"id": str(i), "acc": v} for i, v in enumerate(examples))
        )
    result = synthetic_result(
        spec=model,
        fingerprint=MODELS[model],
        task=task,
        metrics=metrics,
        cell_id=f"{MODELS[model]}-{mode}-{task}",
        pe_card={"family": "learned absolute", "reference_point": "absolute"},
        mode=ModeInfo(
            name=mode,
            exact=mode == "both",
            definition=None if mode == "both" else "tisa-mean-word",
            reference_corpus=None if mode == "both" else "wikitext-2 valid [abc123]",
        ),
        version="3",
        kind="attention-geometry" if task == "locality_symmetry" else "test-probe",
        options={"words": 10},
        examples_file=examples_file,
        artifacts=artifacts,
        environment=REPORT_ENVIRONMENT,
        timings=REPORT_TIMINGS,
    )
    save_cell(folder, result)


def write_run(root: Path, name: str, better: bool) -> Path:
    """One run's results and its board ``root/boards/NAME.json``; ``better`` makes the
    probe right on far more examples for m-one (a significant difference) and on one more
    for m-two (a difference no test can call significant; an equal one would be exact)."""
    folder = root / "runs" / name
    for k, model in enumerate(MODELS):
        for j, mode in enumerate(MODES):
            locality = 0.02 + 0.05 * k + 0.1 * j + (0.01 if better else 0)
            cell(
                folder,
                model,
                mode,
                "locality_symmetry",
                {
                    "locality": Metric(locality, ci_low=locality - 0.002, ci_high=locality + 0.002),
                    "symmetry": Metric(0.7 + 0.1 * j - 0.05 * k),
                },
                figure=True,
            )
            right = 50 if better and model == "m-one" else 20 + k + j + int(better)
            outcomes = [1] * right + [0] * (60 - right)
            cell(folder, model, mode, "probe", {"acc": Metric(right / 60, n=60)}, examples=outcomes)
        summary = folder / model / "probe__seed0__summary"
        png(summary / "across_modes.png", 120)
        (summary / "table.md").write_text("| mode | acc |\n|---|---|\n| both | 0.5 |\n")
    board_path = root / "boards" / f"{name}.json"
    board = lb.build(lb.collect_results(folder), name, board_path)
    lb.save(board.model_copy(update={"created_at": "2026-01-01T00:00:00+00:00"}), board_path)
    return board_path


@pytest.fixture(scope="module")
def figure_cache(tmp_path_factory) -> Path:
    """Shared by the module's builds: figures are keyed by content, so sharing is safe."""
    return tmp_path_factory.mktemp("figure-cache")


@pytest.fixture
def study(tmp_path) -> dict[str, Path]:
    return {"a": write_run(tmp_path, "a", False), "b": write_run(tmp_path, "b", True)}


def build(study: dict[str, Path], out: Path, cache: Path | None, **kw):
    return build_report(
        [study["a"], study["b"]], out, comparisons=[(study["a"], study["b"])], cache_dir=cache, **kw
    )


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# -- pages ---------------------------------------------------------------------------------


def test_index_lists_every_board_with_models_modes_tasks_and_how_it_was_made(
    study, tmp_path, figure_cache
):
    build(study, tmp_path / "out", figure_cache)
    index = (tmp_path / "out" / "index.html").read_text()
    for text in (
        "boards/a.html",
        "boards/b.html",
        "m-one, m-two",
        "both, positional",
        "locality_symmetry, probe",
        "8 of 8",
        "git 0123456789",
        "compare/a--b.html",
    ):
        assert text in index
    assert (tmp_path / "out" / "report.json").is_file()


def test_board_page_groups_tasks_by_kind_with_numbers_intervals_and_figures(
    study, tmp_path, figure_cache
):
    build(study, tmp_path / "out", figure_cache)
    page = (tmp_path / "out" / "boards" / "a.html").read_text()
    assert page.index('id="kind-attention-geometry"') < page.index('id="kind-test-probe"')
    assert "0.0200" in page and "[0.0180, 0.0220]" in page  # mean and the task's interval
    assert 'data-type="num"' in page  # sortable numeric headers
    images = [line.split('src="')[1].split('"')[0] for line in page.splitlines() if "<img" in line]
    assert any("heatmap.png" in i for i in images), "the cells' own figures are copied"
    assert any("across_modes.png" in i for i in images), "the run's cross-mode summary too"
    assert any(i.startswith("../figures/dots-") for i in images), "and drawn per-task dots"
    for image in images:
        assert (tmp_path / "out" / "boards" / image).resolve().is_file()


def test_every_number_links_its_provenance_with_the_fields_of_its_result(
    study, tmp_path, figure_cache
):
    build(study, tmp_path / "out", figure_cache)
    page = (tmp_path / "out" / "boards" / "a.html").read_text()
    anchor = page.split('data-prov="')[1].split('"')[0]
    block = page.split(f'<details class="provenance" id="{anchor}">')[1].split("</details>")[0]
    for field in (
        "f1aaaaaaaaaaaaaa",
        "learned absolute",
        "version 3",
        "data-locality_symmetry",
        "words=10",
        "cpu",
        "float32",
        "torch=2",
        "result JSON",
    ):
        assert field in block, field
    link = block.split('href="../')[1].split('"')[0]
    copied = json.loads((tmp_path / "out" / link).read_text())
    assert copied["model"]["fingerprint"] == "f1aaaaaaaaaaaaaa"
    positional = page.split("positional · locality_symmetry</summary>")[1].split("</details>")[0]
    assert "wikitext-2 valid [abc123]" in positional and "approximation" in positional


def test_numbers_whose_results_are_not_at_hand_say_so(tmp_path, figure_cache):
    board = tmp_path / "lb" / "minilm-finetune.json"
    board.parent.mkdir()
    shutil.copy(ROOT / "leaderboards" / "minilm-finetune.json", board)
    outcome = build_report([board], tmp_path / "out", cache_dir=figure_cache)
    page = (tmp_path / "out" / "boards" / "minilm-finetune.html").read_text()
    assert "result files not at hand" in page and "0 of 24 at hand" in page
    assert outcome.files_copied == 0


def test_committed_leaderboards_make_a_report_with_their_comparison(tmp_path, figure_cache):
    init, trained = (
        ROOT / "leaderboards/pe-zoo-mini-init.json",
        ROOT / "leaderboards/pe-zoo-mini.json",
    )
    build_report(COMMITTED, tmp_path / "out", comparisons=[(init, trained)], cache_dir=figure_cache)
    for board in COMMITTED:
        assert (tmp_path / "out" / "boards" / f"{board.stem}.html").is_file()
    index = (tmp_path / "out" / "index.html").read_text()
    assert "Locality and symmetry of the positional term" in index
    compared = (tmp_path / "out" / "compare" / "pe-zoo-mini-init--pe-zoo-mini.html").read_text()
    assert compared.count('<section class="pair">') == 12


# -- figures ---------------------------------------------------------------------------------


def test_same_inputs_give_a_byte_identical_folder_drawn_or_cached(study, tmp_path):
    cache = tmp_path / "cache"
    build(study, tmp_path / "out", cache)
    first = tree(tmp_path / "out")
    build(study, tmp_path / "out", cache)  # from the cache, replacing the previous report
    assert tree(tmp_path / "out") == first
    build(study, tmp_path / "again", None)  # every figure drawn afresh
    assert tree(tmp_path / "again") == first
    svg = next(name for name in first if name.endswith(".svg"))
    assert b"<dc:date>" not in first[svg]


def test_a_second_build_draws_nothing_and_a_changed_number_redraws_only_its_figure(study, tmp_path):
    cache = tmp_path / "cache"
    cold = build(study, tmp_path / "out", cache)
    assert cold.figures_drawn > 0 and cold.figures_reused == 0
    warm = build(study, tmp_path / "out", cache)
    assert (warm.figures_drawn, warm.figures_reused) == (0, cold.figures_drawn)
    # One probe number changed on a board whose results are not at hand: only the probe's
    # dot plot of that board shows it; the scatters hold geometry metrics only.
    moved = tmp_path / "far" / "away" / "a.json"  # its results no longer reachable
    moved.parent.mkdir(parents=True)
    data = json.loads(study["a"].read_text())
    data["rows"][0]["scores"]["probe/acc"]["mean"] = 0.9
    moved.write_text(json.dumps(data))
    changed = build_report([moved, study["b"]], tmp_path / "out", cache_dir=cache)
    assert changed.figures_drawn == 1


def test_scatter_is_one_point_per_model_and_mode_and_absent_metrics_are_said(
    study, tmp_path, figure_cache
):
    study_view = collect(ReportInputs(boards=(study["a"], study["b"])))
    attention, positional_term = study_view.scatters
    assert attention.points == 8 and attention.figure is not None  # 2 boards × 2 models × 2 modes
    assert positional_term.figure is None and positional_term.points == 0
    build(study, tmp_path / "out", figure_cache)
    index = (tmp_path / "out" / "index.html").read_text()
    assert "nothing to plot" in index and "positional_term_locality" in index


# -- comparisons -------------------------------------------------------------------------------


def test_comparison_page_has_the_paired_tests_of_posharness_compare(study, tmp_path, figure_cache):
    view = collect(ReportInputs(boards=(), comparisons=((study["a"], study["b"]),)))
    (comparison,) = view.comparisons
    expected = {
        (c.a.model, c.a.mode, m.key): m.test.p_value if m.test else None
        for c in compare_files(study["a"], study["b"])
        for m in c.metrics
    }
    got = {
        (p.a.row.model, p.a.row.mode, m.key): m.test.p_value if m.test else None
        for p in comparison.pairs
        for m in p.metrics
    }
    assert got == expected and len(comparison.pairs) == 4
    build(study, tmp_path / "out", figure_cache)
    page = (tmp_path / "out" / "compare" / "a--b.html").read_text()
    assert "paired-permutation" in page  # the study's task declares nothing: a mean
    assert '<tr class="sig">' in page  # m-one: 20/60 → 50/60
    assert '<span class="ns">n.s.</span>' in page  # m-two: 21/60 → 22/60, one example
    assert "no per-example outputs" in page  # geometry keeps none: said, not invented


# -- Markdown ----------------------------------------------------------------------------------


def test_markdown_format_writes_the_tables_and_links_that_resolve(study, tmp_path, figure_cache):
    build(study, tmp_path / "md", figure_cache, fmt="md")
    out = tmp_path / "md"
    assert not list(out.rglob("*.html"))
    board = (out / "boards" / "a.md").read_text()
    assert "| PE family | model | mode | locality_symmetry/locality" in board
    assert "0.0200 [0.0180, 0.0220]" in board
    links = [part.split(")")[0] for part in board.split("](")[1:]]
    assert links and all((out / "boards" / link).resolve().is_file() for link in links)
    assert "p < 0.05" in (out / "compare" / "a--b.md").read_text()


# -- the folder, and bad input ----------------------------------------------------------------


def test_existing_folder_that_is_no_report_is_refused_unless_overwrite(
    study, tmp_path, capsys, figure_cache
):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    args = ["report", str(study["a"]), "-o", str(out), "--cache-dir", str(figure_cache)]
    assert cli(*args) == 2
    assert "is not a posharness report" in one_line_error(capsys)
    assert (out / "notes.txt").read_text() == "mine"
    assert cli(*args, "--overwrite") == 0
    assert not (out / "notes.txt").exists() and (out / "index.html").is_file()
    assert cli(*args) == 0  # a previous report is replaced without asking


def test_output_that_holds_the_inputs_is_refused_even_with_overwrite(study, tmp_path, capsys):
    assert cli("report", str(study["a"]), "-o", str(tmp_path), "--overwrite") == 2
    assert "must not replace" in one_line_error(capsys)
    assert study["a"].is_file()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_text(json.dumps({"schema_version": 2, "rows": []})), "schema_version 2"),
        (lambda p: None, "does not exist"),
        (lambda p: p.write_text("{not json"), "not valid JSON"),
        (lambda p: p.mkdir(), "is a folder: give the leaderboard JSON file itself"),
    ],
    ids=["other-schema", "missing", "unreadable", "a-folder"],
)
def test_bad_leaderboard_fails_in_one_line_with_nothing_written(
    tmp_path, capsys, make, message, study
):
    bad = tmp_path / "bad.json"
    make(bad)
    assert cli("report", str(study["a"]), str(bad), "-o", str(tmp_path / "out")) == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_results_folder_finds_results_moved_since_the_board_was_built(
    study, tmp_path, figure_cache
):
    moved = tmp_path / "moved-results"
    shutil.move(tmp_path / "runs" / "a", moved)
    outcome = build_report([study["a"]], tmp_path / "out", results=[moved], cache_dir=figure_cache)
    page = (tmp_path / "out" / "boards" / "a.html").read_text()
    assert "8 of 8 at hand" in page and outcome.files_copied > 8


def test_results_folder_of_another_run_is_refused_in_one_line(study, tmp_path, capsys):
    shutil.move(tmp_path / "runs" / "a", tmp_path / "a-gone")
    args = ["report", str(study["a"]), "--results", str(tmp_path / "runs" / "b")]
    assert cli(*args, "-o", str(tmp_path / "out")) == 2
    assert "does not match leaderboard" in one_line_error(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("report", str(study["a"]), "--results", str(empty), "-o", str(tmp_path / "out")) == 2
    assert "holds none of the" in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_a_failure_while_writing_keeps_the_previous_report_and_leaves_no_temporaries(
    study, tmp_path, monkeypatch, figure_cache
):
    out = tmp_path / "out"
    build(study, out, figure_cache)
    before = tree(out)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("posharness.report.write.shutil.copyfile", broken)
    with pytest.raises(Exception, match="No space left"):
        build(study, out, figure_cache)
    assert tree(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_report_is_a_command_of_the_cli():
    from click.testing import CliRunner

    from posharness.cli import cli as group

    assert "report" in CliRunner().invoke(group, ["--help"]).output


def test_scatter_option_chooses_the_metrics_and_a_malformed_one_fails_in_one_line(
    study, tmp_path, capsys, figure_cache
):
    out = tmp_path / "out"
    args = ["report", str(study["a"]), "-o", str(out), "--cache-dir", str(figure_cache)]
    assert cli(*args, "--scatter", "locality") == 2
    assert "write X,Y as TASK/METRIC pairs" in one_line_error(capsys)
    assert cli(*args, "--scatter", "probe/acc,locality_symmetry/locality") == 0
    index = (out / "index.html").read_text()
    assert "locality_symmetry/locality against probe/acc" in index
    assert "positional_term" not in index  # the defaults are replaced, not added to


def test_timestamp_is_written_only_when_asked(study, tmp_path, figure_cache):
    build(study, tmp_path / "plain", figure_cache)
    build(study, tmp_path / "stamped", figure_cache, timestamp=True)
    assert "Made by posharness 0.1.0." in (tmp_path / "plain" / "index.html").read_text()
    stamped = (tmp_path / "stamped" / "index.html").read_text()
    assert " UTC." in stamped and "built" in (tmp_path / "stamped" / "report.json").read_text()
