"""How much faster is the runner's batching than the obvious alternatives, on real text?

``BatchedEncoder`` sorts inputs by length and pads each batch only to its own longest
member. This benchmark checks that this design pays off, in one process, with the same
model and the same tokenized inputs (SNLI premises), measuring hidden-state encoding
(mode ``both``) three ways:

* ``runner``       ``BatchedEncoder(...).batches(items)``: length-sorted, padded per batch;
* ``per-example``  every sentence alone as a batch of one (no padding, no batching);
* ``fixed-128``    batches of the same size in input order, every batch padded to 128.

Targets: runner ≥ 3× per-example and ≥ 1.3× fixed-128 (sentences per second).

The speedup only counts if the work is the same, so the last-layer hidden states of a
handful of sentences (collected during each method's warm-up pass) must agree across
the three methods on real tokens to 1e-4.

To say how close the runner gets to the hardware, its achieved GFLOP/s (analytic FLOPs of
the padded batches it actually ran, see ``encoder_flops``) is compared with a dense fp32
matmul measured in the same process.

    python benchmarks/encode_throughput.py [--sentences 2000] [--batch-size 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import torch

from posharness.compute.batching import BatchedEncoder, pad_batch
from posharness.contracts.adapter import HIDDEN, EncoderOutput, Mode, TokenizedText
from posharness.contracts.model_spec import LoadOptions, load_model, parse_model_spec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SNLI = REPO / "../shared/data/snli/snli_1.0/snli_1.0_test.jsonl"
SNLI_URL = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
FIXED_WIDTH = 128
TOLERANCE = 1e-4
TARGETS = {"runner/per-example": 3.0, "runner/fixed-128": 1.3}
WANT = frozenset({HIDDEN})

# A method runs the model over all items and yields (indices into items, output) per batch.
Method = Callable[[Sequence[TokenizedText]], Iterator[tuple[list[int], EncoderOutput]]]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snli", type=Path, default=DEFAULT_SNLI, help="SNLI jsonl file")
    parser.add_argument("--sentences", type=int, default=2000, help="first N premises")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes; the median counts")
    parser.add_argument(
        "--per-example-subset",
        type=int,
        default=None,
        metavar="N",
        help="time the per-example loop on the first N sentences only and extrapolate "
        "(default: all sentences)",
    )
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/encode_throughput.json")
    return parser.parse_args()


def read_premises(path: Path, n: int) -> list[str]:
    if not path.exists():
        sys.exit(
            f"SNLI not found at {path.resolve()}: download {SNLI_URL}, unzip it so that "
            "snli_1.0/snli_1.0_test.jsonl is there, or pass --snli PATH"
        )
    premises = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if len(premises) == n:
                break
            premises.append(json.loads(line)["sentence1"])
    return premises


# -- the three methods ------------------------------------------------------------------
def runner_method(model, batch_size: int) -> Method:
    def run(items):
        yield from BatchedEncoder(model, Mode.BOTH, WANT, batch_size=batch_size).batches(items)

    return run


def per_example_method(model) -> Method:
    def run(items):
        for i, item in enumerate(items):
            yield [i], model.encode(pad_batch([item], model.pad_token_id), Mode.BOTH, WANT)

    return run


def fixed_width_method(model, batch_size: int, width: int = FIXED_WIDTH) -> Method:
    def run(items):
        for start in range(0, len(items), batch_size):
            indices = list(range(start, min(start + batch_size, len(items))))
            batch = pad_batch([items[i] for i in indices], model.pad_token_id, pad_to=width)
            yield indices, model.encode(batch, Mode.BOTH, WANT)

    return run


# -- FLOPs ------------------------------------------------------------------------------
def encoder_flops(shapes: Sequence[tuple[int, int]], d: int, d_ff: int, layers: int) -> float:
    """Analytic FLOPs (1 multiply-add = 2 FLOPs) of the encoder layers over padded batches.

    Per token per layer, with T the padded width of its batch:
      dense matmuls  2·(4·d² + 2·d·d_ff)  Q, K, V and output projections (4·d²) and the
                                          two feed-forward matmuls (2·d·d_ff);
      attention      2·2·T·d              QKᵀ and A·V: T dot products of length d each
                                          (summed over heads, since heads·d_head = d).
    Every padded position of every batch that actually ran counts: the model computes on
    padding too, so this is the work the hardware did. Embeddings, layer norms, softmax,
    GELU and the pooler are left out (elementwise or once per sequence: about 1 % here).
    """
    total = 0.0
    for rows, width in shapes:
        per_token = 2 * (4 * d * d + 2 * d * d_ff) + 2 * 2 * width * d
        total += layers * rows * width * per_token
    return total


def matmul_gflops(n: int = 2048, repeats: int = 7) -> float:
    """Dense fp32 matmul throughput of this machine with torch's current thread count."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.matmul(a, b)  # warm-up
    times = []
    for _ in range(repeats):
        clock = time.perf_counter()
        torch.matmul(a, b)
        times.append(time.perf_counter() - clock)
    return 2 * n**3 / statistics.median(times) / 1e9


# -- timing and checking ----------------------------------------------------------------
def warm_up(
    method: Method, items, check: Sequence[int]
) -> tuple[dict[int, torch.Tensor], list[tuple[int, int]]]:
    """One untimed full pass.

    Returns the last-layer states of the ``check`` sentences (real tokens only) and the
    (rows, padded width) of every batch the method actually ran, for the FLOP count.
    """
    wanted, kept, shapes = set(check), {}, []
    for indices, output in method(items):
        last = output.hidden_states[-1]
        shapes.append(tuple(last.shape[:2]))
        for row, i in enumerate(indices):
            if i in wanted:
                kept[i] = last[row, : len(items[i])].clone()
    return kept, shapes


def time_passes(method: Method, items, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        clock = time.perf_counter()
        for _ in method(items):
            pass
        times.append(time.perf_counter() - clock)
    return times


def check_indices(lengths: Sequence[int], k: int = 8) -> list[int]:
    """Spread over the input, plus the longest and the shortest sentence."""
    spread = range(0, len(lengths), max(1, len(lengths) // k))
    longest = max(range(len(lengths)), key=lengths.__getitem__)
    shortest = min(range(len(lengths)), key=lengths.__getitem__)
    return sorted({*spread, longest, shortest})


def main() -> None:
    args = parse_args()
    premises = read_premises(args.snli, args.sentences)
    load_before = os.getloadavg()[0]

    clock = time.perf_counter()
    model = load_model(parse_model_spec(args.model), LoadOptions(device="cpu"))
    model.model, model.tokenizer  # noqa: B018 - the adapter loads lazily; load now
    load_s = time.perf_counter() - clock
    clock = time.perf_counter()
    items = model.tokenize(premises)
    tokenize_s = time.perf_counter() - clock
    lengths = [len(item) for item in items]
    config = model.model.config
    d, d_ff, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers

    subset = min(args.per_example_subset or len(items), len(items))
    methods: dict[str, tuple[Method, Sequence[TokenizedText]]] = {
        "runner": (runner_method(model, args.batch_size), items),
        "per-example": (per_example_method(model), items[:subset]),
        "fixed-128": (fixed_width_method(model, args.batch_size), items),
    }
    check = [i for i in check_indices(lengths) if i < subset]

    peak = matmul_gflops()
    rows: dict[str, dict] = {}
    states: dict[str, dict[int, torch.Tensor]] = {}
    for name, (method, inputs) in methods.items():
        clock = time.perf_counter()
        states[name], shapes = warm_up(method, inputs, check)
        warmup_s = time.perf_counter() - clock
        times = time_passes(method, inputs, args.repeats)
        median = statistics.median(times)
        flops = encoder_flops(shapes, d, d_ff, layers)
        real = sum(len(x) for x in inputs)
        padded = sum(r * w for r, w in shapes)
        rows[name] = {
            "sentences_timed": len(inputs),
            "extrapolated": len(inputs) < len(items),
            "warmup_s": round(warmup_s, 4),
            "times_s": [round(t, 4) for t in times],
            "median_s": round(median, 4),
            "sentences_per_s": round(len(inputs) / median, 2),
            "batches": len(shapes),
            "padded_tokens": padded,
            "padding_fraction": round(1 - real / padded, 4),
            "gflop": round(flops / 1e9, 3),
            "gflop_per_s": round(flops / median / 1e9, 2),
        }
    max_diff = {}
    for name in ("per-example", "fixed-128"):
        diff = max((states[name][i] - states["runner"][i]).abs().max().item() for i in check)
        max_diff[f"runner vs {name}"] = diff
        if not diff < TOLERANCE:
            raise AssertionError(f"runner and {name} disagree: max |Δ| = {diff:.2e}")

    rate = {name: row["sentences_per_s"] for name, row in rows.items()}
    ratios = {
        "runner/per-example": round(rate["runner"] / rate["per-example"], 2),
        "runner/fixed-128": round(rate["runner"] / rate["fixed-128"], 2),
    }
    met = {key: ratios[key] >= target for key, target in TARGETS.items()}
    summary = {
        "benchmark": "encode_throughput",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": args.model,
        "config": {"hidden": d, "ffn": d_ff, "layers": layers},
        "snli": str(args.snli.resolve()),
        "sentences": len(items),
        "distinct_sentences": len(set(premises)),
        "tokens": sum(lengths),
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "model_load_s": round(load_s, 3),
        "tokenize_s": round(tokenize_s, 4),
        "methods": rows,
        "ratios": ratios,
        "targets": TARGETS,
        "targets_met": met,
        "check": {"sentences": check, "max_abs_diff": max_diff, "tolerance": TOLERANCE},
        "matmul_2048_fp32_gflop_per_s": round(peak, 2),
        "runner_fraction_of_matmul": round(rows["runner"]["gflop_per_s"] / peak, 3),
    }
    report(summary)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    if not all(met.values()):
        sys.exit(1)


def report(s: dict) -> None:
    print(
        f"{s['model']}: {s['sentences']} SNLI premises ({s['distinct_sentences']} distinct, "
        f"{s['tokens']} tokens), batch size {s['batch_size']}, torch {s['torch']}, "
        f"{s['torch_threads']} threads, median of {s['repeats']}"
    )
    print(f"model load {s['model_load_s']:.2f} s, tokenization {s['tokenize_s']:.3f} s (once)\n")
    header = f"{'method':<12} {'sent.':>6} {'median s':>9} {'sent/s':>9} {'batches':>8} "
    header += f"{'padding':>8} {'GFLOP':>8} {'GFLOP/s':>8}"
    print(header)
    print("-" * len(header))
    for name, r in s["methods"].items():
        mark = "*" if r["extrapolated"] else ""
        print(
            f"{name + mark:<12} {r['sentences_timed']:>6} {r['median_s']:>9.3f} "
            f"{r['sentences_per_s']:>9.1f} {r['batches']:>8} {r['padding_fraction']:>8.1%} "
            f"{r['gflop']:>8.2f} {r['gflop_per_s']:>8.2f}"
        )
    if any(r["extrapolated"] for r in s["methods"].values()):
        print("* timed on a subset; its sentences/s is extrapolated to the full set")
    print()
    for key, value in s["ratios"].items():
        verdict = "met" if s["targets_met"][key] else "MISSED"
        print(f"{key:<20} {value:>6.2f}x   target >= {s['targets'][key]}x: {verdict}")
    print(
        f"\nrunner {s['methods']['runner']['gflop_per_s']:.2f} GFLOP/s = "
        f"{s['runner_fraction_of_matmul']:.1%} of a 2048x2048 fp32 matmul "
        f"({s['matmul_2048_fp32_gflop_per_s']:.1f} GFLOP/s)"
    )
    diffs = ", ".join(f"{k} {v:.1e}" for k, v in s["check"]["max_abs_diff"].items())
    print(
        f"same work: last-layer states of {len(s['check']['sentences'])} sentences agree "
        f"(max |Δ| {diffs}; tolerance {s['check']['tolerance']:.0e})"
    )
    load = s["load_average_1min"]
    print(f"1-min load average before/after: {load['before']:.2f}/{load['after']:.2f}")


if __name__ == "__main__":
    main()
