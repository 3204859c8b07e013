"""posharness: an evaluation harness for positional encodings in BERT-style encoders.

Load an encoder (a Hugging Face checkpoint or a registered PE variant), run it in an
attention mode and score it on registered tasks; results are JSON files per cell and
leaderboards built from them. :func:`evaluate` does everything ``posharness run`` does;
:func:`load_model` and :func:`get_task` reach single models and tasks by name.

The public surface is ``__all__`` below (docs/api.md): what a plugin or a script may rely
on across releases. Everything else is reached through its sub-package
(``posharness.contracts``, ``posharness.boards`` …) and may move; the layers are drawn in
docs/contributing/README.md. The contract types load on first use, so ``import posharness``
(and ``posharness --help``) stays as fast as before.
"""

from typing import TYPE_CHECKING

from posharness.base.lazy_names import lazy_getattr as _lazy_getattr
from posharness.base.moved_modules import install_old_paths as _install_old_paths
from posharness.base.version import __version__

_install_old_paths()  # old flat import paths (posharness.adapter …) still work, with a warning

from posharness.api import Evaluation, evaluate, get_task, load_model  # noqa: E402
from posharness.plugins import register_model, register_task  # noqa: E402
from posharness.plugins.auto_classes import (  # noqa: E402
    register_when_transformers_loads as _register_zoo_auto_classes,
)

_register_zoo_auto_classes()  # zoo checkpoints load with AutoModel once transformers is used

# name -> module that defines it; imported when first asked for (PEP 562)
_LAZY = {
    "ModelAdapter": "posharness.contracts.adapter",
    "Mode": "posharness.contracts.adapter",
    "PECard": "posharness.contracts.adapter",
    "ModelEntry": "posharness.contracts.model_spec",
    "Task": "posharness.contracts.task",
    "TaskSpec": "posharness.contracts.task",
    "TaskContext": "posharness.contracts.task",
    "TaskResult": "posharness.contracts.task",
    "Example": "posharness.contracts.examples",
    "MetricType": "posharness.contracts.metric_types",
    "Metric": "posharness.contracts.results",
    "CellResult": "posharness.contracts.results",
    "read_result": "posharness.contracts.results",
    "PosharnessError": "posharness.base.errors",
    "register_pe": "posharness.pe.registry",
    "register_variant": "posharness.pe.registry",
}

if TYPE_CHECKING:
    from posharness.base.errors import PosharnessError
    from posharness.contracts.adapter import Mode, ModelAdapter, PECard
    from posharness.contracts.examples import Example
    from posharness.contracts.metric_types import MetricType
    from posharness.contracts.model_spec import ModelEntry
    from posharness.contracts.results import CellResult, Metric, read_result
    from posharness.contracts.task import Task, TaskContext, TaskResult, TaskSpec
    from posharness.pe.registry import register_pe, register_variant


__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


__all__ = [
    "CellResult",
    "Evaluation",
    "Example",
    "Metric",
    "MetricType",
    "Mode",
    "ModelAdapter",
    "ModelEntry",
    "PECard",
    "PosharnessError",
    "Task",
    "TaskContext",
    "TaskResult",
    "TaskSpec",
    "__version__",
    "evaluate",
    "get_task",
    "load_model",
    "read_result",
    "register_model",
    "register_pe",
    "register_task",
    "register_variant",
]
