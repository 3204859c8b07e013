"""The papers' fine-tuning protocols as named presets, and how each turns runs into a score.

* ``chen2023`` — Chen et al. 2023 Table 1: one run per learning rate in
  {9e-5, 7e-5, 5e-5, 3e-5, 1e-5}; the score is the mean over rates (± their sd). Epochs
  and batch size are not stated for Table 1; we use their SNLI recipe (3 epochs, 32).
* ``tupe2021`` — Ke et al. 2021 Table 2: rates {2, 3, 4, 5}e-5 × 5 seeds, 10 epochs (5 for
  MNLI, QNLI, QQP), batch 32, warmup 0.06, Adam ε 1e-6; the median over seeds scores a
  rate and the best rate is reported. STS-B is selected on Pearson, as TUPE reports it.
* ``quick`` — one rate, one seed, 3 epochs: a CPU-sized check, not a paper number.

Every run is kept in the result; the aggregate says which runs it used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import mean, median, stdev

from posharness.base.errors import OptionError

LARGE_GLUE_TASKS = frozenset({"mnli", "qnli", "qqp"})  # TUPE's 5-epoch tasks


@dataclass(frozen=True)
class Protocol:
    name: str
    description: str
    learning_rates: tuple[float, ...]
    seeds_per_rate: int
    epochs: int
    aggregate: str  # single | mean-over-rates | best-rate-median
    epochs_large_tasks: int | None = None
    batch_size: int = 32
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-8
    selection_metric: Mapping[str, str] = field(default_factory=dict)  # task -> metric

    def epochs_for(self, task: str) -> int:
        if task in LARGE_GLUE_TASKS and self.epochs_large_tasks is not None:
            return self.epochs_large_tasks
        return self.epochs


PROTOCOLS = {
    "quick": Protocol(
        "quick", "one rate (5e-5), one seed, 3 epochs: a CPU-sized check", (5e-5,), 1, 3, "single"
    ),
    "chen2023": Protocol(
        "chen2023",
        "Chen et al. 2023: mean over rates 9e-5..1e-5, one seed each",
        (9e-5, 7e-5, 5e-5, 3e-5, 1e-5),
        1,
        3,
        "mean-over-rates",
    ),
    "tupe2021": Protocol(
        "tupe2021",
        "Ke et al. 2021: rates 2e-5..5e-5 x 5 seeds, median per rate, best rate",
        (2e-5, 3e-5, 4e-5, 5e-5),
        5,
        10,
        "best-rate-median",
        epochs_large_tasks=5,
        warmup_ratio=0.06,
        adam_epsilon=1e-6,
        selection_metric={"stsb": "pearson"},
    ),
}


def protocol_named(name: str) -> Protocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise OptionError(
            f"protocol {name!r} is not known: choose from {', '.join(PROTOCOLS)}"
        ) from None


@dataclass(frozen=True)
class PlannedRun:
    learning_rate: float
    seed: int

    @property
    def label(self) -> str:
        return f"lr={self.learning_rate:g} seed={self.seed}"


def plan_runs(
    protocol: Protocol, cell_seed: int, rates: Sequence[float], seeds: int
) -> list[PlannedRun]:
    """Rates × seeds; seeds count up from the cell's seed so cells never share a run."""
    return [PlannedRun(rate, cell_seed + k) for rate in rates for k in range(seeds)]


@dataclass(frozen=True)
class Aggregate:
    values: dict[str, float]  # the reported score per metric
    used: list[int]  # indices of the runs the score is built from
    representative: int  # the run whose predictions and checkpoint stand for the cell
    combine: str  # how ``used`` runs combine: mean | median
    per_rate: dict[str, dict[str, dict[str, float]]]  # rate -> metric -> mean/sd/median/n


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "mean": mean(values),
        "sd": stdev(values) if len(values) > 1 else 0.0,
        "median": median(values),
        "n": float(len(values)),
    }


def aggregate(
    protocol: Protocol,
    runs: Sequence[PlannedRun],
    scores: Sequence[Mapping[str, float]],
    selection: str,
) -> Aggregate:
    """Combine per-run scores as the protocol says; ``selection`` picks rates and runs."""
    metrics = list(scores[0])
    rates = list(dict.fromkeys(run.learning_rate for run in runs))
    by_rate = {
        rate: [i for i, run in enumerate(runs) if run.learning_rate == rate] for rate in rates
    }
    per_rate = {
        f"{rate:g}": {m: _spread([scores[i][m] for i in members]) for m in metrics}
        for rate, members in by_rate.items()
    }
    best_run = max(range(len(runs)), key=lambda i: (scores[i][selection], -i))
    if protocol.aggregate == "best-rate-median":
        rate = max(rates, key=lambda r: (median(scores[i][selection] for i in by_rate[r]), -r))
        used = by_rate[rate]
        values = {m: median(scores[i][m] for i in used) for m in metrics}
        ranked = sorted(used, key=lambda i: (scores[i][selection], i))
        return Aggregate(values, used, ranked[(len(ranked) - 1) // 2], "median", per_rate)
    used = list(range(len(runs)))
    values = {m: mean(scores[i][m] for i in used) for m in metrics}
    return Aggregate(values, used, best_run, "mean", per_rate)
