"""The real all-MiniLM-L6-v2 (from PyPI) and real SNLI sentences from ../shared/data."""

from __future__ import annotations

import json

import pytest
import torch

from posharness.compute.batching import BatchedEncoder, pad_batch
from posharness.contracts.adapter import HIDDEN, Mode
from posharness.contracts.model_spec import LoadOptions, build_adapter, parse_model_spec
from posharness.run.config import RunConfig
from posharness.run.runner import run
from tests.conftest import needs_minilm, shared_data_dir

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def minilm():
    return build_adapter(parse_model_spec("minilm"), LoadOptions(device="cpu"))


@needs_minilm
def test_minilm_geometry_is_local_symmetric_and_toeplitz(tmp_path):
    outcomes = run(
        RunConfig(
            models=["minilm"],
            tasks=["geometry"],
            output_dir=tmp_path / "r",
            cache_dir=tmp_path / "c",
            device="cpu",
        )
    )
    loc, toe = (o.result for o in outcomes)
    metrics = {k: v.value for k, v in loc.metrics.items()}
    assert loc.model.pe_card["family"] == "learned absolute"
    assert loc.task.settings["words"] == 100 and loc.task.settings["length"] == 128
    # far more local than uniform attention (0.0232 at n=128), and nearly symmetric
    assert metrics["locality_no_special"] > 3 * 0.0232
    assert metrics["symmetry"] > 0.8 and metrics["symmetry_no_special"] > 0.8
    r2 = {k: v.value for k, v in toe.metrics.items()}
    assert r2["gram_r2"] > r2["gram_r2_shuffled"] + 0.2
    assert r2["attention_no_special_r2"] > 0.5
    assert r2["attention_no_special_r2"] > r2["attention_no_special_r2_shuffled"] + 0.3
    assert toe.details["gram_positions"] == 512


@needs_minilm
def test_batched_encoding_of_snli_premises_matches_one_at_a_time(minilm):
    data = shared_data_dir()
    path = data / "snli" / "snli_1.0" / "snli_1.0_dev.jsonl" if data else None
    if path is None or not path.exists():
        pytest.skip("../shared/data/snli/snli_1.0/snli_1.0_dev.jsonl is not present")
    with path.open() as handle:
        premises = [
            json.loads(line)["sentence1"] for _, line in zip(range(48), handle, strict=False)
        ]
    items = minilm.tokenize(premises)
    want = frozenset({HIDDEN})
    encoder = BatchedEncoder(minilm, Mode.BOTH, want, batch_size=16)
    batched = {}
    for indices, out in encoder.batches(items):
        for row, index in enumerate(indices):
            batched[index] = out.hidden_states[-1][row, : len(items[index])]
    assert encoder.log.padded_tokens < 16 * 3 * max(len(i) for i in items)  # really length-sorted
    for index in (0, 7, 23, 47):
        alone = minilm.encode(pad_batch([items[index]], minilm.pad_token_id), Mode.BOTH, want)
        torch.testing.assert_close(batched[index], alone.hidden_states[-1][0], atol=1e-4, rtol=0)


@needs_minilm
def test_minilm_fingerprint_is_stable_and_names_its_files(minilm):
    again = build_adapter(parse_model_spec("minilm"), LoadOptions(device="cpu"))
    assert minilm.fingerprint() == again.fingerprint()
    assert minilm.describe()["family"] == "bert"
    assert minilm.num_layers == 6 and minilm.num_heads == 12


def _snli_premises(count: int) -> list[str]:
    data = shared_data_dir()
    path = data / "snli" / "snli_1.0" / "snli_1.0_test.jsonl" if data else None
    if path is None or not path.exists():
        pytest.skip("../shared/data/snli/snli_1.0/snli_1.0_test.jsonl is not present")
    if not (data / "wikitext-2" / "wiki.valid.tokens").exists():
        pytest.skip("../shared/data/wikitext-2/wiki.valid.tokens (reference corpus) is absent")
    with path.open() as handle:
        return [
            json.loads(line)["sentence1"] for _, line in zip(range(count), handle, strict=False)
        ]


@needs_minilm
def test_minilm_three_modes_on_snli_premises(tmp_path):
    premises = _snli_premises(32)
    options = LoadOptions(device="cpu", data_dir=shared_data_dir(), cache_dir=tmp_path / "c")
    model = build_adapter(parse_model_spec("minilm"), options)
    assert "wiki.valid.tokens" in model.modes[Mode.POSITIONAL].reference_corpus
    items = model.tokenize(premises)
    batch = pad_batch(items, model.pad_token_id)
    want = frozenset({HIDDEN, "attentions"})
    outputs = {mode: model.encode(batch, mode, want) for mode in Mode}
    for mode, out in outputs.items():
        assert all(torch.isfinite(h).all() for h in out.hidden_states), mode
        for layer in out.attentions:
            assert (
                float(layer[batch.attention_mask[:, None, None, :].expand_as(layer) == 0].sum())
                == 0
            )
    both = outputs[Mode.BOTH].attentions
    for mode in (Mode.CONTEXTUAL, Mode.POSITIONAL):
        gap = min(
            float((a - b).abs().mean()) for a, b in zip(outputs[mode].attentions, both, strict=True)
        )
        assert gap > 1e-3, mode  # every layer attends differently
    # positional mode is content-free: the longest premise (no padding) attends with
    # exactly softmax(delta) in every layer
    longest = int(batch.attention_mask.sum(1).argmax())
    n = int(batch.attention_mask[longest].sum())
    scores = model.positional_scores(n)
    for layer, attention in enumerate(outputs[Mode.POSITIONAL].attentions):
        expected = torch.softmax(scores[layer], dim=-1)
        torch.testing.assert_close(attention[longest, :, :n, :n], expected, atol=1e-5, rtol=1e-4)


@needs_minilm
def test_minilm_locality_and_symmetry_in_each_mode(tmp_path):
    _snli_premises(1)  # skips without the shared data (reference corpus)
    outcomes = run(
        RunConfig(
            models=["minilm"],
            tasks=["locality_symmetry"],
            modes=["both", "contextual", "positional"],
            output_dir=tmp_path / "r",
            cache_dir=tmp_path / "c",
            device="cpu",
            data_dir=shared_data_dir(),
            task_args={"locality_symmetry": {"words": "30", "bootstrap": "0", "figures": "false"}},
        )
    )
    by_mode = {o.result.mode.name: o.result for o in outcomes}
    assert by_mode["positional"].mode.definition == "tisa-mean-word"
    assert by_mode["positional"].mode.reference_corpus.startswith("wikitext-2/wiki.valid.tokens")
    locality = {m: r.metrics["locality_no_special"].value for m, r in by_mode.items()}
    assert len({round(v, 6) for v in locality.values()}) == 3
    # the positional term alone is more local than the content term alone
    assert locality["positional"] > locality["contextual"]
    term = by_mode["both"].metrics["positional_term_locality_no_special"].value
    assert 0.0 < term <= 1.0
