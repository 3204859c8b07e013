"""Attention geometry: how local, how symmetric and how Toeplitz the positional attention
is (Chen et al. 2023 §3; Wennberg & Henter 2021), measured by identical-word probing.
See docs/tasks/geometry.md.
"""

from __future__ import annotations

from posharness.plugins import tasks
from posharness.tasks.geometry.length_geometry import LengthGeometry
from posharness.tasks.geometry.locality_symmetry import LocalitySymmetry
from posharness.tasks.geometry.position_properties import PositionProperties
from posharness.tasks.geometry.toeplitz import Toeplitz

TASKS = {"locality_symmetry": LocalitySymmetry, "toeplitz": Toeplitz}
GROUPS = {"geometry": tuple(TASKS)}
# Wang et al.'s properties read no probe; kept out of the ``geometry`` group so the group's
# runs (and the boards built from them) stay as they were.
TASKS["position_properties"] = PositionProperties
# Geometry over several lengths: a probe per length, not one of the group's two tasks.
TASKS["length_geometry"] = LengthGeometry

for _name, _task in TASKS.items():
    tasks.add(_name, _task)
for _group, _members in GROUPS.items():
    tasks.add_group(_group, _members)
