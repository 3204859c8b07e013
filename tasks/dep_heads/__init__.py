"""Dependency heads: each attention head scored as a dependency parser per relation
(Clark et al. 2019 §4.2), in every attention mode (Chen et al. 2023 Table A3, Fig. 5).
See docs/tasks/dep_heads.md.
"""

from __future__ import annotations

from posharness.plugins import tasks
from posharness.tasks.dep_heads.task import DepHeads

TASKS = {"dep_heads": DepHeads}

for _name, _task in TASKS.items():
    tasks.add(_name, _task)
