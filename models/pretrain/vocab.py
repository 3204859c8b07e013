"""The tokenizer a pretraining run uses: an existing one, or a WordPiece trained on the corpus.

BERT's vocabulary is an uncased WordPiece with ``[PAD]=0 [UNK] [CLS] [SEP] [MASK]`` (Devlin
et al. 2019; docs/pretraining.md). The ``tokenizers`` WordPiece trainer is a BPE learner whose
merge ties are broken by token ids, and the ids of its ``##`` continuation characters are
handed out in hash-map order, so two trainings on the same text can disagree
(huggingface/tokenizers#1794). Seeding those continuation characters in sorted order as
provisional special tokens fixes their ids, which makes training deterministic; the final
tokenizer is then rebuilt from the learnt vocabulary with only the five real specials.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from posharness.base.errors import ModelLoadError, OptionError

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
CONTINUATION = "##"
ALPHABET_LIMIT = 1000  # characters kept, the most frequent first (BERT's WordPiece default)
PROVENANCE = "trained_on.json"  # beside a trained tokenizer: the corpus and size it came from


def tokenizer_for(source: str | None, corpus: Path | None, vocab_size: int, out_dir: Path) -> Any:
    """The run's tokenizer, saved to ``out_dir/tokenizer`` either way.

    ``source`` is a tokenizer folder or hub id (loaded with ``AutoTokenizer``). Without
    one, a WordPiece of ``vocab_size`` pieces is trained on ``corpus``; a tokenizer an
    earlier run trained on the same corpus and size is reused rather than retrained.
    """
    target = Path(out_dir) / "tokenizer"
    if source is not None:
        tokenizer = load_tokenizer(source)
    else:
        if corpus is None:
            raise OptionError("no tokenizer and no corpus: give --tokenizer or --corpus")
        if vocab_size <= len(SPECIAL_TOKENS):
            raise OptionError(
                f"--vocab-size {vocab_size}: must exceed the {len(SPECIAL_TOKENS)} special tokens"
            )
        tokenizer = _reuse_trained(target, corpus, vocab_size)
        if tokenizer is not None:
            return tokenizer
        tokenizer = train_wordpiece(corpus, vocab_size)
    _check_masked_lm_tokens(tokenizer, source)
    tokenizer.save_pretrained(str(target))
    if source is None:
        from posharness.models.pretrain.corpus import corpus_identity

        provenance = {"corpus_sha256": corpus_identity(corpus), "vocab_size": vocab_size}
        (target / PROVENANCE).write_text(json.dumps(provenance, indent=2) + "\n")
    else:  # a loaded tokenizer replaced a trained one: it must not pass for trained later
        (target / PROVENANCE).unlink(missing_ok=True)
    return tokenizer


def train_wordpiece(corpus: Path, vocab_size: int) -> Any:
    """An uncased BERT WordPiece learnt from the corpus, identical on every run."""
    from tokenizers import Tokenizer, models, trainers
    from transformers import PreTrainedTokenizerFast

    from posharness.models.pretrain.corpus import read_corpus

    learner = _bert_pipeline(Tokenizer(models.WordPiece(unk_token="[UNK]")))
    alphabet = _alphabet(learner, corpus)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=[*SPECIAL_TOKENS, *(CONTINUATION + c for c in alphabet)],
        initial_alphabet=alphabet,
        limit_alphabet=len(alphabet),
        continuing_subword_prefix=CONTINUATION,
        show_progress=False,
    )
    learner.train_from_iterator(read_corpus(corpus), trainer)
    vocab = learner.get_vocab(with_added_tokens=False) | {
        token: i for i, token in enumerate(SPECIAL_TOKENS)
    }
    tokenizer = _bert_pipeline(
        Tokenizer(
            models.WordPiece(vocab=vocab, unk_token="[UNK]", continuing_subword_prefix=CONTINUATION)
        )
    )
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    _add_bert_template(tokenizer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


def _bert_pipeline(tokenizer: Any) -> Any:
    """BERT's text handling: clean, split CJK, lowercase and strip accents, split punctuation."""
    from tokenizers import decoders, normalizers, pre_tokenizers

    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION)
    return tokenizer


def _add_bert_template(tokenizer: Any) -> None:
    from tokenizers import processors

    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )


def _alphabet(learner: Any, corpus: Path) -> list[str]:
    """The most frequent normalised characters, ties and final order by code point."""
    from posharness.models.pretrain.corpus import read_corpus

    counts: Counter[str] = Counter()
    for text in read_corpus(corpus):
        counts.update(learner.normalizer.normalize_str(text))
    ranked = sorted((c for c in counts if not c.isspace()), key=lambda c: (-counts[c], c))
    return sorted(ranked[:ALPHABET_LIMIT])


def _reuse_trained(target: Path, corpus: Path, vocab_size: int) -> Any | None:
    """The tokenizer an earlier run trained here, if it came from this corpus and size."""
    provenance_file = target / PROVENANCE
    if not provenance_file.exists():
        return None
    from posharness.models.pretrain.corpus import corpus_identity

    try:
        provenance = json.loads(provenance_file.read_text())
    except (OSError, json.JSONDecodeError):
        return None  # unreadable: train again and overwrite it
    wanted = {"corpus_sha256": corpus_identity(corpus), "vocab_size": vocab_size}
    if provenance != wanted:
        raise OptionError(
            f"{target} was trained on another corpus or --vocab-size: use a new --out "
            "or the same settings"
        )
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(target))


def load_tokenizer(source: str) -> Any:
    """An existing tokenizer from a folder or a cached hub id; one line when it fails."""
    from transformers import AutoTokenizer

    path = Path(source).expanduser()
    if not path.is_dir():
        from posharness.models.hf.hub import resolve_checkpoint

        path, _ = resolve_checkpoint(source)  # one-line ModelLoadError, no 25 s of retries
    try:
        return AutoTokenizer.from_pretrained(str(path))
    except (OSError, ValueError, TypeError) as exc:
        raise ModelLoadError(
            f"no tokenizer could be loaded from {source} ({type(exc).__name__}): give a folder "
            "saved with save_pretrained or a cached hub id, or omit --tokenizer to train one"
        ) from exc


def _check_masked_lm_tokens(tokenizer: Any, source: str | None) -> None:
    missing = [
        name
        for name in ("pad_token", "mask_token", "cls_token", "sep_token")
        if getattr(tokenizer, name, None) is None
    ]
    if missing:
        raise OptionError(
            f"tokenizer {source} has no {', '.join(missing)}: masked-LM pretraining needs a "
            "BERT-style tokenizer; omit --tokenizer to train a WordPiece on the corpus"
        )
