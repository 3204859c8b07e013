"""Reference-corpus statistics for the definitions that need them.

``positional-stream`` (absolute PEs beyond layer 1), RoPE ``mean-qk`` and DeBERTa
``mean-qk`` all reduce to one quantity: the mean input of each layer's attention at each
absolute position, over a corpus, with the model running as trained. Means of queries and
keys follow from it by linearity, so one pass serves all of them.

The corpus is packed into full-length sequences in the model's own frame ([CLS] first,
no padding), so every position has the same number of samples and none is biased by
sentence length. The result is cached by model fingerprint, corpus hash and layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posharness.base.errors import DataError, OptionError

if TYPE_CHECKING:
    import torch
    from torch import nn

# Where the default corpus is looked for under --data-dir (the first that exists wins).
DEFAULT_CORPORA = (
    "wikitext-2/wiki.valid.tokens",
    "wikitext-2/wiki.test.tokens",
    "wikitext-103/wiki.valid.tokens",
)
# Used when neither --model-arg reference_corpus nor a corpus under --data-dir is given, so
# the three modes work on a fresh install: English prose written for this project
# (reference_text/SOURCE.md says how and under which licence), one paragraph per line.
EMBEDDED_CORPUS = Path(__file__).parent / "reference_text" / "english.txt"
DEFAULT_SEQUENCES = 32
MAX_DEFAULT_LENGTH = 512


@dataclass(frozen=True)
class ReferenceCorpus:
    path: Path
    content_hash: str

    @property
    def label(self) -> str:
        return f"{self.path.parent.name}/{self.path.name} (sha256 {self.content_hash[:12]})"

    def lines(self) -> Iterator[str]:
        """Non-empty text lines; WikiText headings (`` = Title = ``) are skipped."""
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                line = raw.strip()
                if not line or (line.startswith("=") and line.endswith("=")):
                    continue
                if line.startswith("<doc") or line == "</doc>":
                    continue  # WikiExtractor markup
                yield line


def find_reference_corpus(
    given: str | None, data_dir: Path | None, needed_for: str
) -> ReferenceCorpus:
    """The corpus the user named, else the first default found under the data folder,
    else the embedded one."""
    from posharness.storage.hashing import hash_file

    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise DataError(
                f"reference corpus {given} is not a file: pass --model-arg "
                "reference_corpus=FILE with a plain-text file (one paragraph per line)"
            )
        return ReferenceCorpus(path, hash_file(path))
    if data_dir is not None:
        for relative in DEFAULT_CORPORA:
            path = data_dir / relative
            if path.is_file():
                return ReferenceCorpus(path, hash_file(path))
    if EMBEDDED_CORPUS.is_file():
        return ReferenceCorpus(EMBEDDED_CORPUS, hash_file(EMBEDDED_CORPUS))
    where = f"under {data_dir}" if data_dir is not None else "(no --data-dir given)"
    raise DataError(
        f"{needed_for} needs a reference corpus and found none {where}, and the embedded "
        f"one ({EMBEDDED_CORPUS}) is missing from this installation: reinstall posharness, "
        "pass --model-arg reference_corpus=FILE (plain text), or --data-dir with wikitext-2/"
    )


def pack_sequences(
    corpus: ReferenceCorpus,
    encode_lines: Callable[[list[str]], list[list[int]]],
    wrap: Callable[[Sequence[int]], Sequence[int]],
    frame_size: int,
    length: int,
    count: int,
) -> list[list[int]]:
    """``count`` sequences of exactly ``length`` ids: running text inside the model's frame."""
    content = length - frame_size
    if content < 1:
        raise OptionError(f"reference_length={length} leaves no room for text; use a larger value")
    sequences: list[list[int]] = []
    pending: list[int] = []
    chunk: list[str] = []

    def flush() -> None:
        for ids in encode_lines(chunk):
            pending.extend(ids)
        chunk.clear()
        while len(pending) >= content and len(sequences) < count:
            sequences.append(list(wrap(pending[:content])))
            del pending[:content]

    for line in corpus.lines():
        chunk.append(line)
        if len(chunk) == 64:
            flush()
            if len(sequences) >= count:
                break
    if chunk and len(sequences) < count:
        flush()
    if len(sequences) < count:
        raise DataError(
            f"reference corpus {corpus.path} holds only {len(sequences)} sequences of "
            f"{length} tokens, {count} needed: use a larger corpus or a smaller "
            "reference_sequences / reference_length"
        )
    return sequences


def mean_attention_inputs(
    model: nn.Module,
    modules: list[nn.Module],
    sequences: torch.Tensor,
    batch_size: int = 8,
    forward: Callable[[nn.Module, torch.Tensor], Any] | None = None,
    advance: Callable[[int], None] | None = None,
) -> list[torch.Tensor]:
    """Per attention call in one forward, the mean of the hooked module's input per position.

    Slots follow call order, so a module shared across depth (ALBERT) yields one entry per
    layer it serves. Each entry is [T, D], float32. ``forward`` runs one batch (default:
    ``model(input_ids=…, attention_mask=ones)``); the model must be in mode ``both`` so the
    statistics describe the model as trained.
    """
    import torch

    sums: list[torch.Tensor] = []
    calls = [0]

    def hook(module: nn.Module, args: tuple[Any, ...]) -> None:
        total = args[0].detach().float().sum(dim=0)  # [T, D]
        slot = calls[0]
        calls[0] += 1
        if slot == len(sums):
            sums.append(total)
        else:
            sums[slot] = sums[slot] + total

    unique = list({id(m): m for m in modules}.values())
    handles = [m.register_forward_pre_hook(hook) for m in unique]
    device = next(model.parameters()).device
    try:
        with torch.inference_mode():
            for start in range(0, sequences.shape[0], batch_size):
                batch = sequences[start : start + batch_size].to(device)
                calls[0] = 0
                if forward is None:
                    model(input_ids=batch, attention_mask=torch.ones_like(batch))
                else:
                    forward(model, batch)
                if advance is not None:
                    advance(batch.shape[0])  # sequences done, for a progress display
    finally:
        for handle in handles:
            handle.remove()
    count = sequences.shape[0]
    return [s / count for s in sums]
