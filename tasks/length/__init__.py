"""Length generalisation: how an encoder behaves as its inputs grow, up to and past the
lengths it was trained on (issue 32). ``passkey``: LongEmbed's passkey retrieval (Zhu et
al. 2024). See docs/tasks/length.md.
"""

from __future__ import annotations

from posharness.plugins import tasks
from posharness.tasks.length.passkey import Passkey

TASKS = {"passkey": Passkey}

for _name, _task in TASKS.items():
    tasks.add(_name, _task)
