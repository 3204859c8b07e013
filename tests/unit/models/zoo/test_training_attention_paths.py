"""docs/pretraining_speed.md's per-scheme table says what the SDPA calls of a training step
are: this runs one masked-LM training forward of every scheme's zoo model and compares each
layer's calls (how many, the shape of ``attn_mask``, whether it trains) with the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import posharness.models.zoo  # noqa: F401  (registers the built-in schemes)
from posharness.models.zoo.encoder import PEForMaskedLM, config_for
from posharness.pe import registry
from posharness.plugins.registry import BUILTIN

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

DOC = Path(__file__).resolve().parents[4] / "docs/pretraining_speed.md"
BATCH, LENGTH = 3, 16  # tiny has 2 heads: batch, heads and length tell the shapes apart


def doc_rows() -> dict[str, list[str]]:
    """Scheme -> the cells of its row in the doc's ``Per scheme`` table."""
    text = DOC.read_text()
    section = text[text.index("## Per scheme") :]
    section = section[: section.index("\n## ", 1)]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 7:
            rows[cells[0].strip("`")] = cells
    return rows


ROWS = doc_rows()


def mask_token(mask: torch.Tensor | None) -> str:
    if mask is None:
        return "none"
    batch, heads, rows, _ = mask.shape
    b = {BATCH: "B", 1: "1"}[batch]
    h = {2: "H", 1: "1"}[heads]
    n = {LENGTH: "n", 1: "1"}[rows]
    return f"[{b},{h},{n},n]"


def layer_calls(model: torch.nn.Module, mask: torch.Tensor | None) -> list[torch.Tensor | None]:
    """The ``attn_mask`` of each SDPA call of the first layer in one training forward."""
    seen: list[torch.Tensor | None] = []
    real = F.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, **kwargs):
        seen.append(attn_mask)
        return real(q, k, v, attn_mask=attn_mask, **kwargs)

    ids = torch.randint(5, 50, (BATCH, LENGTH), generator=torch.Generator().manual_seed(0))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(F, "scaled_dot_product_attention", spy)
        model(input_ids=ids, attention_mask=mask, labels=ids)
    per_layer = len(seen) // model.config.num_hidden_layers
    return seen[:per_layer]


def test_every_built_in_scheme_has_a_row() -> None:
    built_in = {
        name
        for name in registry.scheme_names()
        if registry.declaration(registry.scheme(name)).origin == BUILTIN
    }
    assert built_in <= set(ROWS), sorted(built_in - set(ROWS))


@pytest.mark.parametrize("scheme", sorted(ROWS))
def test_table_row_is_what_a_training_step_runs(scheme: str) -> None:
    _, model_name, calls_cell, _, ones_cell, none_cell, trains_cell, *_ = ROWS[scheme]
    model_name = model_name.strip("`")
    assert registry.variant(model_name).scheme == scheme
    torch.manual_seed(0)
    model = PEForMaskedLM(config_for(model_name, "tiny", vocab_size=50)).train()
    ones = layer_calls(model, torch.ones(BATCH, LENGTH, dtype=torch.long))
    unmasked = layer_calls(model, None)
    assert len(ones) == int(calls_cell.split()[0])
    assert [mask_token(m) for m in ones] == re.findall(r"`([^`]+)`", ones_cell)
    assert [mask_token(m) for m in unmasked] == re.findall(r"`([^`]+)`", none_cell)
    trains = any(m is not None and m.requires_grad for m in ones)
    biased = any(m is not None and m.shape[1] > 1 for m in ones)
    expected = "yes" if trains else "no" if biased else "—"
    assert trains_cell.split()[0] == expected
