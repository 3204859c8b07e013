"""How each metric is made from its examples, declared by the task: what ``compare`` tests.

A paired test is only honest when it tests the statistic the table prints. A locality is
a mean of per-word values, but a symmetry is computed once on the *averaged* attention
map, an F1 or a correlation once on every prediction, a macro average once over
relations: the mean of per-example values is a different number, and a test on it can put
the printed difference outside its own interval (our wave-2 ``compare`` did). So every
metric says how it aggregates, and whether one example's contribution is binary
(correct / incorrect, tested by exact McNemar) or continuous (sign-flip permutation), and
the test follows the declaration, never the values a run happened to produce.

Tasks declare with ``TaskSpec.metric_types``: a name maps to a :class:`MetricType`; a
metric name that is not declared matches the longest declared name it ends with after an
underscore (``dev_accuracy`` → ``accuracy``). A metric nobody declared (a plugin task)
is read as a mean of continuous per-example values when its examples carry it, and gets
no test otherwise — a test is never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Aggregate = Literal["mean", "examples", "cell"]
Outcome = Literal["binary", "continuous"]


@dataclass(frozen=True)
class MetricType:
    """How one metric is made from the examples a cell scored.

    ``aggregate``:
    - ``mean``: the metric is the mean of the per-example values stored under its name;
      the paired test runs on those values.
    - ``examples``: a function of all the examples at once (symmetry of the averaged map,
      F1, Matthews, Pearson, Spearman, macro averages); tested by a paired bootstrap that
      recomputes the aggregate on each joint resample, from the gold labels and
      predictions or from the cell's common-resample replicates (``paired_resampling``).
    - ``cell``: one value per cell with nothing per example to resample (the content-free
      positional term, a p-value, a count); never tested.

    ``outcome`` says what one example contributes to a ``mean``: ``binary`` (0/1
    correctness, exact McNemar) or ``continuous`` (sign-flip permutation test).
    """

    aggregate: Aggregate
    outcome: Outcome = "continuous"
    declared: bool = True  # False for the fallback of a metric no task declared

    @property
    def label(self) -> str:
        if self.aggregate == "mean":
            return f"mean of {self.outcome} per-example values"
        if self.aggregate == "examples":
            return "a function of all examples"
        return "one value per cell"


MEAN_BINARY = MetricType("mean", "binary")
MEAN_CONTINUOUS = MetricType("mean", "continuous")
OF_EXAMPLES = MetricType("examples")
PER_CELL = MetricType("cell")
UNDECLARED = MetricType("mean", "continuous", declared=False)


def declared_type(declarations: Mapping[str, MetricType], metric: str) -> MetricType | None:
    """The declaration of ``metric``: by its name, else by the longest declared name it
    ends with after an underscore (``dev_accuracy`` finds ``accuracy``)."""
    if metric in declarations:
        return declarations[metric]
    suffixes = [name for name in declarations if metric.endswith("_" + name)]
    return declarations[max(suffixes, key=len)] if suffixes else None


def metric_type(task: str, metric: str) -> MetricType:
    """The declared type of ``task/metric``, from the registered task's spec; the
    undeclared fallback when the task is not registered here or declares nothing for it."""
    from posharness.base.errors import PosharnessError
    from posharness.plugins import tasks

    try:
        declarations = tasks.get(task)().spec.metric_types
    except PosharnessError:
        return UNDECLARED
    return declared_type(declarations, metric) or UNDECLARED
