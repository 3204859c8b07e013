"""``toeplitz``: how translation-invariant a model's positional structure is.

Wennberg & Henter 2021 measure Toeplitzness as the R² of a matrix against its best
Toeplitz fit (App. B), on the Gram matrix P = E_P E_Pᵀ of learned position embeddings
(Fig. 1, 2, 4). We report it for the full position table and for the probed window,
and apply the same measure to the identical-word probe's attention (shared with
``locality_symmetry`` through the cache). Each value stands next to a shuffled control:
the same matrix with positions relabelled (rows and columns permuted together), which
keeps every entry — and the diagonal on the diagonal — but destroys the order of
positions, so R² well above its control means real translation structure.

Where the model defines a content-free positional term, the logits delta themselves are
measured too (``positional_term_r2``: the mean over layers and heads; per head in
``details``) — TISA's own use of R² on extracted positional scores.

A constant matrix is perfectly Toeplitz, so untrained (uniform) attention would score a
fine R²: the cell is flagged when the probe's attention per layer and head is within 1 %
of uniform (``uniformity.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posharness.contracts.adapter import ATTENTIONS, POSITIONAL_TERM, ModelAdapter
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.tasks.geometry.identical_word import (
    FIGURES,
    PROBE_OPTIONS,
    probe_attention,
    probe_from_options,
)
from posharness.tasks.geometry.positional_term import positional_term
from posharness.tasks.geometry.uniformity import uniform_attention_flags


def shuffled_control(matrix: np.ndarray, draws: int, seed: int) -> Metric:
    """Mean (and s.e.) R² of the matrix under joint random row/column permutations."""
    from posharness.stats.geometry import toeplitz_r2

    rng = np.random.default_rng(seed + 104729)
    values = []
    for _ in range(draws):
        order = rng.permutation(len(matrix))
        values.append(toeplitz_r2(matrix[np.ix_(order, order)]))
    se = float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else None
    return Metric(float(np.mean(values)), stderr=se, n=len(values))


class Toeplitz:
    spec = TaskSpec(
        name="toeplitz",
        version="3",  # 3: zoo models' learned, sinusoidal and TUPE tables are measured too
        kind="attention-geometry",
        description="Toeplitz R² of position Gram and probe attention (Wennberg & Henter 2021)",
        main_metric="attention_r2",
        headline_metrics=(
            "attention_r2",
            "attention_r2_shuffled",
            "attention_no_special_r2",
            "attention_no_special_r2_shuffled",
            "gram_r2",
            "gram_r2_shuffled",
            "positional_term_r2",
            "positional_term_r2_shuffled",
        ),
        needs=frozenset({ATTENTIONS, POSITIONAL_TERM}),
        data_source="position table + identical-word probe",
        options=(
            *PROBE_OPTIONS,
            TaskOption("controls", 20, "Permutations in the shuffled control."),
            FIGURES,
        ),
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        from posharness.stats.geometry import remove_positions, toeplitz_r2, toeplitz_r2_where

        draws = int(ctx.options["controls"])
        probe = probe_from_options(model, ctx)
        attention = probe_attention(model, ctx, probe)
        metrics: dict[str, Metric] = {}
        details: dict[str, Any] = {}
        artifacts = []
        matrices = {
            "attention": attention.average,
            "attention_no_special": remove_positions(attention.average, probe.special_positions),
        }
        table = model.position_embeddings()
        if table is not None:
            embeddings = table.double().numpy()
            gram = embeddings @ embeddings.T
            matrices["gram"] = gram
            window = min(probe.length, len(gram))
            matrices[f"gram_first_{window}"] = gram[:window, :window]
            details["gram_positions"] = len(gram)
            if ctx.options["figures"]:
                artifacts.append(self._gram_figure(model, ctx, gram))
        else:
            details["gram"] = "the model has no absolute position table"
        term, status = positional_term(model, probe.length)
        details["positional_term"] = status
        if term is not None:
            per_head = [
                [toeplitz_r2_where(m, keep) for m, keep in zip(layer, masks, strict=True)]
                for layer, masks in zip(term.logits, term.visible, strict=True)
            ]
            metrics["positional_term_r2_mean_head"] = Metric(
                float(np.mean(per_head)), n=int(np.size(per_head))
            )
            if term.visible.all():
                matrices["positional_term"] = term.logits.mean(axis=(0, 1))
            else:  # windowed layers: the mean over heads is only defined inside the windows
                details["positional_term_mean"] = "skipped: some layers mask part of delta"
            details["positional_term"] = {
                "definition": term.definition,
                "matrix": "content-free delta logits, mean over layers and heads",
                "r2_per_head": per_head,
            }
        for name, matrix in matrices.items():
            # n counts examples: the probe words behind an attention map; a Gram matrix or
            # the positional term is a property of the weights, with no examples behind it.
            words = len(probe.words) if name.startswith("attention") else None
            metrics[f"{name}_r2"] = Metric(toeplitz_r2(matrix), n=words)
            metrics[f"{name}_r2_shuffled"] = shuffled_control(matrix, draws, ctx.seed)
        details["attention_r2_per_layer"] = [toeplitz_r2(m) for m in attention.per_layer]
        details["attention_r2_per_head"] = [
            [toeplitz_r2(m) for m in layer] for layer in attention.per_layer_head
        ]
        return TaskResult(
            metrics=metrics,
            data_hash=probe.input_hash[:16],
            details=details,
            artifacts=artifacts,
            settings={"words": len(probe.words), "length": probe.length, "controls": draws},
            flags=uniform_attention_flags(attention.per_layer_head),
        )

    def _gram_figure(self, model: ModelAdapter, ctx: TaskContext, gram: np.ndarray):
        from posharness.tasks.geometry.figures import position_gram

        title = f"{model.spec} · P = E_P E_Pᵀ"
        path = position_gram(gram, ctx.artifact_dir / "position_gram.png", title)
        return path.relative_to(ctx.artifact_dir)
