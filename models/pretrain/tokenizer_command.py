"""``posharness train-tokenizer``: the WordPiece a pretraining run would train, trained
once ahead of time, so every PE and seed of a study reads one tokenizer (and one prepared
corpus) instead of each training its own."""

from __future__ import annotations

from pathlib import Path

import click

from posharness.cli.click_options import click_options, include_option, path_option
from posharness.models.pretrain.commands import CORPUS_OPTION


@click.command(name="train-tokenizer")
@click_options((CORPUS_OPTION,))
@click.option("--vocab-size", default=30522, show_default=True, help="WordPiece pieces.")
@path_option(
    "--out",
    required=True,
    help="Folder to write the tokenizer to (give it to pretrain as --tokenizer).",
)
@include_option
def train_tokenizer(corpus: Path, vocab_size: int, out: Path) -> None:
    """Train the uncased BERT WordPiece that `pretrain` trains, on the same corpus; rerun
    with the same corpus and size, it reuses the one already there."""
    import tempfile

    from posharness.cli.console import console
    from posharness.models.pretrain.vocab import tokenizer_for

    if (out / "tokenizer_config.json").is_file():
        console().print(f"tokenizer already in {out}")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    # Trained in a scratch folder beside --out and renamed onto it: a kill leaves no
    # half-written tokenizer for the next run to read.
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as scratch:
        tokenizer = tokenizer_for(None, corpus, vocab_size, Path(scratch))
        (Path(scratch) / "tokenizer").replace(out)
    console().print(f"{len(tokenizer)} WordPiece pieces in {out}")
