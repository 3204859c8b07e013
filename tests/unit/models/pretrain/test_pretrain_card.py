"""Checkpoints a lab can use (issue 30, part 5): every checkpoint and the final model
carry a card with the recipe, corpus identity, launch, tokens seen and loss curve, and
the card is not part of the model's fingerprint."""

from __future__ import annotations

import json
import shutil

import pytest

from posharness.models.pretrain.loop import pretrain
from tests.unit.models.pretrain.test_pretrain_loop import settings
from tests.unit.models.pretrain.test_pretrain_recipes import zoo_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def test_every_checkpoint_has_a_card_and_the_card_is_not_the_model(tokenizer, corpus, tmp_path):
    from transformers import AutoModelForMaskedLM

    import posharness  # noqa: F401  (registers the zoo's classes with the Auto classes)
    from posharness.models.hf.checkpoint import checkpoint_fingerprint

    run = tmp_path / "run"
    chosen = settings(save_every=3, preset="mini")

    def build(vocabulary):
        return zoo_model(vocabulary, tokenizer.pad_token_id)

    outcome = pretrain(build, tokenizer, corpus, run, chosen, None, tmp_path / "corpora")
    for folder in (run / "checkpoint-3", run / "checkpoint-6", outcome.checkpoint):
        facts = json.loads((folder / "pretraining.json").read_text())
        card = (folder / "README.md").read_text()
        assert facts["recipe"]["name"] == "mini" and facts["recipe"]["source"]
        assert facts["recipe"]["settings"]["batch_size"] == 8
        assert facts["corpus"] == {"name": corpus.name, "sha256": facts["corpus"]["sha256"]}
        assert len(facts["corpus"]["sha256"]) == 64
        assert facts["launch"][0]["world_size"] == 1 and facts["scheme"] == "tupe-r"
        assert "## Recipe" in card and facts["corpus"]["sha256"] in card
        assert str(tmp_path) not in card + json.dumps(facts)  # no path of this machine
    final = json.loads((outcome.checkpoint / "pretraining.json").read_text())
    assert final["step"] == 6 and final["tokens_seen"] == 6 * 8 * 16
    assert [r["step"] for r in final["loss"]] == [1, 2, 3, 4, 5, 6]
    assert (outcome.checkpoint / "loss_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((run / "checkpoint-3/pretraining.json").read_text())["step"] == 3

    model = AutoModelForMaskedLM.from_pretrained(outcome.checkpoint)
    assert type(model).__name__ == "PEForMaskedLM"
    bare = tmp_path / "bare"
    shutil.copytree(outcome.checkpoint, bare)
    for name in ("README.md", "pretraining.json", "loss_curve.png"):
        (bare / name).unlink()
    assert checkpoint_fingerprint(bare, None, "float32", "sdpa") == checkpoint_fingerprint(
        outcome.checkpoint, None, "float32", "sdpa"
    )


def test_a_resume_under_another_scheme_or_corpus_names_both(tokenizer, corpus, tmp_path):
    from posharness.base.errors import OptionError
    from posharness.models.zoo.encoder import PEForMaskedLM, config_for

    def scheme(name):
        return lambda vocabulary: PEForMaskedLM(
            config_for(name, "tiny", vocab_size=vocabulary, pad_token_id=tokenizer.pad_token_id)
        )

    run, prepared = tmp_path / "run", tmp_path / "corpora"
    pretrain(scheme("tupe-r"), tokenizer, corpus, run, settings(steps=2), None, prepared)
    with pytest.raises(OptionError, match=r"another scheme \(tupe-r there, rope here\)"):
        pretrain(scheme("rope"), tokenizer, corpus, run, settings(steps=2), None, prepared)
    other = tmp_path / "other.txt"
    other.write_text(corpus.read_text() + "\n\nOne more document at the end.\n")
    with pytest.raises(OptionError, match=rf"another corpus \({corpus.name} there, other.txt"):
        pretrain(scheme("tupe-r"), tokenizer, other, run, settings(steps=2), None, prepared)
