"""Length generalisation: how an encoder behaves as its inputs grow, up to and past the
lengths it was trained on (issue 32). ``passkey``: LongEmbed's passkey retrieval (Zhu et
al. 2024); ``length_mlm``: masked-LM accuracy at multiples of the training
length; the group ``length`` runs both and ``length_geometry``. See docs/tasks/length.md.
"""

from __future__ import annotations

from posharness.plugins import tasks
from posharness.tasks.length.length_mlm import LengthMLM
from posharness.tasks.length.passkey import Passkey

TASKS = {"passkey": Passkey, "length_mlm": LengthMLM}

for _name, _task in TASKS.items():
    tasks.add(_name, _task)
# Every length task (length_geometry is the geometry family's). A model without a
# masked-LM head runs the other two: a group runs what each model can (harness/run/plan.py).
tasks.add_group("length", ("length_mlm", "passkey", "length_geometry"))
