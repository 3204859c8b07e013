"""Does the zoo encoder pretrain as fast as ``transformers.BertForMaskedLM`` of the same size?

Tokens per second (batch x length / median step time) of masked-LM training, one zoo model
per positional scheme (``--schemes all``: the model named like the scheme, else its first
registered variant, e.g. ``ape`` -> ``bert-a``), against ``BertForMaskedLM`` with
``attn_implementation="sdpa"`` at the same size preset, batch and length. Every model gets
the same random masked-LM batches (all-ones attention mask, 15 % of positions labelled), the
same fused AdamW (lr 5e-4) and clipping; a step is forward, backward, clipping and the
optimizer step. Timings are paired: in each repeat every zoo model (in an order rotated
from repeat to repeat) trains step for step in alternation with one HF model, so load from
other processes hits both sides of each ratio alike; a row's "vs HF" is the median over
repeats of HF's median step time / the zoo model's in that pair. Read the ratios, not the
absolute figures, on a shared machine. Each ``--shapes`` entry (``size:BATCHxLENGTH``) is
one table.

On a GPU (``--device cuda``, ``--bf16`` autocast as ``posharness pretrain --bf16`` uses)
each step is timed between two synchronisations, and model FLOPs utilisation is reported:
MFU = model FLOPs per token x tokens/s / peak bf16 FLOP/s, with model FLOPs per training
token 6 N + 12 L d n (Chowdhery et al. 2022, "PaLM", Appendix B, counting QK^T and the
weights times V; Kaplan et al. 2020, Table 1: 2 N + 2 L n d per forward token): N the
non-embedding parameters, L layers, d hidden size, n length. Every model is charged the
FLOPs of the BERT it shares, so a scheme's extra positional work lowers its MFU rather
than counting as useful work. The peak comes from ``--peak-tflops``, or from the device
name (H100 SXM / H200 989, H100 PCIe 756, A100 312 dense bf16 TFLOP/s).

Targets (exit status 1 when missed): on a CPU zoo ``bert-a`` reaches >= 0.95 of
BertForMaskedLM's tokens/s; on a GPU every attention-level scheme reaches >= 0.85 of it
(issue 30, part 3). ``--no-target`` only reports.

    python benchmarks/pe_train_throughput.py [--shapes mini:16x128,base:2x128]
        [--schemes all|bert-a,tupe-r,...] [--steps 4] [--repeats 3]
        [--threads N] [--device cpu|cuda] [--bf16] [--peak-tflops 989] [--unmasked bert-a,rope]
        [--out FILE] [--no-target]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import BertConfig, BertForMaskedLM

import posharness.models.zoo  # noqa: F401  (registers the built-in schemes and variants)
from posharness.models.zoo.encoder import SIZES, PEForMaskedLM, config_for
from posharness.models.zoo.encoder.config import scheme_class
from posharness.pe import registry

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks/out/pe_train_throughput.json"
VOCAB = 8192
HF = "bert (transformers)"
CPU_TARGET = 0.95  # zoo bert-a tokens/s / HF tokens/s on a CPU
GPU_TARGET = 0.85  # every attention-level scheme on a GPU
# Dense bf16 tensor-core peaks (TFLOP/s) from the vendors' data sheets, matched in order.
PEAKS = (("H100 PCIe", 756.0), ("H100", 989.0), ("H200", 989.0), ("GH200", 989.0), ("A100", 312.0))
NOT_ATTENTION_LEVEL = (registry.INPUT_EMBEDDING, registry.POSITION_FREE)


@dataclass(frozen=True)
class Shape:
    size: str
    batch: int
    length: int

    @property
    def label(self) -> str:
        return f"{self.size}:{self.batch}x{self.length}"

    @property
    def tokens(self) -> int:
        return self.batch * self.length


def parse_shapes(text: str) -> list[Shape]:
    """``mini:16x128,base:2x128`` -> shapes; a size must be a zoo preset."""
    shapes = []
    for item in filter(None, text.split(",")):
        size, _, dims = item.partition(":")
        batch, _, length = dims.partition("x")
        if size not in SIZES or not batch.isdigit() or not length.isdigit():
            raise SystemExit(
                f"--shapes entry {item!r}: write SIZE:BATCHxLENGTH, SIZE one of "
                f"{', '.join(SIZES)} (e.g. base:2x128)"
            )
        shapes.append(Shape(size, int(batch), int(length)))
    return shapes


def scheme_models() -> dict[str, str]:
    """Scheme -> the zoo model that represents it: the variant named like the scheme, else
    the first registered variant of that scheme."""
    found: dict[str, str] = {}
    for name in registry.pe_variants.names():
        scheme = registry.variant(name).scheme
        if name == scheme or scheme not in found:
            found[scheme] = name
    return {scheme: found[scheme] for scheme in registry.scheme_names() if scheme in found}


def model_scheme(name: str) -> str:
    return registry.variant(name).scheme


def attention_level(name: str) -> bool:
    return registry.declaration(scheme_class(model_scheme(name))).kind not in NOT_ATTENTION_LEVEL


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


def flops_per_token(shape: Shape) -> float:
    """6 N + 12 L d n (PaLM, Appendix B): N = BertForMaskedLM's non-embedding parameters
    (word, position and segment tables out; the decoder is tied to the word table, so its
    6 d V per token is not counted either: a conservative MFU)."""
    model = bert_twin(shape.size)
    embedding = {id(p) for p in model.bert.embeddings.parameters()}
    non_embedding = sum(p.numel() for p in model.parameters() if id(p) not in embedding)
    preset = SIZES[shape.size]
    attention = 12 * preset["num_hidden_layers"] * preset["hidden_size"] * shape.length
    return 6.0 * non_embedding + attention


def peak_tflops(device: str, given: float | None) -> float | None:
    if given is not None or not device.startswith("cuda"):
        return given
    name = torch.cuda.get_device_name(device)
    return next((peak for key, peak in PEAKS if key in name), None)


def batches(count: int, shape: Shape, seed: int) -> list[dict[str, torch.Tensor]]:
    """Random token ids with 15 % of positions labelled, as the collator would produce."""
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        ids = torch.randint(5, VOCAB, (shape.batch, shape.length), generator=generator)
        labels = torch.full_like(ids, -100)
        chosen = torch.rand(shape.batch, shape.length, generator=generator) < 0.15
        labels[chosen] = ids[chosen]
        out.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
    return out


class Trainer:
    """One model with its fused AdamW; ``step`` trains on a batch and returns its seconds."""

    def __init__(self, model: torch.nn.Module, device: str, bf16: bool) -> None:
        self.model = model.to(device).train()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, fused=True)
        self.on_gpu = device.startswith("cuda")
        self.bf16 = bf16 and self.on_gpu

    def step(self, batch: dict[str, torch.Tensor]) -> float:
        if self.on_gpu:
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.bf16):
            loss = self.model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.on_gpu:
            torch.cuda.synchronize()
        return time.perf_counter() - start


UNMASKED = " (mask=None)"  # label suffix: the zoo model fed no attention mask


def base_name(label: str) -> str:
    return label.removesuffix(UNMASKED)


def release(device: str) -> None:
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def time_shape(shape: Shape, names: list[str], args: argparse.Namespace) -> dict[str, dict]:
    """Paired timings: per repeat one HF model, and each zoo model (order rotated per
    repeat) trained step for step in alternation with it (HF first on even steps, the zoo
    model first on odd ones), after one warm-up step each. Per pair: the median seconds of
    each side and their ratio, so load that comes and goes hits both sides of a ratio.

    ``--unmasked`` models are timed a second time with ``attention_mask=None``: the same
    numbers (the mask is all ones), but nothing for SDPA to add, which is what lets a GPU
    pick its flash kernel; the difference is the cost of the zoo's mask handling.
    """
    data = [
        {key: value.to(args.device) for key, value in batch.items()}
        for batch in batches(args.steps + 1, shape, seed=0)
    ]
    unmasked = [{k: v for k, v in batch.items() if k != "attention_mask"} for batch in data]
    labels = [*names, *(name + UNMASKED for name in args.unmasked)]
    pairs: dict[str, dict[str, list[float]]] = {
        label: {"zoo": [], "hf": [], "ratio": []} for label in labels
    }
    for repeat in range(args.repeats):
        torch.manual_seed(0)
        hf = Trainer(bert_twin(shape.size), args.device, args.bf16)
        hf.step(data[0])
        shift = repeat % len(labels)
        for label in labels[shift:] + labels[:shift]:
            torch.manual_seed(0)
            model = Trainer(zoo(base_name(label), shape.size), args.device, args.bf16)
            own = unmasked if label.endswith(UNMASKED) else data
            model.step(own[0])
            zoo_times, hf_times = [], []
            for index in range(1, args.steps + 1):
                if index % 2:
                    zoo_times.append(model.step(own[index]))
                    hf_times.append(hf.step(data[index]))
                else:
                    hf_times.append(hf.step(data[index]))
                    zoo_times.append(model.step(own[index]))
            zoo_median, hf_median = statistics.median(zoo_times), statistics.median(hf_times)
            pair = pairs[label]
            pair["zoo"].append(zoo_median)
            pair["hf"].append(hf_median)
            pair["ratio"].append(hf_median / zoo_median)
            del model
            release(args.device)
        del hf
        release(args.device)
    return pairs


def table(shape: Shape, pairs: dict[str, dict], flops: float, peak: float | None) -> dict:
    """Per model: median s/step, tokens/s, median paired ratio to HF's tokens/s, MFU.

    HF's row pools its steps from every pair."""
    hf_seconds = statistics.median(s for pair in pairs.values() for s in pair["hf"])
    rows = {HF: {"scheme": "hf sdpa", "seconds_per_step": hf_seconds, "vs_hf": 1.0}}
    for label, pair in pairs.items():
        rows[label] = {
            "scheme": model_scheme(base_name(label)),
            "seconds_per_step": statistics.median(pair["zoo"]),
            "vs_hf": statistics.median(pair["ratio"]),
        }
    for row in rows.values():
        row["tokens_per_second"] = rate = shape.tokens / row["seconds_per_step"]
        row["mfu"] = None if peak is None else flops * rate / (peak * 1e12)
    return rows


def verdicts(rows: dict, on_gpu: bool) -> list[str]:
    """The targets this table misses (empty: met); unmasked rows are diagnostics only."""
    if not on_gpu:
        ratio = rows["bert-a"]["vs_hf"] if "bert-a" in rows else None
        return [] if ratio is None or ratio >= CPU_TARGET else [f"bert-a {ratio:.3f}"]
    return [
        f"{label} {row['vs_hf']:.3f}"
        for label, row in rows.items()
        if label != HF
        and not label.endswith(UNMASKED)
        and attention_level(label)
        and row["vs_hf"] < GPU_TARGET
    ]


def describe(args: argparse.Namespace) -> str:
    if args.device.startswith("cuda"):
        precision = "bf16 autocast" if args.bf16 else "fp32"
        return f"{torch.cuda.get_device_name(args.device)}, {precision}, torch {torch.__version__}"
    return f"cpu, {torch.get_num_threads()} torch threads, torch {torch.__version__}"


def print_table(shape: Shape, rows: dict, where: str, args: argparse.Namespace) -> None:
    preset = SIZES[shape.size]
    print(
        f"\n{shape.size} ({preset['num_hidden_layers']} layers x {preset['hidden_size']}), "
        f"batch {shape.batch} x {shape.length} tokens, {where}, {args.repeats} repeats "
        f"of {args.steps} paired steps"
    )
    mfu = any(row["mfu"] is not None for row in rows.values())
    print(
        f"{'model':<24} {'scheme':<12} {'s/step':>8} {'tokens/s':>10} {'vs HF':>7}"
        + (f" {'MFU':>6}" if mfu else "")
    )
    for label, row in rows.items():
        line = (
            f"{label:<24} {row['scheme'][:12]:<12} {row['seconds_per_step']:>8.3f} "
            f"{row['tokens_per_second']:>10.0f} {row['vs_hf']:>7.3f}"
        )
        print(line + (f" {row['mfu']:>6.1%}" if row["mfu"] is not None else ""))


def pick_models(text: str) -> list[str]:
    if text == "all":
        return list(scheme_models().values())
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in registry.pe_variants.names()]
    if unknown:
        raise SystemExit(
            f"--schemes: unknown zoo model(s) {', '.join(unknown)}; pick from "
            f"{', '.join(registry.pe_variants.names())} or all"
        )
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="mini:16x128,base:2x128", help="SIZE:BATCHxLENGTH,…")
    parser.add_argument("--schemes", default="all", help="zoo model names, or all (one per PE)")
    parser.add_argument("--steps", type=int, default=4, help="timed steps (after one warm-up)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:i]")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast (CUDA only)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="device bf16 peak")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--unmasked", default="", help="zoo models also timed with attention_mask=None"
    )
    parser.add_argument("--no-target", action="store_true", help="report only; exit 0")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device here; use --device cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    shapes = parse_shapes(args.shapes)
    names = pick_models(args.schemes)
    args.unmasked = pick_models(args.unmasked) if args.unmasked else []
    on_gpu = args.device.startswith("cuda")
    peak = peak_tflops(args.device, args.peak_tflops)
    where = describe(args)
    tables, missed = {}, []
    for shape in shapes:
        pairs = time_shape(shape, names, args)
        flops = flops_per_token(shape)
        rows = table(shape, pairs, flops, peak)
        print_table(shape, rows, where, args)
        misses = verdicts(rows, on_gpu)
        missed += [f"{shape.label}: {miss}" for miss in misses]
        tables[shape.label] = {
            "flops_per_token": flops,
            "pairs_by_repeat": pairs,
            "rows": rows,
            "missed": misses,
        }
    target = f"attention-level schemes >= {GPU_TARGET}" if on_gpu else f"bert-a >= {CPU_TARGET}"
    outcome = "MISSED " + "; ".join(missed) if missed else "met"
    print(f"\ntarget (tokens/s vs HF): {target}: {outcome}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    settings = vars(args) | {"out": str(args.out), "models": names}
    record = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "where": where,
        "settings": settings,
        "peak_tflops": peak,
        "target": target,
        "tables": tables,
        "missed": missed,
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out}")
    if missed and not args.no_target:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
