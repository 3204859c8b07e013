"""Model spec strings → loaded adapters.

A spec names a registered model and, optionally, what to load into it:

    minilm                    a registered model with a built-in default
    hf:bert-base-uncased      registered name ``hf``, argument = hub id
    hf:/models/my-bert        registered name ``hf``, argument = local folder
    tupe-r@runs/tupe-r-mini   registered name ``tupe-r``, argument = checkpoint folder
    tupe-r@runs/tupe-r-mini/checkpoint-*   every saved checkpoint of the run, a series
                              (``checkpoint_series``; ``…/*`` adds ``final``)

A bare name whose family finds a default checkpoint (a zoo name: the one pretrained run
of it under the runs folder) is resolved before planning into the ``NAME@FOLDER`` it
stands for (:func:`resolve_model_spec`), so every line, header and result path names the
checkpoint that was evaluated.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from posharness.base.errors import OptionError

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter


@dataclass(frozen=True)
class ModelSpec:
    text: str
    name: str
    argument: str | None
    # A bare NAME resolved to a pretrained run (:func:`resolve_model_spec`): the checkpoint
    # as the runs root names it (``tupe-r-tiny/final``). It names the results folder
    # (``tupe-r-tupe-r-tiny-final``), so two checkpoints one bare name stood for over time
    # never share a result file (issue 47, part 8). None otherwise.
    found_as: str | None = None

    @property
    def slug(self) -> str:
        """A file-name-safe form of the spec, used in result and leaderboard names."""
        if self.found_as is not None:
            return _safe(f"{self.name}@{self.found_as}") or "model"
        return _safe(self.text) or "model"

    def results_slug(self, model_args: Mapping[str, str]) -> str:
        """Where this spec's results go when loaded with ``model_args``: a cell key's
        ``folder`` (``run.identity.key_of`` calls it; ``CellKey`` names the file in it).

        Two runs of one spec with other ``--model-arg`` values are other models (another
        seed of a random initialisation, another decomposition), so they get their own
        folder and default leaderboard instead of overwriting each other's files. Long
        values (paths) are shortened to a digest so names stay readable.
        """
        if not model_args:
            return self.slug
        text = "_".join(f"{key}-{value}" for key, value in sorted(model_args.items()))
        readable = _safe(text)
        if len(readable) > 60:
            digest = hashlib.sha256(repr(sorted(model_args.items())).encode()).hexdigest()
            readable = f"{readable[:40].rstrip('-._')}-{digest[:10]}"
        return f"{self.slug}__{readable}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")


@dataclass(frozen=True)
class LoadOptions:
    """How to materialise a model: the same for every registered factory."""

    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    device: str = "cpu"
    revision: str | None = None
    model_args: tuple[tuple[str, str], ...] = ()  # --model-arg KEY=VALUE, factory-specific
    data_dir: Path | None = None  # where default corpora/datasets are looked for
    cache_dir: Path | None = None  # feature cache for statistics a model computes (None: off)


class ModelFactory(Protocol):
    """What the model registry holds: builds an adapter from a spec's argument."""

    def __call__(self, argument: str | None, options: LoadOptions) -> ModelAdapter: ...


@dataclass(frozen=True)
class ModelEntry:
    """A registered model name as a family declares it: what ``posharness list models``
    shows, and the builder to import when the name is first loaded.

    ``build`` is a ``"module:function"`` string with the :class:`ModelFactory` signature,
    so registering a family's names imports none of its heavy code (torch, transformers).
    A plugin may register a plain factory function instead; this type is for families
    that want their listing facts declared rather than read from a docstring.
    """

    build: str
    family: str
    modes: str  # the modes the name offers, as shown to a user (a checkpoint may narrow it)
    description: str
    argument: str | None = None  # bound first argument, e.g. the zoo scheme name
    # "module:function" with the factory's signature that raises a PosharnessError when
    # the spec cannot load (missing checkpoint or package) without reading weights: run
    # for every model while planning, before any dataset is read.
    check: str | None = None
    # "module:function" with the check's signature returning the checkpoint folder (a
    # ``Path``) a bare NAME stands for, or None to build the bare name as it is (no
    # checkpoint, or --model-arg init=random); raises a PosharnessError when the choice is
    # ambiguous. Torch-free, like ``check``: it runs while planning.
    default_checkpoint: str | None = None

    def bare_checkpoint(self, options: LoadOptions) -> Path | None:
        """The checkpoint folder a bare spec of this name loads (``default_checkpoint``)."""
        from posharness.plugins.registry import import_target

        if self.default_checkpoint is None:
            return None
        find = import_target(self.default_checkpoint, "default checkpoint", self.description)
        if self.argument is not None:
            return find(self.argument, None, options)
        return find(None, options)

    def preflight(self, argument: str | None, options: LoadOptions) -> None:
        from posharness.plugins.registry import import_target

        if self.check is None:
            return
        check = import_target(self.check, "model check", self.description)
        if self.argument is not None:
            check(self.argument, argument, options)
        else:
            check(argument, options)

    def __call__(self, argument: str | None, options: LoadOptions) -> ModelAdapter:
        from posharness.plugins.registry import import_target

        build = import_target(self.build, "model builder", self.description)
        if self.argument is not None:
            return build(self.argument, argument, options)
        return build(argument, options)


_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.+-]*?)(?:(?P<sep>[:@])(?P<arg>.+))?$")


def parse_model_spec(text: str) -> ModelSpec:
    text = text.strip()
    match = _SPEC.match(text)
    if not text or match is None:
        raise OptionError(
            f"model spec {text!r} is malformed: use NAME, NAME@CHECKPOINT or hf:HUB_ID_OR_FOLDER"
        )
    return ModelSpec(text, match["name"], match["arg"])


def registered_factory(spec: ModelSpec) -> ModelFactory:
    """The factory of ``spec``'s name. An unknown name whose checkpoint records the plugin it
    was made with (``pe_origin`` in its config.json: origin, source and the fix, written by
    the PE zoo for plugin schemes) says which plugin to install or include: NAME@CHECKPOINT,
    NAME@RUN_FOLDER and a bare NAME found under the runs folder alike
    (``checkpoint_folder.missing_plugin_message``)."""
    from posharness.base.errors import UnknownNameError
    from posharness.plugins import models

    try:
        return models.get(spec.name)
    except UnknownNameError:
        from posharness.contracts.checkpoint_folder import missing_plugin_message

        message = missing_plugin_message(spec.name, spec.argument)
        if message is None:
            raise
        raise UnknownNameError(message) from None


def resolve_model_spec(spec: ModelSpec, options: LoadOptions) -> ModelSpec:
    """``spec`` with a bare name replaced by the ``NAME@FOLDER`` it stands for, when its
    family finds one (``ModelEntry.default_checkpoint``); any other spec as it is."""
    from posharness.contracts.checkpoint_folder import run_label

    if spec.argument is not None:
        return spec
    factory = registered_factory(spec)
    if not isinstance(factory, ModelEntry):
        return spec
    folder = factory.bare_checkpoint(options)
    if folder is None:
        return spec
    return ModelSpec(f"{spec.name}@{folder}", spec.name, str(folder), str(run_label(folder)))


def model_specs(text: str, options: LoadOptions) -> list[ModelSpec]:
    """The models one ``--model`` value stands for: a checkpoint series expanded, one spec
    per saved checkpoint in step order (``checkpoint_series``); a bare name resolved
    (:func:`resolve_model_spec`); any other spec as it is."""
    from posharness.contracts.checkpoint_series import expand_checkpoint_series, is_series

    if is_series(text):
        return [parse_model_spec(point.spec) for point in expand_checkpoint_series(text)]
    return [resolve_model_spec(parse_model_spec(text), options)]


def build_adapter(spec: ModelSpec, options: LoadOptions) -> ModelAdapter:
    spec = resolve_model_spec(spec, options)
    factory = registered_factory(spec)
    adapter = factory(spec.argument, options)
    adapter.spec = spec.text
    return adapter
