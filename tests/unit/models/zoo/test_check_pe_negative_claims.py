"""A scheme may claim what its term is *not*, and check-pe verifies it (issue 47, part 7).

``not-symmetric`` used to be refused with "did you mean 'symmetric'?", steering an author
of an xPos-like scheme to the opposite, false claim. A negative claim is read from the same
measurement as its property: it holds where that measurement exceeds the tolerance, and a
false one fails in one line with the number that shows the property holds. A per-layer
scheme's structural fault is named once, not once per layer.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.pe import CLAIMS, ContentLogitTerm, LogitTerm, register_pe, relative_offsets
from tests.unit.models.zoo.test_check_pe import scratch  # noqa: F401  (the fixture)
from tests.unit.models.zoo.test_check_pe_claims import QueryScaledRotary, claim_outcomes


class DistanceBias(LogitTerm):
    """-|j - i| / 4 in every head: content-free, translation-invariant and symmetric."""

    def __init__(self, config) -> None:
        super().__init__()

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return -relative_offsets(positions).abs().unsqueeze(1).to(torch.float64) / 4


class RelativeKeys(ContentLogitTerm):
    """Shaw et al.'s relative keys, q_i . a_clip(j - i) * scale: reads the words."""

    def __init__(self, config) -> None:
        super().__init__()
        self.keys = nn.Embedding(9, config.head_size)

    def forward(self, query, positions, scale):
        index = relative_offsets(positions).clamp(-4, 4) + 4
        return (query.unsqueeze(-2) * self.keys(index).unsqueeze(1)).sum(-1) * scale


class PerLayerPlainTable(LogitTerm):
    """A per-layer bias holding its table as a plain tensor: one fault, in every layer."""

    per_layer = True

    def __init__(self, config) -> None:
        super().__init__()
        self.table = torch.zeros(9, config.num_attention_heads)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        k = relative_offsets(positions).clamp(-4, 4) + 4
        return self.table.to(positions.device)[k].permute(0, 3, 1, 2)


def outcomes(name: str, scheme: type, claims: tuple[str, ...]) -> dict[str, tuple[bool, str]]:
    register_pe(name, claims=claims)(scheme)
    return {o.name: (o.passed, o.detail) for o in claim_outcomes(name)}


def test_every_property_has_its_negation() -> None:
    assert "not-symmetric" in CLAIMS and "not-content-free" in CLAIMS
    assert {name for name in CLAIMS if not name.startswith("not-")} == {
        name.removeprefix("not-") for name in CLAIMS
    }


def test_a_true_negative_claim_passes_with_its_measured_number(scratch) -> None:  # noqa: F811
    found = outcomes("t-xpos-like", QueryScaledRotary, ("not-symmetric",))
    passed, detail = found["not-symmetric"]
    assert passed, detail
    assert detail.startswith("not symmetric, as claimed: T(j, i) - T(i, j) reaches ")

    found = outcomes("t-relative-keys", RelativeKeys, ("not-content-free",))
    passed, detail = found["not-content-free"]
    assert passed and "its term changes with the words" in detail, detail


def test_a_false_negative_claim_fails_in_one_line_with_the_measured_number(
    scratch,  # noqa: F811
) -> None:
    found = outcomes("t-distance", DistanceBias, ("not-symmetric", "not-content-free"))
    for claim, prop in (("not-symmetric", "symmetric"), ("not-content-free", "content-free")):
        passed, detail = found[claim]
        assert not passed and "\n" not in detail
        assert detail.startswith(f"t-distance (shared_positions) claims {claim}, but it is {prop}")
        assert "largest difference 0, 0 of the term's scale 2.75" in detail, detail
        assert detail.endswith(f"drop the claim, or claim {prop}")


def test_a_property_and_its_negation_cannot_both_be_claimed(scratch) -> None:  # noqa: F811
    with pytest.raises(OptionError) as caught:
        register_pe("t-both-ways", claims=("symmetric", "not-symmetric"))(DistanceBias)
    assert str(caught.value) == (
        "positional encoding 't-both-ways' claims both 'symmetric' and 'not-symmetric': keep "
        "the one that holds for every option value"
    )


def test_a_per_layer_structural_fault_is_named_once(scratch) -> None:  # noqa: F811
    from posharness.models.zoo.check_terms import structural_faults
    from posharness.models.zoo.encoder import PEModel, config_for

    register_pe("t-per-layer-plain")(PerLayerPlainTable)
    config = config_for("t-per-layer-plain", "tiny", vocab_size=64)
    faults, plain, unusable = structural_faults(PEModel(config).double(), config, 12)
    assert plain and not unusable
    (fault,) = faults
    assert fault.startswith(
        "layer.N.attention.layer_score.table (in each of 2 layers): a tensor held as a plain "
        "attribute"
    )
    assert "layer.0" not in fault and "layer.1" not in fault
