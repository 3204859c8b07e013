"""SentEval probing (Conneau et al. 2018): ten classification tasks on frozen sentence
vectors, per layer and attention mode, as Chen et al.'s Table 9. See docs/tasks/senteval.md.
"""

from __future__ import annotations

from functools import partial

from posharness.plugins import tasks
from posharness.tasks.senteval.catalog import GROUP, TASKS
from posharness.tasks.senteval.task import ProbingTaskRunner

for _task in TASKS:
    tasks.add(_task.name, partial(ProbingTaskRunner, _task.name))
tasks.add_group(GROUP, [t.name for t in TASKS])
