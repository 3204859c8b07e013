"""Which parameters AdamW does not decay (issue 39, part 7): biases and norms as BERT, and
every positional bias table and scalar positional parameter, by a rule on the scheme's
kind that also covers a plugin's PE (``optimizer.decay_exempt``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from posharness.base.errors import OptionError
from posharness.models.pretrain.loop import PretrainSettings
from posharness.models.pretrain.optimizer import build_optimizer, decay_exempt
from posharness.models.zoo.encoder import NAMED_MODELS, PEForMaskedLM, config_for
from posharness.pe import registry

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

# The positional parameters each zoo model leaves undecayed beyond biases and norms (name
# endings, every layer): bias tables whose entries are logits, and per-head scalars.
POSITIONAL_NO_DECAY = {
    "bert-a-star": ("layer_score.table",),
    "bert-a-star-s": ("layer_score.table",),
    "bert-a-star-seq": ("layer_score.table",),
    "bert-a-star-ws": ("layer_score.w", "layer_score.s"),
    "bert-a-star-ws-s": ("layer_score.w", "layer_score.s"),
    "bert-a-star-ws-seq": ("layer_score.w", "layer_score.s"),
    "bert-r": ("shared_positions.bias.weight",),
    "t5": ("shared_positions.bias.weight",),
    "tisa": ("layer_score.amplitude", "layer_score.sharpness", "layer_score.centre"),
    "tisa-ape": ("layer_score.amplitude", "layer_score.sharpness", "layer_score.centre"),
    "tupe-r": ("shared_positions.relative.bias.weight",),
}
# Vectors in the hidden or head space, decayed as BERT decays its position embeddings.
POSITIONAL_DECAYED = {
    "bert-a": ("position_embeddings.weight",),
    "shaw": ("layer_score.keys.weight",),
    "tupe-a": ("shared_positions.table.weight", "shared_positions.theta"),
    "tupe-r": ("shared_positions.table.weight", "shared_positions.query.weight"),
}
BERT_RULE = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")


def zoo(name: str) -> nn.Module:
    torch.manual_seed(0)
    return PEForMaskedLM(config_for(name, "tiny", vocab_size=64))


def undecayed(model: nn.Module) -> set[str]:
    """Names in the optimizer's weight-decay-0 group, read from the optimizer itself."""
    optimizer = build_optimizer(model, PretrainSettings(steps=1))
    names = {id(p): n for n, p in model.named_parameters()}
    groups = [g for g in optimizer.param_groups if g["weight_decay"] == 0.0]
    assert len(groups) == 1 and len(optimizer.param_groups) == 2
    return {names[id(p)] for p in groups[0]["params"]}


@pytest.mark.parametrize("name", sorted(NAMED_MODELS))
def test_every_zoo_model_leaves_its_positional_tables_and_scalars_undecayed(name):
    model = zoo(name)
    free = undecayed(model)
    by_bert = {n for n, _ in model.named_parameters() if n.endswith(BERT_RULE)}
    assert by_bert <= free  # biases and norms, as before
    positional = {
        n for n, _ in model.named_parameters() if n.endswith(POSITIONAL_NO_DECAY.get(name, ()))
    }
    if name in POSITIONAL_NO_DECAY:
        assert positional  # one per layer or one for the model
    assert free - by_bert == positional
    decayed = {
        n for n, _ in model.named_parameters() if n.endswith(POSITIONAL_DECAYED.get(name, ()))
    }
    assert not decayed & free


@pytest.mark.parametrize("name", sorted(NAMED_MODELS))
def test_every_scalar_and_logit_parameter_of_a_scheme_module_is_undecayed(name):
    from posharness.pe.kinds import PositionalEncoding

    model = zoo(name)
    free = undecayed(model)
    logit_kinds = {registry.LOGIT_TERM, registry.POSITIONAL_ATTENTION}
    for prefix, module in model.named_modules():
        if not isinstance(module, PositionalEncoding):
            continue
        for local, parameter in module.named_parameters(recurse=False):
            full = f"{prefix}.{local}"
            if parameter.ndim <= 1 or module.kind in logit_kinds:
                assert full in free, full


def test_the_rule_by_names_is_the_one_before_issue_39():
    model = zoo("t5")
    names = decay_exempt(model, "names")
    assert names == {n for n, _ in model.named_parameters() if n.endswith(BERT_RULE)}
    assert "pe.shared_positions.bias.weight" in decay_exempt(model)
    assert "pe.shared_positions.bias.weight" not in names


class PluginBias(nn.Module):
    """A plugin's model as a researcher writes one, no registration needed for the rule."""

    def __init__(self):
        from posharness.pe.kinds import InputEmbedding, LogitTerm, QueryKeyTransform

        super().__init__()

        class ClippedBias(LogitTerm):
            def __init__(self):
                super().__init__()
                self.table = nn.Embedding(9, 2)  # one logit per head and clipped offset

        class LearnedScale(QueryKeyTransform):
            def __init__(self):
                super().__init__()
                self.zeta = nn.Parameter(torch.ones(()))  # xPos-like, learnable
                self.frequencies = nn.Parameter(torch.ones(2, 4))  # per head and pair

        class Positions(InputEmbedding):
            def __init__(self):
                nn.Module.__init__(self)
                self.table = nn.Embedding(16, 8)
                self.gain = nn.Parameter(torch.ones(1))

        self.bias, self.scale, self.positions = ClippedBias(), LearnedScale(), Positions()
        self.dense = nn.Linear(8, 8)


def test_a_plugin_pe_is_covered_by_its_kind():
    model = PluginBias()
    assert undecayed(model) == {
        "bias.table.weight",  # a logit term's table
        "scale.zeta",  # a query/key transform's scalar and frequencies
        "scale.frequencies",
        "positions.gain",  # a one-dimensional positional parameter of any kind
        "dense.bias",
    }


def test_a_checkpoint_from_before_the_rule_resumes_only_under_it():
    saved = PretrainSettings(steps=4).recipe()
    del saved["no_decay"]  # as written before the setting existed
    assert PretrainSettings.saved_recipe(saved)["no_decay"] == "names"
    assert PretrainSettings.saved_recipe(saved)["steps"] == 4
    with pytest.raises(OptionError, match="no_decay 'x': choose positional or names"):
        PretrainSettings(steps=4, no_decay="x")
