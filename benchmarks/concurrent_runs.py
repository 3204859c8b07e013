"""Eight ``posharness run`` processes on one results folder, leaderboard and cache.

The scenario of ``tests/unit/core/test_concurrent_runs.py``: four runs on a cell of their
own, four on the same grid (locality_symmetry and toeplitz in three modes), all started
at once on a tiny random BERT (or ``--model``). It checks what they leave — every
process exited 0, every result file reads, every row of the leaderboard is there with
every task, no temporary is left, and no cell was computed twice — then runs the same
eight commands one after another in a fresh folder and compares wall time.

    python benchmarks/concurrent_runs.py [--model hf:/path/to/bert] [--out PATH]
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
SUMMARY = re.compile(r"(\d+) cell\(s\) run, (\d+) already finished")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="a BERT folder [tiny random]")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/concurrent_runs.json")
    return parser.parse_args()


def launch(
    commands: list[list[str]], logs: Path, concurrent: bool
) -> tuple[float, list[tuple[int, str]]]:
    """Wall seconds for all commands, and each one's exit status and output. Output goes
    to files: a process blocked on a full pipe while holding a cell's lock would stall
    every run waiting for that cell."""
    env = {**os.environ, "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1"}
    logs.mkdir(parents=True, exist_ok=True)
    files = [(logs / f"run{i}.log").open("w+") for i in range(len(commands))]
    clock = time.perf_counter()
    if concurrent:
        procs = [
            subprocess.Popen(c, env=env, stdout=f, stderr=subprocess.STDOUT)
            for c, f in zip(commands, files, strict=True)
        ]
        codes = [proc.wait() for proc in procs]
    else:
        codes = [
            subprocess.run(c, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
            for c, f in zip(commands, files, strict=True)
        ]
    seconds = time.perf_counter() - clock
    texts = []
    for handle in files:
        handle.seek(0)
        texts.append(handle.read())
        handle.close()
    return seconds, list(zip(codes, texts, strict=True))


def inspect(out: Path, done: list[tuple[int, str]]) -> dict[str, object]:
    """What the runs left in ``out``, counted."""
    from posharness.base.errors import PosharnessError
    from posharness.boards import leaderboard as lb
    from posharness.contracts.results import read_result
    from tests.unit.core.test_concurrent_runs import MODES, TASKS, leftovers

    results, valid = list((out / "results").rglob("*__seed*.json")), 0
    for path in results:
        try:
            read_result(path)
            valid += 1
        except PosharnessError:
            pass
    rows = lb.load(out / "board.json").rows
    whole = [r for r in rows if {k.split("/")[0] for k in r.scores} == set(TASKS)]
    computed = sum(int(m[1]) for _, text in done if (m := SUMMARY.search(" ".join(text.split()))))
    return {
        "failures": sum(code != 0 for code, _ in done),
        "results_valid": valid,
        "results_expected": len(TASKS) * len(MODES),
        "rows_complete": len(whole),
        "rows_expected": len(MODES),
        "cells_computed": computed,
        "leftovers": leftovers(out),
    }


def main() -> int:
    args = parse_args()
    sys.path.insert(0, str(REPO))  # the scenario is the test's own
    from tests.conftest import write_tiny_bert
    from tests.unit.core.test_concurrent_runs import JOBS, run_command

    with tempfile.TemporaryDirectory(prefix="concurrent-runs-") as tmp:
        work = Path(tmp)
        model = args.model or write_tiny_bert(work / "tiny-bert")
        os.environ.setdefault("POSHARNESS_CACHE", str(work / "default-cache"))
        timings, checks = {}, {}
        for label, concurrent in (("concurrent", True), ("serial", False)):
            out = work / label
            commands = [run_command(model, out, tasks, modes) for tasks, modes in JOBS]
            timings[label], done = launch(commands, work / f"{label}-logs", concurrent)
            checks[label] = inspect(out, done)
    ratio = timings["concurrent"] / timings["serial"]
    print(f"{len(JOBS)} runs of `posharness run` on one results folder, board and cache")
    print(f"{'':<18}{'concurrent':>12}{'serial':>12}")
    for key in checks["concurrent"]:
        shown = [checks[label][key] for label in ("concurrent", "serial")]
        shown = [len(v) if isinstance(v, list) else v for v in shown]
        print(f"{key:<18}{shown[0]:>12}{shown[1]:>12}")
    print(f"{'wall time (s)':<18}{timings['concurrent']:>12.1f}{timings['serial']:>12.1f}")
    print(f"concurrent / serial wall time: {ratio:.2f} on {os.cpu_count()} CPU cores")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(),
                "model": str(model),
                "timings_s": timings,
                "ratio": ratio,
                "checks": checks,
            },
            indent=2,
        )
        + "\n"
    )
    sound = checks["concurrent"]
    ok = (
        sound["failures"] == 0
        and sound["results_valid"] == sound["results_expected"]
        and sound["rows_complete"] == sound["rows_expected"]
        and not sound["leftovers"]
        and sound["cells_computed"] == checks["serial"]["cells_computed"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
