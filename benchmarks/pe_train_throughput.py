"""Does the zoo encoder train as fast as ``transformers.BertForMaskedLM`` of the same size?

The zoo keeps gamma and delta apart, which must not make pretraining much slower. Both
models get the same configuration (size preset, vocabulary, learned absolute positions:
the zoo's ``bert-a``), the same random masked-LM batches and the same optimizer (fused
AdamW, lr 5e-4); each training step is forward, backward, clipping and an optimizer step.
The methods alternate in one process, so other load on the machine hits each alike.
Target: median zoo step time / median BERT step time <= 1.25. Other zoo schemes are timed
alongside for information (``--schemes``). On a GPU (``--device cuda``, optionally
``--bf16`` autocast as ``posharness pretrain --bf16`` uses) each step is timed between
two synchronisations, so queued kernels count against the step that launched them.

    python benchmarks/pe_train_throughput.py [--size mini] [--batch 16] [--steps 12] [--repeats 3]
        [--device cpu|cuda] [--bf16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import BertConfig, BertForMaskedLM

from posharness.models.zoo.encoder import SIZES, PEForMaskedLM, config_for

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks/out/pe_train_throughput.json"
TARGET = 1.25
VOCAB = 8192


def bert_twin(size: str) -> BertForMaskedLM:
    preset = SIZES[size]
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=preset["hidden_size"],
        num_hidden_layers=preset["num_hidden_layers"],
        num_attention_heads=preset["num_attention_heads"],
        intermediate_size=preset["intermediate_size"],
        max_position_embeddings=preset["max_position_embeddings"],
        attn_implementation="sdpa",
    )
    return BertForMaskedLM(config)


def zoo(name: str, size: str) -> PEForMaskedLM:
    return PEForMaskedLM(config_for(name, size, vocab_size=VOCAB))


def batches(count: int, batch: int, length: int, seed: int) -> list[dict[str, torch.Tensor]]:
    """Random token ids with 15 % of positions labelled, as the collator would produce."""
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        ids = torch.randint(5, VOCAB, (batch, length), generator=generator)
        labels = torch.full_like(ids, -100)
        chosen = torch.rand(batch, length, generator=generator) < 0.15
        labels[chosen] = ids[chosen]
        out.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
    return out


def step_time(
    model: torch.nn.Module, data: list[dict[str, torch.Tensor]], device: str, bf16: bool
) -> float:
    """Median seconds per training step after one warm-up step."""
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, fused=True)
    on_gpu = device.startswith("cuda")
    times = []
    for index, batch in enumerate(data):
        if on_gpu:
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16 and on_gpu):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if on_gpu:
            torch.cuda.synchronize()
        if index:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="mini", choices=sorted(SIZES))
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--schemes", default="tupe-r,bert-a-star,t5,rope")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i]")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast (CUDA only)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device here; use --device cpu")

    torch.manual_seed(0)
    data = [
        {key: value.to(args.device) for key, value in batch.items()}
        for batch in batches(args.steps + 1, args.batch, args.length, seed=0)
    ]
    builders: dict[str, Callable[[], torch.nn.Module]] = {
        "bert (transformers)": lambda: bert_twin(args.size),
        "bert-a (zoo)": lambda: zoo("bert-a", args.size),
    }
    for name in filter(None, args.schemes.split(",")):
        builders[f"{name} (zoo)"] = lambda name=name: zoo(name, args.size)
    times: dict[str, list[float]] = {label: [] for label in builders}
    for _ in range(args.repeats):
        for label, build in builders.items():
            times[label].append(step_time(build(), data, args.device, args.bf16))
    medians = {label: statistics.median(values) for label, values in times.items()}
    ratio = medians["bert-a (zoo)"] / medians["bert (transformers)"]
    tokens = args.batch * args.length
    where = (
        torch.cuda.get_device_name(args.device) + (", bf16 autocast" if args.bf16 else ", fp32")
        if args.device.startswith("cuda")
        else f"cpu, torch threads {torch.get_num_threads()}"
    )
    print(
        f"size {args.size}, batch {args.batch} x {args.length}, {where}, "
        f"{args.repeats} alternating repeats"
    )
    print(f"{'model':<22} {'s/step':>8} {'tokens/s':>10} {'vs BERT':>8}")
    for label, seconds in medians.items():
        print(
            f"{label:<22} {seconds:>8.3f} {tokens / seconds:>10.0f} "
            f"{seconds / medians['bert (transformers)']:>8.3f}"
        )
    verdict = "meets" if ratio <= TARGET else "MISSES"
    print(f"zoo bert-a / BertForMaskedLM step time: {ratio:.3f} ({verdict} the <= {TARGET} target)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(timespec="seconds"),
                "settings": vars(args) | {"out": str(args.out)},
                "seconds_per_step": times,
                "medians": medians,
                "ratio": ratio,
                "target": TARGET,
            },
            indent=2,
        )
        + "\n"
    )
    if ratio > TARGET:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
