"""A zoo model's absolute position table, found wherever its scheme keeps it, so the tasks
that read a table (``position_properties``'s ``table_*``, ``toeplitz``'s Gram matrix) see
it exactly as they see a Hugging Face one (``models/hf/position_table.py``):

* the input embedding added to the word embeddings (``embeddings.position_embeddings``):
  the learned table of ``ape`` (BERT-A) and of ``absolute="learned"`` combinations
  (``bert-r``, ``tisa-ape``), or the fixed sinusoids of ``sinusoidal`` (Vaswani et al.
  2017, §3.5) evaluated at positions 0 … max_position_embeddings − 1, the rows a frozen
  sinusoidal Hugging Face table (DistilBERT's) holds;
* TUPE's p (Ke et al. 2021, Eq. 8), which never reaches the input: it lives in the untied
  positional term, shared by the heads and layers (their paragraph "The multi-head
  version, parameter sharing, and efficiency").

Raw rows, as the Hugging Face lookup returns BERT's: no LayerNorm, although TUPE applies one
"on p_i whenever it is used" (their note on layer normalization); what Eq. 8 makes of LN(p)
is the positional term.
No zoo scheme has both an input table and TUPE's (the configuration refuses the pair).
"""

from __future__ import annotations

from typing import Any


def position_table(model: Any) -> Any:
    """The table's rows for positions 0, 1, … as float32 on the CPU, or None without one."""
    import torch

    from posharness.models.zoo.schemes.tupe import TupeScore

    rows = None
    embedding = getattr(model.embeddings, "position_embeddings", None)
    if embedding is not None:
        weight = model.embeddings.word_embeddings.weight
        positions = torch.arange(model.config.max_position_embeddings, device=weight.device)
        with torch.no_grad():
            rows = embedding(positions.unsqueeze(0))[0]  # the module itself: no dtype cast
    elif isinstance(model.shared_positions, TupeScore):
        rows = model.shared_positions.table.weight
    return None if rows is None else rows.detach().float().cpu()
