"""Issue 38, part 4: exact differences and rounding differences are not tests.

A Δ below numerical precision (|Δ| <= 1e-6 × the values' scale) is "equal within
numerical precision", never significant; two sides whose examples all give one value
have no sampling variability, so Δ is exact and gets a tolerance verdict with no p,
interval or d_z; d_z needs an sd of the differences above that precision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from posharness.boards import leaderboard as lb
from posharness.boards.compare import CellOutputs, compare_files, paired_test
from posharness.boards.leaderboard import Score
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_CONTINUOUS
from posharness.contracts.results import Metric, ModeInfo
from posharness.stats.paired_tests import effect_size
from tests.cli_helpers import cli
from tests.result_factory import save_cell, synthetic_result, write_examples


def _outputs(values: np.ndarray) -> CellOutputs:
    return CellOutputs({str(i): Example(id=str(i), loc=float(v)) for i, v in enumerate(values)})


def _test(x: np.ndarray, y: np.ndarray):
    return paired_test(
        _outputs(x),
        _outputs(y),
        "loc",
        MEAN_CONTINUOUS,
        Score(mean=float(x.mean()), n_seeds=1),
        Score(mean=float(y.mean()), n_seeds=1),
    )


def test_float_noise_is_equal_within_numerical_precision_and_never_tested():
    x = np.random.default_rng(0).uniform(0.2, 0.6, size=100)
    test, note = _test(x, x + 1e-9)
    assert test is None and "equal within numerical precision" in note


def test_two_constant_sides_are_exact_with_no_p_interval_or_d_z():
    test, note = _test(np.full(100, 0.0231), np.full(100, 0.0388))
    assert test is None
    assert note.startswith("exact: differs beyond 1e-06 relative")
    assert "no sampling variability" in note
    same, same_note = _test(np.full(100, 0.0231), np.full(100, 0.0231 + 1e-12))
    assert same is None and same_note.startswith("exact: equal within numerical precision")


def test_d_z_needs_an_sd_of_differences_above_numerical_precision():
    diff = np.full(100, 0.0157) + np.random.default_rng(1).normal(0, 5.6e-17, size=100)
    assert effect_size(diff, floor=1e-6 * 0.04) is None
    assert effect_size(np.array([0.1, 0.3, 0.2]), floor=1e-6) is not None


def _board(root: Path, name: str, noise: float) -> Path:
    folder = root / "runs" / name
    values = np.random.default_rng(7).uniform(0.0, 1.0, size=(2, 80))
    for k, model in enumerate(("m-one", "m-two")):
        loc = values[k] + noise
        examples = write_examples(
            folder / model / "probe", ({"id": str(i), "loc": float(v)} for i, v in enumerate(loc))
        )
        save_cell(
            folder,
            synthetic_result(
                spec=model,
                fingerprint=f"f{k}aaaaaaaaaaaaaa",
                task="probe",
                metrics={"loc": Metric(float(loc.mean()), n=80)},
                cell_id=f"f{k}-both-probe",
                mode=ModeInfo(name="both", exact=True),
                examples_file=examples,
            ),
        )
    path = root / "boards" / f"{name}.json"
    lb.save(lb.build(lb.collect_results(folder), name, path), path)
    return path


def test_a_board_against_itself_plus_float_noise_calls_nothing_significant(tmp_path, capsys):
    a, b = _board(tmp_path, "a", 0.0), _board(tmp_path, "b", 1e-9)
    rows = compare_files(a, b)
    assert rows and all(m.test is None and m.exact for row in rows for m in row.metrics)
    capsys.readouterr()
    assert cli("compare", str(a), str(b), "--format", "json") == 0
    document = json.loads(capsys.readouterr().out)
    assert not any(r["significant"] for r in document["comparisons"])
    assert all(r["verdict"].startswith("exact: equal") for r in document["comparisons"])
