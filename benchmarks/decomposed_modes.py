"""What do the contextual and positional modes cost next to the plain eager forward?

The decomposition installs its own attention function on the loaded model. The promise:
each mode costs at most 2x the unmodified model's eager forward on the same batch
(``attn_implementation="eager"``, attention weights returned, as the analysis tasks run).
This script times, in one process, on the same length-sorted batches of SNLI premises:

* ``eager``       the checkpoint loaded by transformers with eager attention, untouched;
* ``both``        the same checkpoint through the harness with the decomposition installed;
* ``contextual``  and ``positional`` through the harness.

Reference statistics (the corpus pass) are computed once before timing: they are cached
per model and corpus, so they are not a per-batch cost. Ratios are medians over repeats.

    python benchmarks/decomposed_modes.py [--model minilm] [--sentences 512] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from posharness.compute.batching import length_sorted_order, pad_batch
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode
from posharness.contracts.model_spec import LoadOptions, build_adapter, parse_model_spec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SNLI = REPO / "../shared/data/snli/snli_1.0/snli_1.0_test.jsonl"
DEFAULT_DATA = REPO / "../shared/data"
TARGET = 2.0
WANT = frozenset({HIDDEN, ATTENTIONS})


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--snli", type=Path, default=DEFAULT_SNLI)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="reference corpus")
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/out/decomposed_modes.json")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if not args.snli.exists():
        print(f"SNLI file {args.snli} not found: pass --snli PATH", file=sys.stderr)
        return 2
    with args.snli.open() as handle:
        premises = [
            json.loads(line)["sentence1"]
            for _, line in zip(range(args.sentences), handle, strict=False)
        ]
    options = LoadOptions(dtype="float32", device="cpu", data_dir=args.data_dir)
    adapter = build_adapter(parse_model_spec(args.model), options)
    items = adapter.tokenize(premises)
    order = length_sorted_order([len(item) for item in items])
    batches = [
        pad_batch([items[i] for i in order[s : s + args.batch_size]], adapter.pad_token_id)
        for s in range(0, len(order), args.batch_size)
    ]

    from transformers import AutoModel

    plain = AutoModel.from_pretrained(adapter.folder, attn_implementation="eager").eval()

    def run_plain() -> None:
        with torch.inference_mode():
            for batch in batches:
                plain(
                    input_ids=batch.input_ids,
                    attention_mask=batch.attention_mask,
                    output_attentions=True,
                    output_hidden_states=True,
                )

    def run_mode(mode: Mode):
        def go() -> None:
            for batch in batches:
                adapter.encode(batch, mode, WANT)

        return go

    methods = {"eager": run_plain, **{str(m): run_mode(m) for m in Mode}}
    for method in methods.values():  # warm-up; also prepares the reference statistics
        method()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, method in methods.items():  # interleaved, so drift hits every method
            start = time.perf_counter()
            method()
            times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(values) for name, values in times.items()}
    ratios = {name: median[name] / median["eager"] for name in methods}
    print(
        f"{args.model}: {len(items)} SNLI premises, batch {args.batch_size}, {args.repeats} repeats"
    )
    print(f"{'method':<12} {'median s':>9} {'x eager':>8}")
    for name in methods:
        print(f"{name:<12} {median[name]:>9.3f} {ratios[name]:>8.2f}")
    worst = max(ratios[str(m)] for m in Mode)
    verdict = "ok" if worst <= TARGET else "MISSED"
    print(f"slowest mode / eager = {worst:.2f} (target ≤ {TARGET}): {verdict}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "when": datetime.now(UTC).isoformat(),
                "model": args.model,
                "sentences": len(items),
                "batch_size": args.batch_size,
                "median_seconds": median,
                "ratio_to_eager": ratios,
                "definition": adapter.modes[Mode.POSITIONAL].definition,
                "target": TARGET,
            },
            indent=2,
        )
    )
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
