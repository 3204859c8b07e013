"""Hand a fine-tuned classifier to another task without training it twice.

The word-swap probes (Chen et al. §3.5) evaluate the SNLI classifier of a (model, mode)
on shuffled premises. The classifier is the ``snli`` cell's representative run; its
weights live in the cache under the run's key, so the probe finds them when the ``snli``
cell (or an earlier probe) trained them, and trains that one run otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from posharness.base.errors import OptionError
from posharness.tasks.finetune.profiles import Profile
from posharness.tasks.finetune.run_settings import training_settings
from posharness.tasks.finetune.runs import plain_run
from posharness.tasks.finetune.store import load_weights

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter
    from posharness.contracts.task import TaskContext


class ExecutesProtocol(Protocol):
    """What reuse needs of a fine-tune task (``task.FineTuneTask`` passes itself): its
    profile, and its protocol run over (model, mode) with the cache."""

    profile: Profile

    def execute(self, model: ModelAdapter, ctx: TaskContext) -> Any: ...


def trained_classifier(task: ExecutesProtocol, model: ModelAdapter, ctx: TaskContext) -> Any:
    """The representative run's classifier, in eval mode on ``ctx.device``."""
    if task.profile.folds:
        raise OptionError(
            f"{task.profile.name} is cross-validated: it has no single classifier to reuse"
        )
    done = task.execute(model, ctx)
    index = done.summary.representative
    weights = load_weights(ctx.cache, done.results[index].keys[0])
    if weights is None:
        # Pruned, never kept, or caching is off: train that run again (it is seeded, so
        # it is the same run) and keep its weights this time.
        run = done.runs[index]
        settings = training_settings(task.profile, done.protocol, run, ctx.options)
        again = plain_run(
            replace(done.rc, keep_weights=True),
            settings,
            done.encoded,
            task.profile.select_split,
            list(task.profile.report.values()),
            f"{run.label} (weights for reuse)",
            retrain=True,
        )
        weights = again.state
    classifier = done.rc.build()
    classifier.load_state_dict(weights)
    classifier.to(ctx.device)
    classifier.eval()
    return classifier
