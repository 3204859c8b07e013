"""check-pe passes every built-in scheme and names what is wrong with broken ones, in one line."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.models.zoo.check import PECheckError, assert_pe_ok, check_pe
from posharness.models.zoo.encoder import NAMED_MODELS
from posharness.pe import (
    InputEmbedding,
    LogitTerm,
    register_pe,
    register_variant,
    relative_offsets,
    sinusoidal_table,
)
from posharness.plugins import models, pe_variants, positional_encodings
from tests.cli_helpers import posharness_cli

BUILTIN_NAMES = sorted(NAMED_MODELS)


@pytest.fixture
def scratch() -> Iterator[None]:
    """Registrations made in a test disappear after it (the registries are process-wide)."""
    registries = (positional_encodings, pe_variants, models)
    for registry in registries:  # entry points load once: a snapshot taken before would drop them
        registry.load_plugins()
    saved = [dict(r._entries) for r in registries]
    with positional_encodings.origin("include", "test"), pe_variants.origin("include", "test"):
        yield
    for name, entry in positional_encodings._entries.items():
        if name not in saved[0] and entry.obj is not None:
            del entry.obj.__pe__  # the class may be registered again by another test
    for registry, entries in zip(registries, saved, strict=True):
        registry._entries.clear()
        registry._entries.update(entries)


class ClippedBias(LogitTerm):
    """A learned scalar per head and clipped offset (the tutorial's scheme)."""

    def __init__(self, config, max_distance: int = 4) -> None:
        super().__init__()
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, config.num_attention_heads)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        k = relative_offsets(positions).clamp(-self.max_distance, self.max_distance)
        return self.bias(k + self.max_distance).permute(0, 3, 1, 2)


class ZeroBias(LogitTerm):
    """Positions ignored: a raw parameter left at zero (nothing initialises it)."""

    def __init__(self, config, max_distance: int = 4) -> None:
        super().__init__()
        self.max_distance = max_distance
        self.bias = nn.Parameter(torch.zeros(2 * max_distance + 1, config.num_attention_heads))

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        k = relative_offsets(positions).clamp(-self.max_distance, self.max_distance)
        return nn.functional.embedding(k + self.max_distance, self.bias).permute(0, 3, 1, 2)


class WrongSignSplit(ClippedBias):
    """A 'cheaper' positional form that flips the sign: the split is no longer exact."""

    def positional(self, positions, key_mask):
        return -self.delta(positions, key_mask)


class FusedDiffers(ClippedBias):
    """A fused bias that is not the eager one."""

    def fused_bias(self, positions, key_mask):
        return 2 * self.delta(positions, key_mask)


class DeadParameter(ClippedBias):
    """A parameter the card counts that no positional term uses."""

    def __init__(self, config, max_distance: int = 4) -> None:
        super().__init__(config, max_distance)
        self.unused = nn.Parameter(torch.ones(3))


class UnseededInit(ZeroBias):
    """Initialised from a generator of its own, seeded by the clock."""

    def init_weights(self, std: float) -> None:
        generator = torch.Generator()
        generator.seed()
        with torch.no_grad():
            self.bias.copy_(torch.randn(self.bias.shape, generator=generator))


CHECKS = ["seeded", "structure", "positions", "split", "sdpa", "save", "card"]


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_check_pe_passes_every_builtin_name_and_its_claims(name: str) -> None:
    from posharness.models.zoo.encoder import config_for
    from posharness.models.zoo.encoder.config import absolute_class
    from posharness.pe import declaration, scheme

    config = config_for(name, "tiny", vocab_size=64)
    declared = declaration(scheme(config.scheme))
    claims = list(declared.claims)  # then those of input positions added beside the scheme
    if config.absolute != "none" and declared.kind != "input embedding":
        claims += declaration(absolute_class(config.absolute)).claims
    outcomes = check_pe(name)
    assert [o.name for o in outcomes] == CHECKS + claims
    assert all(o.passed for o in outcomes), [o.detail for o in outcomes if not o.passed]


def test_a_working_plugin_scheme_passes(scratch) -> None:
    register_pe("t-clipped", defaults={"max_distance": 4})(ClippedBias)
    assert_pe_ok("t-clipped")
    card = {o.name: o.detail for o in check_pe("t-clipped")}["card"]
    assert card.startswith(f"{9 * 2} parameters")  # 2k + 1 offsets x 2 heads (tiny)


@pytest.mark.parametrize(
    ("broken", "check", "message"),
    [
        (ZeroBias, "positions", "ignores positions: permuting the input only permutes"),
        (WrongSignSplit, "split", "mode positional's term vs the delta mode both adds"),
        (FusedDiffers, "sdpa", "mode both: the SDPA path vs eager differ"),
        (DeadParameter, "card", "parameter shared_positions.unused is counted by the card but"),
        (UnseededInit, "seeded", "two builds with seed 0 differ in shared_positions.bias"),
    ],
)
def test_check_pe_names_what_is_broken_in_one_line(scratch, broken, check, message) -> None:
    name = f"t-{broken.__name__.lower()}"
    register_pe(name, defaults={"max_distance": 4})(broken)
    failed = [o for o in check_pe(name) if not o.passed]
    assert [o.name for o in failed][:1] == [check]
    assert message in failed[0].detail and "\n" not in failed[0].detail
    with pytest.raises(PECheckError, match=f"{name}: {check}: "):
        assert_pe_ok(name)


ZERO_BIAS_PLUGIN = textwrap.dedent(
    """
            import torch
            from torch import nn
            from posharness.pe import LogitTerm, register_pe

            @register_pe("zero-bias")
            class ZeroBias(LogitTerm):
                def __init__(self, config):
                    super().__init__()
                    self.bias = nn.Parameter(torch.zeros(config.num_attention_heads, 1, 1))

                def forward(self, positions):
                    return self.bias.expand(-1, positions.shape[-1], positions.shape[-1])[None]
            """
)


def test_the_command_fails_in_one_line_on_a_broken_plugin_file(tmp_path: Path) -> None:
    plugin = tmp_path / "zero_bias.py"
    plugin.write_text(ZERO_BIAS_PLUGIN)
    proc = posharness_cli("check-pe", "zero-bias", "--include", plugin, cwd=tmp_path)
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1
    assert errors[0].startswith(
        "posharness: error: zero-bias: positions: scheme zero-bias ignores positions: permuting "
        "the input only permutes the outputs (largest other change "
    )  # the measured change is float64 rounding, then the floor it is read against
    assert errors[0].endswith(
        "of the outputs' scale 3.05; is its positional term zero, or constant along each row, "
        "at initialisation?)"
    )


def test_registering_a_name_twice_names_both_origins(scratch) -> None:
    register_pe("t-twice")(ClippedBias)
    with pytest.raises(OptionError, match=r"'t-twice' is registered twice \(test and test\)"):
        register_pe("t-twice")(ZeroBias)


def test_a_scheme_with_no_contribution_is_refused(scratch) -> None:
    class Nothing(nn.Module):
        pass

    with pytest.raises(OptionError, match="declares no positional contribution: subclass one"):
        register_pe("t-nothing")(Nothing)


def test_a_default_the_scheme_does_not_take_is_refused(scratch) -> None:
    with pytest.raises(OptionError, match="default 'width' is not a keyword of"):
        register_pe("t-width", defaults={"width": 3})(ClippedBias)
    with pytest.raises(OptionError, match="'hidden_size' is a model field"):
        register_pe("t-hidden", defaults={"hidden_size": 3})(ClippedBias)


def test_a_variant_is_data_and_a_model_name(scratch) -> None:
    register_variant("t-mynope", "nope", description="NoPE under another name")
    assert NAMED_MODELS["t-mynope"] == {"scheme": "nope"}
    assert models.entry("t-mynope").obj.modes == "both, contextual"
    assert_pe_ok("t-mynope")


def test_pretraining_a_scheme_that_ignores_positions_is_refused_before_reading(
    tmp_path: Path,
) -> None:
    plugin = tmp_path / "zero_bias.py"
    plugin.write_text(ZERO_BIAS_PLUGIN)
    missing = tmp_path / "no-corpus-here.txt"
    proc = posharness_cli(
        "pretrain", "--model", "zero-bias", "--include", plugin, "--corpus", missing,
        "--steps", "2", "--size", "tiny", "--out", tmp_path / "run", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "ignores positions" in proc.stderr and "would train a model without positions" in (
        proc.stderr
    )
    assert not (tmp_path / "run").exists()


def test_a_function_of_positions_is_a_parameter_free_logit_term(scratch) -> None:
    @register_pe("t-half-alibi")
    def half_alibi(positions: torch.Tensor, config) -> torch.Tensor:
        """ALiBi with one slope of 1/2 for every head."""
        return -0.5 * relative_offsets(positions).abs().unsqueeze(1).to(torch.float64)

    assert_pe_ok("t-half-alibi")
    assert {o.name: o.detail for o in check_pe("t-half-alibi")}["card"] == (
        "no positional parameters, none counted"
    )


def test_one_class_cannot_be_two_schemes(scratch) -> None:
    register_pe("t-once")(ClippedBias)
    with pytest.raises(OptionError, match="is already registered as 't-once': register a"):
        register_pe("t-again")(ClippedBias)


def test_a_plugin_cannot_take_a_builtin_schemes_name(scratch) -> None:
    with pytest.raises(OptionError, match=r"'t5' is registered twice \(posharness and test\)"):
        register_pe("t5")(ClippedBias)


class SinusoidStart(InputEmbedding):
    """A learned table that starts as sinusoids."""

    absolute_name = "sin-start"
    bounded = True

    def __init__(self, config) -> None:
        super().__init__(config)
        table = sinusoidal_table(torch.arange(self.max_positions)[None], self.size)[0]
        self.weight = nn.Parameter(table.clone())

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return nn.functional.embedding(positions, self.weight)


def test_a_plugin_input_embedding_combines_with_a_logit_term_by_its_absolute_name(
    scratch,
) -> None:
    from posharness.models.zoo.encoder import config_for, pe_card

    register_pe("t-sin-start")(SinusoidStart)
    register_variant("t-t5-sin-start", "t5", absolute="sin-start")
    assert_pe_ok("t-sin-start")
    assert_pe_ok("t-t5-sin-start")
    card = pe_card(config_for("t-t5-sin-start", "tiny", vocab_size=64))
    assert card.family == "t-sin-start + T5 bucketed relative bias"
    assert card.reference_point == "both" and card.positional_parameters == 64 * 32 + 32 * 2


def test_an_included_files_errors_name_the_file_not_a_generated_module(tmp_path: Path) -> None:
    plugin = tmp_path / "no_kind.py"
    plugin.write_text(
        "from torch import nn\nfrom posharness.pe import register_pe\n\n"
        "@register_pe('t-no-kind')\nclass PlainModule(nn.Module):\n    pass\n"
    )
    proc = posharness_cli("check-pe", "t-no-kind", "--include", plugin, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "posharness: error: --include no_kind.py: positional encoding 't-no-kind' (no_kind.py: "
        "PlainModule) declares no positional contribution: subclass one of posharness.pe's "
        "InputEmbedding, LogitTerm, ContentLogitTerm, UntiedProduct, QueryKeyTransform, "
        "PositionalAttention, Combination (several kinds), or NoPositions for a model without "
        "positions"
    )
