"""Constituency parses for text that has none, through benepar when it is installed.

SNLI ships parses, so the probes never need this for SNLI itself; it is for other NLI
files in the same jsonl layout. benepar is an optional extra, and its English model is a
separate download, so both absences are turned into one line that names the step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from posharness.base.errors import DataError

MODEL = "benepar_en3"
INSTALL = (
    "pip install 'posharness[constituency]' && "
    f"python -c \"import benepar; benepar.download('{MODEL}')\""
)


@dataclass(frozen=True)
class Parser:
    """Sentences in, Penn-Treebank bracketings out, in order."""

    name: str
    parse_all: Callable[[Sequence[str]], list[str]]

    def __call__(self, sentences: Sequence[str]) -> list[str]:
        return self.parse_all(sentences)


def constituency_parser(why: str) -> Parser:
    """benepar's English parser; ``why`` says which input needed it, for the error line."""
    try:
        import benepar
    except ImportError:
        raise DataError(
            f"{why}, and no constituency parser is installed: use SNLI's own jsonl (it "
            f"carries parses) or install benepar: {INSTALL}"
        ) from None
    try:
        model = benepar.Parser(MODEL)
    except LookupError:
        raise DataError(
            f"{why}, and benepar's model {MODEL} is not downloaded: {INSTALL}"
        ) from None

    def parse_all(sentences: Sequence[str]) -> list[str]:
        from nltk.tokenize import TreebankWordTokenizer

        tokenizer = TreebankWordTokenizer()
        inputs = [benepar.InputSentence(words=tokenizer.tokenize(s)) for s in sentences]
        return [tree.pformat(margin=10**9) for tree in model.parse_sents(inputs)]

    return Parser(f"benepar/{MODEL}", parse_all)
