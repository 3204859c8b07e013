"""The runs a cell's value aggregates, per metric, for a test over runs (``stats.seed_tests``).

A task whose value combines several runs (a fine-tuning protocol: a mean over learning
rates, the median over seeds at the best rate) records them in its result's details under
``run_values``::

    {"combine": "mean" | "median",
     "runs": [{"label": "lr=5e-05 seed=0", "values": {"accuracy": 0.81, ...}}, ...]}

with exactly the runs the value is built from. Results the fine-tuning family wrote before
this key existed carry the same information in its own layout (``aggregate.runs_used``
names the used runs' labels, ``runs`` holds every run's seed, rate and scores); that
layout is read here too, so an older board is never tested on one run's examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RUN_VALUES_KEY = "run_values"  # in a result's details and a bundle's entries


@dataclass(frozen=True)
class RunValues:
    """How a cell's value combines its runs, and each run's value of every metric."""

    combine: str  # mean | median
    runs: dict[str, dict[str, float]]  # run label -> metric -> value

    def of(self, metric: str) -> dict[str, float]:
        """label -> this metric's value, for the runs that report it."""
        return {label: values[metric] for label, values in self.runs.items() if metric in values}

    def record(self) -> dict[str, Any]:
        runs = [{"label": label, "values": values} for label, values in self.runs.items()]
        return {"combine": self.combine, "runs": runs}


def run_values_of(details: Mapping[str, Any]) -> RunValues | None:
    """The runs behind a result's value; None for a cell of one run (nothing to test
    over) or a result that records none."""
    recorded = details.get(RUN_VALUES_KEY)
    if isinstance(recorded, Mapping):
        found = _from_record(recorded)
    else:
        found = _from_finetune_layout(details)
    return found if found is not None and len(found.runs) > 1 else None


def _from_record(recorded: Mapping[str, Any]) -> RunValues | None:
    runs = {
        str(run["label"]): {k: float(v) for k, v in run.get("values", {}).items()}
        for run in recorded.get("runs", [])
        if isinstance(run, Mapping) and "label" in run
    }
    return RunValues(str(recorded.get("combine", "mean")), runs) if runs else None


def _from_finetune_layout(details: Mapping[str, Any]) -> RunValues | None:
    aggregate, runs = details.get("aggregate"), details.get("runs")
    if not isinstance(aggregate, Mapping) or not isinstance(runs, list):
        return None
    used = set(aggregate.get("runs_used", []))
    found: dict[str, dict[str, float]] = {}
    for run in runs:
        if not isinstance(run, Mapping) or "seed" not in run or "learning_rate" not in run:
            continue
        label = f"lr={float(run['learning_rate']):g} seed={int(run['seed'])}"
        if label in used:
            found[label] = {k: float(v) for k, v in dict(run.get("scores", {})).items()}
    combine = str(aggregate.get("combine", "mean"))
    return RunValues(combine, found) if found else None
