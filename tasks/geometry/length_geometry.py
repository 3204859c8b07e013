"""``length_geometry``: the geometry metrics at several lengths, and how far they drift.

Does the locality, symmetry or translation invariance of a PE change with the length it is
read at? For each length L the task takes the identical-word probe of ``locality_symmetry``
and ``toeplitz`` at that length (the same words, the same ``--seed``; the probe's pass is
cached and shared with those tasks) and the content-free positional term for L positions,
and reports, per length, with the functions those tasks use:

* ``locality_lenL``, ``symmetry_lenL``: Chen et al. (Eq. 6-7) of the probe's attention,
  averaged over words, layers and heads (``locality_symmetry``'s ``locality``, ``symmetry``);
* ``attention_r2_lenL``: the Toeplitz R² of that map (``toeplitz``'s ``attention_r2``);
* ``positional_term_locality_lenL``, ``positional_term_symmetry_lenL``: the same of
  softmax(delta), and ``positional_term_r2_lenL``: the R² of delta's logits (mean over
  layers and heads; left out where a layer masks part of delta, as ``toeplitz`` does).

At the length those tasks use, the numbers are theirs.

**Read against the flat map.** Locality is not length-free: a uniform L × L map scores
u(L) = (3L − 4 + 2^(2−L)) / L² ≈ 3/L (0.172 at 16, 0.0058 at 512), so any map that spreads
its mass loses locality with L. Each length's locality is therefore also reported as its
*excess* over the uniform map at that length, ``locality_excess_lenL`` = locality_lenL −
u(L) (the same for ``positional_term_locality``), and the headline drift is the excess's:
``locality_excess_drift`` = excess at the longest scored length minus at the shortest — 0
for a map that loses locality exactly as a flat one does, positive for one that keeps more.
The raw difference stays as ``locality_raw_drift`` (= the excess drift + u(longest) −
u(shortest)). Symmetry and Toeplitz R² of the uniform map are 1 at every length (all pairs
equal; a constant matrix is Toeplitz), so their plain drifts, ``<metric>_drift``, are
already read against it. The uniform map's values per length are in ``details["flat"]``,
computed with the same functions. See docs/tasks/geometry.md, "Geometry over length".

A length above the model's positions is not applicable: no number, the reason in
``details["not_applicable"]`` — never a zero.

**Memory.** The probe's attention is read in batches of at most ``ATTENTION_BUDGET``
attention weights (layers × heads × L² per sequence): an unbounded batch of 32 sequences at
512 tokens held 2.4 GB of MiniLM's weights, and its default run peaked at 7.67 GB RSS
(bounded: 2.01 GB). Each sequence's maps do not depend on the others in its batch, so the
numbers are the same.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from posharness.contracts.adapter import ATTENTIONS, POSITIONAL_TERM, ModelAdapter
from posharness.contracts.metric_types import PER_CELL, MetricType
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.storage.hashing import hash_obj
from posharness.tasks.geometry.identical_word import (
    FIGURES,
    build_probe,
    probe_attention,
)
from posharness.tasks.geometry.locality_symmetry import geometry
from posharness.tasks.geometry.positional_term import positional_term
from posharness.tasks.geometry.uniformity import uniform_attention_flags

DEFAULT_LENGTHS = "16,32,64,128,256,512"
ATTENTION = ("locality", "symmetry", "attention_r2")
TERM = ("positional_term_locality", "positional_term_symmetry", "positional_term_r2")
METRICS = ATTENTION + TERM
# metrics whose uniform-map value changes with length: each gets an excess over it
AGAINST_FLAT = ("locality", "positional_term_locality")
EXCESS = tuple(f"{name}_excess" for name in AGAINST_FLAT)
PER_LENGTH = METRICS + EXCESS
# the drift's name per per-length metric: the excess drift is the headline, the raw one
# of a metric read against the flat map is kept under its own name
DRIFT = {
    **{name: f"{name}_drift" for name in METRICS if name not in AGAINST_FLAT},
    **{name: f"{name}_raw_drift" for name in AGAINST_FLAT},
    **{name: f"{name}_drift" for name in EXCESS},
}
MAIN = "locality_excess_drift"
HEADLINE = (
    "locality_excess_drift",
    "symmetry_drift",
    "attention_r2_drift",
    "positional_term_locality_excess_drift",
    "positional_term_symmetry_drift",
    "positional_term_r2_drift",
)
# attention weights read per batch (float32: 256 MB): layers × heads × L² per sequence
ATTENTION_BUDGET = 2**26


def length_metric(name: str, length: int) -> str:
    return f"{name}_len{length}"


def parse_lengths(raw: str | int) -> tuple[int, ...]:
    """``"16,32,64"`` as sorted, distinct lengths; anything else is one line."""
    from posharness.tasks.length.lengths import parse_lengths as parse

    return parse(raw, task="length_geometry")


def metric_types() -> dict[str, MetricType]:
    """Every value is one number per cell: the task keeps no per-word examples, so
    ``compare`` has nothing to resample (per-length names of the default lengths and the
    drifts are declared; other lengths' names are undeclared and get no test either)."""
    names = list(DRIFT.values())
    for length in parse_lengths(DEFAULT_LENGTHS):
        names += [length_metric(name, length) for name in PER_LENGTH]
    return {name: PER_CELL for name in names}


@cache
def flat_values(length: int) -> dict[str, float]:
    """The uniform L × L map's locality, symmetry and Toeplitz R², through the functions
    the measured maps go through (locality u(L) = (3L − 4 + 2^(2−L)) / L²; symmetry and R²
    1). Softmax of a constant delta is this map, so it is the positional term's too."""
    from posharness.stats.geometry import toeplitz_r2

    flat = np.full((length, length), 1.0 / length)
    summary = geometry(flat)
    values = {
        "locality": summary["locality"],
        "symmetry": summary["symmetry"],
        "attention_r2": toeplitz_r2(flat),
    }
    return values | {f"positional_term_{name}": value for name, value in values.items()}


def with_excess(values: dict[str, float], length: int) -> dict[str, float]:
    """``values`` and, for each metric read against the flat map, its excess over it."""
    flat = flat_values(length)
    excess = {
        f"{name}_excess": values[name] - flat[name] for name in AGAINST_FLAT if name in values
    }
    return values | excess


def bounded_batches(ctx: TaskContext, model: ModelAdapter, length: int) -> TaskContext:
    """``ctx`` whose encoders hold at most ``ATTENTION_BUDGET`` attention weights per batch
    at ``length`` (at least one sequence), so memory stays flat as L grows."""
    per_sequence = max(1, model.num_layers * model.num_heads * length * length)
    cap = max(1, ATTENTION_BUDGET // per_sequence)

    def make_encoder(want: frozenset[str]):
        encoder = ctx.make_encoder(want)
        encoder.batch_size = min(encoder.batch_size, cap)
        return encoder

    return replace(ctx, make_encoder=make_encoder)


def at_length(model: ModelAdapter, ctx: TaskContext, words: int, length: int) -> dict[str, Any]:
    """The six metrics at one length, or ``{"not_applicable": reason}``."""
    from posharness.stats.geometry import toeplitz_r2
    from posharness.tasks.length.lengths import beyond_model

    reason = beyond_model(length, model)
    if reason is not None:
        return {"not_applicable": reason}
    frame = len(model.wrap_token_ids([]))
    if length < frame + 3:
        return {
            "not_applicable": f"not applicable: {length} tokens leave fewer than 3 probe "
            f"tokens after the model's {frame} special tokens"
        }
    probe = build_probe(model, words, length, ctx.seed)
    attention = probe_attention(model, bounded_batches(ctx, model, length), probe)
    average = attention.average
    values: dict[str, float] = {}
    summary = geometry(average)
    values["locality"], values["symmetry"] = summary["locality"], summary["symmetry"]
    values["attention_r2"] = toeplitz_r2(average)
    out: dict[str, Any] = {"values": values, "input_hash": probe.input_hash}
    # untrained attention is flat, and flat maps still score: flag it per length, as the
    # geometry tasks do at theirs
    out["flags"] = uniform_attention_flags(
        attention.per_layer_head, f"the identical-word probe's attention at length {length}"
    )
    term, status = positional_term(model, length)
    out["positional_term"] = status
    if term is not None:
        summary = geometry(term.attention.mean(axis=(0, 1)))
        values["positional_term_locality"] = summary["locality"]
        values["positional_term_symmetry"] = summary["symmetry"]
        if term.visible.all():
            values["positional_term_r2"] = toeplitz_r2(term.logits.mean(axis=(0, 1)))
        else:
            out["positional_term"] = "ok; R² skipped: some layers mask part of delta"
    out["values"] = with_excess(values, length)
    return out


class LengthGeometry:
    spec = TaskSpec(
        name="length_geometry",
        version="3",  # 2: locality drift read against the flat map; 3: PA weights as they are
        kind="attention-geometry",
        description="Locality, symmetry and Toeplitz R² at several lengths, and their drift "
        "against a flat map's",
        main_metric=MAIN,
        headline_metrics=HEADLINE,
        needs=frozenset({ATTENTIONS, POSITIONAL_TERM}),
        data_source="identical-word probe (random whole words) at each length",
        options=(
            TaskOption("lengths", DEFAULT_LENGTHS, "Probe lengths in tokens, specials in."),
            TaskOption("words", 100, "Probe words, drawn from the model's vocabulary."),
            FIGURES,
        ),
        metric_types=metric_types(),
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        lengths = parse_lengths(ctx.options["lengths"])
        words = int(ctx.options["words"])
        if ctx.limit is not None:
            words = min(words, ctx.limit)
        per_length: dict[int, dict[str, float]] = {}
        skipped: dict[str, str] = {}
        term_status: dict[str, str] = {}
        hashes = []
        flags: list[str] = []
        for length in lengths:
            out = at_length(model, ctx, words, length)
            if "not_applicable" in out:
                skipped[str(length)] = out["not_applicable"]
                continue
            per_length[length] = out["values"]
            term_status[str(length)] = out["positional_term"]
            hashes.append(out["input_hash"])
            flags += out["flags"]
        if not per_length:
            from posharness.tasks.length.lengths import no_length_applies

            raise no_length_applies("length_geometry", lengths, model, skipped)
        metrics: dict[str, Metric] = {}
        for length, values in per_length.items():
            for name, value in values.items():
                n = words if name in ATTENTION or name == "locality_excess" else None
                metrics[length_metric(name, length)] = Metric(float(value), n=n)
        drift, drift_span = drifts(per_length)
        metrics.update({DRIFT[name]: Metric(value) for name, value in drift.items()})
        scored = sorted(per_length)
        details: dict[str, Any] = {
            "per_length": {str(length): values for length, values in per_length.items()},
            "flat": {str(length): dict(flat_values(length)) for length in scored},
            "not_applicable": skipped,
            "positional_term": term_status,
            "drift": "value at the longest scored length minus at the shortest; "
            "*_excess: minus the uniform map's value at the same length",
            "drift_lengths": {DRIFT[name]: span for name, span in drift_span.items()},
        }
        artifacts = []
        if ctx.options["figures"]:
            from posharness.tasks.geometry.length_figure import drift_figure

            path = drift_figure(
                per_length,
                ctx.artifact_dir / "length_geometry.png",
                f"{model.spec} · {ctx.mode} · geometry over length",
            )
            artifacts.append(path.relative_to(ctx.artifact_dir))
        return TaskResult(
            metrics=metrics,
            data_hash=hash_obj(hashes)[:16],
            details=details,
            artifacts=artifacts,
            flags=flags,
            settings={
                "lengths": list(lengths),
                "lengths_scored": scored,
                "words": words,
                "seed": ctx.seed,
                "max_length": model.max_length,
            },
        )


def drifts(
    per_length: dict[int, dict[str, float]],
) -> tuple[dict[str, float], dict[str, list[int]]]:
    """Each per-length metric's value (excesses included) at its longest scored length minus
    at its shortest, where it was scored at two lengths or more (a term can be absent at
    some lengths); keyed by the per-length name (``DRIFT`` gives the metric's)."""
    drift: dict[str, float] = {}
    span: dict[str, list[int]] = {}
    for name in PER_LENGTH:
        have = sorted(length for length, values in per_length.items() if name in values)
        if len(have) < 2:
            continue
        first, last = have[0], have[-1]
        drift[name] = float(per_length[last][name] - per_length[first][name])
        span[name] = [first, last]
    return drift, span
