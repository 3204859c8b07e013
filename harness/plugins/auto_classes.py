"""``import posharness`` makes ``AutoModel.from_pretrained(<zoo checkpoint>)`` work.

A zoo checkpoint's ``config.json`` names ``model_type: posharness-pe``, which transformers
only knows once the zoo's classes are registered with its Auto* factories. Registering
them at ``import posharness`` would import torch and transformers into every process,
``posharness --help`` included (about 4 s here instead of 0.2 s), so the registration
waits for the moment transformers' Auto classes are first imported (a post-import hook,
``wrapt.register_post_import_hook``) and then imports each family that declares classes
in the ``posharness.auto_classes`` entry-point group. The core names no family.
"""

from __future__ import annotations

from importlib.metadata import entry_points

GROUP = "posharness.auto_classes"
TRIGGER = "transformers.models.auto"  # the package of AutoConfig / AutoModel
# Imported only once transformers' modeling code is whole (AutoModel's module).
LATER_TRIGGER = "transformers.models.auto.modeling_auto"


def _register_families(_module: object) -> None:
    if _modeling_mid_import():
        # `from transformers import BertModel` imports the Auto package from inside
        # modeling_utils (through its quantizers) before PreTrainedModel exists; a family
        # importing it now would fail as a circular import. Wait for AutoModel's module,
        # which is imported after modeling_utils is whole and before any Auto lookup of
        # a model class.
        import wrapt

        wrapt.register_post_import_hook(_register_families, LATER_TRIGGER)
        return
    for entry in entry_points(group=GROUP):
        entry.load()  # a family module whose import calls Auto*.register


def _modeling_mid_import() -> bool:
    import sys

    modeling = sys.modules.get("transformers.modeling_utils")
    return modeling is not None and not hasattr(modeling, "PreTrainedModel")


def register_when_transformers_loads() -> None:
    """Arrange the registration; runs it at once if transformers' Auto* are loaded."""
    import wrapt

    wrapt.register_post_import_hook(_register_families, TRIGGER)
