"""Leaderboards built from result files, and paired comparisons between two of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import DataError
from posharness.boards import leaderboard as lb
from posharness.boards import views as views
from posharness.boards.compare import CellOutputs, compare_files, paired_test
from posharness.boards.leaderboard import Score
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_BINARY, OF_EXAMPLES, PER_CELL
from posharness.contracts.results import CellResult, Metric, write_result
from posharness.stats.paired_tests import mcnemar, permutation_test
from tests.result_factory import save_cell, synthetic_result, write_examples


def make_result(
    model: str, fingerprint: str, seed: int, value: float, examples: str | None = None
) -> CellResult:
    return synthetic_result(
        spec=model,
        fingerprint=fingerprint,
        task="probe",
        seed=seed,
        metrics={"acc": Metric(value=value), "aux": Metric(value=value / 2)},
        headline=["acc"],
        examples_file=examples,
    )


def write_run(folder: Path, model: str, fingerprint: str, outcomes: dict[int, list[int]]) -> None:
    """One result per seed, with per-example 0/1 correctness."""
    for seed, correct in outcomes.items():
        stem = folder / model / f"probe__both__seed{seed}"
        examples = write_examples(stem, ({"id": str(i), "acc": c} for i, c in enumerate(correct)))
        save_cell(folder, make_result(model, fingerprint, seed, float(np.mean(correct)), examples))


def test_rows_average_over_seeds_with_standard_deviation(tmp_path):
    write_run(tmp_path / "r", "m1", "f1", {0: [1, 1, 0, 0], 1: [1, 1, 1, 0]})
    board = lb.build(lb.collect_results(tmp_path / "r"), "x", tmp_path / "lb.json")
    (row,) = board.rows
    score = row.scores["probe/acc"]
    assert score.mean == pytest.approx(0.625) and score.n_seeds == 2
    assert score.sd == pytest.approx(np.std([0.5, 0.75], ddof=1))
    assert [c.key for c in views.visible_columns(board, False)] == ["probe/acc"]
    assert {c.key for c in views.visible_columns(board, True)} == {"probe/acc", "probe/aux"}


def test_saved_leaderboard_round_trips_and_renders(tmp_path):
    write_run(tmp_path / "r", "m1", "f1", {0: [1, 0]})
    path = tmp_path / "boards" / "lb.json"
    lb.save(lb.build(lb.collect_results(tmp_path / "r"), "x", path), path)
    board = lb.load(path)
    assert board.rows[0].results == ["../r/m1/probe__both__seed0.json"]
    assert "| learned absolute | m1 | both | 0.5000 |" in views.to_markdown(board)
    assert views.to_csv(board).splitlines()[1].startswith("learned absolute,m1,both,True,0.5")


def test_empty_results_folder_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no result files"):
        lb.collect_results(tmp_path / "empty")


def test_compare_tests_an_undeclared_metric_as_a_mean_never_by_its_values(tmp_path):
    """``probe`` is no registered task, so ``acc`` declares nothing: its 0/1 values are
    tested as a mean of continuous values (sign-flip permutation), not McNemar because
    they happen to be 0 and 1; ``aux`` has no per-example values and gets no test."""
    a = [1] * 30 + [0] * 10
    b = [1] * 30 + [1] * 10  # B fixes ten items, breaks none
    write_run(tmp_path / "ra", "m1", "f1", {0: a})
    write_run(tmp_path / "rb", "m2", "f2", {0: b})
    for name in ("ra", "rb"):
        path = tmp_path / f"{name}.json"
        lb.save(lb.build(lb.collect_results(tmp_path / name), name, path), path)
    (row,) = compare_files(tmp_path / "ra.json", tmp_path / "rb.json")
    acc = next(m for m in row.metrics if m.key == "probe/acc")
    assert acc.delta == pytest.approx(0.25)
    assert acc.test.name == "paired-permutation" and not acc.kind.declared
    assert acc.test.ci_low <= acc.delta <= acc.test.ci_high
    aux = next(m for m in row.metrics if m.key == "probe/aux")
    assert aux.test is None and "never a guessed one" in aux.note


def _outputs(values: dict[str, float], metric: str = "acc") -> CellOutputs:
    return CellOutputs({k: Example(id=k, **{metric: v}) for k, v in values.items()})


def _score(value: float, seeds: int = 1) -> Score:
    return Score(mean=value, n_seeds=seeds)


def test_a_declared_binary_mean_gets_exact_mcnemar_on_the_printed_delta():
    a = {str(i): 1.0 if i < 30 else 0.0 for i in range(40)}
    b = {str(i): 1.0 for i in range(40)}
    test, note = paired_test(
        _outputs(a), _outputs(b), "acc", MEAN_BINARY, _score(0.75), _score(1.0)
    )
    assert test.name == "mcnemar-exact" and "40 examples" in note
    assert test.p_value == pytest.approx(2 * 0.5**10) and test.delta == pytest.approx(0.25)
    assert test.ci_low <= test.delta <= test.ci_high


def test_outputs_that_do_not_reproduce_the_board_value_are_not_tested():
    """A board value that is a mean over fine-tuning runs, with one run's rows kept, is
    another statistic: no test of a neighbouring number."""
    a = {str(i): float(i % 2) for i in range(20)}
    test, note = paired_test(_outputs(a), _outputs(a), "acc", MEAN_BINARY, _score(0.6), _score(0.5))
    assert test is None and "not the board's value" in note
    seeds, why = paired_test(
        _outputs(a), _outputs(a), "acc", MEAN_BINARY, _score(0.5, 3), _score(0.5)
    )
    assert seeds is None and "mean over 3 task seeds" in why


def test_paired_permutation_detects_a_consistent_shift():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    shifted = permutation_test(x, x + 0.5 + rng.normal(scale=0.1, size=60))
    assert shifted.p_value < 0.01 and shifted.ci_low > 0.3
    same = permutation_test(x, x + rng.normal(scale=0.1, size=60))
    assert same.p_value > 0.01


def test_mcnemar_without_discordant_pairs_is_not_significant():
    x = np.array([1.0, 0.0, 1.0])
    assert mcnemar(x, x).p_value == 1.0


def test_paired_test_on_different_examples_explains_itself():
    test, note = paired_test(
        _outputs({"a": 1.0}), _outputs({"b": 0.0}), "acc", MEAN_BINARY, _score(1), _score(0)
    )
    assert test is None and "different examples" in note


def test_a_metric_with_one_value_per_cell_says_so():
    """The positional term is content-free: one matrix per model, no value per probe word,
    so there is nothing to pair — not a matter of missing files."""
    rows = _outputs({"w1": 0.1, "w2": 0.2}, "locality")
    test, note = paired_test(
        rows, rows, "positional_term_locality", PER_CELL, _score(0.1), _score(0.1)
    )
    assert test is None and "one value per cell" in note


def test_unchanged_leaderboard_is_not_rewritten(tmp_path):
    write_run(tmp_path / "r", "m1", "f1", {0: [1, 0]})
    path = tmp_path / "lb.json"
    results = lb.collect_results(tmp_path / "r")
    assert lb.save_if_changed(lb.build(results, "x", path), path)
    before = path.read_bytes()
    assert not lb.save_if_changed(lb.build(results, "x", path), path)
    assert path.read_bytes() == before
    write_run(tmp_path / "r", "m1", "f1", {1: [1, 1]})
    assert lb.save_if_changed(lb.build(lb.collect_results(tmp_path / "r"), "x", path), path)


def _fine_tune_rows(labels, predictions, prefix=""):
    return {
        str(i): Example(id=str(i), prefix=prefix, label=g, prediction=p)
        for i, (g, p) in enumerate(zip(labels, predictions, strict=True))
    }


def test_metrics_that_are_not_means_get_a_paired_bootstrap_on_stored_predictions():
    from posharness.stats.classification import score

    rng = np.random.default_rng(0)
    gold = rng.normal(size=300)
    noisy = gold + rng.normal(scale=2.0, size=300)
    sharp = gold + rng.normal(scale=0.3, size=300)
    a = CellOutputs(_fine_tune_rows(gold, noisy, "dev_"))
    b = CellOutputs(_fine_tune_rows(gold, sharp, "dev_"))
    rho_a = _score(score(["spearman"], gold, noisy)["spearman"])
    rho_b = _score(score(["spearman"], gold, sharp)["spearman"])
    test, note = paired_test(a, b, "dev_spearman", OF_EXAMPLES, rho_a, rho_b)
    assert test is not None and test.name == "paired-bootstrap" and "300" in note
    assert test.delta > 0.3 and test.p_value < 0.01 and 0 < test.ci_low < test.ci_high
    assert test.ci_low <= test.delta <= test.ci_high
    same, why_not = paired_test(a, a, "dev_spearman", OF_EXAMPLES, rho_a, rho_a)
    assert same is None and "equal within numerical precision" in why_not  # issue 38
    missing, why = paired_test(a, b, "spearman", OF_EXAMPLES, rho_a, rho_b)  # no such prefix
    assert missing is None and "computed from all" in why and "neither replicates" in why


def _board_of(
    tmp_path: Path, results: list[tuple[str, CellResult]], folder: str = "r"
) -> lb.Leaderboard:
    """A leaderboard at tmp_path/lb.json over results written under tmp_path/folder."""
    located = []
    for name, result in results:
        path = tmp_path / folder / result.model.spec / name
        write_result(result, path)
        located.append((path, result))
    return lb.build(located, "x", tmp_path / "lb.json")


def _task(result: CellResult, name: str) -> CellResult:
    return result.model_copy(update={"task": result.task.model_copy(update={"name": name})})


def test_a_run_adds_to_a_leaderboard_instead_of_replacing_it(tmp_path):
    earlier = _board_of(
        tmp_path,
        [
            ("geometry__both__seed0.json", _task(make_result("m1", "f1", 0, 0.5), "geometry")),
            ("probe__both__seed0.json", make_result("m1", "f1", 0, 0.25)),
            ("probe__both__seed0.json", make_result("m2", "f2", 0, 0.75)),
        ],
    )
    fresh = _board_of(
        tmp_path, [("probe__both__seed0.json", make_result("m1", "f1", 0, 0.9))], "again"
    )
    board = lb.merge(earlier, fresh)
    rows = {row.model: row for row in board.rows}
    assert set(rows) == {"m1", "m2"}  # m2 was not rerun and is kept
    assert rows["m1"].scores["probe/acc"].mean == 0.9  # the rerun task is replaced
    assert rows["m1"].scores["geometry/acc"].mean == 0.5  # the other task is kept
    assert rows["m2"].scores["probe/acc"].mean == 0.75
    assert [c.key for c in board.columns] == [
        "geometry/acc", "geometry/aux", "probe/acc", "probe/aux"
    ]  # fmt: skip
    # the earlier geometry file stays listed; the earlier probe file gives way to the new one
    assert rows["m1"].results == [
        "again/m1/probe__both__seed0.json",
        "r/m1/geometry__both__seed0.json",
    ]


def test_two_models_under_one_name_are_told_apart_by_fingerprint(tmp_path):
    board = _board_of(
        tmp_path,
        [
            ("probe__both__seed0.json", make_result("bert-a-star", "aaaaaaaaaa1", 0, 0.5)),
            ("probe__both__seed1.json", make_result("bert-a-star", "bbbbbbbbbb2", 1, 0.6)),
        ],
    )
    table = views.to_markdown(board)
    assert "bert-a-star [aaaaaaaa]" in table and "bert-a-star [bbbbbbbb]" in table


def _board(rows: list[tuple[str, str, str]]):
    from posharness.boards.leaderboard import Leaderboard, Row, Score

    return Leaderboard(
        name="b",
        created_at="t",
        columns=[],
        rows=[
            Row(
                model=model,
                fingerprint=fingerprint,
                mode=mode,
                exact=True,
                pe_family="x",
                scores={"probe/acc": Score(mean=0.5, n_seeds=1)},
                results=[],
            )
            for model, fingerprint, mode in rows
        ],
    )


def test_rows_pair_by_registered_name_and_mode_never_as_a_cross_product():
    from posharness.boards.compare import RowFilter, pair_rows

    modes = ("both", "positional")
    before = _board([(m, f"{m}-0", mode) for m in ("tupe-r", "bert-a") for mode in modes])
    after = _board(
        [(f"{m}@runs/{m}/final", f"{m}-1", mode) for m in ("tupe-r", "bert-a") for mode in modes]
    )
    pairs = pair_rows(before, after)
    assert len(pairs) == 4  # not 2 models x 2 models x 2 modes
    assert all(a.model == b.model.split("@")[0] and a.mode == b.mode for a, b in pairs)
    only = pair_rows(before, after, RowFilter(models=("tupe-r",), modes=("positional",)))
    assert [(a.model, b.model, a.mode) for a, b in only] == [
        ("tupe-r", "tupe-r@runs/tupe-r/final", "positional")
    ]


def test_two_boards_of_one_model_each_pair_by_mode_and_others_do_not_pair():
    from posharness.boards.compare import pair_rows

    one = _board([("hf:/a", "fa", "both")])
    other = _board([("hf:/b", "fb", "both")])
    assert len(pair_rows(one, other)) == 1
    two = _board([("hf:/b", "fb", "both"), ("hf:/c", "fc", "both")])
    assert pair_rows(one, two) == []


def test_the_committed_zoo_boards_compare_row_by_row_with_paired_tests() -> None:
    """Issue 17's "done": on a fresh clone (no result folders), the init and trained zoo
    boards pair by (model, mode) and every headline metric gets a paired test from the
    per-example bundles committed beside them."""
    root = Path(__file__).resolve().parents[3] / "leaderboards"
    comparisons = compare_files(root / "pe-zoo-mini-init.json", root / "pe-zoo-mini.json")
    pairs = {(c.a.model.split("@")[0], c.a.mode) for c in comparisons}
    models = ("bert-a", "bert-r", "tupe-r", "bert-a-star-ws")  # the w, s variant, renamed
    modes = ("both", "contextual", "positional")
    assert pairs == {(m, mode) for m in models for mode in modes}
    for comparison in comparisons:
        assert comparison.a.model.split("@")[0] == comparison.b.model.split("@")[0]
        assert comparison.missing == []
        locality = next(m for m in comparison.metrics if m.key == "locality_symmetry/locality")
        if comparison.a.mode == "positional":  # every word gives one value: exact (issue 38)
            assert locality.test is None and "no sampling variability" in locality.note
        else:
            assert locality.test is not None and locality.test.n > 0, comparison.a.model


def test_a_committed_board_without_its_outputs_says_how_to_keep_them(capsys) -> None:
    """minilm-finetune.json was committed before boards kept their per-example outputs:
    compare gives the deltas and says, once per table, how to make the paired tests
    possible."""
    from tests.cli_helpers import cli

    board = Path(__file__).resolve().parents[3] / "leaderboards" / "minilm-finetune.json"
    assert cli("compare", str(board), str(board)) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "result file(s) missing" in said and "/../" not in said
    assert "leaderboard build RESULTS_DIR -o BOARD --keep-examples" in said


def test_cells_a_bundle_lacks_are_told_apart_from_a_board_without_one(capsys) -> None:
    """minilm.json has a bundle, but its dep_heads and toeplitz cells keep no per-example
    outputs: compare must not advise making a bundle that is already there."""
    from posharness.boards.compare import compare_files
    from posharness.contracts.cell_key import task_of_file
    from tests.cli_helpers import cli

    board = Path(__file__).resolve().parents[3] / "leaderboards" / "minilm.json"
    comparisons = compare_files(board, board)
    assert comparisons and all(c.missing and c.missing == c.not_bundled for c in comparisons)
    kinds = {task_of_file(p) for c in comparisons for p in c.not_bundled}
    assert kinds == {"dep_heads", "toeplitz"}
    assert all(len(c.missing) == len(set(c.missing)) == 2 for c in comparisons)
    assert cli("compare", str(board), str(board)) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "neither at hand nor in the board's examples bundle" in said
    assert "--keep-examples" not in said
