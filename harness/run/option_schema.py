"""Command options declared once: name, type, default, help and the commands that take them.

``RUN_OPTIONS`` is the one list of ``posharness run``'s options. The CLI derives its click
options from it (:func:`posharness.cli.click_options.click_options`), :func:`posharness.evaluate`
builds and validates its :class:`~posharness.run.config.RunConfig` through it
(:func:`config_from`), and ``tests/unit/core/test_options_schema.py`` fails when the
command, ``evaluate()``'s signature and ``RunConfig`` disagree. A family's commands
(``pretrain``, ``build-probes``) declare their options with the same :class:`Option`.

An option's ``default`` is the Python API's; ``cli_default`` is the command line's where
its form differs (``--seed 0`` for ``seeds=(0,)``); a command-line value of ``None`` means
"not given" and becomes ``default``. ``parse`` turns what click read into the API's value
(``"0,1"`` → ``[0, 1]``); ``check`` turns an API value into the config's, or raises a
one-line :class:`OptionError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError

if TYPE_CHECKING:
    from posharness.run.config import RunConfig

SAME: Any = object()  # cli_default: the command line's default is ``default``
RUN, EVALUATE = "run", "evaluate"  # the commands of RUN_OPTIONS: the CLI's and the API's


@dataclass(frozen=True)
class Option:
    """One option of one or more commands."""

    name: str  # the keyword in the API, the RunConfig field, the click parameter
    default: Any
    help: str = ""
    type: type = str  # str, int, float, bool (a flag) or Path
    flag: str = ""  # the command line's name [default: --name-with-dashes]
    metavar: str | None = None
    multiple: bool = False  # repeatable on the command line
    choices: tuple[str, ...] = ()
    required: bool = False
    show_default: bool = False
    envvar: str | None = None
    cli_default: Any = SAME
    parse: Callable[[Any], Any] | None = None  # command-line value → API value
    check: Callable[[str, Any], Any] | None = None  # (name, API value) → config value
    # Which commands of its list take it; empty: all of them (RUN_OPTIONS: run and evaluate)
    commands: frozenset[str] = frozenset()
    in_config: bool = True  # a RunConfig field (``leaderboard`` is evaluate's own)

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


# -- reading values --------------------------------------------------------------------
def split_commas(values: Sequence[str]) -> list[str]:
    """``("a,b", "c")`` → ``["a", "b", "c"]``: repeatable options also take lists."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def parse_model_args(items: Sequence[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise OptionError(
                f"--model-arg {item!r}: write KEY=VALUE, e.g. absolute=positional-stream"
            )
        parsed[key.strip()] = value.strip()
    return parsed


def parse_task_args(items: Sequence[str]) -> dict[str, dict[str, str]]:
    parsed: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        task, dot, option = key.partition(".")
        if not sep or not dot or not task or not option:
            raise OptionError(
                f"--task-arg {item!r}: write TASK.KEY=VALUE, e.g. toeplitz.controls=50"
            )
        parsed.setdefault(task.strip(), {})[option.strip()] = value.strip()
    return parsed


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise OptionError(f"--seed {text!r}: give integers, e.g. 0 or 0,1,2") from None
    if not seeds:
        raise OptionError("--seed is empty: give at least one integer")
    return list(dict.fromkeys(seeds))


# -- checking API values ---------------------------------------------------------------
def _wrong(name: str, value: Any, expected: str) -> OptionError:
    return OptionError(f"evaluate({name}={value!r}): expected {expected}")


def _names(name: str, value: Any) -> list[str]:
    listed = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(item, str) for item in listed):
        raise _wrong(name, value, "a name or a list of names")
    return listed


def _seeds(name: str, value: Any) -> list[int]:
    listed = [value] if isinstance(value, int) else list(value)
    if not all(isinstance(item, int) and not isinstance(item, bool) for item in listed):
        raise _wrong(name, value, "an integer or a list of integers")
    return listed


def _path(name: str, value: Any) -> Path | None:
    if value is not None and not isinstance(value, str | Path):
        raise _wrong(name, value, "a path")
    return None if value is None else Path(value)


def _cache(name: str, value: Any) -> Path | None:
    from posharness.storage.cache import default_cache_dir

    return default_cache_dir() if value == "default" else _path(name, value)


def _batch(name: str, value: Any) -> int | str:
    from posharness.run.plan import parse_batch_size

    return parse_batch_size(value)


def _text(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _wrong(name, value, "text")
    return value


def _count(name: str, value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise _wrong(name, value, "a whole number or None")
    return value


def _amount(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(name, value, "a number")
    return value


def _switch(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _wrong(name, value, "True or False")
    return value


def _pairs(name: str, value: Any) -> dict[str, str]:
    if not isinstance(value or {}, Mapping):
        raise _wrong(name, value, "a mapping of option names to values")
    return {str(k): str(v) for k, v in (value or {}).items()}


def _task_pairs(name: str, value: Any) -> dict[str, dict[str, str]]:
    if not isinstance(value or {}, Mapping):
        raise _wrong(name, value, "a mapping of task names to option mappings")
    return {str(task): _pairs(f"{name}[{task!r}]", given) for task, given in (value or {}).items()}


# -- posharness run / posharness.evaluate() ---------------------------------------------
DEVICE_HELP = "auto = cuda, then mps, then cpu."
_names_cli = {"multiple": True, "parse": split_commas, "check": _names}
RUN_OPTIONS: tuple[Option, ...] = (
    Option("models", (), "minilm, hf:HUB_ID, hf:/local/dir, NAME@CHECKPOINT; repeat or "
           "comma-separate.", flag="--model", metavar="SPEC", required=True, **_names_cli),
    Option("tasks", (), "Task or group names, comma-separated (see `posharness list tasks`).",
           metavar="NAMES", required=True, **_names_cli),
    Option("modes", ("both",), "both, contextual, positional; comma-separated.", flag="--mode",
           metavar="MODES", show_default=True, **_names_cli),
    Option("seeds", (0,), "Task seeds, one cell each: a seed draws the task's sample "
           "(probe words, fine-tuning order and initialisation of its head) for the same "
           "model; it never retrains the model (a zoo model's pretraining seed is "
           "`posharness pretrain --seed`).", flag="--seed",
           metavar="N[,N]", show_default=True, cli_default="0", parse=parse_seeds,
           check=_seeds),
    Option("output_dir", "results", "Where the JSON result files go.", Path, show_default=True,
           check=_path),
    Option("leaderboard", None, "Leaderboard file to write [default: <output-dir>/<model>.json].",
           Path, check=_path, in_config=False),
    Option("cache_dir", "default", "Feature cache [default: $POSHARNESS_CACHE or the user cache "
           "dir].", Path, cli_default=None, check=_cache),
    Option("no_cache", False, "Neither read nor write the feature cache.", bool,
           commands=frozenset({RUN}), in_config=False),
    Option("batch_size", "auto", "Sequences per batch; auto halves on out-of-memory.",
           metavar="auto|N", show_default=True, check=_batch),
    Option("device", "auto", DEVICE_HELP, metavar="auto|cpu|cuda[:i]|mps", show_default=True,
           check=_text),
    Option("dtype", "auto", "auto = bfloat16 on CUDA, float32 elsewhere.", show_default=True,
           choices=("auto", "float32", "bfloat16", "float16"), check=_text),
    Option("limit", None, "Evaluate on at most N examples per task (quick checks); training "
           "data is kept.", int, metavar="N", check=_count),
    Option("train_limit", None, "Fine-tune on at most N training examples (quick checks; rows "
           "are marked).", int, metavar="N", check=_count),
    Option("task_args", None, "A task option, e.g. locality_symmetry.words=50; repeatable "
           "(`posharness describe TASK` lists them).",
           flag="--task-arg", metavar="TASK.KEY=VALUE", multiple=True, parse=parse_task_args,
           check=_task_pairs),
    Option("model_args", None, "A model option, e.g. absolute=positional-stream or "
           "reference_corpus=FILE; repeatable.", flag="--model-arg", metavar="KEY=VALUE",
           multiple=True, parse=parse_model_args, check=_pairs),
    Option("data_dir", None, "Datasets and reference corpora in their usual layouts [env: "
           "POSHARNESS_DATA_DIR].", Path, envvar="POSHARNESS_DATA_DIR", check=_path),
    Option("overwrite", False, "Recompute cells that already have results.", bool,
           check=_switch),
    Option("allow_missing", False, "Leave out the tasks whose data is missing here (said one "
           "line each) and run the rest; option mistakes still stop the run.", bool,
           check=_switch),
    Option("executor", "serial", "Run pending cells one after another here, or as Ray tasks "
           "(pip install 'posharness[ray]').", choices=("serial", "ray"), show_default=True,
           check=_text),
    Option("ray_address", None, "With --executor ray: join this cluster [default: start a "
           "local one].", metavar="auto|HOST:PORT", check=_text),
    Option("cpus_per_cell", 1.0, "Ray CPUs per cell.", float, show_default=True, check=_amount),
    Option("gpus_per_cell", 0.0, "Ray GPUs per cell.", float, show_default=True, check=_amount),
)  # fmt: skip


def options_of(command: str, options: Sequence[Option] = RUN_OPTIONS) -> tuple[Option, ...]:
    return tuple(option for option in options if not option.commands or command in option.commands)


def config_from(values: Mapping[str, Any]) -> RunConfig:
    """A RunConfig from ``evaluate()``'s keyword values, each checked by its option."""
    from posharness.run.config import RunConfig

    fields = {}
    for option in options_of(EVALUATE):
        if option.in_config:
            value = values.get(option.name, option.default)
            fields[option.name] = option.check(option.name, value) if option.check else value
    return RunConfig(**fields)
