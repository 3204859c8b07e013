"""Spec strings and the folder names their results go to."""

from __future__ import annotations

from posharness.contracts.model_spec import parse_model_spec


def test_model_args_give_a_run_its_own_results_folder() -> None:
    spec = parse_model_spec("tupe-r@runs/tupe-r mini/final")
    assert spec.slug == "tupe-r-runs-tupe-r-mini-final"
    assert spec.results_slug({}) == spec.slug
    seeded = parse_model_spec("bert-a-star").results_slug({"seed": "1", "init": "random"})
    assert seeded == "bert-a-star__init-random_seed-1"  # sorted, readable
    other = parse_model_spec("bert-a-star").results_slug({"seed": "2", "init": "random"})
    assert other != seeded


def test_long_model_args_are_shortened_to_a_digest() -> None:
    spec = parse_model_spec("minilm")
    first = spec.results_slug({"reference_corpus": "/data/" + "a" * 80 + "/one.txt"})
    second = spec.results_slug({"reference_corpus": "/data/" + "a" * 80 + "/two.txt"})
    assert first != second
    for name in (first, second):
        assert len(name) < 80 and name.startswith("minilm__reference_corpus-")
