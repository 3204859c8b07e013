"""Does our fine-tuning loop train at least as fast as ``transformers.Trainer``?

The harness trains with its own short loop (``posharness.tasks.finetune_engine``) rather
than Trainer, so the loop must not cost throughput. This script trains the same MiniLM
checkpoint on the same tokenised GLUE RTE examples with the same settings (1 epoch, lr
5e-5, batch 32, 10 % linear warmup, weight decay 0.01, clipping at 1.0, batches grouped
by length) three ways, in one process, interleaved so that other load on the machine hits
every method alike:

* ``ours``             ``fine_tune`` in mode ``both``: examples / time in the training loop
  (``RunOutcome.examples_per_second``; model loading and the dev pass are not in it);
* ``trainer``          ``Trainer.train()`` on ``AutoModelForSequenceClassification`` with
  eager attention and ``DataCollatorWithPadding``: its own ``train_samples_per_second``;
* ``ours-contextual``  ``fine_tune`` in mode ``contextual`` (definition
  ``mean-word-stream``, which needs no corpus): what the decomposed attention costs.

Both loops also get a wall clock around the whole call (``fine_tune`` includes loading
the model and scoring the dev slice; ``Trainer.train`` includes building its optimizer and
data loader). Target: median ours / median Trainer >= 1.0 in training examples/s.

    python benchmarks/finetune_throughput.py [--examples 512] [--repeats 2] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a benchmark never downloads

import numpy as np
import torch

from posharness.adapter import Mode
from posharness.errors import PosharnessError
from posharness.model_spec import LoadOptions
from posharness.models.hf import HFEncoderAdapter, build_minilm
from posharness.tasks.finetune_data import DATASETS, load_split, locate_splits
from posharness.tasks.finetune_engine import (
    EncodedSplit,
    TrainingSettings,
    epoch_batches,
    fine_tune,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / "../shared/data"
TARGET = 1.0
DEFAULT_OUT = REPO / "benchmarks/out/finetune_throughput.json"
CONTEXTUAL_ARGS = (("absolute", "mean-word-stream"),)


@dataclass(frozen=True)
class Timing:
    """One timed training run: the method's own examples/s and the wall clock of the call."""

    examples_per_second: float
    wall_seconds: float
    train_loss: float
    padded_tokens: int


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="holds glue_data/RTE")
    parser.add_argument("--examples", type=int, default=512, help="first N RTE train examples")
    parser.add_argument("--select", type=int, default=64, help="first N RTE dev examples")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (Trainer follows it)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument("--no-contextual", action="store_true", help="skip ours-contextual")
    parser.add_argument(
        "--trainer-unfused",
        action="store_true",
        help="add Trainer with optim=adamw_torch (the unfused AdamW our loop uses)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args()


def encode(adapter: HFEncoderAdapter, data_dir: Path, split: str, limit: int) -> EncodedSplit:
    spec = DATASETS["rte"]
    source = locate_splits(spec, data_dir, None, {})[split]
    loaded = load_split(spec, split, source, limit=limit)
    examples = loaded.examples
    items = adapter.tokenize_pairs(
        [e.text_a for e in examples], [e.text_b or "" for e in examples], 128
    )
    labels = np.array([e.label for e in examples], dtype=np.int64)
    return EncodedSplit(split, items, labels, [e.id for e in examples])


def accuracy(gold: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    return {"accuracy": float((gold == predicted).mean())}


def padded_cells(train: EncodedSplit, settings: TrainingSettings) -> int:
    """Tokens our loop computes on in epoch 1, padding included (its batches are seeded)."""
    lengths = [len(item) for item in train.items]
    batches = epoch_batches(lengths, settings.batch_size, settings.seed, 1)
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def run_ours(
    adapter: HFEncoderAdapter,
    mode: Mode,
    train: EncodedSplit,
    select: EncodedSplit,
    settings: TrainingSettings,
    device: str,
) -> Timing:
    clock = time.perf_counter()
    outcome = fine_tune(
        lambda: adapter.for_classification(2, mode),
        train,
        select,
        [],
        settings,
        regression=False,
        scorer=accuracy,
        selection_metric="accuracy",
        pad_token_id=adapter.pad_token_id,
        device=device,
    )
    wall = time.perf_counter() - clock
    loss = outcome.epochs[0]["train_loss"]
    return Timing(outcome.examples_per_second, wall, loss, padded_cells(train, settings))


def run_trainer(
    adapter: HFEncoderAdapter,
    train: EncodedSplit,
    settings: TrainingSettings,
    device: str,
    optim: str | None = None,
) -> Timing:
    """Trainer as its users run it, with our settings spelled in its arguments.

    ``optim=None`` keeps Trainer's default optimizer (fused AdamW since torch 2.8);
    ``"adamw_torch"`` is the unfused AdamW our loop builds, to separate loop from optimizer.
    """
    from transformers import (
        AutoModelForSequenceClassification,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )
    from transformers.trainer_callback import PrinterCallback

    features = [
        {
            "input_ids": list(item.input_ids),
            "attention_mask": [1] * len(item),
            "token_type_ids": list(item.token_type_ids or [0] * len(item)),
            "labels": int(label),
        }
        for item, label in zip(train.items, train.labels, strict=True)
    ]
    padded = [0]
    collate = DataCollatorWithPadding(adapter.tokenizer)

    def counting_collator(batch: list[dict[str, Any]]) -> dict[str, Any]:
        out = collate(batch)
        padded[0] += int(out["input_ids"].numel())
        return out

    torch.manual_seed(settings.seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        adapter.folder, num_labels=2, attn_implementation="eager", dtype=torch.float32
    )
    with tempfile.TemporaryDirectory() as folder:
        arguments = TrainingArguments(
            output_dir=folder,
            per_device_train_batch_size=settings.batch_size,
            num_train_epochs=settings.epochs,
            learning_rate=settings.learning_rate,
            warmup_steps=settings.warmup_ratio,  # a float < 1 is a ratio in transformers 5
            weight_decay=settings.weight_decay,
            adam_epsilon=settings.adam_epsilon,
            max_grad_norm=settings.clip_norm,
            train_sampling_strategy="group_by_length",  # was group_by_length=True before v5
            logging_strategy="no",
            eval_strategy="no",
            save_strategy="no",
            report_to="none",
            use_cpu=not device.startswith("cuda"),
            seed=settings.seed,
            dataloader_num_workers=0,
            disable_tqdm=True,
            **({"optim": optim} if optim is not None else {}),
        )
        trainer = Trainer(
            model=model,
            args=arguments,
            train_dataset=features,
            data_collator=counting_collator,
            processing_class=adapter.tokenizer,
        )
        trainer.remove_callback(PrinterCallback)  # it prints the final metrics dict
        clock = time.perf_counter()
        metrics = trainer.train().metrics
        wall = time.perf_counter() - clock
    return Timing(metrics["train_samples_per_second"], wall, metrics["train_loss"], padded[0])


def main() -> int:
    args = parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    try:
        adapter = build_minilm(None, LoadOptions(dtype="float32", device=args.device))
        contextual = build_minilm(
            None,
            LoadOptions(dtype="float32", device=args.device, model_args=CONTEXTUAL_ARGS),
        )
        train = encode(adapter, args.data_dir, "train", args.examples)
        select = encode(adapter, args.data_dir, "dev", args.select)
    except PosharnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    settings = TrainingSettings(learning_rate=5e-5, epochs=1, batch_size=args.batch_size)
    methods: dict[str, Callable[[EncodedSplit], Timing]] = {
        "ours": lambda data: run_ours(adapter, Mode.BOTH, data, select, settings, args.device),
        "trainer": lambda data: run_trainer(adapter, data, settings, args.device),
    }
    if args.trainer_unfused:
        methods["trainer-unfused"] = lambda data: run_trainer(
            adapter, data, settings, args.device, optim="adamw_torch"
        )
    if not args.no_contextual:
        methods["ours-contextual"] = lambda data: run_ours(
            contextual, Mode.CONTEXTUAL, data, select, settings, args.device
        )

    import transformers

    tokens = sum(len(item) for item in train.items)
    print(
        f"minilm on {len(train)} GLUE RTE train examples ({tokens} tokens, max length 128), "
        f"dev slice {len(select)}; batch {settings.batch_size}, 1 epoch, lr "
        f"{settings.learning_rate:g}, {args.repeats} repeats"
    )
    print(
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers "
        f"{transformers.__version__}, device {args.device}"
    )
    warm = EncodedSplit("train", train.items[:64], train.labels[:64], train.ids[:64])
    for method in methods.values():  # one-time costs (kernels, allocator) out of the timings
        method(warm)
    runs: dict[str, list[Timing]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, method in methods.items():  # interleaved, so drift hits every method
            runs[name].append(method(train))
            print(f"  {name:<16} {runs[name][-1].examples_per_second:8.2f} ex/s", flush=True)
    return report(args, runs, tokens, settings)


def report(
    args: argparse.Namespace,
    runs: dict[str, list[Timing]],
    tokens: int,
    settings: TrainingSettings,
) -> int:
    rate = {name: statistics.median(t.examples_per_second for t in ts) for name, ts in runs.items()}
    wall = {name: statistics.median(t.wall_seconds for t in ts) for name, ts in runs.items()}
    examples = args.examples
    print()
    header = f"{'method':<16} {'train ex/s':>10} {'wall s':>7} {'wall ex/s':>9}"
    print(f"{header} {'padding':>8} {'loss':>7}")
    print("-" * (len(header) + 17))
    for name, timings in runs.items():
        padding = 1 - tokens / timings[0].padded_tokens
        loss = statistics.median(t.train_loss for t in timings)
        print(
            f"{name:<16} {rate[name]:>10.2f} {wall[name]:>7.2f} {examples / wall[name]:>9.2f} "
            f"{padding:>7.1%} {loss:>7.4f}"
        )
    ratio = rate["ours"] / rate["trainer"]
    verdict = "met" if ratio >= TARGET else "MISSED"
    print()
    print(f"ours/trainer (train loop)          {ratio:5.2f}x   target >= {TARGET:.1f}x: {verdict}")
    ours_loop_vs_wall = rate["ours"] * wall["trainer"] / examples
    print(f"ours loop / trainer wall           {ours_loop_vs_wall:5.2f}x")
    print(f"ours wall / trainer wall           {wall['trainer'] / wall['ours']:5.2f}x")
    if "ours-contextual" in rate:
        print(f"ours-contextual/ours (train loop)  {rate['ours-contextual'] / rate['ours']:5.2f}x")
    print("median of", args.repeats, "repeats; wall of ours includes model load and dev pass")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(),
                "examples": examples,
                "tokens": tokens,
                "settings": settings.__dict__,
                "threads": torch.get_num_threads(),
                "median_examples_per_second": rate,
                "median_wall_seconds": wall,
                "runs": {name: [t.__dict__ for t in ts] for name, ts in runs.items()},
                "ratio": ratio,
                "target": TARGET,
            },
            indent=2,
        )
    )
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
