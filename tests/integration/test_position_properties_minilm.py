"""Wang et al.'s position-wise properties of the real all-MiniLM-L6-v2's position table."""

from __future__ import annotations

import pytest

from tests.conftest import needs_minilm

pytestmark = pytest.mark.integration


@needs_minilm
def test_minilm_position_table_is_monotone_partly_translation_invariant_and_symmetric(tmp_path):
    from posharness.api import evaluate

    outcome = evaluate(
        "minilm",
        "position_properties",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
    )
    (cell,) = outcome.cells
    result = cell.result
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    assert result.task.settings["table_positions"] == 512  # the whole learned table
    # measured 0.722, 0.569 and 1 (the dot product is symmetric by construction)
    assert 0.65 < metrics["table_monotonicity"] < 0.8  # near beats far well above chance
    assert 0.45 < metrics["table_translation_invariance"] < 0.7
    assert metrics["table_symmetry"] == pytest.approx(1.0)
    # the positional term (TISA extraction through each layer's W_Q, W_K) is measured too
    assert 0.0 <= metrics["positional_term_symmetry"] <= 1.0
