"""Issue 46, part 3: the budget table and figure of this folder, from its board alone.

    python leaderboards/bert-a-budget/tabulate.py

reads ``board.json`` (one row per run, checkpoint and mode, written by ``posharness run``
over series such as ``bert-a@budget/bert-a-s0/checkpoint-*``) and ``loss/NAME-sSEED.json``
(each run's training loss log) and writes ``budget.md`` and ``budget.png``: locality x100
of the identical-word probe at 32 tokens against the tokens each run had seen, in mode
``both`` and in the positional mode, beside the flat map's locality at that length (Chen
et al. 2023, Eq. 6: a uniform row's locality). Tokens seen = step x 64 sequences x 32
tokens. A run "clears the flat map" at the first checkpoint whose interval over the 100
probe words lies wholly above it (mode ``both``) or whose value exceeds it (the positional
term, which does not depend on the words: a zero-width interval).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from statistics import mean

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

HERE = Path(__file__).resolve().parent
TOKENS_PER_STEP = 64 * 32  # the cpu-hour recipe's batch of 64 blocks of 32 tokens
FLAT_MAP = 8.98  # locality x100 of a uniform 32 x 32 map (the study tables' flat map)
MODEL = re.compile(r"^(?P<name>[\w-]+)@budget/(?P=name)-s(?P<seed>\d+)/checkpoint-(?P<step>\d+)$")
COLOURS = {"bert-a": "tab:orange", "tupe-r": "tab:green", "nope": "tab:grey"}

Run = tuple[str, int]  # (zoo scheme, pretraining seed)
Point = tuple[float, float, float]  # locality x100, interval low, interval high


def _points() -> dict[Run, dict[str, dict[int, Point]]]:
    """Each run's locality by mode and step."""
    board = json.loads((HERE / "board.json").read_text(encoding="utf-8"))
    found: dict[Run, dict[str, dict[int, Point]]] = {}
    for row in board["rows"]:
        match = MODEL.match(row["model"])
        if match is None:
            raise SystemExit(f"board.json: a row of model {row['model']!r} is not a budget run")
        score = row["scores"]["locality_symmetry/locality"]
        run = (match["name"], int(match["seed"]))
        found.setdefault(run, {}).setdefault(row["mode"], {})[int(match["step"])] = (
            100 * score["mean"],
            100 * score["ci_low"],
            100 * score["ci_high"],
        )
    return dict(sorted(found.items()))


def _losses(runs: list[Run]) -> dict[Run, dict[int, float]]:
    """Each run's logged training loss by step (a record averages the steps before it)."""
    found = {}
    for name, seed in runs:
        path = HERE / "loss" / f"{name}-s{seed}.json"
        records = json.loads(path.read_text(encoding="utf-8"))["records"]
        found[(name, seed)] = {int(r["step"]): float(r["loss"]) for r in records}
    return found


def _first_clear(series: Mapping[int, Point], by_interval: bool) -> int | None:
    """The first step at which the series clears the flat map (and stays reported)."""
    for step in sorted(series):
        value, low, _ = series[step]
        if (low if by_interval else value) > FLAT_MAP:
            return step
    return None


def _tokens(step: int | None) -> str:
    return "not within the run" if step is None else f"{step * TOKENS_PER_STEP / 1e6:.1f} M"


def _summary(points: Mapping[Run, Mapping[str, Mapping[int, Point]]]) -> list[str]:
    lines = [
        "| run | checkpoints (steps) | clears the flat map, mode both | clears it, positional "
        "| locality (both) at the last checkpoint |",
        "|:--|:--|--:|--:|--:|",
    ]
    for (name, seed), modes in points.items():
        steps = sorted(modes["both"])
        last = modes["both"][steps[-1]]
        positional = modes.get("positional")
        lines.append(
            f"| {name} seed {seed} | {len(steps)} ({steps[0]:,}–{steps[-1]:,}) | "
            f"{_tokens(_first_clear(modes['both'], by_interval=True))} | "
            f"{_tokens(_first_clear(positional, by_interval=False)) if positional else '–'} | "
            f"{last[0]:.2f} [{last[1]:.2f}, {last[2]:.2f}] at {_tokens(steps[-1])} |"
        )
    return lines


def _per_step(name: str, points: Mapping[Run, Mapping[str, Mapping[int, Point]]],
              losses: Mapping[Run, Mapping[int, float]]) -> list[str]:  # fmt: skip
    """One scheme's rows: each seed's value beside the mean of the seeds that have it."""
    seeds = sorted(seed for scheme, seed in points if scheme == name)
    steps = sorted({step for seed in seeds for step in points[(name, seed)]["both"]})
    tag = ", ".join(f"s{seed}" for seed in seeds)
    lines = [
        f"| step | tokens seen | locality (both): mean ({tag}) | locality (positional) "
        f"| MLM loss ({tag}) |",
        "|--:|--:|--:|--:|--:|",
    ]

    def cell(mode: str, step: int, interval: bool) -> str:
        here = [
            (seed, points[(name, seed)].get(mode, {}).get(step)) for seed in seeds
        ]  # fmt: skip
        known = [p for _, p in here if p is not None]
        if not known:
            return "–"
        each = ", ".join(
            "–" if p is None else (f"{p[0]:.2f} [{p[1]:.2f}, {p[2]:.2f}]" if interval
                                   else f"{p[0]:.2f}")
            for _, p in here
        )  # fmt: skip
        return each if len(seeds) == 1 else f"{mean(p[0] for p in known):.2f} ({each})"

    for step in steps:
        loss = ", ".join(
            f"{losses[(name, seed)][step]:.3f}" if step in losses[(name, seed)] else "–"
            for seed in seeds
        )
        lines.append(
            f"| {step:,} | {step * TOKENS_PER_STEP / 1e6:.1f} M | {cell('both', step, True)} | "
            f"{cell('positional', step, False)} | {loss} |"
        )
    return lines


def _figure(points: Mapping[Run, Mapping[str, Mapping[int, Point]]],
            losses: Mapping[Run, Mapping[int, float]]) -> None:  # fmt: skip
    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8), sharex=True)
    for (name, seed), modes in points.items():
        colour = COLOURS.get(name, "tab:purple")
        style = ("-", "--", ":", "-.")[seed % 4]
        for axis, mode in zip(axes[:2], ("both", "positional"), strict=True):
            series = modes.get(mode, {})
            if series:
                steps = sorted(series)
                axis.plot([s * TOKENS_PER_STEP for s in steps], [series[s][0] for s in steps],
                          marker="o", markersize=3, color=colour, linestyle=style,
                          label=f"{name} s{seed}")  # fmt: skip
        steps = sorted(s for s in losses[(name, seed)] if s in modes["both"])
        axes[2].plot([s * TOKENS_PER_STEP for s in steps],
                     [losses[(name, seed)][s] for s in steps], marker="o", markersize=3,
                     color=colour, linestyle=style, label=f"{name} s{seed}")  # fmt: skip
    for axis, title in zip(axes[:2], ("mode both", "positional mode"), strict=True):
        axis.axhline(FLAT_MAP, color="grey", linestyle="--", linewidth=1, label="flat map")
        axis.set(xscale="log", xlabel="tokens seen", ylabel="locality x100", title=title)
    axes[2].set(xscale="log", xlabel="tokens seen", ylabel="MLM loss (nats)",
                title="training loss")  # fmt: skip
    for axis in axes:
        axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels overlap on a log axis
        axis.legend(fontsize=7)
    figure.suptitle("cpu-hour recipe at size narrow on Wikipedia, one 20,000-step schedule; "
                    "identical-word probe at 32 tokens")  # fmt: skip
    figure.tight_layout()
    figure.savefig(HERE / "budget.png", dpi=120)


def main() -> None:
    points = _points()
    losses = _losses(list(points))
    schemes = list(dict.fromkeys(name for name, _ in points))
    lines = [
        "## Locality against tokens seen on Wikipedia (the budget runs)",
        "",
        "Locality x100 of the identical-word probe at 32 tokens (Chen et al. 2023, Eq. 6), "
        f"with its percentile interval over the 100 probe words; flat map {FLAT_MAP}. The "
        "positional mode reads the learned table's own term, which does not depend on the "
        "words (its interval has zero width). MLM loss: the training loss logged at that "
        "step (nats, the mean of the 10 steps before it). Every run follows one 20,000-step "
        "schedule (warm-up and decay over 20,000 steps); a run stopped earlier is a prefix of "
        "it. Fewer than 3 seeds of a scheme: no seed-level test, each seed given.",
        "",
        "### When each run first clears the flat map",
        "",
        *_summary(points),
    ]
    for name in schemes:
        lines += ["", f"### {name}", "", *_per_step(name, points, losses)]
    (HERE / "budget.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _figure(points, losses)


if __name__ == "__main__":
    main()
