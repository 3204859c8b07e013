"""The card lists every ``--model-arg`` (issue 39, part 6): a run with
``hidden_dropout_prob=0`` showed only the recipe's ``dropout | True`` (train mode), and a
geometry target such as ``locality=0.3``, which is no ``PEConfig`` field, not at all."""

from __future__ import annotations

import json

import pytest

from posharness.models.pretrain.card import card_facts, given_model_args, write_card
from tests.cli_helpers import cli
from tests.unit.models.pretrain.test_pretrain_loop import settings

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

GIVEN = {"locality": "0.3", "symmetry": "0.8", "hidden_dropout_prob": "0"}


def test_the_card_of_every_checkpoint_lists_each_model_arg_as_given(
    tmp_path, corpus, tokenizer
) -> None:
    tokenizer.save_pretrained(str(tmp_path / "tok"))
    pairs = [part for key, value in GIVEN.items() for part in ("--model-arg", f"{key}={value}")]
    code = cli(
        "pretrain", "--model", "bert-a-star", "--size", "tiny", "--steps", "2", "--corpus",
        str(corpus), "--block-size", "16", "--tokenizer", str(tmp_path / "tok"),
        "--batch-size", "4", "--save-every", "1", "--device", "cpu",
        "--prepared-dir", str(tmp_path / "corpora"), "--out", str(tmp_path / "run"), *pairs,
    )  # fmt: skip
    assert code == 0
    for folder in ("checkpoint-1", "checkpoint-2", "final"):
        facts = json.loads((tmp_path / "run" / folder / "pretraining.json").read_text())
        assert facts["model_args"] == GIVEN
        card = (tmp_path / "run" / folder / "README.md").read_text()
        section = card.split("## Model arguments")[1].split("## Corpus")[0]
        assert [line for line in section.splitlines() if line.startswith("| ")] == [
            "| --model-arg | value |",
            "| locality | 0.3 |",
            "| symmetry | 0.8 |",
            "| hidden_dropout_prob | 0 |",
        ]


def test_a_card_without_model_args_says_none_were_given(tmp_path) -> None:
    facts = card_facts(settings(), {"scheme": "rope"}, tmp_path / "c.txt", "ab", [], 0, 0, 0, [])
    assert facts["model_args"] == {}
    write_card(tmp_path, facts)
    assert "## Model arguments\n\nNone given" in (tmp_path / "README.md").read_text()


def test_the_model_args_hold_only_inside_their_block(tmp_path) -> None:
    with given_model_args({"tie|cls": "a|b"}):
        facts = card_facts(settings(), {}, "c.txt", "ab", [], 0, 0, 0, [])
    assert facts["model_args"] == {"tie|cls": "a|b"}
    assert card_facts(settings(), {}, "c.txt", "ab", [], 0, 0, 0, [])["model_args"] == {}
    write_card(tmp_path, facts)
    assert "| tie\\|cls | a\\|b |" in (tmp_path / "README.md").read_text()  # one cell each
