"""Results and leaderboards written by earlier versions still read, build and merge: a
schema change never orphans results (fixtures in tests/fixtures/schema_v1/)."""

from __future__ import annotations

import shutil
from pathlib import Path

from posharness.boards import leaderboard as lb
from posharness.contracts.results import read_result

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schema_v1"


def test_a_version_1_result_reads_with_the_fields_it_lacks_empty():
    result = read_result(FIXTURES / "results" / "minilm" / "locality_symmetry__both__seed0.json")
    assert result.schema_version == 1
    assert result.metrics["locality"].value > 0
    assert result.limit is None and result.train_limit is None and result.flags == []
    assert result.mode.name == "both"


def test_a_version_1_leaderboard_loads_and_takes_new_rows(tmp_path):
    old = lb.load(FIXTURES / "leaderboard.json")
    assert old.rows and all(row.settings == {} and row.flags == {} for row in old.rows)
    results = tmp_path / "results"
    shutil.copytree(FIXTURES / "results", results)
    rebuilt = lb.build(lb.collect_results(results), "board", tmp_path / "board.json")
    merged, summary = lb.merge_with_summary(old, rebuilt)
    # The fixture's rows are mode `both`, which the split definition and reference corpus do
    # not touch: the rebuilt row is the old row again, so the merge finds it unchanged and
    # neither duplicates nor replaces it.
    assert (
        {r.key for r in merged.rows} == {r.key for r in old.rows} == {r.key for r in rebuilt.rows}
    )
    assert all("split" not in r.settings and "reference" not in r.settings for r in rebuilt.rows)
    assert summary.unchanged == len(rebuilt.rows) and summary.added == 0 and summary.replaced == ()
    fresh = next(r for r in merged.rows if r.key == rebuilt.rows[0].key)
    assert fresh.scores.keys() == rebuilt.rows[0].scores.keys()
