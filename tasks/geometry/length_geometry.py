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

At the length those tasks use, the numbers are theirs. The drift of each metric,
``<metric>_drift``, is its value at the longest scored length minus at the shortest (a
signed difference in the metric's own units; the per-length values stay for any other
summary). A length above the model's positions is not applicable: no number, the reason in
``details["not_applicable"]`` — never a zero. See docs/tasks/geometry.md, "Geometry over
length".
"""

from __future__ import annotations

from typing import Any

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
MAIN = "locality_drift"


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
    names = [f"{name}_drift" for name in METRICS]
    for length in parse_lengths(DEFAULT_LENGTHS):
        names += [length_metric(name, length) for name in METRICS]
    return {name: PER_CELL for name in names}


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
    attention = probe_attention(model, ctx, probe)
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
    return out


class LengthGeometry:
    spec = TaskSpec(
        name="length_geometry",
        version="1",
        kind="attention-geometry",
        description="Locality, symmetry and Toeplitz R² at several lengths, and their drift",
        main_metric=MAIN,
        headline_metrics=tuple(f"{name}_drift" for name in METRICS),
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
                n = words if name in ATTENTION else None
                metrics[length_metric(name, length)] = Metric(float(value), n=n)
        drift, drift_span = drifts(per_length)
        metrics.update({f"{name}_drift": Metric(value) for name, value in drift.items()})
        scored = sorted(per_length)
        details: dict[str, Any] = {
            "per_length": {str(length): values for length, values in per_length.items()},
            "not_applicable": skipped,
            "positional_term": term_status,
            "drift": "value at the longest scored length minus at the shortest",
            "drift_lengths": drift_span,
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
    """Each metric's value at its longest scored length minus at its shortest, where it
    was scored at two lengths or more (a term can be absent at some lengths)."""
    drift: dict[str, float] = {}
    span: dict[str, list[int]] = {}
    for name in METRICS:
        have = sorted(length for length, values in per_length.items() if name in values)
        if len(have) < 2:
            continue
        first, last = have[0], have[-1]
        drift[name] = float(per_length[last][name] - per_length[first][name])
        span[name] = [first, last]
    return drift, span
