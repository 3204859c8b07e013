"""SDPA in every attention mode: the same numbers as eager, eager wherever weights are read.

For every Hugging Face family's tiny checkpoint and every native zoo model, in every
mode, with a padded batch: hidden states of the fused path (no weights requested) equal
the eager path's (weights requested) to 1e-5; the fused call really goes through
``scaled_dot_product_attention`` and the eager one never does; and the path each call
reports (``EncoderOutput.attn_implementation``, ``attention_path``) is the one that ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.compute.batching import pad_batch
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode, ReportsAttentionPath
from posharness.contracts.model_spec import LoadOptions
from posharness.contracts.results import ModeInfo
from posharness.models.decompose.paths import attention_choice, resolve_path
from posharness.models.hf.builders import build_hf
from posharness.models.zoo.encoder import NAMED_MODELS, PEModel, config_for, mode_support
from tests.unit.models.decompose.test_decompose_deberta import deberta_v1
from tests.unit.models.hf.test_hf_families import KINDS, write_checkpoint
from tests.unit.models.hf.test_hf_modes import SENTENCES, write_corpus

HIDDEN_ONLY = frozenset({HIDDEN})
WITH_WEIGHTS = frozenset({HIDDEN, ATTENTIONS})
FAMILIES = ["bert", *KINDS, "deberta"]  # the eleven families, DeBERTa v1 and v2


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


@pytest.fixture()
def sdpa_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of torch's fused attention (every fused path looks it up at call time)."""
    calls: list[int] = []
    original = torch.nn.functional.scaled_dot_product_attention

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", counting)
    return calls


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def write_deberta_v1(folder: Path, tokenizer_from: Path, **settings: object) -> Path:
    """DeBERTa v1 (fused in_proj, query/value biases) in the tokenizer of the tiny BERT."""
    torch.manual_seed(0)
    vocab = json.loads((tokenizer_from / "config.json").read_text())["vocab_size"]
    model = deberta_v1(vocab_size=vocab, pad_token_id=0, **settings)
    model.save_pretrained(folder)
    for name in ("vocab.txt", "tokenizer.json", "special_tokens_map.json", "tokenizer_config.json"):
        if (tokenizer_from / name).exists():
            (folder / name).write_bytes((tokenizer_from / name).read_bytes())
    return folder


def checkpoint(kind: str, tiny_bert: Path, folder: Path) -> Path:
    if kind == "bert":
        return tiny_bert
    if kind == "deberta":
        return write_deberta_v1(folder, tiny_bert)
    return write_checkpoint(kind, folder, tiny_bert)


def adapter_for(folder: Path, tmp_path: Path, corpus: Path, **args: str):
    options = LoadOptions(
        device="cpu",
        model_args=(
            ("reference_corpus", str(corpus)),
            ("reference_length", "24"),
            ("reference_sequences", "3"),
            *args.items(),
        ),
        cache_dir=tmp_path / "cache",
    )
    return build_hf(str(folder), options)


def padded_batch(adapter):
    batch = pad_batch(adapter.tokenize(SENTENCES), adapter.pad_token_id)
    assert not bool(batch.attention_mask.bool().all()), "the batch must hold padding"
    return batch


def assert_hidden_close(fused, eager) -> None:
    assert len(fused) == len(eager)
    for got, want in zip(fused, eager, strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", FAMILIES)
def test_every_family_and_mode_gives_eager_numbers_through_sdpa(
    kind, tiny_bert, tmp_path, corpus, sdpa_calls
):
    adapter = adapter_for(checkpoint(kind, tiny_bert, tmp_path / kind), tmp_path, corpus)
    batch = padded_batch(adapter)
    for mode in Mode:
        adapter.encode(batch, mode, HIDDEN_ONLY)  # the first call of a mode prepares it
        sdpa_calls.clear()
        eager = adapter.encode(batch, mode, WITH_WEIGHTS)
        assert not sdpa_calls, f"{kind} {mode}: a request for weights must run eager"
        assert eager.attn_implementation == "eager"
        assert eager.attentions is not None
        fused = adapter.encode(batch, mode, HIDDEN_ONLY)
        assert len(sdpa_calls) >= adapter.num_layers, f"{kind} {mode}: SDPA did not run"
        assert fused.attn_implementation == "sdpa"
        assert adapter.attention_path(mode, HIDDEN_ONLY) == "sdpa"
        assert adapter.attention_path(mode, WITH_WEIGHTS) == "eager"
        assert_hidden_close(fused.hidden_states, eager.hidden_states)


def test_attention_eager_never_calls_sdpa_and_says_so(tiny_bert, tmp_path, corpus, sdpa_calls):
    adapter = adapter_for(tiny_bert, tmp_path, corpus, attention="eager")
    batch = padded_batch(adapter)
    for mode in Mode:
        out = adapter.encode(batch, mode, HIDDEN_ONLY)
        assert out.attn_implementation == "eager"
        assert adapter.attention_path(mode, HIDDEN_ONLY) == "eager"
    assert not sdpa_calls
    assert adapter.describe()["attention"] == "eager"


def test_attention_sdpa_refuses_a_request_for_weights(tiny_bert, tmp_path, corpus):
    adapter = adapter_for(tiny_bert, tmp_path, corpus, attention="sdpa")
    batch = padded_batch(adapter)
    assert adapter.encode(batch, Mode.BOTH, HIDDEN_ONLY).attn_implementation == "sdpa"
    with pytest.raises(OptionError, match="attention=sdpa cannot return attention weights"):
        adapter.encode(batch, Mode.BOTH, WITH_WEIGHTS)


def test_an_unknown_attention_choice_is_a_one_line_error(tiny_bert, tmp_path, corpus):
    with pytest.raises(OptionError, match="pick one of auto, eager, sdpa"):
        adapter_for(tiny_bert, tmp_path, corpus, attention="flash")


def test_talking_heads_stay_eager_under_auto_and_are_refused_under_sdpa(
    tiny_bert, tmp_path, corpus, sdpa_calls
):
    folder = write_deberta_v1(tmp_path / "talking", tiny_bert, talking_head=True)
    adapter = adapter_for(folder, tmp_path, corpus)
    batch = padded_batch(adapter)
    for mode in Mode:
        out = adapter.encode(batch, mode, HIDDEN_ONLY)
        assert out.attn_implementation == "eager"
    assert not sdpa_calls
    strict = adapter_for(folder, tmp_path, corpus, attention="sdpa")
    with pytest.raises(OptionError, match="talking heads"):
        strict.encode(batch, Mode.BOTH, HIDDEN_ONLY)


@pytest.mark.parametrize("kind", ["bert", "t5", "deberta-v2", "xlnet", "mpnet", "roformer"])
@pytest.mark.parametrize("mode", list(Mode))
def test_fine_tuning_gradients_match_eager(kind, mode, tiny_bert, tmp_path, corpus, sdpa_calls):
    """Training runs fused (no weights), with gradients through every additive term."""
    folder = checkpoint(kind, tiny_bert, tmp_path / kind)
    grads = {}
    for choice in ("eager", "auto"):
        adapter = adapter_for(folder, tmp_path, corpus, attention=choice)
        torch.manual_seed(0)  # the same fresh head for both
        classifier = adapter.for_classification(2, mode).eval()  # eval: no dropout
        batch = padded_batch(adapter)
        sdpa_calls.clear()
        logits = classifier(batch.input_ids, batch.attention_mask)
        logits.square().sum().backward()
        assert bool(sdpa_calls) == (choice == "auto")
        expected = "sdpa" if choice == "auto" else "eager"
        assert adapter.attention_path(mode, frozenset()) == expected
        grads[choice] = (logits.detach(), {n: p.grad for n, p in classifier.named_parameters()})
    torch.testing.assert_close(grads["auto"][0], grads["eager"][0], atol=1e-5, rtol=1e-5)
    eager_grads, fused_grads = grads["eager"][1], grads["auto"][1]
    assert eager_grads.keys() == fused_grads.keys()
    for name, want in eager_grads.items():
        got = fused_grads[name]
        assert (got is None) == (want is None), f"{name}: gradient present in one path only"
        if want is not None:
            torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4, msg=name)


# -- the native zoo ------------------------------------------------------------------------

VOCAB = 50


def tiny_zoo(name: str) -> PEModel:
    torch.manual_seed(0)
    model = PEModel(config_for(name, "tiny", vocab_size=VOCAB)).eval()
    with torch.no_grad():  # move every parameter off its initial value (zero biases, ...)
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def zoo_batch() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(5, VOCAB, (2, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    return ids, mask


@pytest.mark.parametrize("name", list(NAMED_MODELS))
def test_every_zoo_model_and_mode_gives_eager_numbers_through_sdpa(name, sdpa_calls):
    model = tiny_zoo(name)
    ids, mask = zoo_batch()
    for mode in mode_support(model.config):
        model.set_attention_mode(mode)
        with torch.no_grad():
            sdpa_calls.clear()
            eager = model(ids, mask, output_attentions=True, output_hidden_states=True)
            assert not sdpa_calls, f"{name} {mode}: a request for weights must run eager"
            fused = model(ids, mask, output_hidden_states=True)
            # bert-a-star-seq's PA is its table times X (no softmax to fuse), so its
            # positional mode, PA alone, has nothing for SDPA to run
            table_pa = name == "bert-a-star-seq" and mode == "positional"
            wanted = 0 if table_pa else model.config.num_hidden_layers
            assert len(sdpa_calls) >= wanted, f"{name} {mode}"
        assert model.attention_path(mode, want_weights=False) == "sdpa"
        assert model.attention_path(mode, want_weights=True) == "eager"
        assert_hidden_close(fused.hidden_states, eager.hidden_states)


def test_zoo_eager_choice_never_calls_sdpa(sdpa_calls):
    model = tiny_zoo("tupe-r")
    model.set_attention_path("eager")
    ids, mask = zoo_batch()
    with torch.no_grad():
        model(ids, mask)
    assert not sdpa_calls
    assert model.attention_path("both", want_weights=False) == "eager"


def test_zoo_sdpa_choice_refuses_weights():
    model = tiny_zoo("t5")
    model.set_attention_path("sdpa")
    ids, mask = zoo_batch()
    with pytest.raises(OptionError, match="cannot return attention weights"):
        model(ids, mask, output_attentions=True)


def test_zoo_adapter_reports_the_path_of_its_model(tiny_bert, tmp_path):
    """The zoo adapter inherits ``attention_path``; the model it wraps decides."""
    from posharness.models.zoo.adapter import NativePEAdapter

    folder = tmp_path / "zoo"
    tiny_zoo("alibi").save_pretrained(folder)
    for name in ("vocab.txt", "tokenizer.json", "special_tokens_map.json", "tokenizer_config.json"):
        if (tiny_bert / name).exists():
            (folder / name).write_bytes((tiny_bert / name).read_bytes())
    adapter = NativePEAdapter(folder, LoadOptions(device="cpu", cache_dir=tmp_path / "cache"))
    batch = padded_batch(adapter)
    assert adapter.encode(batch, Mode.POSITIONAL, HIDDEN_ONLY).attn_implementation == "sdpa"
    assert adapter.encode(batch, Mode.POSITIONAL, WITH_WEIGHTS).attn_implementation == "eager"


# -- the choice and the record -------------------------------------------------------------


def test_resolve_path_follows_the_choice():
    assert resolve_path(attention_choice(None), want_weights=False) == "sdpa"
    assert resolve_path("auto", want_weights=True) == "eager"
    assert resolve_path("eager", want_weights=False) == "eager"
    assert resolve_path("auto", want_weights=False, eager_reason="no fused form") == "eager"
    with pytest.raises(OptionError, match="no fused form"):
        resolve_path("sdpa", want_weights=False, eager_reason="no fused form")


def test_hf_adapter_reports_its_path_for_the_runner(tiny_bert, tmp_path, corpus):
    adapter = adapter_for(tiny_bert, tmp_path, corpus)
    assert isinstance(adapter, ReportsAttentionPath)


def test_results_without_an_attention_path_still_read():
    from pydantic import TypeAdapter

    old = TypeAdapter(ModeInfo).validate_python({"exact": True, "name": "both"})
    assert old.attention_path is None
    new = TypeAdapter(ModeInfo).validate_python(
        {"exact": True, "name": "both", "attention_path": "sdpa"}
    )
    assert new.attention_path == "sdpa"
