"""BERT's reference line for Figure 3 / Figure A1: the paper's value and the harness's own.

Chen et al. (2023) give BERT's locality as "around 0.2" (§3.3.1, the line drawn in
Figure 3) and 0.17 with symmetry 1.0 (§3.3.2, the target of BERT-A*). Beside them the
sweep records what the harness measured on the pretrained model it ships, read from that
model's committed board (``leaderboards/minilm.json``, task ``locality_symmetry``, the model
as trained), so the number is the board's and never retyped. MiniLM (all-MiniLM-L6-v2) is
a 6-layer BERT-style model, not BERT-base, and its maps are measured at the geometry
task's lengths, not at the sweep's table length: the line is named for what it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PAPER = {
    "name": "BERT (Chen et al. 2023)",
    "locality": 0.2,  # §3.3.1 "around 0.2"; §3.3.2 gives 0.17
    "locality_bert_a_star": 0.17,
    "symmetry": 1.0,  # §3.3.2 (Eq. 7's scale)
}
BOARD = Path("leaderboards") / "minilm.json"
_METRICS = ("locality", "symmetry", "symmetry_magnitude")


def measured(board: Path = BOARD) -> dict[str, Any]:
    """The harness-measured geometry of the shipped pretrained model, or why there is none."""
    if not board.is_file():
        return {"name": "MiniLM (harness)", "note": f"not measured: {board} absent"}
    data = json.loads(board.read_text())
    for row in data.get("rows", []):
        scores = row.get("scores")
        if row.get("mode") == "both" and isinstance(scores, dict):
            values = {m: scores.get(f"locality_symmetry/{m}", {}).get("mean") for m in _METRICS}
            if values["locality"] is not None:
                return {
                    "name": f"{row['model']} (harness-measured, {row.get('definition', '')})",
                    "source": str(board),
                    **values,
                }
    return {"name": "MiniLM (harness)", "note": f"not measured: no locality row in {board}"}
