"""Word-swap probes on SNLI: Shuffle-3..6, Random and Shuffle-SR (Chen et al. 2023 §3.5,
Table 3), scored with the ``snli`` fine-tune task's classifier. See docs/tasks/shuffle.md.
"""

from __future__ import annotations

from functools import partial

from posharness.plugins import tasks
from posharness.tasks.shuffle.probes import PROBES
from posharness.tasks.shuffle.task import ShuffleTask

GROUPS = {"shuffle": PROBES}

for _probe in PROBES:
    tasks.add(_probe, partial(ShuffleTask, _probe))
for _group, _members in GROUPS.items():
    tasks.add_group(_group, _members)
