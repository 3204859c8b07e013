"""A study file (TOML) read into a :class:`Study`, every key checked before any work.

The keys of ``[pretrain]`` and ``[run]`` are ``posharness pretrain``'s and ``posharness
run``'s options by their documented names (``batch_size`` or ``batch-size``), checked by
those options' own declarations: an option added to either command is a study key with no
code here. A problem is one line naming the file, the line and the key, with close
matches for a misspelt one (docs/studies.md has the format).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError, PosharnessError, StudyFileError
from posharness.run.option_schema import EVALUATE, RUN_OPTIONS, Option, config_from, options_of
from posharness.study.folder import slug
from posharness.study.locator import Locator
from posharness.study.name_checks import check_run, check_tables
from posharness.study.plugins import StudyPlugins, load_study_plugins
from posharness.study.stages import TrainingStage
from posharness.study.study_types import Dynamics, Study, StudyModel

SECTIONS = ("study", "model", "pretrain", "run", "resources", "dynamics")
DYNAMICS_KEYS = ("checkpoints", "runs", "seeds")
STUDY_KEYS = (
    "name", "output", "tables", "baselines", "allow_missing", "description", "notes", "include"
)  # fmt: skip
MODEL_KEYS = ("name", "label", "seeds", "model_args", "pretrain")
RESOURCE_KEYS = ("cpus_per_pretrain", "gpus_per_pretrain", "processes_per_pretrain")
# run options a study sets itself: each model's spec, its results folder and its board
RUN_RESERVED = frozenset({"models", "output_dir", "leaderboard"})


def read_study(
    path: Path, stage: TrainingStage | None, folder: Path | None = None, base: Path | None = None
) -> Study:
    """The study at ``path``; a :class:`StudyFileError` names the first problem found.
    ``folder``: the study folder, when ``path`` is the copy a study folder keeps, and
    ``base`` the folder its relative paths are read from (the original file's)."""
    if not path.is_file():
        raise StudyFileError(f"{path}: no such study file (posharness reproduce NAME writes one)")
    text = path.read_text(encoding="utf-8")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyFileError(f"{path}: not valid TOML ({exc})") from None
    where = Locator(path, text)
    _check_keys(where, "", document, SECTIONS)
    head = _table(where, document, "study")
    _check_keys(where, "study", head, STUDY_KEYS)
    base = Path(os.path.abspath(base or path.parent))
    folder = folder or (base / str(head.get("output") or path.stem)).resolve()
    # plugins first: the names checked below may be theirs
    plugins = _plugins(where, head.get("include", []), base, folder)
    # cheapest first: table ids and run sections read declarations only; models may
    # import their family (seconds)
    tables = _names(where, "study", "tables", head.get("tables", []))
    check_tables(where, tables)
    runs = _runs(where, document.get("run"), base, plugins.hint())
    pretrain = _pretrain_values(where, _table(where, document, "pretrain"), stage, base)
    models = _models(where, document.get("model"), stage, pretrain, base, plugins.hint())
    labels = [m.label for m in models]
    baselines = tuple(_names(where, "study", "baselines", head.get("baselines", labels[:1])))
    for label in baselines:
        if label not in labels:
            raise where.error("study", "baselines", f"{label!r} is not a model label", labels)
    resources = _table(where, document, "resources")
    _check_keys(where, "resources", resources, RESOURCE_KEYS)
    dynamics = _dynamics(where, document, len(runs), models)
    return Study(
        path=path,
        text=text,
        name=str(head.get("name") or path.stem),
        folder=folder,
        models=models,
        runs=runs,
        tables=tuple(tables),
        baselines=baselines,
        allow_missing=bool(head.get("allow_missing", False)),
        resources={k: float(v) for k, v in resources.items()},
        description=str(head.get("description", "")),
        notes=tuple(str(note) for note in _list(where, "notes", head.get("notes", []))),
        plugins=plugins,
        base=base,
        dynamics=dynamics,
    )


def _dynamics(
    where: Locator, document: Mapping[str, Any], runs: int, models: tuple[StudyModel, ...]
) -> Dynamics | None:
    """``[dynamics] checkpoints = "all"`` (or a list of steps) and ``runs = [1]`` (the
    [[run]] sections, counted from 1, that score each checkpoint: the probes, not a
    fine-tuning per checkpoint)."""
    if "dynamics" not in document:
        return None
    table = _table(where, document, "dynamics")
    _check_keys(where, "dynamics", table, DYNAMICS_KEYS)
    given = table.get("checkpoints", "all")
    if given == "all":
        steps = None
    elif isinstance(given, list) and given and all(type(s) is int and s > 0 for s in given):
        steps = tuple(sorted(set(given)))
    else:
        raise where.error(
            "dynamics", "checkpoints", 'give "all" or a list of steps: checkpoints = [300, 600]'
        )
    chosen = table.get("runs", [1])
    chosen = [chosen] if type(chosen) is int else chosen
    if not isinstance(chosen, list) or not all(type(r) is int and 1 <= r <= runs for r in chosen):
        raise where.error(
            "dynamics", "runs", f"give [[run]] sections by number, 1 to {runs}: runs = [1]"
        )
    for model in models:
        if model.pretrained_here and model.pretrain.get("keep_checkpoints"):
            raise where.error(
                "pretrain",
                "keep_checkpoints",
                f"{model.label}: [dynamics] evaluates every saved checkpoint; keep_checkpoints "
                "deletes all but the newest: remove it",
            )
    if not any(model.pretrained_here for model in models):
        raise where.error("", "dynamics", "no model is pretrained here: no checkpoints to read")
    seeds = table.get("seeds")
    every_seed = {seed for model in models for seed in model.seeds}
    if seeds is not None and (
        not isinstance(seeds, list) or not seeds or not set(seeds) <= every_seed
    ):
        raise where.error(
            "dynamics",
            "seeds",
            f"give pretraining seeds of the study's models ({sorted(every_seed)}): seeds = [2]",
        )
    chosen_seeds = None if seeds is None else tuple(sorted(set(seeds)))
    return Dynamics(tuple(sorted({r - 1 for r in chosen})), steps, chosen_seeds)


def _plugins(where: Locator, given: Any, base: Path, folder: Path) -> StudyPlugins:
    """``[study] include`` imported, then the plugins the folder's last run recorded."""
    entries = [given] if isinstance(given, str) else given
    if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
        raise where.error("study", "include", 'give a list of .py files: ["my_pe.py"]')
    try:
        return load_study_plugins(entries, base, folder)
    except StudyFileError:
        raise
    except PosharnessError as exc:
        raise where.error("study", "include", str(exc)) from None


def _list(where: Locator, key: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise where.error("study", key, "give a list")
    return value


def _table(where: Locator, document: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = document.get(name, {})
    if not isinstance(value, dict):
        raise where.error("", name, "must be a table ([" + name + "] followed by keys)")
    return {key.replace("-", "_"): item for key, item in value.items()}


def _check_keys(where: Locator, section: str, table: Mapping[str, Any], known: Any) -> None:
    for key in table:
        if key not in known:
            listed = ", ".join(known)
            raise where.error(section, key, f"unknown key; known keys: {listed}", known)


def _names(where: Locator, section: str, key: str, value: Any) -> list[str]:
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
        raise where.error(section, key, "give a name or a list of names")
    return [part.strip() for item in listed for part in item.split(",") if part.strip()]


def _pretrain_values(
    where: Locator, table: dict[str, Any], stage: TrainingStage | None, base: Path
) -> dict[str, Any]:
    if not table:
        return {}
    if stage is None:
        raise where.error("", "pretrain", "no installed family pretrains models")
    options = {option.name: option for option in stage.options}
    known = [name for name in options if name not in stage.reserved]
    values = {}
    for key, value in table.items():
        if key in stage.reserved:
            raise where.error("pretrain", key, "is set by the study itself: remove it")
        if key not in options:
            raise where.error(
                "pretrain", key, "not an option of posharness " + stage.command, known
            )
        values[key] = _checked(where, "pretrain", options[key], value, base)
    return values


def _checked(where: Locator, section: str, option: Option, value: Any, base: Path) -> Any:
    """One [pretrain] value checked against its option's declared type and choices."""
    expected = {bool: "true or false", int: "a whole number", float: "a number"}
    if option.multiple:  # --model-arg KEY=VALUE …: a table in the file
        if not isinstance(value, dict | list):
            raise where.error(section, option.name, "give a table of KEY = VALUE")
        return value
    if option.type is bool and not isinstance(value, bool):
        raise where.error(section, option.name, f"expected {expected[bool]}")
    if option.type is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise where.error(section, option.name, f"expected {expected[int]}, got {value!r}")
    if option.type is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise where.error(section, option.name, f"expected {expected[float]}, got {value!r}")
        return float(value)
    if option.choices and value not in option.choices:
        raise where.error(
            section,
            option.name,
            f"{value!r} is not one of {', '.join(option.choices)}",
            option.choices,
        )
    if option.type is Path:
        return _path(str(value), base)
    return value


def _files_resolved(options: dict[str, Any], base: Path) -> dict[str, Any]:
    """Task and model options that name a file or folder beside the study file, made
    absolute: a relative path in a study file is read from the file's folder, whatever
    folder the study runs in (evaluation runs inside the study folder)."""
    resolved: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, dict):
            resolved[key] = _files_resolved(value, base)
        elif isinstance(value, str) and value and not Path(value).is_absolute():
            found = base / value
            resolved[key] = str(found) if found.exists() else value
        else:
            resolved[key] = value
    return resolved


def _path(text: str, base: Path) -> str:
    """A path relative to the study file's folder (a hub name ``hf:…`` is kept), joined to
    that folder as written: not resolved through symlinks, so what ``plan.json`` and the
    logs record is the path the file names (issue 47, part 9), and the kernel follows a
    symlinked data folder when the path is used."""
    if text.startswith("hf:") or Path(text).is_absolute():
        return text
    return str(base / text)


def _models(
    where: Locator,
    entries: Any,
    stage: TrainingStage | None,
    pretrain: Mapping[str, Any],
    base: Path,
    hint: str = "",
) -> tuple[StudyModel, ...]:
    if not isinstance(entries, list) or not entries:
        raise where.error("", "model", "a study needs [[model]] entries, one per PE or model")
    models, seen = [], set()
    for entry in entries:
        entry = {key.replace("-", "_"): value for key, value in entry.items()}
        _check_keys(where, "model", entry, MODEL_KEYS)
        spec = entry.get("name")
        if not isinstance(spec, str) or not spec:
            raise where.error("model", "name", "every [[model]] needs a name")
        _check_model_name(where, spec, hint)
        trainable = stage is not None and "@" not in spec and stage.can_pretrain(spec)
        seeds = entry.get("seeds", [0] if trainable else [])
        seeds = [seeds] if isinstance(seeds, int) else seeds
        if not isinstance(seeds, list) or not all(type(s) is int for s in seeds):
            raise where.error("model", "seeds", "give a list of whole numbers (pretraining seeds)")
        if seeds and not trainable:
            raise where.error("model", "seeds", f"{spec} is not pretrained here: remove seeds")
        here = bool(seeds)  # seeds = [] uses a trainable name as it is (random weights)
        overrides = _pretrain_values(where, dict(entry.get("pretrain", {})), stage, base)
        label = str(entry.get("label") or spec)
        if slug(label) in seen:  # boards and run folders are named by the label's slug
            raise where.error(
                "model", "label", f"{label!r} names the same files as another model's label"
            )
        seen.add(slug(label))
        if here and "corpus" not in {**pretrain, **overrides}:
            raise where.error("pretrain", "corpus", f"{spec} is pretrained here: give a corpus")
        models.append(
            StudyModel(
                spec=spec,
                label=label,
                seeds=tuple(int(s) for s in seeds),
                pretrain={**pretrain, **overrides} if here else {},
                model_args={str(k): str(v) for k, v in dict(entry.get("model_args", {})).items()},
            )
        )
    return tuple(models)


def _check_model_name(where: Locator, spec: str, hint: str = "") -> None:
    """An unknown model fails here, with close matches and ``hint`` (the plugin it may
    have come from: ``StudyPlugins.hint``), before any stage runs."""
    from posharness.contracts.model_spec import parse_model_spec, registered_factory

    try:
        registered_factory(parse_model_spec(spec))
    except PosharnessError as exc:
        written = re.compile(rf"^\s*name\s*=\s*[\"']{re.escape(spec)}[\"']")
        line = next((n for n, text in enumerate(where.lines, 1) if written.match(text)), None)
        at = f" line {line}" if line else ""
        raise StudyFileError(f"{where.path}{at}: [model] name: {exc}{hint}") from None


def _runs(where: Locator, given: Any, base: Path, hint: str = "") -> tuple[dict[str, Any], ...]:
    """``[run]``, or several ``[[run]]`` (each its tasks, modes and protocols: fine-tunes
    in mode both, probes in all three), every one checked."""
    tables = given if isinstance(given, list) else [given if given is not None else {}]
    if not all(isinstance(table, dict) for table in tables):
        raise where.error("", "run", "must be a table ([run]) or tables ([[run]])")
    runs = [
        _run_values(where, {k.replace("-", "_"): v for k, v in table.items()}, base)
        for table in tables
    ]
    for index, run in enumerate(runs):  # names and task options, against what is installed
        check_run(where, index, run, hint)
    executors = {run.get("executor", "serial") for run in runs}
    if len(executors) > 1:
        raise where.error("run", "executor", "every [[run]] of a study uses one executor")
    return tuple(runs)


def _run_values(where: Locator, table: dict[str, Any], base: Path) -> dict[str, Any]:
    known = {option.name: option for option in options_of(EVALUATE, RUN_OPTIONS)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key in RUN_RESERVED:
            raise where.error("run", key, "is set by the study itself: remove it")
        if key not in known and key != "no_cache":
            raise where.error("run", key, "not an option of posharness run", list(known))
        if known.get(key) is not None and known[key].type is Path and isinstance(value, str):
            value = _path(value, base)
        values[key] = value
    if values.pop("no_cache", False):
        values["cache_dir"] = None
    for key in ("task_args", "model_args"):
        if isinstance(values.get(key), dict):
            values[key] = _files_resolved(values[key], base)
    if "tasks" not in values:
        raise where.error("run", "tasks", "a study needs [run] tasks (task or group names)")
    try:
        config_from({**values, "models": ["checked-later"]})
    except OptionError as exc:
        key = re.search(r"evaluate\((\w+)=", str(exc))
        name = key.group(1) if key else "tasks"
        raise where.error("run", name, str(exc).replace(f"evaluate({name}=", "(")) from None
    return values
