"""LongEmbed's comparison point on the real all-MiniLM-L6-v2: documents longer than its 512
positions cut to their first 512 tokens (``passkey.truncate=true``), as LongEmbed's default
run cuts them, so the score is bounded by the share of key sentences the cut leaves."""

from __future__ import annotations

import pytest

from tests.conftest import needs_minilm

pytestmark = pytest.mark.integration


@needs_minilm
def test_minilm_past_its_positions_scores_at_most_the_keys_it_still_sees(tmp_path):
    from posharness.api import evaluate

    outcome = evaluate(
        "minilm",
        "passkey",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        # 50 documents and 25 queries a length keep the test near a minute on 2 cores
        task_args={
            "passkey": {
                "lengths": "512,1024,2048",
                "truncate": "true",
                "documents": "50",
                "queries": "25",
            }
        },
    )
    (cell,) = outcome.cells
    result = cell.result
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    assert set(metrics) == {
        "ndcg_at_1",
        "ndcg_at_1_len512",
        "ndcg_at_1_truncated_len1024",
        "ndcg_at_1_truncated_len2048",
    }
    assert result.task.settings["lengths_truncated"] == [1024, 2048]
    for length in (1024, 2048):
        cut = result.details["per_length"][str(length)]
        assert cut["truncated_to"] == 512 and cut["share_seen"] == 512 / length
        # a document whose key sentence fell past the cut is found only by chance (1/50):
        # two lucky queries of 25 at most
        assert metrics[f"ndcg_at_1_truncated_len{length}"] <= cut["key_seen"] + 2 / 25
    per_length = [value for name, value in metrics.items() if name != "ndcg_at_1"]
    assert metrics["ndcg_at_1"] == pytest.approx(sum(per_length) / 3)  # LongEmbed's average
