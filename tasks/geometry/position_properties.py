"""``position_properties``: Wang et al.'s (ICLR 2021) monotonicity, translation invariance
and symmetry of the proximity between positions, for any model with a position table or a
content-free positional term.

Two proximities are measured where the model has them:

* ``table_*``: φ = E Eᵀ, the dot products of the absolute position table's first n rows
  (learned or sinusoidal; the raw rows, as Wang et al. plot them);
* ``positional_term_*``: φ = delta, the content-free positional logits of each layer and
  head (``positional_scores``), averaged over layers and heads before the properties are
  taken — as ``toeplitz``'s ``positional_term_r2`` — with the mean of the per-head values
  as ``positional_term_*_mean_head`` (as ``positional_term_r2_mean_head``) and every head in
  ``details``.

The unprefixed metrics are the table's where there is one (Wang et al.'s object), else
the positional term's; ``details["phi"]`` says which. Each is one number per model, with
nothing to resample: ``compare`` reads them as per-cell values. Formulas and choices:
docs/tasks/geometry.md, "Position-wise properties".
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
from posharness.tasks.geometry.positional_term import positional_term
from posharness.tasks.geometry.wang_properties import MAX_OFFSET, position_properties

PROPERTIES = ("monotonicity", "translation_invariance", "symmetry")
SOURCES = ("", "table_", "positional_term_")


def metric_types() -> dict[str, MetricType]:
    """Every value is a property of the weights, one per model: nothing to resample."""
    types = {f"{source}{name}": PER_CELL for source in SOURCES for name in PROPERTIES}
    types.update({f"positional_term_{name}_mean_head": PER_CELL for name in PROPERTIES})
    return types


class PositionProperties:
    spec = TaskSpec(
        name="position_properties",
        version="1",
        kind="attention-geometry",
        description="Monotonicity, translation invariance, symmetry of positions (Wang 2021)",
        main_metric="monotonicity",
        headline_metrics=PROPERTIES + tuple(f"positional_term_{name}" for name in PROPERTIES),
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
        details: dict[str, Any] = {}
        table = model.position_embeddings()
        if table is not None:
            rows = table.double().numpy()[:positions]
            values = position_properties(rows @ rows.T, max_offset)
            metrics.update({f"table_{k}": Metric(v) for k, v in values.items()})
            details["table"] = {"phi": "E Eᵀ of the position table", "positions": len(rows)}
        term, status = positional_term(model, positions)
        if term is not None:
            self._term(term, max_offset, metrics, details)
        else:
            details["positional_term"] = status
        if not metrics:
            raise UnsupportedModeError(
                f"task position_properties needs a position table or a content-free "
                f"positional term; {model.spec} has neither (positional term: {status}): "
                "it can still run locality_symmetry and toeplitz (identical-word probe)"
            )
        source = "table" if table is not None else "positional_term"
        details["phi"] = source
        for name in PROPERTIES:
            metrics[name] = metrics[f"{source}_{name}"]
        return TaskResult(
            metrics=metrics,
            data_hash=hash_obj({"positions": positions, "max_offset": max_offset})[:16],
            details=details,
            settings={"positions": positions, "max_offset": max_offset, "phi": source},
        )

    @staticmethod
    def _term(term, max_offset: int, metrics: dict[str, Metric], details: dict) -> None:
        logits, visible = term.logits, term.visible
        masked = np.where(visible, logits, 0.0)
        keep = visible.all(axis=(0, 1))  # the mean over heads is defined where all are
        average = masked.mean(axis=(0, 1))
        for name, value in position_properties(average, max_offset, keep).items():
            metrics[f"positional_term_{name}"] = Metric(value)
        per_head = [
            [position_properties(m, max_offset, v) for m, v in zip(layer, vis, strict=True)]
            for layer, vis in zip(masked, visible, strict=True)
        ]
        heads = [values for layer in per_head for values in layer]
        for name in PROPERTIES:
            metrics[f"positional_term_{name}_mean_head"] = Metric(
                float(np.mean([values[name] for values in heads]))
            )
        details["positional_term"] = {
            "definition": term.definition,
            "phi": "content-free delta logits, mean over layers and heads",
            "positions": int(logits.shape[-1]),
            "per_head": per_head,
        }
