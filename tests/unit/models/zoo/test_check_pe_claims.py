"""check-pe verifies what a scheme claims of its positional term (issue 39, part 2).

The five broken schemes of the issue's "Done means" each give exactly one failing line and no
traceback; a faithful FIRE-like bias at BERT's initialisation passes its claims; a transform
that ignores its role is caught by the claim that needs one; and the built-ins declare
exactly the claims that hold for every value of their parameters and options.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.models.zoo.check import check_pe
from posharness.models.zoo.check_claims import MEASURES, VERIFIERS
from posharness.pe import (
    CLAIMS,
    LogitTerm,
    NoPositions,
    QueryKeyTransform,
    register_pe,
    relative_offsets,
    rotate,
    rotation_tables,
)
from tests.unit.models.zoo.test_check_pe import DeadParameter, scratch  # noqa: F401
from tests.unit.models.zoo.test_check_pe_faults import PlainTensorBias, WrongShapeBias


class Fire(LogitTerm):
    """FIRE (Li et al. 2023) in its bidirectional form: an MLP of the log distance normalised
    by the query position, f(psi(|j - i|) / psi(max(L, i))), psi(x) = log(1 + x), L = 1.
    Its MLP is left to BERT's initialisation (std 0.02, zero biases): a tiny but real term."""

    def __init__(self, config) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, config.num_attention_heads)
        )

    def normaliser(self, positions: torch.Tensor) -> torch.Tensor:
        """psi(max(L, i)) for the query i of each row, [B, n, 1]."""
        return torch.log1p(positions.clamp(min=1).to(self.mlp[0].weight.dtype)).unsqueeze(-1)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        distance = torch.log1p(relative_offsets(positions).abs().to(self.mlp[0].weight.dtype))
        normalised = (distance / self.normaliser(positions)).unsqueeze(-1)
        return self.mlp(normalised).permute(0, 3, 1, 2)


class FireByKey(Fire):
    """The same bias normalised by the key position j: the wrong one."""

    def normaliser(self, positions: torch.Tensor) -> torch.Tensor:
        return torch.log1p(positions.clamp(min=1).to(self.mlp[0].weight.dtype)).unsqueeze(-2)


class QueryScaledRotary(QueryKeyTransform):
    """RoPE with xPos's scale on the queries alone: zeta^(n/B) on a query, nothing on a key."""

    def __init__(self, config) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, positions: torch.Tensor, role: str) -> torch.Tensor:
        half = x.shape[-1] // 2
        frequencies = 10000.0 ** (-torch.arange(half, dtype=torch.float32) / half)
        cos, sin = rotation_tables(positions, frequencies)
        turned = rotate(x, cos, sin)
        if role == "key":
            return turned
        return turned * 0.4 ** (positions[:, None, :, None].to(x.dtype) / 8)


class RolelessXPos(QueryKeyTransform):
    """xPos written without the role: zeta^(p/B) on queries and keys alike, so the logit of
    (i, j) carries zeta^((i + j)/B) instead of zeta^((i - j)/B)."""

    def __init__(self, config) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x * 0.4 ** (positions[:, None, :, None].to(x.dtype) / 8)


class CausalAlibi(LogitTerm):
    """ALiBi's causal form: -m |i - j| on keys at or before the query, -inf after it."""

    def __init__(self, config) -> None:
        super().__init__()

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        offsets = relative_offsets(positions).unsqueeze(1).to(torch.float64)
        return torch.where(offsets > 0, -math.inf, 0.5 * offsets)


def failures(name: str, scheme, claims: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The failed claim checks of ``scheme`` registered as ``name`` (claims only: cheaper
    than every check, and the tests above show the others run beside them)."""
    register_pe(name, claims=claims)(scheme)
    return [(o.name, o.detail) for o in claim_outcomes(name) if not o.passed]


def claim_outcomes(name: str) -> list:
    from posharness.models.zoo.check import _outcome
    from posharness.models.zoo.check_claims import claim_checks
    from posharness.models.zoo.encoder import PEModel, config_for

    torch.manual_seed(0)
    model = PEModel(config_for(name, "tiny", vocab_size=64)).to(torch.float64)
    return [_outcome(claim, run) for claim, run in claim_checks(model, 12, 0)]


CHECKS = ["seeded", "structure", "positions", "split", "sdpa", "save", "card"]
AFTER_STRUCTURE = ["positions", "split", "sdpa", "save", "card"]


@pytest.mark.parametrize(
    ("scheme", "claims", "check", "message", "not_run"),
    [
        (
            PlainTensorBias,
            (),
            "structure",
            "shared_positions.bias: a tensor held as a plain attribute, not an nn.Parameter",
            ["save"],  # from_pretrained cannot place it; the others run and pass
        ),
        (
            WrongShapeBias,
            (),
            "structure",
            "has shape [1, 3, 12, 12]: it must be [B or 1, H or 1, n, n] = [1, 2 or 1, 12, 12]",
            AFTER_STRUCTURE,  # each would evaluate the same term and fail again
        ),
        (
            FireByKey,
            ("content-free", "depends-on-query-position"),
            "depends-on-query-position",
            "changes when the key moves to the other side of the query: |T(i, i+k) - T(i, i-k)|",
            [],
        ),
        (
            QueryScaledRotary,
            ("symmetric",),
            "symmetric",
            "claims symmetric, but T(j, i) - T(i, j) reaches",
            [],
        ),
        (DeadParameter, (), "card", "parameter shared_positions.unused is counted by the card", []),
    ],
)
def test_each_broken_scheme_fails_in_exactly_one_line(
    scratch,  # noqa: F811
    scheme,
    claims,
    check,
    message,
    not_run,
) -> None:
    name = f"t-{scheme.__name__.lower()}"
    register_pe(name, claims=claims)(scheme)
    outcomes = check_pe(name)
    failed = [(o.name, o.detail) for o in outcomes if not o.passed]
    assert [name for name, _ in failed] == [check], failed
    detail = failed[0][1]
    assert message in detail, detail
    assert "\n" not in detail and "Traceback" not in detail
    expected = [c for c in CHECKS if c not in not_run] + ([] if not_run else list(claims))
    assert [o.name for o in outcomes] == expected
    if not_run:  # the structural line says which checks it left out
        assert detail.endswith(
            "save is not run: from_pretrained cannot place such a tensor"
            if not_run == ["save"]
            else "positions, split, sdpa, save, card and the claims are not run: each "
            "evaluates this term"
        )


def test_a_faithful_fire_at_berts_initialisation_passes_its_claims(scratch) -> None:  # noqa: F811
    register_pe("t-fire", claims=("content-free", "depends-on-query-position"))(Fire)
    outcomes = {o.name: o for o in check_pe("t-fire")}
    assert all(o.passed for o in outcomes.values()), [o.detail for o in outcomes.values()]
    detail = outcomes["depends-on-query-position"].detail
    assert detail.startswith("a function of the query position and |j - i|: moving the key")


def test_a_fire_like_bias_is_not_translation_invariant(scratch) -> None:  # noqa: F811
    failed = failures("t-fire-ti", Fire, ("translation-invariant",))
    assert [name for name, _ in failed] == ["translation-invariant"]
    assert "is not a function of j - i: T(i+1, j+1) - T(i, j) reaches" in failed[0][1]


def test_a_transform_that_ignores_its_role_is_caught_by_a_claim_that_needs_one(
    scratch,  # noqa: F811
) -> None:
    failed = failures("t-roleless-xpos", RolelessXPos, ("translation-invariant",))
    assert [name for name, _ in failed] == ["translation-invariant"]
    assert "take the role argument, forward(x, positions, role)" in failed[0][1]


def test_a_function_of_the_offset_alone_does_not_depend_on_the_query_position(
    scratch,  # noqa: F811
) -> None:
    @register_pe("t-half-alibi", claims=("depends-on-query-position",))
    def half_alibi(positions: torch.Tensor, config) -> torch.Tensor:
        """ALiBi with one slope of 1/2 for every head."""
        return -0.5 * relative_offsets(positions).abs().unsqueeze(1).to(torch.float64)

    failed = [(o.name, o.detail) for o in claim_outcomes("t-half-alibi") if not o.passed]
    assert [name for name, _ in failed] == ["depends-on-query-position"]
    assert "does not change with the query position" in failed[0][1]
    assert "claim translation-invariant instead" in failed[0][1]


def test_causal_only_holds_for_a_masked_future_and_fails_for_a_bidirectional_term(
    scratch,  # noqa: F811
) -> None:
    assert failures("t-causal-alibi", CausalAlibi, ("causal-only", "translation-invariant")) == []
    failed = failures("t-not-causal", Fire, ("causal-only",))
    assert [name for name, _ in failed] == ["causal-only"]
    assert "a key after its query keeps attention weight" in failed[0][1]


def test_an_unknown_claim_is_one_line_with_a_close_match(scratch) -> None:  # noqa: F811
    with pytest.raises(OptionError) as caught:
        register_pe("t-typo", claims=("translation-invariance",))(Fire)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "positional encoding 't-typo': unknown claim 'translation-invariance': did you mean "
        "'translation-invariant'?"
    )


def test_claims_must_be_a_sequence_and_need_a_positional_term(scratch) -> None:  # noqa: F811
    with pytest.raises(OptionError, match=r"got the string 'symmetric': write claims=\('sym"):
        register_pe("t-string", claims="symmetric")(Fire)

    class Nothing(NoPositions):
        pass

    with pytest.raises(OptionError, match="has no positional term .NoPositions., so it can claim"):
        register_pe("t-nothing-claimed", claims=("symmetric",))(Nothing)


def test_every_claim_has_a_check() -> None:
    assert set(VERIFIERS) == set(CLAIMS)


# Claims that hold on the tiny model at initialisation but are not declared, and why: a
# claim is a property of the scheme's form, for every value of its parameters and options.
NOT_DECLARED = {
    # An input embedding adds p alike on both sides, so T is symmetric by construction (the
    # asymmetry of BERT's pp-term comes from W_Q != W_K, which are not the scheme's).
    ("ape", "symmetric"),
    ("sinusoidal", "symmetric"),
    ("positions-only", "symmetric"),
    # Learnable weight tables start as rows of Eq. 8 with s = 1; training moves every entry.
    ("attenuated-table", "depends-on-query-position"),
    ("sequence-table", "depends-on-query-position"),
    # w and s are learnable; the rows are symmetric in the distance only while s = 1.
    ("attenuated", "depends-on-query-position"),
    ("sequence", "symmetric"),
}


def test_builtins_declare_exactly_the_claims_that_hold_for_every_parameter_value() -> None:
    from posharness.models.zoo.check_terms import scheme_units
    from posharness.models.zoo.encoder import NAMED_MODELS, PEModel, config_for

    seen: set[str] = set()
    for model in sorted(NAMED_MODELS):
        config = config_for(model, "tiny", vocab_size=64)
        torch.manual_seed(0)
        encoder = PEModel(config).to(torch.float64)
        for unit in scheme_units(encoder):
            if unit.declaration.name in seen:
                continue
            seen.add(unit.declaration.name)
            holds = set()
            for claim, measure in MEASURES.items():  # the properties, not their negations
                if measure(unit, config, 12, torch.Generator().manual_seed(0)).holds:
                    holds.add(claim)
            declared = set(unit.declaration.claims)
            assert declared <= holds, (unit.declaration.name, declared - holds)
            undeclared = {(unit.declaration.name, claim) for claim in holds - declared}
            assert undeclared <= NOT_DECLARED, undeclared
    assert {"rope", "xpos", "alibi", "t5", "tisa", "shaw", "ape"} <= seen
