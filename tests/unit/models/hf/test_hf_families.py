"""Every family through the Hugging Face adapter: saved checkpoint → three modes.

The family tests check the split invariants on in-memory models; this checks the path a
user takes — config on disk, AutoModel (T5: the encoder only), installation, reference
statistics, mode switching — for one tiny checkpoint per family. Each checkpoint borrows
the tiny BERT's WordPiece tokenizer, which any architecture can read ids from.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from posharness.compute.batching import pad_batch
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.builders import build_hf
from tests.conftest import PIECES, SPECIALS, WORDS
from tests.unit.models.hf.test_hf_modes import SENTENCES, write_corpus

VOCAB = len(SPECIALS + PIECES + WORDS)
COMMON = dict(vocab_size=VOCAB, pad_token_id=0)


def _config(kind: str):
    import transformers as tf

    bert_like = dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        **COMMON,
    )
    return {
        "roberta": lambda: tf.RobertaConfig(**{**bert_like, "max_position_embeddings": 66}),
        "electra": lambda: tf.ElectraConfig(**bert_like, embedding_size=16),
        "albert": lambda: tf.AlbertConfig(**bert_like, embedding_size=16),
        "distilbert": lambda: tf.DistilBertConfig(
            dim=32, n_layers=2, n_heads=4, hidden_dim=37, max_position_embeddings=64, **COMMON
        ),
        "t5": lambda: tf.T5Config(
            d_model=32,
            d_kv=8,
            d_ff=37,
            num_layers=2,
            num_heads=4,
            **COMMON,
            decoder_start_token_id=0,
        ),
        "deberta-v2": lambda: tf.DebertaV2Config(
            **bert_like,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            position_buckets=8,
            position_biased_input=False,
            initializer_range=0.3,
        ),
        "xlnet": lambda: tf.XLNetConfig(
            d_model=32, n_layer=2, n_head=4, d_inner=37, initializer_range=0.3, **COMMON
        ),
        "mpnet": lambda: tf.MPNetConfig(**{**bert_like, "max_position_embeddings": 66}),
        "modernbert": lambda: tf.ModernBertConfig(
            hidden_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            intermediate_size=37,
            max_position_embeddings=64,
            local_attention=8,
            global_attn_every_n_layers=2,
            **COMMON,
            bos_token_id=2,
            eos_token_id=3,
            sep_token_id=3,
            cls_token_id=2,
        ),
        "roformer": lambda: tf.RoFormerConfig(**bert_like),
    }[kind]()


KINDS = [
    "roberta",
    "electra",
    "albert",
    "distilbert",
    "t5",
    "deberta-v2",
    "xlnet",
    "mpnet",
    "modernbert",
    "roformer",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def write_checkpoint(kind: str, folder: Path, tokenizer_from: Path) -> Path:
    from transformers import AutoModel, T5EncoderModel

    torch.manual_seed(0)
    config = _config(kind)
    model = T5EncoderModel(config) if kind == "t5" else AutoModel.from_config(config)
    model.save_pretrained(folder)
    for name in ("vocab.txt", "tokenizer.json", "special_tokens_map.json"):
        if (tokenizer_from / name).exists():
            shutil.copy(tokenizer_from / name, folder / name)
    settings = json.loads((tokenizer_from / "tokenizer_config.json").read_text())
    settings["tokenizer_class"] = "BertTokenizer"  # or AutoTokenizer guesses by model type
    (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    return folder


@pytest.mark.parametrize("kind", KINDS)
def test_family_runs_all_modes_from_a_saved_checkpoint(kind, tiny_bert, tmp_path, corpus):
    folder = write_checkpoint(kind, tmp_path / kind, tiny_bert)
    options = LoadOptions(
        device="cpu",
        model_args=(
            ("reference_corpus", str(corpus)),
            ("reference_length", "24"),
            ("reference_sequences", "3"),
        ),
        cache_dir=tmp_path / "cache",
    )
    adapter = build_hf(str(folder), options)
    assert set(adapter.modes) == set(Mode)
    batch = pad_batch(adapter.tokenize(SENTENCES), adapter.pad_token_id)
    real_keys = batch.attention_mask.bool()
    attentions = {}
    for mode in Mode:
        out = adapter.encode(batch, mode, frozenset({HIDDEN, ATTENTIONS}))
        assert all(torch.isfinite(h).all() for h in out.hidden_states), mode
        for layer in out.attentions:
            rows = layer[0][:, real_keys[0]]  # real query rows of the padded sentence
            assert float(rows[..., ~real_keys[0]].abs().sum()) == 0.0, (kind, mode)
        attentions[mode] = out.attentions
    for mode in (Mode.CONTEXTUAL, Mode.POSITIONAL):
        gap = max(
            float((a - b).abs().max())
            for a, b in zip(attentions[mode], attentions[Mode.BOTH], strict=True)
        )
        assert gap > 1e-4, (kind, mode)
    scores = adapter.positional_scores(10)
    if scores is None:  # DeBERTa's exact delta depends on content: no table to give
        assert not adapter.modes[Mode.POSITIONAL].content_free_delta
        return
    assert scores is not None and scores.shape[-2:] == (10, 10)
    assert scores.shape[1] == adapter.num_heads
    assert (
        adapter.describe()["decomposition"]["definition"]
        == adapter.modes[Mode.POSITIONAL].definition
    )
