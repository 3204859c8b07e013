"""Does rerunning a finished cell cost (almost) nothing?

The runner promises that a rerun of a finished cell is skipped after fingerprinting the
model, without loading weights or encoding anything (``runner.py``, ``models/hf/adapter.py``).
This benchmark times the whole CLI process, as a user would see it: in a fresh temp
folder with a fresh feature cache it runs

    python -m posharness run --model M --tasks T --device D

once (cold: computes every cell), then the same command again ``--reruns`` times. Target:
the median rerun costs at most 5 % of the first run. It also checks that every rerun says
all cells were already finished and that the result files are byte-identical before and
after the reruns (a skip must not rewrite results).

    python benchmarks/rerun_cost.py [--model minilm] [--tasks locality_symmetry,toeplitz]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 0.05
SUMMARY = re.compile(r"(\d+) cell\(s\) run, (\d+) already finished")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--tasks", default="locality_symmetry,toeplitz")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--reruns", type=int, default=3, help="timed reruns; the median counts")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/rerun_cost.json")
    return parser.parse_args()


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall-clock seconds of the whole process and its stdout (whitespace-normalised)."""
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - clock
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    # rich wraps lines at the terminal width; join them back before matching.
    return seconds, " ".join(done.stdout.split())


def cell_counts(stdout: str) -> tuple[int, int]:
    match = SUMMARY.search(stdout)
    if match is None:
        sys.exit(f"no 'N cell(s) run, M already finished' line in the output: {stdout[-500:]}")
    return int(match[1]), int(match[2])


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def main() -> None:
    args = parse_args()
    command = [sys.executable, "-m", "posharness", "run", "--model", args.model]
    command += ["--tasks", args.tasks, "--device", args.device]
    with tempfile.TemporaryDirectory(prefix="posharness-rerun-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "POSHARNESS_CACHE": str(work / "cache")}

        first_s, first_out = timed(command, work, env)
        ran, _ = cell_counts(first_out)
        results_before = digests(work / "results")
        boards_before = digests(work / "leaderboards")

        reruns = []
        for _ in range(args.reruns):
            seconds, out = timed(command, work, env)
            counts = cell_counts(out)
            if counts != (0, ran):
                sys.exit(
                    f"a rerun did not skip all {ran} cells: {counts[0]} run, {counts[1]} skipped"
                )
            reruns.append(seconds)
        results_after = digests(work / "results")
        boards_after = digests(work / "leaderboards")

        floor_s, _ = timed([sys.executable, "-c", "pass"], work, env)

    rerun_s = statistics.median(reruns)
    ratio = rerun_s / first_s
    summary = {
        "benchmark": "rerun_cost",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": [Path(command[0]).name, *command[1:]],
        "cells": ran,
        "first_run_s": round(first_s, 3),
        "rerun_s": [round(s, 3) for s in reruns],
        "rerun_median_s": round(rerun_s, 3),
        "ratio": round(ratio, 4),
        "target": TARGET,
        "target_met": ratio <= TARGET,
        "reruns_said_all_finished": True,  # otherwise we exited above
        "result_files": len(results_before),
        "result_files_identical": results_before == results_after,
        "leaderboard_identical": boards_before == boards_after,
        "python_startup_s": round(floor_s, 3),
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    report(summary)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    if not (summary["target_met"] and summary["result_files_identical"]):
        sys.exit(1)


def report(s: dict) -> None:
    print(" ".join(s["command"]))
    print(f"{s['cells']} cells, fresh cache and output folder\n")
    header = f"{'run':<28} {'wall s':>8}"
    print(header)
    print("-" * len(header))
    print(f"{'first (computes all cells)':<28} {s['first_run_s']:>8.3f}")
    for i, seconds in enumerate(s["rerun_s"], start=1):
        print(f"{f'rerun {i} (all skipped)':<28} {seconds:>8.3f}")
    print(f"{'rerun median':<28} {s['rerun_median_s']:>8.3f}")
    print(f"{'python -c pass (floor)':<28} {s['python_startup_s']:>8.3f}")
    verdict = "met" if s["target_met"] else "MISSED"
    print(f"\nrerun/first = {s['ratio']:.2%}   target <= {s['target']:.0%}: {verdict}")
    print(
        f"every rerun reported 0 run, {s['cells']} already finished; "
        f"{s['result_files']} result files byte-identical after the reruns: "
        f"{s['result_files_identical']}"
    )
    print(
        f"leaderboard byte-identical: {s['leaderboard_identical']} "
        "(rebuilt on every run, rewritten only when its rows change)"
    )


if __name__ == "__main__":
    main()
