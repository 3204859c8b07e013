"""Does a checkpoint series cost no more than its checkpoints evaluated one by one?

Issue 46 (Performance): evaluating a 20-checkpoint series of one pretraining run must take
no more than about 20x one checkpoint's evaluation — the probes and data are read once for
the whole series, not once per checkpoint. In one process, with a fresh cache each time:

1. one checkpoint of the run, alone (``NAME@RUN/checkpoint-<first>``);
2. the whole series (``NAME@RUN/checkpoint-*``, N checkpoints);

and prints the ratio (2)/(1) beside N. Both evaluate the same task and modes as the budget
study (locality at 32 tokens, modes ``both`` and ``positional``) unless told otherwise.

    python benchmarks/checkpoint_series.py --model bert-a --run RUNS/budget/bert-a-s0 \\
        --data-dir ../shared/data

Exits 1 when the ratio exceeds N (the target). Wall clock: run it on idle cores, or read
the ratio, not the seconds, on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import posharness


def _timed(models: str, args: argparse.Namespace, scratch: Path, name: str) -> tuple[float, int]:
    """Seconds to evaluate ``models`` with a cache and an output folder of its own; cells."""
    started = time.perf_counter()
    outcome = posharness.evaluate(
        models=models,
        tasks=args.tasks,
        modes=args.modes,
        data_dir=args.data_dir,
        output_dir=scratch / name / "results",
        leaderboard=scratch / name / "board.json",
        cache_dir=scratch / name / "cache",
        task_args={"locality_symmetry": {"length": args.length}},
    )
    return time.perf_counter() - started, len(outcome.cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert-a", help="the zoo scheme the run trained")
    parser.add_argument("--run", type=Path, required=True, help="a run folder with checkpoints")
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--tasks", default="locality_symmetry")
    parser.add_argument("--modes", default="both,positional")
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/checkpoint_series.json"))
    args = parser.parse_args()
    args.tasks = args.tasks.split(",")
    args.modes = args.modes.split(",")
    steps = sorted(
        int(m.group(1))
        for p in args.run.glob("checkpoint-*")
        if (m := re.fullmatch(r"checkpoint-(\d+)", p.name))
    )
    if not steps:
        sys.exit(f"{args.run}: no checkpoint-<step> folders; give a pretraining run's folder")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        one, one_cells = _timed(f"{args.model}@{args.run}/checkpoint-{steps[0]}", args, scratch, "one")
        series, series_cells = _timed(f"{args.model}@{args.run}/checkpoint-*", args, scratch, "series")
    ratio = series / one
    summary = {
        "checkpoints": len(steps),
        "one_checkpoint_s": round(one, 2),
        "series_s": round(series, 2),
        "ratio": round(ratio, 2),
        "cells": {"one": one_cells, "series": series_cells},
        "target": f"ratio <= {len(steps)}",
    }
    print(f"one checkpoint: {one:.1f} s ({one_cells} cells)")
    print(f"series of {len(steps)}: {series:.1f} s ({series_cells} cells)")
    print(f"ratio {ratio:.2f} against {len(steps)} checkpoints (target: at most {len(steps)})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0 if ratio <= len(steps) else 1


if __name__ == "__main__":
    sys.exit(main())
