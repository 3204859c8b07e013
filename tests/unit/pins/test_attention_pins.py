"""The zoo's attention formulas recomputed from their papers, by hand, from the model's own
q and k (read off the projections with hooks), never from the attention code's terms.

* xPos (Sun et al. 2022, §3.2): each role on its own — a query at n is RoPE's rotation times
  zeta_i^(+n/B), a key at m times zeta_i^(-m/B), zeta_i = (2i/d + gamma) / (1 + gamma);
* BERT-A* (Chen et al. 2023, App. A.2, Listing 1): softmax(q kᵀ / √d + table − 10000·mask)
  on a padded batch, the table's top-left n x n block added in each layer and head;
* the draft's ALiBi rows (Chen et al., ICLR draft §5 and App. B.5): softmax_j(−m_h |i − j|)
  over each sequence's real keys, m_h = 2^(−8h/H) (Press et al. 2022), added to the scaled
  logits (``alibi-softmax``) or used as PA of CA(PA(X)) (``alibi-seq``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posharness.models.zoo.encoder import PEModel, config_for
from posharness.models.zoo.schemes.xpos import XPos

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB, HEADS, LENGTH = 50, 4, 9

# -- xPos, one role at a time -------------------------------------------------------------

THETA, GAMMA, BASE = 10000.0, 0.4, 512.0


def xpos_by_hand(x: np.ndarray, positions: np.ndarray, sign: float) -> np.ndarray:
    """Rotate pair (i, i + d/2) as the complex number x_i + j·x_{i+d/2} by p·theta_i, then
    scale it by zeta_i^(sign·p/B); x [n, d], float64."""
    half = x.shape[-1] // 2
    theta = THETA ** (-np.arange(half) / half)
    zeta = (2 * np.arange(half) / x.shape[-1] + GAMMA) / (1 + GAMMA)
    z = (x[:, :half] + 1j * x[:, half:]) * np.exp(1j * positions[:, None] * theta)
    z = z * zeta ** (sign * positions[:, None] / BASE)
    return np.concatenate([z.real, z.imag], axis=-1)


@pytest.mark.parametrize(("role", "sign"), [("query", 1.0), ("key", -1.0)])
def test_xpos_scales_a_query_by_zeta_to_plus_n_over_b_and_a_key_to_minus(role: str, sign: float):
    # far positions make the scale large: zeta_0^(±1500/512) is 0.026 or 39
    positions = np.array([0, 1, 7, 300, 900, 1500])
    x = torch.randn(1, 1, len(positions), 8, generator=torch.Generator().manual_seed(4))
    scheme = XPos(config_for("xpos", "tiny"), THETA, GAMMA, BASE)
    got = scheme.transform(x, torch.from_numpy(positions)[None], role)[0, 0].double().numpy()
    expected = xpos_by_hand(x[0, 0].double().numpy(), positions.astype(float), sign)
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=1e-6)  # float32 angles
    # the scale alone: the norm of each rotated pair grows or shrinks by zeta^(±p/B)
    x = x[0, 0].numpy()
    pair_norm = np.hypot(got[:, 0], got[:, 4]) / np.hypot(x[:, 0], x[:, 4])
    zeta0 = GAMMA / (1 + GAMMA)
    np.testing.assert_allclose(pair_norm, zeta0 ** (sign * positions / BASE), rtol=1e-5)


# -- a padded batch and the model's own q, k ---------------------------------------------


def tiny(name: str) -> PEModel:
    torch.manual_seed(0)
    config = config_for(name, "tiny", vocab_size=VOCAB, num_attention_heads=HEADS)
    return PEModel(config).eval()


def padded_batch() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(5, VOCAB, (2, LENGTH), generator=torch.Generator().manual_seed(5))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0  # the second sequence has 6 real tokens, then padding
    return ids, mask


def run_with_projections(model: PEModel, ids, mask):
    """The attention weights of every layer and the q, k each layer's projections made."""
    seen: dict[tuple[int, str], torch.Tensor] = {}
    hooks = []
    for index, layer in enumerate(model.layer):
        attention = layer.attention
        for role in ("query", "key"):
            module = getattr(attention, role)

            def keep(_module, _inputs, output, key=(index, role)):
                seen[key] = output.detach()

            hooks.append(module.register_forward_hook(keep))
    try:
        with torch.no_grad():
            out = model(ids, mask, output_attentions=True)
    finally:
        for hook in hooks:
            hook.remove()
    return out.attentions, seen


def heads(x: torch.Tensor) -> np.ndarray:
    """[B, n, H·d] -> [B, H, n, d] in float64."""
    batch, n, width = x.shape
    return x.view(batch, n, HEADS, width // HEADS).transpose(1, 2).double().numpy()


def softmax(x: np.ndarray) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def padding_penalty(mask: torch.Tensor) -> np.ndarray:
    """−10000 on padding keys, [B, 1, 1, n] (BERT's extended attention mask)."""
    return -10000.0 * (1.0 - mask.double().numpy())[:, None, None, :]


def test_bert_a_star_attention_is_softmax_of_scaled_qk_plus_the_table_minus_the_mask():
    model = tiny("bert-a-star")
    with torch.no_grad():
        for layer in model.layer:  # a table no softmax could produce, distinct per head
            layer.attention.layer_score.table.normal_(0.0, 3.0)
    ids, mask = padded_batch()
    attentions, seen = run_with_projections(model, ids, mask)
    for index, layer in enumerate(model.layer):
        q, k = heads(seen[index, "query"]), heads(seen[index, "key"])
        table = layer.attention.layer_score.table.detach().double().numpy()[:, :LENGTH, :LENGTH]
        logits = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + table + padding_penalty(mask)
        got = attentions[index].double().numpy()
        np.testing.assert_allclose(got, softmax(logits), rtol=1e-4, atol=1e-6)
        assert np.all(got[1, :, :, 6:] < 1e-30)  # padding gets no weight


def alibi_rows(mask: torch.Tensor) -> np.ndarray:
    """softmax_j(−m_h |i − j|) over each sequence's real keys, 0 on padding: [B, H, n, n]."""
    slopes = 2.0 ** (-8.0 * np.arange(1, HEADS + 1) / HEADS)
    distance = np.abs(np.subtract.outer(np.arange(LENGTH), np.arange(LENGTH)))
    rows = np.zeros((len(mask), HEADS, LENGTH, LENGTH))
    for b, real in enumerate(mask.numpy().astype(bool)):
        for h, slope in enumerate(slopes):
            weights = np.exp(-slope * distance[:, real])
            rows[b, h][:, real] = weights / weights.sum(axis=-1, keepdims=True)
    return rows


def test_alibi_softmax_adds_the_softmaxed_biases_to_the_scaled_logits():
    model = tiny("alibi-softmax")
    ids, mask = padded_batch()
    attentions, seen = run_with_projections(model, ids, mask)
    delta = alibi_rows(mask)
    for index in range(len(model.layer)):
        q, k = heads(seen[index, "query"]), heads(seen[index, "key"])
        logits = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + delta + padding_penalty(mask)
        got = attentions[index].double().numpy()
        np.testing.assert_allclose(got, softmax(logits), rtol=1e-4, atol=1e-6)


def test_alibi_softmax_delta_is_the_softmax_of_minus_slope_times_distance():
    model = tiny("alibi-softmax")
    _, mask = padded_batch()
    score = model.layer[0].attention.layer_score
    key_mask = mask.bool()[:, None, None, :]
    delta = score(torch.arange(LENGTH)[None], key_mask).double().numpy()
    np.testing.assert_allclose(delta, alibi_rows(mask), rtol=1e-5, atol=1e-7)


def test_alibi_seq_positional_attention_is_the_softmax_of_minus_slope_times_distance():
    model = tiny("alibi-seq")
    model.set_attention_mode("positional")
    ids, mask = padded_batch()
    with torch.no_grad():
        out = model(ids, mask, output_attentions=True)
    for weights in out.attentions:
        np.testing.assert_allclose(weights.double().numpy(), alibi_rows(mask), rtol=1e-5, atol=1e-7)


def test_alibi_seq_content_attention_reads_pa_of_x():
    """CA(PA(X)): the positional rows mix the layer's input heads, then ordinary attention
    runs on the mixture (draft Eq. 10) — recomputed from the layer's input by hand."""
    model = tiny("alibi-seq")
    ids, mask = padded_batch()
    inputs: dict[int, torch.Tensor] = {}

    def keep_input(_module, args) -> None:
        inputs[0] = args[0].detach()

    hook = model.layer[0].attention.register_forward_pre_hook(keep_input)
    try:
        attentions, _ = run_with_projections(model, ids, mask)
    finally:
        hook.remove()
    attention = model.layer[0].attention
    mixed = alibi_rows(mask) @ heads(inputs[0])  # PA(X) per head, [B, H, n, d]
    source = torch.from_numpy(mixed).transpose(1, 2).flatten(-2).float()
    with torch.no_grad():
        q, k = heads(attention.query(source)), heads(attention.key(source))
    logits = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) + padding_penalty(mask)
    np.testing.assert_allclose(
        attentions[0].double().numpy(), softmax(logits), rtol=1e-4, atol=1e-6
    )
