"""``position_properties``: Wang et al.'s (ICLR 2021, "On position embeddings in BERT", §3,
Properties 1-3) monotonicity, translation invariance and symmetry of the proximity φ(i, j)
between positions, measured on each object a model has, every metric named by its object:

* ``table_*``: φ = E Eᵀ, the dot products of the absolute position table's first n raw
  rows (``position_embeddings()``: a learned table, a fixed sinusoidal one, TUPE's p), the
  object Wang et al. define the properties on;
* ``positional_term_*``: φ = delta, the content-free positional logits of each layer and
  head (``positional_scores``), averaged over layers and heads before the properties are
  taken, as ``toeplitz``'s ``positional_term_r2``; ``positional_term_*_mean_head`` is the
  mean of the per-head values (as ``positional_term_r2_mean_head``), every head in
  ``details``.

No metric mixes the two objects: a model without a table has no ``table_*`` number, and
one without a content-free term no ``positional_term_*`` number; each missing metric's
reason is in ``details["not_applicable"]``, never a value read from the other object.
Each is one number per model, with nothing to resample: ``compare`` reads them as
per-cell values. Formulas and choices: docs/tasks/geometry.md, "Position-wise properties".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posharness.base.errors import UnsupportedModeError
from posharness.contracts.adapter import POSITIONAL_TERM, ModelAdapter
from posharness.contracts.metric_types import PER_CELL, MetricType
from posharness.contracts.task import Metric, TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.storage.hashing import hash_obj
from posharness.tasks.geometry.positional_term import PositionalTerm, positional_term
from posharness.tasks.geometry.wang_properties import MAX_OFFSET, position_properties

PROPERTIES = ("monotonicity", "translation_invariance", "symmetry")
TABLE, TERM = "table", "positional_term"
TABLE_METRICS = tuple(f"{TABLE}_{name}" for name in PROPERTIES)
TERM_METRICS = tuple(f"{TERM}_{name}" for name in PROPERTIES) + tuple(
    f"{TERM}_{name}_mean_head" for name in PROPERTIES
)
OBJECTS = {
    TABLE: "E Eᵀ: dot products of the absolute position table's raw rows",
    TERM: "delta: the content-free positional logits, mean over layers and heads",
}


def metric_types() -> dict[str, MetricType]:
    """Every value is a property of the weights, one per model: nothing to resample."""
    return {name: PER_CELL for name in TABLE_METRICS + TERM_METRICS}


class PositionProperties:
    spec = TaskSpec(
        name="position_properties",
        version="2",  # 2: metrics named by their object only (no unprefixed mixed column)
        kind="attention-geometry",
        description="Monotonicity, translation invariance, symmetry of positions (Wang 2021)",
        main_metric="table_monotonicity",
        headline_metrics=TABLE_METRICS + tuple(f"{TERM}_{name}" for name in PROPERTIES),
        needs=frozenset({POSITIONAL_TERM}),
        data_source="position table and content-free positional term (no text)",
        options=(
            TaskOption("positions", 512, "Positions n (capped at the model's and table's length)."),
            TaskOption("max_offset", MAX_OFFSET, "Largest distance |i - j| the properties read."),
        ),
        metric_types=metric_types(),
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        positions = min(int(ctx.options["positions"]), model.max_length)
        max_offset = int(ctx.options["max_offset"])
        metrics: dict[str, Metric] = {}
        details: dict[str, Any] = {"objects": dict(OBJECTS)}
        not_applicable: dict[str, str] = {}
        settings: dict[str, Any] = {"max_offset": max_offset}
        table = model.position_embeddings()
        if table is not None:
            rows = table.double().numpy()[:positions]
            values = position_properties(rows @ rows.T, max_offset)
            metrics.update({f"{TABLE}_{k}": Metric(v) for k, v in values.items()})
            details[TABLE] = {"phi": OBJECTS[TABLE], "positions": len(rows), "rows": len(table)}
            settings["table_positions"] = len(rows)
        else:
            reason = (
                f"not applicable: {model.spec} has no absolute position table "
                "(position_embeddings() is None); its positions act only through the "
                "attention logits, measured by positional_term_*"
            )
            not_applicable.update(dict.fromkeys(TABLE_METRICS, reason))
        term, status = positional_term(model, positions)
        if term is not None:
            metrics.update(self._term(term, max_offset, details))
            settings["positional_term_positions"] = int(term.logits.shape[-1])
        else:
            reason = f"not applicable: no content-free positional term ({status})"
            not_applicable.update(dict.fromkeys(TERM_METRICS, reason))
            details[TERM] = status
        if not metrics:
            raise UnsupportedModeError(
                f"task position_properties needs a position table or a content-free "
                f"positional term; {model.spec} has neither (positional term: {status}): "
                "it can still run locality_symmetry and toeplitz (identical-word probe)"
            )
        details["not_applicable"] = not_applicable
        return TaskResult(
            metrics=metrics,
            data_hash=hash_obj({"positions": positions, "max_offset": max_offset})[:16],
            details=details,
            settings=settings,
        )

    @staticmethod
    def _term(term: PositionalTerm, max_offset: int, details: dict) -> dict[str, Metric]:
        logits, visible = term.logits, term.visible
        masked = np.where(visible, logits, 0.0)
        keep = visible.all(axis=(0, 1))  # the mean over heads is defined where all are
        average = masked.mean(axis=(0, 1))
        metrics = {
            f"{TERM}_{name}": Metric(value)
            for name, value in position_properties(average, max_offset, keep).items()
        }
        per_head = [
            [position_properties(m, max_offset, v) for m, v in zip(layer, vis, strict=True)]
            for layer, vis in zip(masked, visible, strict=True)
        ]
        heads = [values for layer in per_head for values in layer]
        for name in PROPERTIES:
            metrics[f"{TERM}_{name}_mean_head"] = Metric(
                float(np.mean([values[name] for values in heads]))
            )
        details[TERM] = {
            "definition": term.definition,
            "phi": OBJECTS[TERM],
            "positions": int(logits.shape[-1]),
            "per_head": per_head,
        }
        return metrics
