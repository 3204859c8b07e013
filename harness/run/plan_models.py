"""The models a run's ``--model`` values stand for, as the planner builds them.

A bare zoo name becomes the ``NAME@FOLDER`` of its one pretrained run, and a checkpoint
series (``NAME@RUN/checkpoint-*``) one spec per saved checkpoint
(``contracts.model_spec.model_specs``). A checkpoint of a series that fails to load is
left out with one line on stderr and the series' others are evaluated (issue 46, part 2);
any other model that fails to load stops the run, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posharness.base.errors import PosharnessError
from posharness.contracts.adapter import ModelAdapter
from posharness.contracts.checkpoint_series import is_series, load_failure_line
from posharness.contracts.model_spec import LoadOptions, ModelSpec, build_adapter, model_specs

_log = logging.getLogger(__name__)  # shown on stderr by Python's last-resort handler


@dataclass
class PlannedModels:
    specs: list[ModelSpec] = field(default_factory=list)
    series: set[str] = field(default_factory=set)  # texts of specs expanded from a series

    def build(self, spec: ModelSpec, options: LoadOptions) -> ModelAdapter | None:
        """The spec's adapter; None (and one line) for a series checkpoint that fails."""
        if spec.text not in self.series:
            return build_adapter(spec, options)
        try:
            return build_adapter(spec, options)
        except Exception as exc:  # noqa: BLE001 (any load failure leaves this one out)
            _log.warning("posharness: %s", load_failure_line(spec.text, exc))
            return None


def planned_models(
    texts: list[str],
    options: LoadOptions,
    collect: Callable[..., Any],
    problems: list[PosharnessError],
) -> PlannedModels:
    """Every spec the ``--model`` values stand for, in order; a value that cannot be
    resolved joins ``problems`` through ``collect`` (the planner's ``_collect``)."""
    planned = PlannedModels()
    for text in texts:
        found = collect(problems, model_specs, text, options) or []
        planned.specs += found
        if is_series(text):
            planned.series.update(spec.text for spec in found)
    return planned
