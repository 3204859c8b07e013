"""Fine-tuning: GLUE, SentEval transfer and SNLI with the papers' protocols, in any
attention mode (a model fine-tuned in ``positional`` mode is Chen et al.'s BERT-p).
See docs/tasks/finetune.md.

Adding a dataset is one entry in ``data/catalogue.py`` (where its files are and how they
read) and one in ``profiles.py`` (what is measured): every profile is registered here.
"""

from __future__ import annotations

from functools import partial

from posharness.plugins import tasks
from posharness.tasks.finetune.profiles import GROUPS, PROFILES
from posharness.tasks.finetune.task import FineTuneTask

for _name, _profile in PROFILES.items():
    tasks.add(_name, partial(FineTuneTask, _profile))
for _group, _members in GROUPS.items():
    tasks.add_group(_group, _members)
