"""XLNet: Transformer-XL relative attention with learned global biases (Yang et al. 2019).

The content stream's logit (Dai et al. 2019 §3.3; Yang et al. 2019 §2.5 adds the segment
term) is

    A_ij = [ (q_i + u)·k_j  +  (q_i + v)·W_R r_(i-j)  +  (q_i + s)·e_(s_ij) ] / sqrt(d)
             ac ("content")    bd ("position")           ef ("segment")

with u = ``r_w_bias``, v = ``r_r_bias``, s = ``r_s_bias``, W_R = the module's ``r``
projection, r_(i-j) the sinusoidal relative encodings the model builds once per forward
(``relative_positional_encoding``, which honours ``clamp_len`` and ``bi_data``) and e the
two ``seg_embed`` rows (same / different segment). XLNet does not go through
transformers' ``AttentionInterface``, so :class:`XLNetSplit` rebinds each
``XLNetRelativeAttention`` instance's ``rel_attn_core`` and picks the logits there.

Layout. The model keeps activations time-first (``q_head`` is [qlen, bsz, H, d], the
projected relative encodings [R, bsz, H, d] over R offsets) but scores its logits as
``bnij`` = [B, H, i, j] before ``rel_shift_bnij`` aligns column j with key j. Every
``Split`` recorded here and the logits next to it are in that post-shift [B, H, n, m]
layout, the one ``Split`` documents, and the attentions ``XLNetModel`` returns are
permuted back to it as well.

Masking is the model's own: ``attn_score - 1e30 * mask`` (65500 in float16), applied in
every mode, so a real query gives padding exactly zero weight. The model's content-stream
mask leaves each token's own position open (``non_tgt_mask``), so a *padding* query still
attends to itself; that row is discarded downstream and is left as the model has it.
"""

from __future__ import annotations

import types
from functools import cached_property
from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import Split, choose_scores, module_mode, runs_fused
from posharness.models.decompose.fused import Fused, fused_attend, without_gamma
from posharness.models.decompose.mode_split import (
    Definition,
    Reference,
    base_model,
    install_once,
)

if TYPE_CHECKING:
    import torch
    from torch import nn

DEFINITION_ATTR = "posharness_xlnet_definition"
_ORIGINAL_CORE = "posharness_original_rel_attn_core"

CODE_GROUPING = Definition(
    name="code-grouping",
    description=(
        "the code's own grouping: gamma = (q+u)·k, delta = (q+v)·W_R r_(i-j), "
        "residual = segment term (q+s)·e_(s_ij)"
    ),
    exact=True,
    content_free_delta=False,
)
CONTENT_FREE = Definition(
    name="content-free",
    description=(
        "gamma = (q+u)·k, delta = v·W_R r_(i-j) (content-free), "
        "residual = q·W_R r_(i-j) + segment term"
    ),
    exact=True,
    content_free_delta=True,
)


def content_free_delta(module: nn.Module, k_head_r: torch.Tensor, qlen: int, klen: int) -> Any:
    """Scaled v·W_R r_(i-j) in [B, H, qlen, klen]: the only content-free part of bd.

    ``k_head_r`` is W_R r for every relative offset, [R, B, H, d]. The bias v
    meets each offset once, giving a vector per head that the model's own
    ``rel_shift_bnij`` turns into the Toeplitz matrix, exactly as it shifts bd.
    """
    import torch

    per_offset = torch.einsum("nd,jbnd->bnj", module.r_r_bias, k_head_r)
    rows = per_offset[:, :, None, :].expand(-1, -1, qlen, -1)
    return module.rel_shift_bnij(rows, klen=klen) * module.scale


class _Terms:
    """The logit groups of one call, each computed at most once and shared by both/split."""

    def __init__(self, module: Any, q_head: Any, k_head_h: Any, k_head_r: Any, seg_mat: Any):
        self.module, self.q_head, self.k_head_h = module, q_head, k_head_h
        self.k_head_r, self.seg_mat = k_head_r, seg_mat
        self.qlen, self.klen = int(q_head.shape[0]), int(k_head_h.shape[0])

    def _position(self, query: Any) -> Any:
        import torch

        raw = torch.einsum("ibnd,jbnd->bnij", query, self.k_head_r)
        return self.module.rel_shift_bnij(raw, klen=self.klen)

    @cached_property
    def ac(self) -> Any:
        import torch

        return torch.einsum("ibnd,jbnd->bnij", self.q_head + self.module.r_w_bias, self.k_head_h)

    @cached_property
    def bd(self) -> Any:
        return self._position(self.q_head + self.module.r_r_bias)

    @cached_property
    def ef(self) -> Any:
        """The segment term, or None when the model was given no ``token_type_ids``."""
        import torch

        if self.seg_mat is None:
            return None
        m = self.module
        per_segment = torch.einsum("ibnd,snd->ibns", self.q_head + m.r_s_bias, m.seg_embed)
        return torch.einsum("ijbs,ibns->bnij", self.seg_mat, per_segment)

    def both(self) -> Any:
        """The model's logits, summed in the model's own order."""
        ef = 0 if self.ef is None else self.ef
        return (self.ac + self.bd + ef) * self.module.scale

    def delta(self, definition: Definition) -> Any:
        if definition.name == CONTENT_FREE.name:
            return content_free_delta(self.module, self.k_head_r, self.qlen, self.klen)
        return self.bd * self.module.scale

    def split(self, definition: Definition) -> Split:
        scale = self.module.scale
        gamma = self.ac * scale
        if definition.name == CONTENT_FREE.name:
            residual = self._position(self.q_head)
            if self.ef is not None:
                residual = residual + self.ef
            return Split(gamma=gamma, delta=self.delta(definition), residual=residual * scale)
        residual = None if self.ef is None else self.ef * scale
        return Split(gamma=gamma, delta=self.delta(definition), residual=residual)

    def fused(self, mode: Mode, definition: Definition) -> Fused:
        """The mode as SDPA inputs in [B, H, n, d]: ac is (q+u)·k in the kernel, bd + ef
        (both) or delta (positional, zero q and k) the additive bias."""
        query = (self.q_head + self.module.r_w_bias).permute(1, 2, 0, 3)
        key = self.k_head_h.permute(1, 2, 0, 3)
        if mode is Mode.CONTEXTUAL:
            return Fused(query, key)
        if mode is Mode.POSITIONAL:
            return without_gamma(query, key, self.delta(definition))
        bias = self.bd if self.ef is None else self.bd + self.ef
        return Fused(query, key, bias * self.module.scale)


def _rel_attn_core(
    self: Any,
    q_head: torch.Tensor,
    k_head_h: torch.Tensor,
    v_head_h: torch.Tensor,
    k_head_r: torch.Tensor,
    seg_mat: torch.Tensor | None = None,
    attn_mask: torch.Tensor | None = None,
    output_attentions: bool = False,
) -> Any:
    """``XLNetRelativeAttention.rel_attn_core`` with the logits chosen by the module's mode.

    Same signature and return as the original; mask, softmax, dropout and the weighted sum
    are the model's (or, with no weights to return, one SDPA call on the same terms).
    Two-stream calls (``perm_mask`` / ``target_mapping``, pretraining and generation)
    reach this too and get the same treatment; encoder use has only the content stream.
    """
    import torch

    terms = _Terms(self, q_head, k_head_h, k_head_r, seg_mat)
    definition: Definition = getattr(self, DEFINITION_ATTR, CODE_GROUPING)
    mask = None
    if attn_mask is not None:
        big = 65500 if attn_mask.dtype == torch.float16 else 1e30
        mask = -big * torch.einsum("ijbn->bnij", attn_mask)
    if runs_fused(self, output_attentions):
        fused = terms.fused(module_mode(self), definition)
        value = v_head_h.permute(1, 2, 0, 3)
        context = fused_attend(self, fused, value, mask, self.scale, self.dropout.p)
        return context.transpose(0, 1)  # [B, n, H, d] -> XLNet's time-first [n, B, H, d]
    attn_score = choose_scores(self, terms.both, lambda: terms.split(definition))
    if mask is not None:
        attn_score = attn_score + mask
    attn_prob = torch.nn.functional.softmax(attn_score, dim=3)
    attn_prob = self.dropout(attn_prob)
    attn_vec = torch.einsum("bnij,jbnd->ibnd", attn_prob, v_head_h)
    if output_attentions:
        return attn_vec, torch.einsum("bnij->ijbn", attn_prob)
    return attn_vec


class XLNetSplit:
    """XLNet's relative attention; both definitions are exact and need no corpus.

    ``code-grouping`` (default) takes the code's three einsums as they stand. Its delta,
    (q+v)·W_R r, depends on the query, so positional mode still sees token content. Its
    residual, the segment term, is dropped by both split modes. When every token carries
    one segment id (no ``token_type_ids``, or all equal) the term is constant along each
    row and softmax ignores it. The XLNet tokenizer gives ``<cls>`` segment id 2
    (padding 3), so with its ``token_type_ids`` the ``<cls>`` column differs from the rest
    of its row.

    ``content-free`` keeps only v·W_R r in delta: per layer and head a Toeplitz matrix
    (constant beyond ``clamp_len``) that no input changes. q·W_R r moves to the residual
    next to the segment term.
    """

    name = "XLNet relative (Transformer-XL)"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    option = "xlnet"
    definitions = (CODE_GROUPING, CONTENT_FREE)
    uses_attention_interface = False

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.rel_attn for layer in base_model(model).layer]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        """The attention modules: their first forward argument ``h`` is the layer input.

        Queries, keys and values are all projected from it (no memory in encoder use), so
        it is what a mean-input statistic would need. It is time-first,
        [qlen, bsz, d_model], unlike the batch-first layout other families hand to
        ``mean_attention_inputs``. No XLNet definition needs a reference corpus.
        """
        return self.attention_modules(model)

    def install(self, model: nn.Module) -> None:
        def install(module: nn.Module) -> None:
            setattr(module, _ORIGINAL_CORE, module.rel_attn_core)
            module.rel_attn_core = types.MethodType(_rel_attn_core, module)
            setattr(module, DEFINITION_ATTR, self.definitions[0])

        install_once(self.attention_modules(model), install)

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        """Record the definition on each module: every table is rebuilt per forward anyway."""
        for module in self.attention_modules(model):
            setattr(module, DEFINITION_ATTR, definition)

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        """Scaled v·W_R r_(i-j) per layer for n = ``length`` tokens and no memory, [L, H, n, n].

        This is the content-free definition's delta, built from the model's own
        ``relative_positional_encoding`` (so ``clamp_len`` and ``attn_type`` apply). With
        ``bi_data`` the model feeds forward encodings to the first half of a batch and
        backward ones to the second; these are the forward ones. Under ``code-grouping``
        this is only the content-free part of delta; that definition's full delta
        (q+v)·W_R r depends on the query.
        """
        import torch

        base = base_model(model)
        modules = self.attention_modules(model)
        device = modules[0].r.device
        with torch.no_grad():
            encodings = base.relative_positional_encoding(length, length, bsz=None, device=device)
            encodings = encodings[:, :1].to(modules[0].r.dtype)  # forward direction, [R, 1, D]
            layers = []
            for module in modules:
                k_head_r = torch.einsum("ibh,hnd->ibnd", encodings, module.r)
                layers.append(content_free_delta(module, k_head_r, length, length)[0])
        return torch.stack(layers).float().cpu()
