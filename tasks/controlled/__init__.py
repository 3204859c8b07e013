"""Chen et al.'s controlled experiment (2023, §3.3.1; Figure 3 and Figure A1): a one-layer,
one-head encoder whose only attention is a fixed Eq. 8 table of chosen locality and symmetry,
over frozen static word vectors, trained as a sentence classifier on MR and SUBJ. Task
``chen_controlled``; commands ``posharness controlled sweep|report|train-vectors``. See
docs/fidelity.md ("Chen et al.'s controlled experiment").
"""

from __future__ import annotations

from posharness.plugins import tasks
from posharness.tasks.controlled.task import NAME, ControlledSweep

tasks.add(NAME, ControlledSweep)
