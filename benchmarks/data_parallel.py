"""What do two data-parallel CPU processes buy over one, for encoding and fine-tuning?

A random BERT of MiniLM's shape (by default; written by the tests' helper, no download)
encodes N sentences of mixed length through ``BatchedEncoder`` (hidden states, then
hidden states and attention maps), and fine-tunes for a fixed number of steps through
the shared engine. Each is timed in one process using every core, then in a 2-process
launch (gloo, one thread per process, as ``torchrun`` and ``accelerate launch`` set it),
started here with ``torch.multiprocessing`` so process start-up is not counted. Times
are medians of ``--repeats`` after one warm-up; the ratio is one process's time over the
launch's:

    speedup = single-process seconds / 2-process seconds

and, to show how the launch itself scales, the same against one process on one thread.

The launch must give the single-process outputs (encoding to 1e-4, fine-tune accuracy
exactly with dropout off), or the script fails: a speed-up must not come from other work.

    python benchmarks/data_parallel.py [--sentences 512] [--steps 24] [--repeats 3]
                                       [--hidden 384] [--layers 6] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROCESSES = 2


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=24, help="fine-tune steps of 16 examples")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=384, help="model width (MiniLM's)")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/data_parallel.json")
    return parser.parse_args()


def model_folder(root: Path, args: argparse.Namespace) -> Path:
    sys.path.insert(0, str(REPO))
    from tests.conftest import write_tiny_bert

    folder = write_tiny_bert(
        root / "model", layers=args.layers, heads=args.hidden // 64, hidden=args.hidden
    )
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def measure(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Timings and outputs of this process (alone, or one process of a launch)."""
    import numpy as np

    sys.path.insert(0, str(REPO))
    from posharness.compute.batching import BatchedEncoder
    from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode
    from posharness.contracts.model_spec import LoadOptions
    from posharness.models.hf.adapter import HFEncoderAdapter
    from posharness.stats.classification import score
    from posharness.tasks.finetune.engine import EncodedSplit, TrainingSettings, fine_tune
    from tests.unit.tasks.finetune.test_finetune_engine import dog_sentences

    model = HFEncoderAdapter(folder, LoadOptions(dtype="float32", device="cpu"))
    texts, labels = dog_sentences(args.sentences, seed=5)
    texts = [f"{t} {t}" if i % 3 == 0 else t for i, t in enumerate(texts)]  # mixed lengths
    items = model.tokenize_pairs(texts, None, 64)
    found: dict[str, Any] = {}
    for name, want in (("encode_hidden", {HIDDEN}), ("encode_attentions", {HIDDEN, ATTENTIONS})):
        times, sample = [], None
        for repeat in range(args.repeats + 1):
            encoder = BatchedEncoder(model, Mode.BOTH, frozenset(want), args.batch_size)
            clock = time.perf_counter()
            pooled = np.zeros((len(items), args.hidden), dtype=np.float32)
            for indices, output in encoder.batches(items):
                assert output.hidden_states is not None
                pooled[indices] = output.hidden_states[-1][:, 0].numpy()
            if repeat:
                times.append(time.perf_counter() - clock)
            sample = pooled
        found[name] = {"seconds": statistics.median(times), "sample": sample}
    dev = EncodedSplit("dev", items[:64], labels[:64], [str(i) for i in range(64)])
    batch, size = 16, 16 * args.steps
    subset = EncodedSplit("train", items[:size], labels[:size], [str(i) for i in range(size)])
    times, accuracy = [], None
    for repeat in range(args.repeats + 1):
        outcome = fine_tune(
            lambda: model.for_classification(2, Mode.BOTH),
            subset,
            dev,
            [],
            TrainingSettings(learning_rate=5e-3, epochs=1, batch_size=batch),
            regression=False,
            scorer=lambda gold, predicted: score(("accuracy",), gold, predicted),
            selection_metric="accuracy",
            pad_token_id=model.pad_token_id,
        )
        if repeat:
            times.append(outcome.train_seconds / args.steps)
        accuracy = outcome.epochs[0]["accuracy"]
    found["finetune_step"] = {"seconds": statistics.median(times), "sample": accuracy}
    return found


def _process(rank: int, port: int, folder: str, args: argparse.Namespace, out: str) -> None:
    os.environ.update(
        WORLD_SIZE=str(PROCESSES),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(PROCESSES),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )
    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or PROCESSES) // PROCESSES))
    found = measure(Path(folder), args)
    torch.save(found, Path(out) / f"rank{rank}.pt")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    args = parse_args()
    import numpy as np
    import torch
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="posharness-dp-bench-") as tmp:
        root = Path(tmp)
        folder = model_folder(root, args)
        single = measure(folder, args)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        one_thread = measure(folder, args)
        torch.set_num_threads(threads)
        mp.spawn(_process, args=(free_port(), str(folder), args, tmp), nprocs=PROCESSES)
        launched = torch.load(root / "rank0.pt", weights_only=False)
    summary: dict[str, Any] = {
        "benchmark": "data_parallel",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "sentences": args.sentences,
        "batch_size": args.batch_size,
        "finetune_steps": args.steps,
        "model": {"layers": args.layers, "hidden": args.hidden},
        "cpu_count": os.cpu_count(),
        "single_process_threads": torch.get_num_threads(),
        "load_average_1min": os.getloadavg()[0],
    }
    same = True
    print(
        f"{'measure':<20}{'1 process s':>13}{'2 processes s':>15}{'speedup':>10}"
        f"{'1 thread s':>12}{'vs 1 thread':>13}"
    )
    for name in ("encode_hidden", "encode_attentions", "finetune_step"):
        one, two = single[name]["seconds"], launched[name]["seconds"]
        alone = one_thread[name]["seconds"]
        summary[name] = {
            "single_s": round(one, 4),
            "two_processes_s": round(two, 4),
            "speedup": round(one / two, 3),
            "single_one_thread_s": round(alone, 4),
            "speedup_over_one_thread": round(alone / two, 3),
        }
        if name == "finetune_step":
            same &= single[name]["sample"] == launched[name]["sample"]
        else:
            same &= bool(np.allclose(single[name]["sample"], launched[name]["sample"], atol=1e-4))
        ratios = f"{one / two:>10.2f}{alone:>12.4f}{alone / two:>13.2f}"
        print(f"{name:<20}{one:>13.4f}{two:>15.4f}{ratios}")
    summary["same_outputs"] = same
    print(f"same outputs: {same}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {args.out}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
