"""matplotlib for every family: headless, imported only when a figure is drawn, figures
written atomically (a temporary name renamed into place), never half a PNG, and heatmap
colour scales that one outlier cannot flatten (``robust_scale``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError
from posharness.storage.io import atomic_target


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
    """Colour limits of a heatmap, its colour map, and the cells it leaves out of range."""

    vmin: float
    vmax: float
    cmap: str  # "RdBu_r" (diverging, 0 in white) for signed values, else "viridis"
    below: int  # finite cells under vmin, drawn in the lowest colour
    above: int  # finite cells over vmax, drawn in the highest colour
    cells: int  # finite cells in all

    @property
    def clipped(self) -> int:
        """How many cells lie beyond the limits (0: the scale shows every value)."""
        return self.below + self.above

    @property
    def extend(self) -> str:
        """``extend`` for ``Figure.colorbar``: an arrow on each clipped end."""
        if self.below and self.above:
            return "both"
        return "min" if self.below else "max" if self.above else "neither"

    @property
    def note(self) -> str:
        """What a reader must know when cells were clipped, for a subtitle or colour bar."""
        if not self.clipped:
            return ""
        return (
            f"colour clipped to [{self.vmin:.3g}, {self.vmax:.3g}]; "
            f"{self.clipped} of {self.cells} cells beyond"
        )

    def imshow_args(self) -> dict[str, Any]:
        """Keyword arguments that put an ``imshow`` on this scale."""
        return {"cmap": self.cmap, "vmin": self.vmin, "vmax": self.vmax}


def robust_scale(values: Any, *, tail: float = 0.02, fence: float = 3.0) -> ColourScale:
    """Colour limits that a few extreme cells cannot flatten.

    A linear scale from min to max hands one outlier the whole colour range: position 0's
    norm in the Gram matrix ``E_P E_Pᵀ`` of learned absolute position embeddings
    (Wennberg & Henter 2021, Fig. 1) or the [CLS]/[SEP] columns that attention sinks into
    (Clark et al. 2019) leave every other cell one flat colour. A cell is therefore drawn
    in the end colour (clipped) when it is both beyond Tukey's (1977) "far out" fence,
    ``fence`` IQRs outside the quartiles, and beyond the ``tail`` / ``1 - tail``
    quantile. The fence alone would saturate the whole local band of a peaked attention
    map (its values are far out of a bulk near 1/n); the quantile alone at 1 %/99 % would
    miss the two sink columns of a 128-position probe (1.6 % of the cells). Together at
    most ``tail`` of the cells are clipped on each side, and a matrix without outliers
    (uniform, Gaussian) is not clipped at all. When half the cells share one value (IQR
    0) the scale keeps the extremes. Signed values (a Gram matrix with negative inner
    products, delta logits) get limits symmetric around 0 and a diverging map, so 0 is
    one colour everywhere. Non-finite cells are ignored (imshow leaves them blank).
    """
    import numpy as np

    if not (0 <= tail < 0.5 and fence >= 0):
        raise OptionError(
            f"colour scale needs 0 <= tail < 0.5 and fence >= 0, got tail={tail}, fence={fence}"
        )
    array = np.asarray(values, dtype=np.float64)
    finite = array[np.isfinite(array)]
    if finite.size == 0:  # nothing to scale: imshow draws an empty (blank) image
        return ColourScale(0.0, 1.0, "viridis", 0, 0, 0)
    q_tail, first, third, q_head = (
        float(q) for q in np.quantile(finite, [tail, 0.25, 0.75, 1 - tail])
    )
    spread = third - first
    if spread > 0:
        inside = finite[(finite >= first - fence * spread) & (finite <= third + fence * spread)]
        vmin, vmax = min(float(inside.min()), q_tail), max(float(inside.max()), q_head)
    else:
        vmin, vmax = float(finite.min()), float(finite.max())
    cmap = "viridis"
    if finite.min() < 0 < finite.max():
        limit = max(-vmin, vmax)
        vmin, vmax, cmap = -limit, limit, "RdBu_r"
    below, above = int((finite < vmin).sum()), int((finite > vmax).sum())
    return ColourScale(vmin, vmax, cmap, below, above, int(finite.size))
