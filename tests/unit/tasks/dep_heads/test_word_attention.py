"""Sub-word → word attention (Clark et al. 2019): sums into a word, mean or first out of it."""

from __future__ import annotations

import pytest
import torch

from posharness.tasks.dep_heads.word_attention import align_words, predicted_words, word_attention

# [CLS] the dog ##s run ##ning [SEP] [PAD]: words "the", "dogs", "running"
WORD_IDS = (None, 0, 1, 1, 2, 2, None)
WIDTH = 8


def _attention(rows: list[list[float]]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)[None, None]  # [1, 1, T, T]


def test_attention_to_a_split_word_is_summed_over_its_pieces():
    attention = torch.zeros(1, 1, WIDTH, WIDTH)
    attention[0, 0, 1] = torch.tensor([0.1, 0.0, 0.3, 0.2, 0.15, 0.05, 0.2, 0.0])
    alignment = align_words([WORD_IDS], [3], WIDTH)
    words = word_attention(attention, alignment)[0, 0]
    assert words.shape == (3, 3)
    assert torch.allclose(words[0], torch.tensor([0.0, 0.5, 0.2]))  # [CLS], [SEP] dropped


def test_attention_from_a_split_word_is_the_mean_of_its_pieces_or_the_first():
    attention = torch.zeros(1, 1, WIDTH, WIDTH)
    attention[0, 0, 2, 1] = 0.8  # "dog" → "the"
    attention[0, 0, 3, 4] = 0.6  # "##s" → "run"
    mean = word_attention(attention, align_words([WORD_IDS], [3], WIDTH, "mean"))[0, 0]
    first = word_attention(attention, align_words([WORD_IDS], [3], WIDTH, "first"))[0, 0]
    assert torch.allclose(mean[1], torch.tensor([0.4, 0.0, 0.3]))
    assert torch.allclose(first[1], torch.tensor([0.8, 0.0, 0.0]))


def test_special_tokens_are_excluded_wherever_they_sit():
    # XLNet puts <sep> <cls> last and pads on the left: positions are no guide.
    ids = (None, None, 0, 1, 1, None, None)
    attention = torch.zeros(1, 1, 7, 7)
    attention[0, 0, 2] = torch.tensor([0.5, 0.0, 0.0, 0.1, 0.1, 0.2, 0.1])
    alignment = align_words([ids], [2], 7)
    words = word_attention(attention, alignment)[0, 0]
    assert torch.allclose(words[0], torch.tensor([0.0, 0.2]))


def test_predicted_word_skips_itself_and_words_without_pieces():
    # word 1 lost its only piece to the tokenizer; word 0 attends mostly to itself
    ids = (None, 0, 2, None)
    alignment = align_words([ids], [3], 4)
    assert alignment.has_pieces.tolist() == [[True, False, True]]
    scores = torch.tensor([[[[0.9, 0.0, 0.1], [0.3, 0.3, 0.4], [0.2, 0.0, 0.8]]]])
    predicted = predicted_words(scores, alignment)
    assert predicted[0, 0].tolist()[0] == 2 and predicted[0, 0].tolist()[2] == 0


def test_rows_of_different_lengths_in_one_batch_do_not_leak_into_each_other():
    short = (None, 0, 1, None)
    attention = torch.full((2, 1, WIDTH, WIDTH), 1.0 / WIDTH)
    alignment = align_words([WORD_IDS, short], [3, 2], WIDTH)
    predicted = predicted_words(word_attention(attention, alignment), alignment)
    assert predicted[1, 0, :2].tolist() == [1, 0]  # never word 2, which row 1 lacks


def test_word_ids_beyond_the_word_count_are_refused():
    with pytest.raises(ValueError, match="word id"):
        align_words([WORD_IDS], [2], WIDTH)
