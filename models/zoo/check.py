"""``check_pe``: verify a registered positional encoding numerically, on a tiny random model.

A scheme's author declares only what it contributes (``posharness.pe``); whether the model
built from it honours the mode split, the fused path, saving and the card is checked here,
in float64 so that any difference is a bug and not rounding (issue 29: a scheme missing one
private edit trained with no positions at all, and nothing noticed). Each check returns a
one-line failure that names what differs:

* ``seeded`` — two builds with one seed are identical (the initialisation uses the global
  generator, as ``transformers.initialization`` does);
* ``structure`` — every tensor a scheme module holds is a parameter or a buffer, and each
  module's term has its kind's shape (``check_terms``); a fault here is named as such and
  skips the checks that would only fail on it again;
* ``positions`` — the model uses positions: permuting the input tokens must not merely
  permute the outputs (a zero or row-constant positional term fails);
* ``parts`` — for a combination of kinds only (``posharness.pe.Combination``): each part
  changes the logits, by its value or once its parameters move. Positions are the whole
  scheme's test, not each part's: Transformer-XL's global query bias ignores them by design
  and is a faithful part beside a relative term (issue 47, part 6);
* ``split`` — in every layer and head the logits are gamma + delta, the forward that records
  them equals the plain one, contextual uses gamma and positional delta, and for an exact
  kind the positional mode's term is the delta mode ``both`` adds;
* ``sdpa`` — the fused (SDPA) path equals the eager one in every mode;
* ``save`` — ``save_pretrained`` then ``AutoModel.from_pretrained`` gives identical outputs;
* ``card`` — the card counts exactly the parameters of the scheme's modules, and each of
  them changes the positional term (and, for a term from positions, nothing else does); for
  a combination the term is what its parts add to the logits in mode ``both``;
* one check per property the scheme claims of its term (``register_pe(claims=...)``:
  content-free, translation-invariant, symmetric, depends-on-query-position, causal-only),
  measured against a tolerance relative to the term's scale (``check_claims``).

Each check runs on its own: an exception the scheme's code raises inside one (a plain
tensor where a parameter belongs, a term of the wrong shape) becomes that check's one line,
naming the likely fault, and the other checks still run; a model that cannot even be built
gives one ``build`` line. Plugin authors call :func:`assert_pe_ok` from their tests;
``posharness check-pe NAME`` runs the same checks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from posharness.base.errors import PosharnessError
from posharness.models.zoo.check_faults import PECheckError, raised_line
from posharness.models.zoo.position_effect import positions_ignored
from posharness.pe import registry

TOLERANCE = 1e-9  # float64: anything above is a different computation, not rounding
# Eager attention takes its softmax in float32 (attention.masked_softmax), SDPA in the
# model's float64: outputs of the two paths agree to float32's rounding, no closer.
PATH_TOLERANCE = 1e-6
_EXACT_FROM_POSITIONS = (registry.LOGIT_TERM, registry.UNTIED_PRODUCT, registry.CONTENT_LOGIT_TERM)
_VOCAB, _LENGTH, _BATCH = 64, 12, 3

__all__ = ["CheckOutcome", "PECheckError", "assert_pe_ok", "check_pe", "positions_ignored"]


@dataclass(frozen=True)
class CheckOutcome:
    name: str  # the check
    passed: bool
    detail: str  # what was verified, or the one-line failure


def check_pe(name: str, seed: int = 0, **options: Any) -> list[CheckOutcome]:
    """Run every check on model ``name`` (a PE variant) at the ``tiny`` size, in float64."""
    import posharness.models.zoo.encoder  # noqa: F401  (registers the zoo with the Auto* classes)
    from posharness.models.zoo.encoder import config_for

    try:
        config = config_for(name, "tiny", vocab_size=_VOCAB, **options)
        bench = _Bench(config, seed)
    except PosharnessError:
        raise  # a bad name or option: the command's own one-line error
    except Exception as exc:  # the scheme's code fails while the model is built
        return [CheckOutcome("build", False, raised_line("building the tiny model", exc))]
    checks: list[tuple[str, Callable[[], str]]] = [
        ("seeded", bench.seeded),
        ("structure", bench.structure),
        ("positions", bench.uses_positions),
        *([("parts", bench.parts)] if bench.kind == registry.COMBINATION else []),
        ("split", bench.split),
        ("sdpa", bench.sdpa),
        ("save", bench.save),
        ("card", bench.card),
    ]
    outcomes = [_outcome(check, run) for check, run in _unskipped(checks, bench.skipped)]
    if "claims" not in bench.skipped:
        outcomes += [_outcome(claim, run) for claim, run in bench.claim_checks()]
    return outcomes


def _unskipped(
    checks: list[tuple[str, Callable[[], str]]], skipped: set[str]
) -> Iterator[tuple[str, Callable[[], str]]]:
    """The checks not skipped, read lazily: ``structure`` decides what the later ones skip."""
    for check, run in checks:
        if check not in skipped:
            yield check, run


def _outcome(check: str, run: Callable[[], str]) -> CheckOutcome:
    """One check's outcome: its detail, its failure, or what the scheme's code raised in it."""
    try:
        return CheckOutcome(check, True, run())
    except PECheckError as failure:
        return CheckOutcome(check, False, str(failure))
    except Exception as exc:  # a fault in the scheme's code: this check's line, the rest run
        return CheckOutcome(check, False, raised_line(f"the {check} check", exc))


def assert_pe_ok(name: str, seed: int = 0, **options: Any) -> None:
    """For a plugin's tests: raise ``PECheckError`` with the first failure's line."""
    for outcome in check_pe(name, seed, **options):
        if not outcome.passed:
            raise PECheckError(f"{name}: {outcome.name}: {outcome.detail}")


class _Bench:
    """One tiny float64 model of the scheme, and the inputs every check feeds it."""

    def __init__(self, config: Any, seed: int) -> None:
        from posharness.models.zoo.encoder import PEModel
        from posharness.models.zoo.encoder.config import scheme_class
        from posharness.models.zoo.encoder.schemes import kind
        from posharness.pe import declaration
        from posharness.pe.combination import parts_of

        self.config, self.seed = config, seed
        self.kind = kind(config)
        part_kinds = {declaration(p).kind for p in parts_of(scheme_class(config.scheme))}
        # every term a logit term: mode positional's delta is exactly the one both adds
        self.exact_kinds = part_kinds <= set(_EXACT_FROM_POSITIONS)
        torch.manual_seed(seed)
        self.model = PEModel(config).to(torch.float64).eval()
        generator = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(5, _VOCAB, (_BATCH, _LENGTH), generator=generator)
        self.mask = torch.ones(_BATCH, _LENGTH, dtype=torch.long)
        self.mask[1, _LENGTH - 3 :] = 0  # one padded sequence: masking is part of every check
        self.modes = list(_modes(config))
        self.skipped: set[str] = set()  # checks a structural fault makes pointless

    def structure(self) -> str:
        """Tensors held as parameters or buffers, and each scheme module's term of its kind's
        shape (``check_terms``); a fault here skips the checks that would only repeat it."""
        from posharness.models.zoo.check_terms import scheme_units, structural_faults

        faults, plain, unusable = structural_faults(self.model, self.config, _LENGTH)
        if unusable:
            self.skipped |= {"positions", "split", "sdpa", "save", "card", "claims"}
            faults.append(
                "positions, split, sdpa, save, card and the claims are not run: each evaluates "
                "this term"
            )
        elif plain:
            self.skipped.add("save")
            faults.append("save is not run: from_pretrained cannot place such a tensor")
        if faults:
            raise PECheckError("; ".join(faults))
        units = scheme_units(self.model)
        if not units:
            return "no scheme module (no positional term)"
        return (
            f"{len(units)} scheme module{'s' if len(units) > 1 else ''}: every tensor a "
            "parameter or buffer, every term of its kind's shape"
        )

    def parts(self) -> str:
        """Each part of a combination changes the logits (``check_terms.departure``): by its
        value, or, where it starts as a no-op (a learned bias at zero), once its parameters
        move. Positions are the whole scheme's test (``positions``): a part may ignore them,
        as Transformer-XL's global query bias does (Dai et al. 2019, Eq. 4, term (c))."""
        from posharness.models.zoo.check_terms import departure, scheme_units

        found, seen = [], set()
        for unit in scheme_units(self.model):
            name = unit.declaration.name
            if name in seen:
                continue
            seen.add(name)
            moved, how = departure(unit, self.config, _LENGTH, self.seed)
            if how is None:
                raise PECheckError(
                    f"part {name} ({unit.kind}, {unit.where}) leaves the logits as they are, at "
                    f"initialisation and with its parameters moved (largest change {moved:.2g}): "
                    "a term that is zero or a transform that returns its input adds nothing: "
                    "fix it, or drop it from parts"
                )
            found.append(f"{name} {how}")
        return f"each part changes the logits: {'; '.join(found)}"

    def claim_checks(self) -> list[tuple[str, Callable[[], str]]]:
        """One check per property each scheme claims of its term (``check_claims``)."""
        from posharness.models.zoo.check_claims import claim_checks

        return claim_checks(self.model, _LENGTH, self.seed)

    def outputs(self, model: Any, mode: str, path: str = "eager") -> torch.Tensor:
        model.set_attention_path(path)
        with torch.no_grad(), model.attention_mode_set(mode):
            return model(self.ids, attention_mask=self.mask).last_hidden_state

    def seeded(self) -> str:
        from posharness.models.zoo.encoder import PEModel

        torch.manual_seed(self.seed)
        twin = PEModel(self.config).to(torch.float64)
        ours = self.model.state_dict()
        for key, value in twin.state_dict().items():
            if not torch.equal(value, ours[key]):
                raise PECheckError(
                    f"two builds with seed {self.seed} differ in {key}: initialise from torch's "
                    "global generator (transformers.initialization), not a generator of your own"
                )
        return f"two builds with seed {self.seed} are identical ({len(ours)} tensors)"

    def uses_positions(self) -> str:
        if self.kind == registry.POSITION_FREE:
            return "declared position-free (NoPositions): nothing to check"
        reason = positions_ignored(self.model)
        if reason:
            raise PECheckError(reason)
        return "permuting the input changes the outputs beyond a permutation"

    def split(self) -> str:
        from posharness.models.zoo.encoder.schemes import content_logits

        for mode in self.modes:
            with torch.no_grad(), self.model.attention_mode_set(mode):
                record = self.model.attention_record(self.ids, self.mask)
            plain = self.outputs(self.model, mode)
            with torch.no_grad(), self.model.attention_mode_set(mode):
                recorded = self.model(self.ids, self.mask, _record=[]).last_hidden_state
            _same(recorded, plain, f"mode {mode}: the forward that records gamma and delta")
            for layer, terms in enumerate(record):
                if terms.logits is None or self.kind == registry.POSITIONAL_ATTENTION:
                    continue  # CA(PA(X)): component ablations, not a logit split
                expected = {"both": terms.gamma + terms.delta, "contextual": terms.gamma}
                if not content_logits(self.config):
                    expected["both"] = terms.delta  # BERT-only-p: no content term at all
                wanted = expected.get(mode, terms.delta)
                _same(terms.logits, wanted, f"mode {mode}, layer {layer}: logits vs definition")
        if self.exact_kinds and self.config.absolute == "none":
            with torch.no_grad():
                both = self.model.attention_record(self.ids, self.mask)[0].delta
                with self.model.attention_mode_set("positional"):
                    alone = self.model.attention_record(self.ids, self.mask)[0].delta
            _same(
                alone,
                both,
                "layer 0: mode positional's term vs the delta mode both adds (the split must be "
                "exact for this kind; LogitTerm.positional must give delta's numbers)",
            )
        return f"logits = gamma + delta in every layer and head; {', '.join(self.modes)} as defined"

    def sdpa(self) -> str:
        for mode in self.modes:
            eager = self.outputs(self.model, mode, "eager")
            fused = self.outputs(self.model, mode, "sdpa")
            _same(fused, eager, f"mode {mode}: the SDPA path vs eager", PATH_TOLERANCE)
        self.model.set_attention_path("auto")
        return f"SDPA equals eager in {', '.join(self.modes)}"

    def save(self) -> str:
        from transformers import AutoModel

        with tempfile.TemporaryDirectory() as folder, _quiet():
            self.model.save_pretrained(folder)
            loaded = AutoModel.from_pretrained(folder, dtype=torch.float64).eval()
        for mode in self.modes:
            reloaded, ours = self.outputs(loaded, mode), self.outputs(self.model, mode)
            _same(reloaded, ours, f"mode {mode}: the reloaded model's outputs")
        return "save_pretrained -> AutoModel.from_pretrained gives identical outputs"

    def card(self) -> str:
        from posharness.models.zoo.encoder import pe_card

        counted = pe_card(self.config).positional_parameters
        owned = dict(_scheme_parameters(self.model))
        held = sum(p.numel() for p in owned.values())
        if counted != held:
            raise PECheckError(
                f"the card counts {counted} positional parameters but the scheme's modules hold "
                f"{held}"
            )
        if not owned:
            return "no positional parameters, none counted"
        grads = self._probe_gradients()
        for key in owned:
            grad = grads.get(key)
            if grad is None or not bool(grad.abs().gt(0).any()):
                raise PECheckError(
                    f"parameter {key} is counted by the card but does not change the positional "
                    "term: use it or remove it"
                )
        if self.kind in (registry.LOGIT_TERM, registry.UNTIED_PRODUCT) and (
            self.config.absolute == "none"  # with input positions delta holds the pp-term too
        ):
            for key, grad in grads.items():
                if key not in owned and grad is not None and bool(grad.abs().gt(0).any()):
                    raise PECheckError(
                        f"the positional term depends on {key}, outside the scheme's modules, "
                        "so the card does not count it: keep position parameters in the scheme"
                    )
        return f"{counted} parameters, each changing the positional term"

    def _probe_gradients(self) -> dict[str, torch.Tensor | None]:
        """d sum(delta * R) / d parameter, delta the positional term of ``_LENGTH`` tokens."""
        model = self.model
        model.zero_grad(set_to_none=True)
        with torch.enable_grad():
            scores = None
            if self.kind != registry.COMBINATION:  # a combination: what its parts add in both
                scores = model.positional_scores.__wrapped__(model, _LENGTH)
            if scores is None:  # a term that reads the queries: its delta in mode both
                record = model.attention_record(self.ids, self.mask)
                deltas = [terms.delta for terms in record]
            else:
                deltas = [scores]
            generator = torch.Generator().manual_seed(1)
            probe = sum(
                (d * torch.randn(d.shape, generator=generator, dtype=d.dtype)).sum() for d in deltas
            )
            probe.backward()
        grads = {key: p.grad for key, p in model.named_parameters()}
        model.zero_grad(set_to_none=True)
        return grads


def _scheme_parameters(model: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """Every parameter held by a ``PositionalEncoding`` module of ``model`` (the card's count)."""
    from posharness.pe import PositionalEncoding

    seen: set[int] = set()
    for prefix, module in model.named_modules():
        if isinstance(module, PositionalEncoding):
            for key, parameter in module.named_parameters(prefix=prefix):
                if id(parameter) not in seen:
                    seen.add(id(parameter))
                    yield key, parameter


def _modes(config: Any) -> Iterator[str]:
    from posharness.models.zoo.encoder.modes import mode_support

    yield from mode_support(config)


def _same(
    actual: torch.Tensor, expected: torch.Tensor, what: str, tolerance: float = TOLERANCE
) -> None:
    actual, expected = torch.broadcast_tensors(actual.detach(), expected.detach())
    difference = float((actual - expected).abs().max()) if actual.numel() else 0.0
    if not difference <= tolerance:
        raise PECheckError(f"{what} differ (max |diff| {difference:.3g} > {tolerance:g})")


@contextmanager
def _quiet() -> Iterator[None]:
    from transformers.utils import logging as hf_logging

    previous = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(previous)
        if bars:
            hf_logging.enable_progress_bar()
