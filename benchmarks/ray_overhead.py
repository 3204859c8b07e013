"""What does running a grid on Ray cost per cell, against the serial runner?

A grid of 24 small cells (a tiny random BERT × 3 modes × 8 seeds of ``locality_symmetry``)
runs once serially and once with ``--executor ray`` on a local Ray cluster the driver
starts, each as a whole ``posharness run`` process in a fresh folder and cache. On a
2-core machine there is no speedup to expect; the aim is an overhead below 1 s per cell:

    overhead per cell = (ray wall s - serial wall s) / cells

Both runs must give the same metrics, cell for cell.

    python benchmarks/ray_overhead.py [--seeds 8] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 1.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="cells = 3 modes × seeds")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/ray_overhead.json")
    return parser.parse_args()


def tiny_model(folder: Path) -> Path:
    sys.path.insert(0, str(REPO))
    from tests.conftest import write_tiny_bert

    return write_tiny_bert(folder)


def run(work: Path, model: Path, seeds: int, *extra: str) -> tuple[float, dict]:
    command = [
        sys.executable, "-m", "posharness", "run", "--model", f"hf:{model}",
        "--tasks", "locality_symmetry", "--mode", "both,contextual,positional",
        "--model-arg", "absolute=mean-word-stream", "--device", "cpu", "--dtype", "float32",
        "--seed", ",".join(str(s) for s in range(seeds)),
        "--task-arg", "locality_symmetry.words=6", "--task-arg", "locality_symmetry.length=24",
        "--output-dir", str(work / "results"), "--cache-dir", str(work / "cache"), *extra,
    ]  # fmt: skip
    clock = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - clock
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    metrics = {}
    for path in sorted((work / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        if "cell_id" in data:
            metrics[path.name] = data["metrics"]
    return seconds, metrics


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="posharness-ray-bench-") as tmp:
        root = Path(tmp)
        model = tiny_model(root / "model")
        serial_s, serial = run(root / "serial", model, args.seeds)
        ray_s, distributed = run(root / "ray", model, args.seeds, "--executor", "ray")
    cells = len(serial)
    overhead = (ray_s - serial_s) / cells
    summary = {
        "benchmark": "ray_overhead",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cells": cells,
        "serial_s": round(serial_s, 2),
        "ray_s": round(ray_s, 2),
        "ratio_ray_to_serial": round(ray_s / serial_s, 3),
        "overhead_per_cell_s": round(overhead, 3),
        "target_s": TARGET_S,
        "target_met": overhead < TARGET_S,
        "same_metrics": serial == distributed,
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    ratio = ray_s / serial_s
    print(f"{cells} cells: serial {serial_s:.1f} s, ray {ray_s:.1f} s (ratio {ratio:.2f})")
    print(f"overhead per cell {overhead:.3f} s (target < {TARGET_S} s); same metrics: "
          f"{summary['same_metrics']}")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {args.out}")
    if not summary["same_metrics"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
