"""Does ``posharness report`` build in seconds, and never redraw an unchanged figure?

Figure rendering is the report's cost; figures are cached by content. Each build runs
as a user would run it, a whole ``python -m posharness report`` process, with a fresh
figure cache (``POSHARNESS_CACHE`` in a temporary folder):

1. the committed leaderboards (``leaderboards/*.json``, with the zoo comparison): cold
   (empty cache), then warm (same command again);
2. a synthetic study of 1,000 cells — 50 models × 2 modes × 10 tasks, one result file
   each with a small PNG artifact, one leaderboard built from them: cold, warm, and
   after one cell's number changed (its result file and the board rebuilt).

Targets: a warm build draws no figure and takes at most 35 % of the cold build; after
one changed number at most two figures are redrawn (its task's dot plot, and the
scatter when the task is plotted there); the committed report builds cold in < 30 s.

    python benchmarks/bench_report.py [--models 50] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WARM_TARGET = 0.35
COMMITTED_TARGET_S = 30.0
COUNTS = re.compile(r"figures: (\d+) drawn, (\d+) from the cache; (\d+) files copied")
TASKS = [f"task_{k}" for k in range(9)] + ["locality_symmetry"]
FAMILIES = ("attention-geometry", "fine-tune", "probe")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=50, help="models × 2 modes × 10 tasks")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/bench_report.json")
    return parser.parse_args()


def timed(args: list[str], env: dict[str, str]) -> dict:
    """One report build as a process: wall seconds and the figures it drew or reused."""
    command = [sys.executable, "-m", "posharness", "report", *args]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    match = COUNTS.search(" ".join(done.stdout.split()))
    if match is None:
        sys.exit(f"no 'figures: N drawn, M from the cache' in the output: {done.stdout[-500:]}")
    drawn, reused, copied = (int(g) for g in match.groups())
    return {"s": round(seconds, 3), "drawn": drawn, "reused": reused, "copied": copied}


def write_study(root: Path, models: int) -> tuple[Path, Path]:
    """The synthetic results and their board; returns (results folder, board)."""
    from posharness.boards import leaderboard as lb
    from posharness.contracts.results import Metric

    sys.path.insert(0, str(REPO))  # the synthetic results are the tests' own factory
    from tests.result_factory import save_cell, synthetic_result

    png = _tiny_png()
    results = root / "results"
    for m in range(models):
        spec, fingerprint = f"model-{m:03d}", f"{m:016x}"
        for mode in ("both", "positional"):
            for t, task in enumerate(TASKS):
                metrics = (
                    ("locality", "symmetry") if task == "locality_symmetry" else ("score", "aux")
                )
                value = (m * 7 + t * 3 + (mode == "both")) % 97 / 100
                stem = results / spec / f"{task}__{mode}__seed0"
                stem.mkdir(parents=True, exist_ok=True)
                (stem / "figure.png").write_bytes(png)
                result = synthetic_result(
                    spec=spec,
                    fingerprint=fingerprint,
                    task=task,
                    mode=mode,
                    cell_id=f"{fingerprint}-{mode}-{task}",
                    pe_card={"family": f"family-{m % 4}"},
                    family=FAMILIES[t % 3],
                    metrics={
                        metrics[0]: Metric(value, ci_low=value - 0.01, ci_high=value + 0.01),
                        metrics[1]: Metric(1 - value / 2),
                    },
                    artifacts=[f"{stem.name}/figure.png"],
                )
                save_cell(results, result)
    board = root / "boards" / "synthetic.json"
    built = lb.build(lb.collect_results(results), "synthetic", board)
    lb.save(built.model_copy(update={"created_at": "2026-01-01T00:00:00+00:00"}), board)
    return results, board


def change_one_number(results: Path, board: Path) -> None:
    """One cell's main metric moves; the board is rebuilt from the results."""
    from posharness.boards import leaderboard as lb
    from posharness.contracts.results import Metric, read_result, write_result

    path = results / "model-000" / "task_0__both__seed0.json"
    result = read_result(path)
    result.metrics["score"] = Metric(0.999, ci_low=0.99, ci_high=1.0)
    write_result(result, path)
    built = lb.build(lb.collect_results(results), "synthetic", board)
    lb.save(built.model_copy(update={"created_at": "2026-01-01T00:00:00+00:00"}), board)


def _tiny_png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), (40, 90, 160)).save(buffer, format="PNG")
    return buffer.getvalue()


def main() -> None:
    args = parse_args()
    committed = sorted(str(p.relative_to(REPO)) for p in (REPO / "leaderboards").glob("*.json"))
    with tempfile.TemporaryDirectory(prefix="posharness-bench-report-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "POSHARNESS_CACHE": str(work / "cache")}
        zoo = ["leaderboards/pe-zoo-mini-init.json", "leaderboards/pe-zoo-mini.json"]
        board_args = [*committed, "-o", str(work / "committed"), "--compare", *zoo]
        runs = {"committed cold": timed(board_args, env), "committed warm": timed(board_args, env)}
        start = time.perf_counter()
        results, board = write_study(work / "study", args.models)
        writing_s = time.perf_counter() - start
        cells = sum(1 for _ in results.rglob("*__seed0.json"))
        synthetic = [str(board), "-o", str(work / "synthetic")]
        runs["1,000 cells cold"] = timed(synthetic, env)
        runs["1,000 cells warm"] = timed(synthetic, env)
        change_one_number(results, board)
        runs["1,000 cells, one changed"] = timed(synthetic, env)
        size = sum(p.stat().st_size for p in (work / "synthetic").rglob("*") if p.is_file())

    cold, warm = runs["1,000 cells cold"], runs["1,000 cells warm"]
    ratio = warm["s"] / cold["s"]
    checks = {
        "warm draws nothing": warm["drawn"] == 0 and runs["committed warm"]["drawn"] == 0,
        f"warm/cold <= {WARM_TARGET:.0%}": ratio <= WARM_TARGET,
        "one changed number redraws <= 2": 1 <= runs["1,000 cells, one changed"]["drawn"] <= 2,
        f"committed cold < {COMMITTED_TARGET_S:.0f} s": runs["committed cold"]["s"]
        < COMMITTED_TARGET_S,
    }
    summary = {
        "benchmark": "bench_report",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cells": cells,
        "writing_study_s": round(writing_s, 2),
        "report_mb": round(size / 1e6, 1),
        "runs": runs,
        "warm_over_cold": round(ratio, 4),
        "checks": checks,
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    print_summary(summary)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    if not all(checks.values()):
        sys.exit(1)


def print_summary(s: dict) -> None:
    print(
        f"committed leaderboards, then {s['cells']} synthetic cells "
        f"(written in {s['writing_study_s']} s; report {s['report_mb']} MB)\n"
    )
    header = f"{'build':<28} {'wall s':>8} {'drawn':>6} {'cached':>7} {'copied':>7}"
    print(header)
    print("-" * len(header))
    for name, run in s["runs"].items():
        print(
            f"{name:<28} {run['s']:>8.3f} {run['drawn']:>6} {run['reused']:>7} {run['copied']:>7}"
        )
    print(f"\n1,000 cells warm/cold = {s['warm_over_cold']:.1%}")
    for check, met in s["checks"].items():
        print(f"{check}: {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
