"""Where a zoo model's checkpoint is found when the spec names none, or names a run folder.

``posharness pretrain --model NAME`` without ``--out`` writes to
``<runs root>/NAME-SIZE/`` (the runs root is ``$POSHARNESS_RUNS``, else the user's
posharness data folder), and ``--model NAME`` then loads the one run of NAME found there
(its ``final/``, else its highest ``checkpoint-N/``), resolved to ``NAME@FOLDER`` before
planning (:func:`default_checkpoint`); with several runs of NAME there it asks for
``NAME@RUN`` in one line (``checkpoint_folder.only_run``). ``NAME@RUN_FOLDER`` also
takes the run folder itself, not only its ``final/`` or ``checkpoint-N/`` (that layout:
``contracts.checkpoint_folder``, which also names the plugin a checkpoint was made with
when its model name is unknown). Kept free of torch: the planner calls
:func:`check_native` for every model before any data is read.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from posharness.base.errors import ModelLoadError, OptionError

# The run folder's layout is read by the core too (an unknown model name whose checkpoint
# records its plugin): it lives there, and is this module's as well.
from posharness.contracts.checkpoint_folder import (  # noqa: F401 (re-exported)
    ENV_VAR,
    FINAL,
    loadable_folder,
    named_runs,
    only_run,
    runs_root,
)
from posharness.contracts.model_spec import LoadOptions

NATIVE_ARGS = ("init", "size", "seed", "tokenizer", "attention")  # the zoo's own --model-args
# The pretraining budget the suggested command asks for (the papers pretrain for 600k-1M
# steps): 2,000 mini steps, about 45 min on two CPU cores, is the budget of
# leaderboards/pe-zoo-mini-2k.json, by which TUPE-R's positional term had become local.
SUGGESTED_STEPS = 2000


def default_run_folder(name: str, size: str) -> Path:
    return runs_root() / f"{name}-{size}"


def default_checkpoint(name: str, argument: str | None, options: LoadOptions) -> Path | None:
    """``ModelEntry.default_checkpoint`` of the zoo names: the folder a bare NAME loads (the
    one pretrained run of it), None with ``init=random`` or when there is none (the check
    then says how to make one); several runs of NAME are refused in one line."""
    if argument or dict(options.model_args).get("init") == "random":
        return None
    return only_run(name)


def pretrain_command(name: str) -> str:
    """The command that makes a checkpoint ``--model NAME`` then finds (tested by running it)."""
    return f"posharness pretrain --model {name} --corpus CORPUS --steps {SUGGESTED_STEPS}"


def missing_checkpoint_message(name: str) -> str:
    """The one line for a zoo name with no checkpoint (``pretrain.estimates``: the recipe
    that learns on a CPU first, then the smoke model, then the default, with their times)."""
    from posharness.models.pretrain.estimates import missing_checkpoint_advice

    return missing_checkpoint_advice(name, runs_root(), SUGGESTED_STEPS)


def resolve_native(name: str, argument: str | None, options: LoadOptions) -> Path | None:
    """The checkpoint folder a zoo spec loads, or None for ``init=random``.

    Raises a one-line :class:`ModelLoadError` when there is none, naming the command that
    makes one.
    """
    if argument:
        given = Path(argument).expanduser()
        folder = loadable_folder(given)
        if folder is None:
            what = "does not exist" if not given.exists() else "holds no config.json"
            raise ModelLoadError(
                f"{given} {what}: pass a folder written by `posharness pretrain` (the run "
                "folder, its final/ or a checkpoint-N/)"
            )
        return folder
    if dict(options.model_args).get("init") == "random":
        return None
    found = only_run(name)
    if found is None:
        raise ModelLoadError(missing_checkpoint_message(name))
    return found


def check_model_args(
    argument: str | None, options: LoadOptions, name: str | None = None
) -> dict[str, str]:
    """The ``PEConfig`` options among the ``--model-arg``s, refused in one line when unknown
    or given with a checkpoint (whose config.json fixes them)."""
    pe_args = {k: v for k, v in options.model_args if k not in NATIVE_ARGS}
    if not pe_args:
        return pe_args  # the option names live beside PEConfig, whose import costs seconds
    from posharness.models.zoo.option_names import (
        GEOMETRY_KEYS,
        OPTION_TYPES,
        scheme_option_types,
    )

    declared = scheme_option_types(name, pe_args) if name else {}
    unknown = sorted(set(pe_args) - set(OPTION_TYPES) - set(GEOMETRY_KEYS) - set(declared))
    if unknown:
        known = [*NATIVE_ARGS, *OPTION_TYPES, *GEOMETRY_KEYS, *declared]
        close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]}? " if close else ""
        raise OptionError(
            f"--model-arg {unknown[0]}: {hint}{name or 'zoo models'} takes "
            f"{', '.join(NATIVE_ARGS)} (e.g. "
            "init=random size=mini seed=0) and, with init=random, PEConfig options such as "
            "relative_buckets=64 or locality=0.3 (`posharness pretrain --help`)"
        )
    if argument and pe_args:
        raise OptionError(
            f"--model-arg {sorted(pe_args)[0]}: a checkpoint's options are fixed by its "
            "config.json; options apply to init=random or `posharness pretrain --model-arg`"
        )
    return pe_args


def check_native(name: str, argument: str | None, options: LoadOptions) -> None:
    """``ModelEntry.check`` of the zoo names: options known and checkpoint present (no
    weights read), options first because they are the cheaper check."""
    check_model_args(argument, options, name)
    resolve_native(name, argument, options)
