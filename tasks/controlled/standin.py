"""The word2vec stand-in for GloVe: static vectors trained on the local Wikipedia sample.

Chen et al. (2023, §3.3.1) put the 840B-300d GloVe vectors under their positional encoder.
This machine has no GloVe file and no network, so the controlled sweep runs on vectors
trained here with gensim's ``Word2Vec`` (a well-kept trainer; no hand-written training
loop) on ``wikipedia_en_partial`` (~10M tokens). Every number made with them is named
"word2vec stand-in", never GloVe: the corpus is ~80,000 times smaller than GloVe's and
the objective differs, so absolute accuracies are not comparable to the paper's figures.

The text is tokenised like the SentEval MR/SUBJ files it will be looked up against
(lower case, punctuation split off, ``'s`` and ``n't`` as tokens of their own), so that
coverage is not lost to tokenisation. The settings used are written beside the vectors
as JSON, so a study can record them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

from posharness.base.errors import OptionError

# The recorded defaults: CBOW (the faster objective on one worker) and gensim's own defaults
# otherwise. 100 dimensions, not GloVe 840B's 300, and gensim's 5 epochs: a 300d 10-epoch
# run did not finish in 14 minutes on this machine's share of 2 busy cores, and the sweep
# costs scale with the dimension; `--setting vector_size=300` gives GloVe's size.
DEFAULT_SETTINGS: dict[str, object] = {
    "vector_size": 100,
    "window": 5,
    "min_count": 5,
    "sg": 0,
    "negative": 5,
    "sample": 1e-3,
    "epochs": 5,
    "seed": 0,
    "workers": 1,
}

_CLITIC = re.compile(r"(n't|'s|'re|'ve|'ll|'d|'m)\b")
_TOKEN = re.compile(r"n't|'(?:s|re|ve|ll|d|m)\b|[a-z0-9]+(?:[-.][a-z0-9]+)*|[^\sa-z0-9]")


def tokenize(line: str) -> list[str]:
    """SentEval-like tokens of one line of raw text (lower-cased, clitics split)."""
    return _TOKEN.findall(_CLITIC.sub(r" \1", line.lower()))


def wiki_lines(corpus: Path) -> Iterator[list[str]]:
    """Tokenised paragraphs of a WikiExtractor folder, ``<doc>`` markup and titles dropped."""
    files = sorted(p for p in corpus.rglob("wiki_*") if p.is_file())
    if not files:
        raise OptionError(f"{corpus}: no WikiExtractor wiki_* files found; pass the corpus folder")
    for path in files:
        with path.open(encoding="utf-8") as handle:
            title_next = False
            for raw in handle:
                if raw.startswith("<doc "):
                    title_next = True
                    continue
                if raw.startswith("</doc>") or not raw.strip():
                    continue
                if title_next:  # the first line after <doc> repeats the title
                    title_next = False
                    continue
                tokens = tokenize(raw)
                if tokens:
                    yield tokens


def train_standin(corpus: Path, out: Path, **overrides: object) -> dict[str, object]:
    """Train Word2Vec on ``corpus``, write ``out`` (word2vec binary) and ``out``.json.

    The tokenised text goes through a line file beside ``out`` (gensim's ``corpus_file``
    mode) so the 10M tokens are never held as Python lists; the file is kept, and reused
    when it is newer than every corpus file, so a second training with other settings
    skips the tokenising. Returns the recorded settings.
    """
    from gensim.models import Word2Vec

    settings = {**DEFAULT_SETTINGS, **overrides}
    out.parent.mkdir(parents=True, exist_ok=True)
    text = out.with_suffix(".corpus.txt")
    started = time.perf_counter()
    newest = max((p.stat().st_mtime for p in corpus.rglob("wiki_*")), default=0.0)
    if not (text.is_file() and text.stat().st_mtime > newest):
        with text.open("w", encoding="utf-8") as handle:
            for line in wiki_lines(corpus):
                handle.write(" ".join(line) + "\n")
    with text.open(encoding="utf-8") as handle:
        tokens = sum(len(line.split()) for line in handle)
    model = Word2Vec(corpus_file=str(text), **settings)
    model.wv.save_word2vec_format(str(out), binary=True)
    record = {
        "name": "word2vec stand-in",
        "trainer": "gensim.models.Word2Vec",
        "corpus": corpus.name,
        "tokenised_text": text.name,
        "corpus_tokens": tokens,
        "vocabulary": len(model.wv),
        "settings": settings,
        "seconds": round(time.perf_counter() - started, 1),
        "format": "word2vec binary",
    }
    out.with_suffix(out.suffix + ".json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: list[str] | None = None) -> None:
    """``python -m posharness.tasks.controlled.standin CORPUS OUT [KEY=VALUE ...]``."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        raise SystemExit("usage: python -m posharness.tasks.controlled.standin CORPUS OUT [k=v]")
    overrides = {}
    for pair in args[2:]:
        key, _, value = pair.partition("=")
        if key not in DEFAULT_SETTINGS:
            raise SystemExit(
                f"unknown Word2Vec setting {key!r}: use one of {list(DEFAULT_SETTINGS)}"
            )
        overrides[key] = type(DEFAULT_SETTINGS[key])(value)
    print(json.dumps(train_standin(Path(args[0]), Path(args[1]), **overrides), indent=2))


if __name__ == "__main__":
    main()
