"""The position stream of one layer: what every input-added absolute PE split rests on.

With u_t the layer's attention input at absolute position t with content marginalised
(docs/modes.md, "positional-stream") and ū its mean over t,

    delta_ij = q(u_i)·k(u_j)·scale          gamma_ij = q(x_i − u_i + ū)·k(x_j − u_j + ū)·scale

and by linearity gamma needs only the projected q, k minus W(u_t − ū) (the projection
bias cancels). Shared by the absolute family and MPNet's input embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from posharness.base.errors import OptionError

if TYPE_CHECKING:
    import torch
    from torch import nn


def _heads(flat: torch.Tensor, heads: int) -> torch.Tensor:
    """[T, H*d] -> [H, T, d]."""
    return flat.view(flat.shape[0], heads, -1).transpose(0, 1).contiguous()


@dataclass(frozen=True)
class LayerStream:
    """Per-position projections of one layer's u_t, each [H, T, d], float32.

    Indexed by slot in the batch: slot equals absolute position for unpadded or
    right-padded batches (every tokenizer of these families pads on the right).
    """

    q_pos: torch.Tensor  # q(u_t), projection bias included
    k_pos: torch.Tensor
    q_shift: torch.Tensor  # W_q (u_t − ū), no bias
    k_shift: torch.Tensor

    @classmethod
    def build(cls, query: nn.Linear, key: nn.Linear, heads: int, u: torch.Tensor) -> LayerStream:
        import torch

        with torch.no_grad():
            u = u.float()
            shift = u - u.mean(dim=0, keepdim=True)
            tables = {}
            for name, linear in (("q", query), ("k", key)):
                weight = linear.weight.float()
                bias = linear.bias.float() if linear.bias is not None else 0.0
                tables[f"{name}_pos"] = _heads(u @ weight.T + bias, heads)
                tables[f"{name}_shift"] = _heads(shift @ weight.T, heads)
        return cls(**tables)

    @property
    def length(self) -> int:
        return int(self.q_pos.shape[1])

    def check(self, length: int, what: str = "a batch") -> None:
        if length > self.length:
            raise OptionError(
                f"{what} of {length} tokens exceeds the {self.length} positions the "
                f"positional statistics cover: pass --model-arg reference_length={length} "
                "(or more)"
            )

    def positional_qk(
        self, n: int, m: int, like: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """q(u_i) for i < n and k(u_j) for j < m, [1, H, n | m, d]: delta's two factors."""
        self.check(max(n, m))
        q = self.q_pos[:, :n].to(device=like.device, dtype=like.dtype)
        k = self.k_pos[:, :m].to(device=like.device, dtype=like.dtype)
        return q.unsqueeze(0), k.unsqueeze(0)

    def delta(self, n: int, m: int, like: torch.Tensor, scaling: float) -> torch.Tensor:
        """q(u_i)·k(u_j)·scaling: [1, H, n, m], content-free by construction."""
        import torch

        q, k = self.positional_qk(n, m, like)
        return torch.matmul(q, k.transpose(-1, -2)) * scaling

    def content(self, query: torch.Tensor, key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """q(x − u + ū) and k(x − u + ū) from the projected q, k of a batch."""
        n, m = query.shape[-2], key.shape[-2]
        self.check(max(n, m))
        q_shift = self.q_shift[:, :n].to(device=query.device, dtype=query.dtype)
        k_shift = self.k_shift[:, :m].to(device=key.device, dtype=key.dtype)
        return query - q_shift, key - k_shift
