"""``locality_symmetry``: how local and how symmetric a model's positional attention is.

Chen et al. 2023 (Eq. 6-7) measure the identical-word probe's attention averaged over
heads, layers and words. Both the paper-faithful symmetry (the authors' calculate.py)
and the magnitude-based companion are reported, for the full matrix (special tokens
included, as the paper) and with special-token rows and columns removed and rows
renormalised. Per-layer and per-head values go to ``details``; each probe word is one
example, so two models can be compared with a paired test over the same words.

Where the model defines a content-free positional term (``positional_scores``), the same
metrics are taken of softmax(delta) — the positional term itself, not the probe — as
``positional_term_*`` (see ``positional_term.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from posharness.contracts.adapter import ATTENTIONS, POSITIONAL_TERM, ModelAdapter
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_CONTINUOUS, OF_EXAMPLES, PER_CELL, MetricType
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.tasks.geometry.identical_word import (
    FIGURES,
    PROBE_OPTIONS,
    probe_attention,
    probe_from_options,
)
from posharness.tasks.geometry.positional_term import positional_term

GEOMETRY = ("locality", "symmetry", "symmetry_magnitude")
SUFFIXES = ("", "_no_special")


def metric_types() -> dict[str, MetricType]:
    """What ``compare`` tests. Locality is linear in the map (Chen et al. Eq. 6: a fixed
    weight per cell), so the locality of the words' averaged map is the mean of the
    per-word localities; symmetry (Eq. 7, min-max normalised per row) is not, and the
    special-token variants renormalise the averaged rows: those are functions of all the
    words, tested on common-resample replicates. The positional term is one matrix per
    model: nothing to resample."""
    types: dict[str, MetricType] = {}
    for suffix in SUFFIXES:
        for name in GEOMETRY:
            types[name + suffix] = OF_EXAMPLES
            types[f"positional_term_{name}{suffix}"] = PER_CELL
    types["locality"] = MEAN_CONTINUOUS
    return types


def common_resample_replicates(
    words: list[str],
    per_word: np.ndarray,
    drop: tuple[int, ...],
    count: int,
    advance: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Each metric on the same resamples of the words as every other cell probed with
    these words (``paired_resampling``), so ``compare`` can take a paired bootstrap of
    the averaged map's geometry between two models without keeping any map."""
    from posharness.stats.paired_resampling import replicates

    def statistic(draw: np.ndarray) -> dict[str, float]:
        average = per_word[draw].mean(axis=0)
        values = {}
        for suffix, positions in (("", ()), ("_no_special", drop)):
            for name, value in geometry(average, positions).items():
                values[name + suffix] = value
        if advance is not None:
            advance(1)
        return values

    return replicates(list(words), statistic, count)


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Undo float rounding (bf16 rows can miss 1 by 1e-3) before the stochastic checks."""
    return matrix / matrix.sum(axis=-1, keepdims=True)


def geometry(matrix: np.ndarray, drop: tuple[int, ...] = ()) -> dict[str, float]:
    from posharness.stats.geometry import geometry_summary, remove_positions

    matrix = normalise_rows(matrix)
    if drop:
        matrix = remove_positions(matrix, drop)
    return geometry_summary(matrix)


def bootstrap_interval(
    per_word: np.ndarray,
    drop: tuple[int, ...],
    draws: int,
    seed: int,
    advance: Callable[[int], None] | None = None,
) -> dict[str, tuple[float, float, float]]:
    """95 % percentile interval over resampled probe words, and the standard error;
    ``advance(1)`` after each draw (a progress bar: 1,000 draws take tens of seconds)."""
    if draws < 2 or len(per_word) < 2:
        return {}
    rng = np.random.default_rng(seed + 7919)
    samples: dict[str, list[float]] = {name: [] for name in GEOMETRY}
    for _ in range(draws):
        pick = rng.integers(0, len(per_word), size=len(per_word))
        for name, value in geometry(per_word[pick].mean(axis=0), drop).items():
            samples[name].append(value)
        if advance is not None:
            advance(1)
    return {
        name: (
            float(np.std(v, ddof=1)),
            float(np.percentile(v, 2.5)),
            float(np.percentile(v, 97.5)),
        )
        for name, v in samples.items()
    }


class LocalitySymmetry:
    spec = TaskSpec(
        name="locality_symmetry",
        version="3",  # 3: a CA(PA(X)) model's positional term is PA's weights, not their softmax
        kind="attention-geometry",
        description="Locality and symmetry of identical-word-probe attention (Chen et al. 2023)",
        main_metric="locality",
        headline_metrics=GEOMETRY
        + tuple(f"{name}_no_special" for name in GEOMETRY)
        + ("positional_term_locality", "positional_term_symmetry"),
        needs=frozenset({ATTENTIONS, POSITIONAL_TERM}),
        data_source="identical-word probe (random whole words from the model's vocabulary)",
        options=(
            *PROBE_OPTIONS,
            TaskOption("bootstrap", 1000, "Resamples of the words for the intervals (0, 1: none)."),
            TaskOption("paired_replicates", 1000, "Common resamples kept for compare (0: none)."),
            FIGURES,
        ),
        metric_types=metric_types(),
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        probe = probe_from_options(model, ctx)
        attention = probe_attention(model, ctx, probe)
        drop = probe.special_positions
        n_words = len(probe.words)
        metrics: dict[str, Metric] = {}
        draws, paired = int(ctx.options["bootstrap"]), int(ctx.options.get("paired_replicates", 0))
        resampled = (draws * len(SUFFIXES) * (draws > 1) + paired * (paired > 1)) * (n_words > 1)
        advance = ctx.progress("resampling the words", resampled) if resampled else None
        for suffix, positions in zip(SUFFIXES, ((), drop), strict=True):
            values = geometry(attention.average, positions)
            spread = bootstrap_interval(attention.per_word, positions, draws, ctx.seed, advance)
            for name, value in values.items():
                se, low, high = spread.get(name, (None, None, None))
                metrics[name + suffix] = Metric(
                    value, stderr=se, ci_low=low, ci_high=high, n=n_words
                )
        details: dict[str, Any] = {
            "special_positions": list(drop),
            "matrix": "identical-word probe attention, mean over words, layers and heads",
            "per_layer": [geometry(m) for m in attention.per_layer],
            "per_layer_no_special": [geometry(m, drop) for m in attention.per_layer],
            "per_head": [[geometry(m) for m in layer] for layer in attention.per_layer_head],
        }
        replicates = common_resample_replicates(
            list(probe.words),
            attention.per_word,
            drop,
            paired,
            advance,
        )
        if replicates:
            details["paired_replicates"] = replicates
        examples = []
        for word, token_id, matrix in zip(
            probe.words, probe.token_ids, attention.per_word, strict=True
        ):
            values = geometry(matrix)
            values.update({f"{k}_no_special": v for k, v in geometry(matrix, drop).items()})
            examples.append(Example(id=f"{word}", token_id=token_id, **values))
        artifacts = self._figures(model, ctx, attention) if ctx.options["figures"] else []
        term, status = positional_term(model, probe.length)
        details["positional_term"] = status
        if term is not None:
            weights = term.attention
            average = weights.mean(axis=(0, 1))
            for suffix, positions in (("", ()), ("_no_special", drop)):
                for name, value in geometry(average, positions).items():
                    metrics[f"positional_term_{name}{suffix}"] = Metric(value)
            details["positional_term"] = {
                "definition": term.definition,
                "matrix": "softmax of the content-free delta, mean over layers and heads",
                "per_layer": [geometry(m) for m in weights.mean(axis=1)],
                "per_head": [[geometry(m) for m in layer] for layer in weights],
            }
            if ctx.options["figures"]:
                artifacts.append(self._term_figure(model, ctx, weights))
        from posharness.tasks.geometry.uniformity import uniform_attention_flags

        return TaskResult(
            metrics=metrics,
            data_hash=probe.input_hash[:16],
            # untrained attention is flat, and flat maps still score a locality and a
            # symmetry: say so rather than let them read as a positional pattern
            flags=uniform_attention_flags(attention.per_layer_head),
            details=details,
            examples=examples,
            artifacts=artifacts,
            settings={
                "words": n_words,
                "length": probe.length,
                "seed": probe.seed,
                "first_words": list(probe.words[:10]),
            },
        )

    def _term_figure(self, model: ModelAdapter, ctx: TaskContext, weights: np.ndarray):
        from posharness.tasks.geometry.figures import heatmap_grid

        title = f"{model.spec} · softmax(delta), positional term"
        path = heatmap_grid(
            weights.mean(axis=1), ctx.artifact_dir / "positional_term_per_layer.png", title
        )
        return path.relative_to(ctx.artifact_dir)

    def _figures(self, model: ModelAdapter, ctx: TaskContext, attention) -> list:
        from posharness.tasks.geometry.figures import heatmap, heatmap_grid

        title = f"{model.spec} · {ctx.mode} · identical-word probe"
        average = heatmap(attention.average, ctx.artifact_dir / "attention_average.png", title)
        layers = heatmap_grid(
            attention.per_layer, ctx.artifact_dir / "attention_per_layer.png", title
        )
        return [average.relative_to(ctx.artifact_dir), layers.relative_to(ctx.artifact_dir)]
