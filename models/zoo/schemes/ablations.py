"""The ablation of Chen et al.'s ICLR draft Table 7 that needs a scheme of its own.

Their Eq. 2 is BERT's first-layer logit with input-added positions,
alpha_ij = (x_i + p_i) W^Q ((x_j + p_j) W^K)^T / sqrt(d). App. B.5: "BERT-only-p ... the
contextual encodings x_i in Equation 2 are removed", so the logits are the
position-position term (p_i W^Q)(p_j W^K)^T / sqrt(d) alone, in every layer and during
pre-training; the words still reach the values. ("BERT-only-c", p_i removed, is a model
without positions: the zoo's ``nope``, registered under that name too.)

We take p as the layer-normed learned position rows and W^Q, W^K as each layer's own
projections with their biases — exactly the zoo's ``pp-term`` of a learned-absolute model
(docs/modes.md) — so BERT-only-p is BERT-A run in its positional mode, trained that way.
Its positional mode is therefore the model itself (exact), and it has no contextual mode:
its content query/key product was never trained.
"""

from __future__ import annotations

from posharness.models.zoo.schemes.absolute import LearnedAbsolute
from posharness.pe import register_pe


@register_pe("positions-only", version=1, variant=False)
class PositionsOnlyLogits(LearnedAbsolute):
    """Learned absolute positions at the input whose logits keep only the pp-term."""

    title = "learned absolute, logits from positions only (BERT-only-p)"
    absolute_name = ""
    content_logits = False
