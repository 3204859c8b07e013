"""posharness's per-layer probe against SentEval's own classifier, on the same features.

SentEval (Conneau & Kiela 2018) is not on PyPI and is not part of this repository: this
script imports it from a checkout whose path you give (``--senteval``; the folder holding
its ``senteval`` package). SentEval's classifier moves its tensors to CUDA; to run it on a
CPU, edit that checkout (not this repository) so ``senteval/tools/classifier.py`` keeps its
tensors and modules on the CPU, and, on Python >= 3.11, so ``senteval/utils.py`` calls
``inspect.getfullargspec`` where it calls the removed ``inspect.getargspec``.

What it does, for one probing file (by default BShift) and one mode:

1. ``posharness run`` the task with logistic regression (``classifier=logreg``,
   ``search=full``, no control) into a fresh cache, once with the default early stopping
   and once with ``tenacity_reset=true``; per layer it reads dev and test accuracy;
2. reads the very sentence vectors those probes were trained on back from the feature
   store (the same limited subset, through the task's own subset function);
3. runs SentEval's ``SplitClassifier`` (``nhid`` 0: logistic regression; Adam, batch 64,
   ``tenacity`` 5, ``epoch_size`` 4, ``max_epoch`` 200, its own L2 grid) on those vectors
   per layer for each SentEval seed;
4. prints a table: per layer posharness's test accuracy (both rules) and SentEval's per
   seed; the mean over layers of posharness minus SentEval's seed mean, the largest
   per-layer gap, and the layer each chooses on dev (SentEval: its rounded dev accuracy,
   first of ties). ``--json`` writes the numbers.

    nice -n 10 python benchmarks/senteval_reference_check.py --senteval /path/to/SentEval \
        --probes probes/senteval/bigram_shift.txt --train-limit 4000 --limit 1000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np


def posharness_layers(args: argparse.Namespace, work: Path, reset: bool) -> dict:
    """Per-layer dev/test accuracy and the chosen layer of posharness's logistic regression."""
    from posharness.api import evaluate

    name = "reset" if reset else "senteval"
    options = {
        "probes": args.probes,
        "classifier": "logreg",
        "search": "full",
        "control": "false",
        "tenacity_reset": str(reset).lower(),
    }
    evaluate(
        "minilm",
        args.task,
        args.mode,
        output_dir=work / f"results-{name}",
        leaderboard=work / f"board-{name}.json",
        cache_dir=work / "cache",
        limit=args.limit,
        train_limit=args.train_limit,
        task_args={args.task: options},
    )
    path = next((work / f"results-{name}").rglob(f"{args.task}__{args.mode}__seed0*.json"))
    out = json.loads(path.read_text())
    return {
        "dev": [p["dev_accuracy"] for p in out["details"]["layers"]],
        "test": [p["test_accuracy"] for p in out["details"]["layers"]],
        "best_layer": int(out["metrics"]["best_layer"]["value"]),
        "protocol": out["details"]["protocol"],
    }


def features(args: argparse.Namespace, work: Path) -> tuple[list[np.ndarray], dict]:
    """Every layer's sentence vectors from the store the probes read, split as they were."""
    from posharness.tasks.senteval.catalog import BY_NAME
    from posharness.tasks.senteval.features import SentenceFeatureStore
    from posharness.tasks.senteval.probing_files import read_probing_file
    from posharness.tasks.senteval.task import _limited

    data = read_probing_file(BY_NAME[args.task], Path(args.probes))
    chosen = _limited(data, args.limit, args.train_limit)
    sentences = [data.sentences[i] for i in chosen]
    stores = {p.parent for p in (work / "cache").rglob("*.safetensors")}
    if len(stores) != 1:
        raise SystemExit(f"expected one feature store under {work / 'cache'}, found {stores}")
    store = SentenceFeatureStore(stores.pop())
    class_id = {label: i for i, label in enumerate(data.classes)}
    labels = np.array([class_id[label] for label in data.labels[chosen]], dtype=np.int64)
    splits = data.splits[chosen]
    parts = {code: np.flatnonzero(splits == code) for code in ("tr", "va", "te")}
    layers = [store.layer(sentences, k) for k in range(store.layers(sentences))]
    return layers, {"labels": labels, "parts": parts, "classes": len(data.classes)}


def senteval_layer(x: np.ndarray, split: dict, seed: int) -> tuple[float, float]:
    """SentEval's SplitClassifier with the probing paper's logistic-regression settings."""
    from senteval.tools.validation import SplitClassifier

    labels, parts = split["labels"], split["parts"]
    names = {"tr": "train", "va": "valid", "te": "test"}
    config = {
        "nclasses": split["classes"],
        "seed": seed,
        "usepytorch": True,
        "classifier": {
            "nhid": 0,
            "optim": "adam",
            "batch_size": 64,
            "tenacity": 5,
            "epoch_size": 4,
            "max_epoch": 200,
        },
    }
    xs = {names[c]: np.ascontiguousarray(x[p], dtype=np.float32) for c, p in parts.items()}
    ys = {names[c]: labels[p] for c, p in parts.items()}
    dev, test = SplitClassifier(xs, ys, config).run()
    return float(dev), float(test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--senteval", required=True, help="folder holding the senteval package")
    parser.add_argument("--probes", required=True, help="a SentEval-format probing file")
    parser.add_argument("--task", default="bshift")
    parser.add_argument("--mode", default="both")
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seeds", default="1111,1112,1113")
    parser.add_argument("--work", default=None, help="folder for results and cache (temp)")
    parser.add_argument("--json", default=None, help="write the numbers here")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.senteval).resolve()))
    import torch

    torch.set_num_threads(1)
    work = Path(args.work or tempfile.mkdtemp(prefix="senteval-check-"))
    ours = posharness_layers(args, work, reset=False)
    reset = posharness_layers(args, work, reset=True)
    layers, split = features(args, work)
    seeds = [int(s) for s in args.seeds.split(",")]
    theirs = {s: [senteval_layer(x, split, s) for x in layers] for s in seeds}
    report(ours, reset, theirs)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"posharness": ours, "posharness_reset": reset, "senteval": theirs})
        )


def report(ours: dict, reset: dict, theirs: dict[int, list[tuple[float, float]]]) -> None:
    seeds = list(theirs)
    head = "| layer | posharness | posharness (reset) | " + " | ".join(
        f"SentEval seed {s}" for s in seeds
    )
    print(head + " | SentEval mean | Δ (posharness − SentEval mean) |")
    print("|---" * (5 + len(seeds)) + "|")
    gaps = []
    for k, test in enumerate(ours["test"]):
        theirs_k = [theirs[s][k][1] for s in seeds]
        mean = float(np.mean(theirs_k))
        gaps.append(100 * test - mean)
        cells = " | ".join(f"{v:.2f}" for v in theirs_k)
        print(
            f"| {k} | {100 * test:.2f} | {100 * reset['test'][k]:.2f} | {cells} | {mean:.2f} "
            f"| {gaps[-1]:+.2f} |"
        )
    chosen = {s: int(np.argmax([dev for dev, _ in theirs[s]])) for s in seeds}
    print(f"\nmean Δ over layers: {np.mean(gaps):+.2f} points; largest |Δ|: "
          f"{np.max(np.abs(gaps)):.2f} (layer {int(np.argmax(np.abs(gaps)))})")  # fmt: skip
    reset_gaps = [
        100 * t - np.mean([theirs[s][k][1] for s in seeds]) for k, t in enumerate(reset["test"])
    ]
    print(f"with tenacity_reset=true: mean Δ {np.mean(reset_gaps):+.2f}, largest |Δ| "
          f"{np.max(np.abs(reset_gaps)):.2f}")  # fmt: skip
    print(f"chosen layer: posharness {ours['best_layer']} (reset: {reset['best_layer']}); "
          f"SentEval per seed {chosen}")  # fmt: skip


if __name__ == "__main__":
    main()
