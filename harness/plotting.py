"""matplotlib for every family: headless, imported only when a figure is drawn, and
figures written atomically (a temporary name renamed into place), never half a PNG."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.io import atomic_target


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, **savefig) -> Path:
    """Write the figure under a temporary name and rename it; close it either way."""
    try:
        with atomic_target(path) as tmp:
            fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **savefig)
    finally:
        pyplot().close(fig)
    return path


@dataclass(frozen=True)
class ColourScale:
    """Colour limits of a heatmap and what they cut off."""

    vmin: float
    vmax: float
    cmap: str
    clipped: int  # cells outside [vmin, vmax], drawn in the end colours
    cells: int

    @property
    def note(self) -> str:
        """What a reader must know when cells were clipped, for a title or colour bar."""
        if not self.clipped:
            return ""
        return (
            f"colour clipped to [{self.vmin:.3g}, {self.vmax:.3g}]: "
            f"{self.clipped} of {self.cells} cells beyond"
        )


def robust_scale(values: Any, low: float = 0.01, high: float = 0.99) -> ColourScale:
    """Colour limits at quantiles instead of the extremes.

    One outlier flattens a linear scale: position 0's norm in the Gram matrix of learned
    absolute position embeddings (``E_P E_Pᵀ``, Wang et al. 2021) or the [CLS]/[SEP]
    columns that attention sinks into (Clark et al. 2019) would otherwise take the whole
    colour range and leave every other cell one colour. Signed values (a positional term,
    a Gram matrix with negative inner products) get limits symmetric around 0 and a
    diverging colour map, so 0 keeps one colour across panels.
    """
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    finite = array[np.isfinite(array)]
    if finite.size == 0:
        return ColourScale(0.0, 1.0, "viridis", 0, int(array.size))
    if finite.min() < 0 < finite.max():
        limit = float(np.quantile(np.abs(finite), high))
        if limit <= 0:
            limit = float(np.abs(finite).max())
        vmin, vmax, cmap = -limit, limit, "RdBu_r"
    else:
        vmin, vmax = (float(q) for q in np.quantile(finite, [low, high]))
        if vmin >= vmax:  # (nearly) constant: the quantiles say nothing
            vmin, vmax = float(finite.min()), float(finite.max())
        cmap = "viridis"
    clipped = int(((finite < vmin) | (finite > vmax)).sum())
    return ColourScale(vmin, vmax, cmap, clipped, int(finite.size))
