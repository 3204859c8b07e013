"""Position arithmetic for schemes: offsets, T5 buckets, ALiBi slopes, rotations, sinusoids.

Every function takes ``positions`` [B or 1, n] (the model's position ids) rather than a
length, so a caller's ``position_ids`` move relative schemes exactly as they move a table.
Offsets follow the papers' convention k = j - i (key position minus query position).
Public through ``posharness.pe``: a plugin's scheme uses the arithmetic the built-ins use.
"""

from __future__ import annotations

import math

import torch


def relative_offsets(positions: torch.Tensor) -> torch.Tensor:
    """k[b, i, j] = p_j - p_i, [B or 1, n, n] long."""
    return positions.unsqueeze(-2) - positions.unsqueeze(-1)


def t5_buckets(
    offsets: torch.Tensor, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bidirectional T5 buckets of k = j - i (Raffel et al. 2020, as in their Mesh TF code).

    Half the buckets per direction (k > 0 in the upper half); within a half, the first
    ``half // 2`` distances get a bucket each and longer ones share logarithmic buckets up
    to ``max_distance``, beyond which all fall in the last. Bucket ``half`` (k > 0 at
    distance 0) can never occur: TUPE-R reuses it for the [CLS] row.
    """
    half = num_buckets // 2
    exact = half // 2
    distance = offsets.abs()
    scaled = torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact)
    far = (exact + (scaled * (half - exact)).long()).clamp(max=half - 1)
    return (offsets > 0).long() * half + torch.where(distance < exact, distance, far)


def alibi_slopes(heads: int) -> torch.Tensor:
    """m_h = 2^(-8h/H) for a power-of-two H (Press et al. 2022); otherwise the slopes of the
    nearest lower power of two followed by every other slope of the next power (their code).
    """

    def geometric(count: int) -> list[float]:
        return [2.0 ** (-8.0 * h / count) for h in range(1, count + 1)]

    lower = 2 ** int(math.floor(math.log2(heads)))
    slopes = geometric(lower) + geometric(2 * lower)[0::2][: heads - lower]
    return torch.tensor(slopes, dtype=torch.float32)


def rotary_tables(
    positions: torch.Tensor, head_size: int, theta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [B or 1, 1, n, head_size] of RoPE (Su et al. 2021), rotate-half pairing.

    Dimension m is paired with m + head_size/2 and turns by p * theta^(-2m/head_size), the
    Hugging Face (GPT-NeoX) layout.
    """
    half = head_size // 2
    inv_freq = theta ** (-torch.arange(half, dtype=torch.float32, device=positions.device) / half)
    return rotation_tables(positions, inv_freq)


def rotation_tables(
    positions: torch.Tensor, frequencies: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [B or 1, 1, n, 2 F] for angular ``frequencies`` [F] (rotate-half layout):
    any frequency schedule, the rotary one being theta^(-2m/d)."""
    angles = positions.to(torch.float32).unsqueeze(-1) * frequencies  # [B, n, F]
    angles = torch.cat([angles, angles], dim=-1).unsqueeze(1)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x R_p for x [B, H, n, d]: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)."""
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos.to(x.dtype) + turned * sin.to(x.dtype)


def sinusoidal_table(positions: torch.Tensor, size: int) -> torch.Tensor:
    """Vaswani et al. (2017): PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(...).

    Computed from the positions, so any length works (no table to outgrow).
    """
    pairs = torch.arange(0, size, 2, dtype=torch.float32, device=positions.device)
    angles = positions.to(torch.float32).unsqueeze(-1) / (10000.0 ** (pairs / size))
    table = torch.zeros(*positions.shape, size, device=positions.device)
    table[..., 0::2] = angles.sin()
    table[..., 1::2] = angles.cos()[..., : size // 2]
    return table
