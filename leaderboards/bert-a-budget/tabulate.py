"""Issue 46, part 3: the budget table and figure of this folder, from its board alone.

    python leaderboards/bert-a-budget/tabulate.py

reads ``board.json`` (one row per checkpoint and mode, written by ``posharness run`` over
the series ``bert-a@budget/bert-a-s0/checkpoint-*``) and ``loss_log.json`` (the run's
training loss) and writes ``budget.md`` and ``budget.png``: locality x100 of the
identical-word probe at 32 tokens against the tokens the run had seen, in mode ``both``
and in the positional mode, beside the flat map's locality at that length (Chen et al.
2023, Eq. 6: a uniform row's locality). Tokens seen = step x 64 sequences x 32 tokens.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

HERE = Path(__file__).resolve().parent
TOKENS_PER_STEP = 64 * 32  # the cpu-hour recipe's batch of 64 blocks of 32 tokens
FLAT_MAP = 8.98  # locality x100 of a uniform 32 x 32 map (the study tables' flat map)


def _points() -> dict[str, dict[int, tuple[float, float, float]]]:
    board = json.loads((HERE / "board.json").read_text(encoding="utf-8"))
    found: dict[str, dict[int, tuple[float, float, float]]] = {}
    for row in board["rows"]:
        step = int(re.search(r"checkpoint-(\d+)", row["model"]).group(1))
        score = row["scores"]["locality_symmetry/locality"]
        found.setdefault(row["mode"], {})[step] = (
            100 * score["mean"],
            100 * score["ci_low"],
            100 * score["ci_high"],
        )
    return found


def _loss_at(steps: list[int]) -> dict[int, float]:
    records = json.loads((HERE / "loss_log.json").read_text(encoding="utf-8"))["records"]
    by_step = {int(r["step"]): float(r["loss"]) for r in records}
    return {s: by_step[s] for s in steps if s in by_step}


def main() -> None:
    points = _points()
    steps = sorted(points["both"])
    loss = _loss_at(steps)
    lines = [
        "## bert-a on Wikipedia: locality against tokens seen (one pretraining seed)",
        "",
        "Locality x100 of the identical-word probe at 32 tokens (Chen et al. 2023, Eq. 6), "
        f"with its percentile interval over the 100 probe words; flat map {FLAT_MAP}. "
        "The positional mode reads the learned table's own term, which does not depend on "
        "the words (its interval has zero width). MLM loss: the training loss logged at "
        "that step (nats). One run (seed 0), checkpoints of one 20,000-step schedule.",
        "",
        "| step | tokens seen | locality (both) | locality (positional) | MLM loss |",
        "|--:|--:|--:|--:|--:|",
    ]
    for step in steps:
        both, low, high = points["both"][step]
        positional = points.get("positional", {}).get(step, (float("nan"),) * 3)[0]
        lines.append(
            f"| {step:,} | {step * TOKENS_PER_STEP / 1e6:.1f} M | {both:.2f} [{low:.2f}, "
            f"{high:.2f}] | {positional:.2f} | {loss.get(step, float('nan')):.3f} |"
        )
    (HERE / "budget.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    tokens = [s * TOKENS_PER_STEP for s in steps]
    for mode, colour in (("both", "tab:orange"), ("positional", "tab:blue")):
        series = points.get(mode, {})
        axes[0].plot(
            [s * TOKENS_PER_STEP for s in sorted(series)],
            [series[s][0] for s in sorted(series)],
            marker="o",
            color=colour,
            label=f"locality ({mode})",
        )
    axes[0].axhline(FLAT_MAP, color="grey", linestyle="--", label="flat map")
    axes[0].set(xscale="log", xlabel="tokens seen", ylabel="locality x100")
    axes[0].legend(fontsize=8)
    axes[1].plot(tokens, [loss.get(s, float("nan")) for s in steps], marker="o", color="k")
    axes[1].set(xscale="log", xlabel="tokens seen", ylabel="MLM loss (nats)")
    for axis in axes:
        axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels overlap on a log axis
    figure.suptitle("bert-a, cpu-hour recipe at size narrow, on Wikipedia (seed 0)")
    figure.tight_layout()
    figure.savefig(HERE / "budget.png", dpi=120)


if __name__ == "__main__":
    main()
