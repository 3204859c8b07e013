"""A board built with --keep-examples carries its per-example outputs, so compare runs its
paired tests where the result folders are gone (a fresh clone of a committed board)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from posharness.boards.compare import compare_files
from tests.cli_helpers import cli
from tests.unit.core.test_leaderboard_compare import write_run


def test_paired_tests_run_from_the_bundle_when_the_results_are_gone(tmp_path: Path):
    write_run(tmp_path / "ra", "m", "fa", {0: [1, 1, 0, 1, 0, 1, 1, 0] * 5})
    write_run(tmp_path / "rb", "m", "fa", {0: [0, 1, 0, 0, 0, 1, 0, 0] * 5})
    boards = tmp_path / "boards"
    for side in ("ra", "rb"):
        args = ["leaderboard", "build", str(tmp_path / side), "-o", str(boards / f"{side}.json")]
        assert cli(*args, "--keep-examples") == 0
    with_results = compare_files(boards / "ra.json", boards / "rb.json")
    for side in ("ra", "rb"):
        shutil.rmtree(tmp_path / side)  # what a fresh clone of the boards has
    (row,) = compare_files(boards / "ra.json", boards / "rb.json")
    assert row.missing == []
    test = next(m.test for m in row.metrics if m.key == "probe/acc")
    assert test is not None and test.name == "paired-permutation" and test.n == 40  # undeclared
    expected = next(m.test for m in with_results[0].metrics if m.key == "probe/acc")
    assert (test.p_value, test.mean_delta) == (expected.p_value, expected.mean_delta)


def test_the_bundle_is_the_same_bytes_for_the_same_results(tmp_path: Path):
    write_run(tmp_path / "r", "m", "fa", {0: [1, 0, 1] * 4})
    sizes = []
    for name in ("one", "two"):
        assert (
            cli(
                "leaderboard",
                "build",
                str(tmp_path / "r"),
                "-o",
                str(tmp_path / f"{name}.json"),
                "--keep-examples",
            )
            == 0
        )
        sizes.append((tmp_path / f"{name}.examples.json.gz").read_bytes())
    assert sizes[0] == sizes[1]
    assert b'"examples"' in gzip.decompress(sizes[0])
