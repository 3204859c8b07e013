"""Task heads: masked language modelling (pretraining) and sequence classification."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers.activations import ACT2FN
from transformers.modeling_outputs import MaskedLMOutput, SequenceClassifierOutput

from posharness.models.zoo.encoder.config import PEConfig
from posharness.models.zoo.encoder.modeling import PEModel, PEPreTrainedModel


class PEMaskedLMHead(nn.Module):
    """BERT's MLM head: dense + activation + LayerNorm, then the decoder tied to the word
    embeddings with an output-only bias."""

    is_mlm_head = True

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self.transform = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = ACT2FN[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.LayerNorm(self.activation(self.transform(hidden)))) + self.bias


class PEForMaskedLM(PEPreTrainedModel):
    _tied_weights_keys = {"cls.decoder.weight": "pe.embeddings.word_embeddings.weight"}

    def __init__(self, config: PEConfig) -> None:
        super().__init__(config)
        self.pe = PEModel(config, add_pooling_layer=False)
        self.cls = PEMaskedLMHead(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.cls.decoder

    def set_output_embeddings(self, value: nn.Linear) -> None:
        self.cls.decoder = value

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        return_dict: bool = True,
        predict_only_masked: bool = False,
        **kwargs: object,
    ) -> MaskedLMOutput | tuple:
        """``labels`` [B, n]: token ids to predict, -100 where no loss is taken.

        ``predict_only_masked`` (with ``labels``): the head runs on the masked positions
        alone, and ``logits`` is [masked, vocab] in row-major order of the positions.
        Cramming's "sparse prediction" (Geiping & Goldstein 2022, §4.3): the same loss,
        without the vocabulary projection of the ~85 % of positions that carry none."""
        out = self.pe(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        hidden = out.last_hidden_state
        if predict_only_masked and labels is not None:
            chosen = labels != -100
            hidden, labels = hidden[chosen], labels[chosen]
        logits = self.cls(hidden)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.shape[-1]).float(), labels.view(-1), ignore_index=-100
            )
        result = MaskedLMOutput(
            loss=loss, logits=logits, hidden_states=out.hidden_states, attentions=out.attentions
        )
        return result if return_dict else result.to_tuple()


class PEForSequenceClassification(PEPreTrainedModel):
    """Pooler (tanh on [CLS]) + dropout + linear. ``num_labels == 1`` is regression (MSE),
    otherwise cross-entropy over ``num_labels`` classes."""

    def __init__(self, config: PEConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.pe = PEModel(config, add_pooling_layer=True)
        rate = config.classifier_dropout
        self.dropout = nn.Dropout(config.hidden_dropout_prob if rate is None else rate)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        return_dict: bool = True,
        **kwargs: object,
    ) -> SequenceClassifierOutput | tuple:
        out = self.pe(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        logits = self.classifier(self.dropout(out.pooler_output))
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1).float(), labels.float())
            else:
                loss = F.cross_entropy(logits.float(), labels.view(-1).long())
        result = SequenceClassifierOutput(
            loss=loss, logits=logits, hidden_states=out.hidden_states, attentions=out.attentions
        )
        return result if return_dict else result.to_tuple()
