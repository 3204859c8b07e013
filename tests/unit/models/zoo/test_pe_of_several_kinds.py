"""A positional encoding of several kinds, each applied where its kind belongs (issue 47, part 6).

docs/new_pe.md's worked example (the block after its ``<!-- tested: ... -->`` marker) is
Transformer-XL's learned global query bias (Dai et al. 2019, Eq. 4) as a query-side
transform, beside Shaw et al. (2018)'s relative keys as a content logit term, combined in a
``Combination``. Here that block, cut out of the page and imported as a file, passes
check-pe, and its attention logits in every mode equal a hand computation from the layer's
weights; a part that ignores positions is judged as a part (it must change the logits), not
as a model; a class that inherits two kinds, and combinations the encoder cannot place,
are refused in one line.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
import sys
from pathlib import Path

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.zoo.check import PECheckError, check_pe
from posharness.pe import (
    Combination,
    ContentLogitTerm,
    InputEmbedding,
    QueryKeyTransform,
    declaration,
    register_pe,
    register_variant,
)
from tests.unit.models.zoo.test_check_pe import scratch  # noqa: F401  (the fixture)

REPO = Path(__file__).resolve().parents[4]
GUIDE = REPO / "docs" / "new_pe.md"
MARKER = "<!-- tested: tests/unit/models/zoo/test_pe_of_several_kinds.py -->"
NAME = "biased-relative-keys"
_loaded = itertools.count()


def guide_block() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(re.escape(MARKER) + r"\s*```python\n(.*?)```", text, re.DOTALL)
    assert found, f"{GUIDE}: no python block after {MARKER}"
    return found.group(1)


@pytest.fixture
def example(scratch, tmp_path: Path):  # noqa: F811
    """The guide's block imported as a file of its own (registrations undone afterwards)."""
    path = tmp_path / "several_kinds.py"
    path.write_text(guide_block(), encoding="utf-8")
    module_name = f"several_kinds_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[module_name]


def tiny(name: str = NAME, **options):
    from posharness.models.zoo.encoder import PEModel, config_for

    torch.manual_seed(0)
    return PEModel(config_for(name, "tiny", vocab_size=64, **options)).double().eval()


def test_the_guides_combination_passes_check_pe(example) -> None:
    outcomes = {o.name: o for o in check_pe(NAME)}
    assert [name for name, o in outcomes.items() if not o.passed] == []
    assert outcomes["parts"].detail == (
        "each part changes the logits: query-bias through its parameters (a no-op at "
        "initialisation); relative-keys by 0.056"
    )
    assert outcomes["card"].detail.startswith("576 parameters")  # u: 2 x 16; a: 2 x 17 x 16


def test_each_part_is_placed_where_its_kind_belongs(example) -> None:
    from posharness.models.zoo.encoder.modes import mode_support

    model = tiny(max_distance=4)
    assert declaration(example.BiasedRelativeKeys).parts == ("query-bias", "relative-keys")
    assert isinstance(model.shared_transform, example.QueryBias)
    assert model.shared_positions is None
    for layer in model.layer:
        assert isinstance(layer.attention.layer_score, example.RelativeKeys)
        assert layer.attention.layer_score.keys.num_embeddings == 9  # the part's option
    assert mode_support(model.config) == {
        "both": (True, "as-trained", None),
        "contextual": (True, "no-query-bias+drop-relative-keys", False),
        "positional": (False, "bias-qk-query-bias+relative-keys", False),
    }


def _by_hand(model, hidden: torch.Tensor, layer: int, mode: str) -> torch.Tensor:
    """Layer ``layer``'s logits from its weights, entry by entry for the relative term:
    both (q_i + u)·k_j s + q_i·a_c(j-i) s, contextual q_i·k_j s, positional
    (b_Q + u)·b_K s + q_i·a_c(j-i) s, with s = 1/sqrt(d) and c clipping to the table."""
    attention = model.layer[layer].attention
    heads, d = model.config.num_attention_heads, model.config.head_size
    batch, n, _ = hidden.shape

    def per_head(x: torch.Tensor) -> torch.Tensor:
        return x.view(batch, n, heads, d).transpose(1, 2)

    q, k = per_head(attention.query(hidden)), per_head(attention.key(hidden))
    u = model.shared_transform.u  # [heads, 1, d]
    table = attention.layer_score.keys.weight
    reach = attention.layer_score.max_distance
    scale = 1 / math.sqrt(d)
    relative = torch.zeros(batch, heads, n, n, dtype=torch.float64)
    for i, j in itertools.product(range(n), range(n)):
        a = table[max(-reach, min(reach, j - i)) + reach]
        relative[:, :, i, j] = (q[:, :, i, :] * a).sum(-1) * scale
    if mode == "contextual":
        return q @ k.transpose(-1, -2) * scale
    if mode == "both":
        return (q + u) @ k.transpose(-1, -2) * scale + relative
    b_q = attention.query.bias.view(heads, 1, d)
    b_k = attention.key.bias.view(heads, 1, d)
    return ((b_q + u) @ b_k.transpose(-1, -2) * scale).expand(batch, -1, n, n) + relative


def test_its_attention_logits_equal_a_hand_computation(example) -> None:
    model = tiny(max_distance=3)  # offsets beyond 3 clip within the 8 positions below
    with torch.no_grad():  # every term nonzero: u, and the projections' biases
        model.shared_transform.u.normal_()
        for layer in model.layer:
            layer.attention.query.bias.normal_()
            layer.attention.key.bias.normal_()
    ids = torch.randint(5, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    model.set_attention_path("eager")  # each layer's input as the recording forward made it
    for mode in ("both", "contextual", "positional"):
        with torch.no_grad(), model.attention_mode_set(mode):
            record = model.attention_record(ids)
            inputs = model(ids, output_hidden_states=True).hidden_states
        for layer, terms in enumerate(record):
            expected = _by_hand(model, inputs[layer], layer, mode)
            assert torch.allclose(terms.logits, expected, rtol=0, atol=1e-12), (mode, layer)


def test_a_part_that_ignores_positions_is_checked_as_a_part(example) -> None:
    from posharness.models.zoo.check import positions_ignored

    register_variant("query-bias-alone", "query-bias")  # as a model of its own it is NoPE
    assert positions_ignored(tiny("query-bias-alone")).startswith(
        "scheme query-bias ignores positions"
    )
    assert positions_ignored(tiny()) is None  # inside the combination the scheme uses them


class Untouched(QueryKeyTransform):
    """A transform that returns its input: a part that adds nothing."""

    def __init__(self, config) -> None:
        super().__init__()

    def forward(self, x, positions, role):
        return x


def test_a_part_that_changes_nothing_fails_the_parts_check(example) -> None:
    from posharness.models.zoo.check import _Bench
    from posharness.models.zoo.encoder import config_for

    register_pe("untouched", variant=False)(Untouched)

    class Idle(Combination):
        parts = (Untouched, example.RelativeKeys)

    register_pe("idle-combination")(Idle)
    bench = _Bench(config_for("idle-combination", "tiny", vocab_size=64), 0)
    with pytest.raises(PECheckError) as caught:
        bench.parts()
    assert str(caught.value).startswith(
        "part untouched (query/key transform, shared_transform) leaves the logits as they are"
    )


def test_a_class_inheriting_two_kinds_is_refused_in_one_line(scratch) -> None:  # noqa: F811
    class TwoKinds(QueryKeyTransform, ContentLogitTerm):
        pass

    with pytest.raises(OptionError) as caught:
        register_pe("two-kinds")(TwoKinds)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "positional encoding 'two-kinds' (tests.unit.models.zoo.test_pe_of_several_kinds."
        "test_a_class_inheriting_two_kinds_is_refused_in_one_line.<locals>.TwoKinds) inherits "
        "two kinds, QueryKeyTransform and ContentLogitTerm"
    )
    assert message.endswith("combine them in a posharness.pe.Combination with parts = (...) "
                            "(docs/new_pe.md, 'A scheme of several kinds')")  # fmt: skip


class Positions(InputEmbedding):
    pass


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (
            lambda ex: (ex.RelativeKeys, ex.RelativeKeys),
            "parts 'relative-keys' and 'relative-keys' both act as the per-layer term",
        ),
        (lambda ex: (ex.QueryBias,), "needs parts = (A, B, ...), two or more"),
        (lambda ex: (ex.QueryBias, Untouched), "part Untouched is not a registered scheme class"),
        (
            lambda ex: (ex.QueryBias, register_pe("positions", variant=False)(Positions)),
            "part 'positions' is an input embedding, which a combination cannot hold: give input "
            "positions with the combination's absolute",
        ),
    ],
)
def test_a_combination_the_encoder_cannot_place_is_refused(example, parts, message) -> None:
    class Unplaceable(Combination):
        pass

    Unplaceable.parts = parts(example)
    with pytest.raises(OptionError, match=re.escape(message)):
        register_pe("unplaceable")(Unplaceable)


def test_a_combination_claims_through_its_parts(example) -> None:
    class Claiming(Combination):
        parts = (example.QueryBias, example.RelativeKeys)

    with pytest.raises(OptionError, match="claim each property on the part whose term has it"):
        register_pe("claiming", claims=("symmetric",))(Claiming)


def test_each_parts_claims_are_checked_under_its_name(example) -> None:
    from posharness.models.zoo.check_claims import claim_checks
    from posharness.models.zoo.schemes.rotary import Rotary

    class RotaryRelativeKeys(Combination):
        parts = (Rotary, example.RelativeKeys)  # a built-in part, with its own claims

    register_pe("rotary-relative-keys")(RotaryRelativeKeys)
    checks = claim_checks(tiny("rotary-relative-keys"), 12, 0)
    assert [label for label, _run in checks] == ["translation-invariant (rope)", "symmetric (rope)"]
    assert all(run().startswith("T(") for _label, run in checks)
