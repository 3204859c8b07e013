"""Does our fine-tuning loop train at least as fast as ``transformers.Trainer``?

The harness trains with its own short loop (``posharness.tasks.finetune.engine``) rather
than Trainer, so the loop must not cost throughput. The same MiniLM checkpoint is trained
on the same tokenised GLUE RTE examples with the same settings (1 epoch, lr 5e-5, batch
32, 10 % linear warmup, weight decay 0.01, clipping at 1.0, batches grouped by length),
in one process, the methods interleaved so that other load on the machine hits each alike:

* ``ours``             ``fine_tune`` in mode ``both``; ``RunOutcome.examples_per_second``
  times the training loop only (not model loading, not the dev pass);
* ``trainer``          ``Trainer.train()`` on ``AutoModelForSequenceClassification`` (eager
  attention, ``DataCollatorWithPadding``): its own ``train_samples_per_second``;
* ``trainer-unfused``  (``--trainer-unfused``) the same with ``optim="adamw_torch"``;
* ``ours-contextual``  mode ``contextual`` (definition ``mean-word-stream``, no corpus
  needed): what the decomposed attention costs in training.

Trainer is handed the batch order our loop draws for epoch 1, so both compute the same
padded batches and only the loops differ (``--trainer-own-order`` lets it draw its own; the
padded-positions/s ratio then corrects for the different padding). Target: median ours /
median Trainer >= 1.0 in training examples/s.

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
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a benchmark never downloads

import numpy as np
import torch

from posharness.base.errors import PosharnessError
from posharness.contracts.adapter import Mode
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.models.hf.builders import build_minilm
from posharness.tasks.finetune.data.locate import DATASETS, load_split, locate_splits
from posharness.tasks.finetune.engine import (
    EncodedSplit,
    TrainingSettings,
    epoch_batches,
    fine_tune,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / "../shared/data"
DEFAULT_OUT = REPO / "benchmarks/out/finetune_throughput.json"
TARGET = 1.0
CONTEXTUAL_ARGS = (("absolute", "mean-word-stream"),)


@dataclass(frozen=True)
class Timing:
    """One timed training run."""

    examples_per_second: float  # the method's own figure: training loop only
    wall_seconds: float  # around the whole call
    train_loss: float  # same data and settings: the losses should be close
    padded_tokens: int  # positions the model computed on, padding included
    other_cores: float | None  # mean cores busy with other processes meanwhile (Linux)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="holds glue_data/RTE")
    parser.add_argument("--examples", type=int, default=512, help="first N RTE train examples")
    parser.add_argument("--select", type=int, default=64, help="first N RTE dev examples")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (Trainer follows it)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument("--trainer-unfused", action="store_true", help="add optim=adamw_torch")
    parser.add_argument("--no-contextual", action="store_true", help="skip ours-contextual")
    parser.add_argument(
        "--trainer-own-order", action="store_true", help="Trainer draws its own batch order"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    for name in ("examples", "select", "repeats", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def encode(adapter: HFEncoderAdapter, data_dir: Path, split: str, limit: int) -> EncodedSplit:
    spec = DATASETS["rte"]
    source = locate_splits(spec, data_dir, None, {})[split]
    examples = load_split(spec, split, source, limit=limit).examples
    items = adapter.tokenize_pairs(
        [e.text_a for e in examples], [e.text_b or "" for e in examples], 128
    )
    labels = np.array([e.label for e in examples], dtype=np.int64)
    return EncodedSplit(split, items, labels, [e.id for e in examples])


def busy_cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds all processes have run, this process's share); None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields)
    ticks = os.sysconf("SC_CLK_TCK")
    own = os.times()
    return (user + nice + system + irq + softirq + steal) / ticks, own.user + own.system


def timed(run: Callable[[], tuple[float, float, int]]) -> Timing:
    """Run one training call; measure its wall clock and what else the CPUs were doing."""
    before, clock = busy_cpu_seconds(), time.perf_counter()
    rate, loss, padded = run()
    wall, after = time.perf_counter() - clock, busy_cpu_seconds()
    other = None
    if before is not None and after is not None:
        other = max(0.0, (after[0] - before[0]) - (after[1] - before[1])) / wall
    return Timing(rate, wall, loss, padded, other)


def first_epoch_batches(train: EncodedSplit, settings: TrainingSettings) -> list[list[int]]:
    """The batches ``fine_tune`` trains on in epoch 1 (the order is seeded, so drawn again)."""
    return epoch_batches([len(item) for item in train.items], settings.batch_size, settings.seed, 1)


def run_ours(
    adapter: HFEncoderAdapter,
    mode: Mode,
    train: EncodedSplit,
    select: EncodedSplit,
    settings: TrainingSettings,
    device: str,
) -> tuple[float, float, int]:
    outcome = fine_tune(
        lambda: adapter.for_classification(2, mode),
        train,
        select,
        [],
        settings,
        regression=False,
        scorer=lambda gold, predicted: {"accuracy": float((gold == predicted).mean())},
        selection_metric="accuracy",
        pad_token_id=adapter.pad_token_id,
        device=device,
    )
    lengths = [len(item) for item in train.items]
    padded = sum(len(b) * max(lengths[i] for i in b) for b in first_epoch_batches(train, settings))
    return outcome.examples_per_second, outcome.epochs[0]["train_loss"], padded


def run_trainer(
    adapter: HFEncoderAdapter,
    train: EncodedSplit,
    settings: TrainingSettings,
    device: str,
    optim: str | None = None,
    own_order: bool = False,
) -> tuple[float, float, int]:
    """Trainer as its users run it, our settings spelled in its arguments.

    Both loops use ``LengthGroupedSampler`` but different random generators, so unless
    ``own_order``, Trainer gets our epoch-1 order and computes the very same batches.
    ``optim=None`` keeps Trainer's default optimizer (fused AdamW since torch 2.8).
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

    order = [i for batch in first_epoch_batches(train, settings) for i in batch]

    class SameOrderTrainer(Trainer):
        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            return order

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
            train_sampling_strategy="group_by_length",  # group_by_length=True before v5
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
        trainer = (Trainer if own_order else SameOrderTrainer)(
            model=model,
            args=arguments,
            train_dataset=features,
            data_collator=counting_collator,
            processing_class=adapter.tokenizer,
        )
        trainer.remove_callback(PrinterCallback)  # it prints the final metrics dict
        metrics = trainer.train().metrics
    return metrics["train_samples_per_second"], metrics["train_loss"], padded[0]


def main() -> int:
    args = parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    try:
        adapter = build_minilm(None, LoadOptions(dtype="float32", device=args.device))
        contextual = build_minilm(
            None, LoadOptions(dtype="float32", device=args.device, model_args=CONTEXTUAL_ARGS)
        )
        train = encode(adapter, args.data_dir, "train", args.examples)
        select = encode(adapter, args.data_dir, "dev", args.select)
    except PosharnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    settings = TrainingSettings(learning_rate=5e-5, epochs=1, batch_size=args.batch_size)
    device = args.device
    methods: dict[str, Callable[[EncodedSplit], tuple[float, float, int]]] = {
        "ours": lambda data: run_ours(adapter, Mode.BOTH, data, select, settings, device),
        "trainer": lambda data: run_trainer(
            adapter, data, settings, device, own_order=args.trainer_own_order
        ),
    }
    if args.trainer_unfused:
        methods["trainer-unfused"] = lambda data: run_trainer(
            adapter, data, settings, device, "adamw_torch", args.trainer_own_order
        )
    if not args.no_contextual:
        methods["ours-contextual"] = lambda data: run_ours(
            contextual, Mode.CONTEXTUAL, data, select, settings, device
        )
    tokens = sum(len(item) for item in train.items)
    print(
        f"minilm on the first {len(train)} GLUE RTE train examples ({tokens} tokens, max "
        f"length 128), dev slice {len(select)}; batch {settings.batch_size}, 1 epoch, lr "
        f"{settings.learning_rate:g}; torch {torch.__version__} ({torch.get_num_threads()} "
        f"threads), transformers {transformers.__version__}, device {device}"
    )
    warm = EncodedSplit("warm-up", train.items[:64], train.labels[:64], train.ids[:64])
    for method in methods.values():  # one-time costs (kernels, allocator) out of the timings
        method(warm)
    runs: dict[str, list[Timing]] = {name: [] for name in methods}
    for repeat in range(1, args.repeats + 1):
        for name, method in methods.items():  # interleaved, so drift hits every method
            timing = timed(lambda method=method: method(train))
            runs[name].append(timing)
            other = "" if timing.other_cores is None else f", other load {timing.other_cores:.2f}"
            print(f"  {repeat}: {name:<16} {timing.examples_per_second:7.2f} ex/s{other}")
    return report(args, runs, len(train), tokens, settings)


def report(
    args: argparse.Namespace,
    runs: dict[str, list[Timing]],
    examples: int,
    tokens: int,
    settings: TrainingSettings,
) -> int:
    def median(name: str, value: Callable[[Timing], float]) -> float:
        return statistics.median(value(t) for t in runs[name])

    rate = {name: median(name, lambda t: t.examples_per_second) for name in runs}
    # Positions computed per second, padding included: fair also when the batches differ.
    work = {name: rate[name] * runs[name][0].padded_tokens / examples for name in runs}
    print(
        f"\n{'method':<16} {'train ex/s':>10} {'min-max':>13} {'wall s':>7} "
        f"{'pad. tok/s':>10} {'padding':>8} {'loss':>7} {'other load':>10}"
    )
    for name, timings in runs.items():
        rates = [t.examples_per_second for t in timings]
        loads = [t.other_cores for t in timings if t.other_cores is not None]
        load = f"{statistics.median(loads):.2f}" if loads else "n/a"
        print(
            f"{name:<16} {rate[name]:>10.2f} {f'{min(rates):.2f}-{max(rates):.2f}':>13} "
            f"{median(name, lambda t: t.wall_seconds):>7.2f} {work[name]:>10.0f} "
            f"{1 - tokens / timings[0].padded_tokens:>8.1%} "
            f"{median(name, lambda t: t.train_loss):>7.4f} {load:>10}"
        )
    ratio = rate["ours"] / rate["trainer"]
    verdict = "met" if ratio >= TARGET else "MISSED"
    label = "ours/trainer, training examples/s"
    print(f"\n{label:<44} {ratio:5.3f}x   target >= {TARGET}: {verdict}")
    print(f"{'ours/trainer, padded positions/s':<44} {work['ours'] / work['trainer']:5.3f}x")
    for name in ("trainer-unfused", "ours-contextual"):
        if name in rate:
            base = "trainer" if name.startswith("trainer") else "ours"
            label = f"{name}/{base}, training examples/s"
            print(f"{label:<44} {rate[name] / rate[base]:5.3f}x")
    print(f"median of {args.repeats}; other load = cores busy with other processes (0 = idle)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "when": datetime.now(UTC).isoformat(),
        "examples": examples,
        "tokens": tokens,
        "settings": asdict(settings),
        "threads": torch.get_num_threads(),
        "median_examples_per_second": rate,
        "runs": {name: [asdict(t) for t in timings] for name, timings in runs.items()},
        "ratio": ratio,
        "target": TARGET,
    }
    args.out.write_text(json.dumps(record, indent=2))
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
