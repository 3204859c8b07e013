"""SentEval probing: are features computed once, does memory stream, what does a task cost?

Three measurements, in one process each where memory is measured:

* ``reuse``: a probing file is run through ``posharness run`` twice in one results folder
  (the second with ``--overwrite``) and then a second task on the same sentences; the
  result files say how many sentences each run encoded (the promise: 0 the second time).
* ``memory``: the feature store is filled with synthetic vectors for N sentences (7 layers
  × 384 dimensions, MiniLM's shape) and one layer is read back for all N and probed with
  logistic regression, in a fresh subprocess per N; peak RSS is compared for N = 10k and
  100k against the layer matrix itself (N × 384 × 4 bytes). The promise: the growth from
  10k to 100k is about one layer matrix plus the classifier's own buffers, not all layers.
* ``breakdown`` (``--results DIR``): encoding vs classifier seconds per task, read from the
  result files of a real run (``details.timing``).

    python benchmarks/senteval_probing.py [--memory 10000,100000] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
LAYERS, DIM = 7, 384


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memory", default="10000,100000", help="sentence counts to compare")
    parser.add_argument("--results", type=Path, help="results folder of a senteval run")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/senteval.json")
    return parser.parse_args()


def child(n: int) -> dict:
    """Fill a store with n sentences, read one layer, fit logistic regression on it."""
    from posharness.tasks.senteval.features import CHUNK, SentenceFeatureStore
    from posharness.tasks.senteval.probe_grid import Protocol, fit_grid

    rng = np.random.default_rng(0)
    sentences = [f"synthetic sentence number {i}" for i in range(n)]
    with tempfile.TemporaryDirectory() as folder:
        store = SentenceFeatureStore(Path(folder))
        for start in range(0, n, CHUNK):
            part = sentences[start : start + CHUNK]
            store.add(part, [rng.normal(size=(len(part), DIM)).astype(np.float32)] * LAYERS)
        after_fill = _peak_mib()
        x = store.layer(sentences, 3)
        after_read = _peak_mib()
        y = rng.integers(0, 2, n)
        cut = int(0.8 * n), int(0.9 * n)
        protocol = Protocol(classifier="logreg", max_epoch=4)
        fit_grid((x[: cut[0]], y[: cut[0]]), (x[cut[0] : cut[1]], y[cut[0] : cut[1]]),
                 x[cut[1] :], 2, protocol)  # fmt: skip
    return {
        "n": n,
        "layer_matrix_mib": n * DIM * 4 / 2**20,
        "all_layers_mib": LAYERS * n * DIM * 4 / 2**20,
        "peak_after_fill_mib": after_fill,
        "peak_after_read_mib": after_read,
        "peak_mib": _peak_mib(),
    }


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def breakdown(results: Path) -> list[dict]:
    rows = []
    for path in sorted(results.rglob("*__seed0*.json")):
        out = json.loads(path.read_text())
        timing = out.get("details", {}).get("timing")
        if not timing:
            continue
        rows.append(
            {
                "task": out["task"]["name"],
                "mode": out["mode"]["name"],
                "sizes": out["details"]["sizes"],
                "encoded": out["task"]["settings"].get("sentences_encoded"),
                "encode_s": round(timing["encode_seconds"], 1),
                "classifier_s": round(timing["classifier_seconds"], 1),
                "cell_s": round(out.get("timings", {}).get("total_s", 0.0), 1),
            }
        )
    return rows


def main() -> int:
    args = parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return 0
    report: dict = {"memory": []}
    for n in [int(x) for x in args.memory.split(",")]:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(n)],
            capture_output=True,
            text=True,
            check=True,
        )
        report["memory"].append(json.loads(done.stdout.strip().splitlines()[-1]))
    small, large = report["memory"][0], report["memory"][-1]
    growth = large["peak_mib"] - small["peak_mib"]
    layer_growth = large["layer_matrix_mib"] - small["layer_matrix_mib"]
    all_growth = large["all_layers_mib"] - small["all_layers_mib"]
    report["peak_growth_mib"] = growth
    report["growth_over_one_layer"] = growth / layer_growth
    report["growth_over_all_layers"] = growth / all_growth
    for row in report["memory"]:
        print(
            f"n={row['n']:>7}: peak {row['peak_mib']:7.0f} MiB "
            f"(one layer {row['layer_matrix_mib']:5.0f} MiB, "
            f"all layers {row['all_layers_mib']:5.0f} MiB)"
        )
    print(
        f"growth {small['n']}→{large['n']}: {growth:.0f} MiB = "
        f"{report['growth_over_one_layer']:.2f}× one layer matrix, "
        f"{report['growth_over_all_layers']:.2f}× all layers"
    )
    if args.results:
        report["breakdown"] = breakdown(args.results)
        for row in report["breakdown"]:
            print(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if report["growth_over_all_layers"] < 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
