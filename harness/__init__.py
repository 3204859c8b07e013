"""posharness: an evaluation harness for positional encodings in BERT-style encoders.

Load an encoder (a Hugging Face checkpoint or a registered PE variant), run it in an
attention mode and score it on registered tasks; results are JSON files per cell and
leaderboards built from them. :func:`evaluate` does everything ``posharness run`` does;
:func:`load_model` and :func:`get_task` reach single models and tasks by name.
"""

from posharness.base.moved_modules import install as _install_moved_modules  # noqa: E402
from posharness.base.version import __version__  # noqa: E402

_install_moved_modules()  # old flat import paths (posharness.adapter …) still work, with a warning

from posharness.api import Evaluation, evaluate, get_task, load_model  # noqa: E402
from posharness.plugins.auto_classes import install as _install_auto_classes  # noqa: E402

_install_auto_classes()  # zoo checkpoints load with AutoModel once transformers is used

__all__ = ["Evaluation", "__version__", "evaluate", "get_task", "load_model"]
