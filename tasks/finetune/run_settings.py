"""The training settings of one planned run: the protocol's values, overridden by options.

Both the cell (``task.py``) and the classifier reuse of the word-swap probes (``reuse.py``)
build a run's settings; the function sits here, below both, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posharness.tasks.finetune.engine import TrainingSettings
from posharness.tasks.finetune.profiles import Profile
from posharness.tasks.finetune.protocols import PlannedRun, Protocol


def training_settings(
    profile: Profile, protocol: Protocol, run: PlannedRun, options: Mapping[str, Any]
) -> TrainingSettings:
    return TrainingSettings(
        learning_rate=run.learning_rate,
        epochs=int(options["epochs"]) or protocol.epochs_for(profile.name),
        batch_size=int(options["batch_size"]) or protocol.batch_size,
        warmup_ratio=protocol.warmup_ratio,
        weight_decay=protocol.weight_decay,
        adam_epsilon=protocol.adam_epsilon,
        max_length=int(options["max_length"]),
        seed=run.seed,
    )
