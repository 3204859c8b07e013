"""LongEmbed's passkey retrieval on the real all-MiniLM-L6-v2 at 64…512 tokens."""

from __future__ import annotations

import pytest

from tests.conftest import needs_minilm

pytestmark = pytest.mark.integration


@needs_minilm
def test_minilm_finds_the_pass_key_in_short_documents_and_loses_it_in_long_ones(tmp_path):
    from posharness.api import evaluate

    outcome = evaluate(
        "minilm",
        "passkey",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"passkey": {"lengths": "64,128,256,512,1024"}},
    )
    (cell,) = outcome.cells
    result = cell.result
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    # the table holds 512 positions: 1024 is not applicable, with the reason, never a zero
    assert "ndcg_at_1_len1024" not in metrics
    assert "exceed the model's 512 positions" in result.details["not_applicable"]["1024"]
    assert result.task.settings["lengths_scored"] == [64, 128, 256, 512]
    by_length = [metrics[f"ndcg_at_1_len{n}"] for n in (64, 128, 256, 512)]
    # far above chance (0.01) where MiniLM was trained (128 tokens), falling with length
    assert by_length[0] > 0.5 and by_length[0] > by_length[-1]
    assert all(value > 0.01 for value in by_length)
    assert metrics["ndcg_at_1"] == pytest.approx(sum(by_length) / 4)
