"""The layout of a pretraining run folder, as every loader reads it, and the plugin its
checkpoint records.

``posharness pretrain`` writes ``RUN/checkpoint-N/`` while it trains and ``RUN/final/``
when it ends, each a model folder with a ``config.json``; without ``--out`` the run goes to
``<runs root>/NAME-SIZE/`` (``$POSHARNESS_RUNS``, else the user's posharness data folder).
A checkpoint of a plugin's scheme records in its ``config.json`` where the scheme came from
(``pe_origin``: the included file or the distribution, and the fix). Kept in the core and
free of torch: when a spec's model name is unknown — the plugin that registered it is not
loaded — the core reads that record from the folder the spec would have loaded, whichever
form the spec takes (``NAME@RUN_FOLDER``, ``…/final``, ``…/checkpoint-N`` or a bare
``NAME`` found under the runs root), and names the plugin instead of only the name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

ENV_VAR = "POSHARNESS_RUNS"
FINAL = "final"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")


def runs_root() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("posharness")) / "runs"


def loadable_folder(folder: Path) -> Path | None:
    """The model folder a user meant: ``folder`` itself when it holds a ``config.json``,
    else the run's ``final/``, else its highest ``checkpoint-N/``; None when none is."""
    if (folder / "config.json").is_file():
        return folder
    if (folder / FINAL / "config.json").is_file():
        return folder / FINAL
    steps = [
        (int(match[1]), child)
        for child in (folder.iterdir() if folder.is_dir() else ())
        if (match := _CHECKPOINT.fullmatch(child.name)) and (child / "config.json").is_file()
    ]
    return max(steps)[1] if steps else None


def read_config(folder: Path) -> dict[str, Any] | None:
    """A model folder's ``config.json``, or None when it is missing or unreadable."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def named_runs(name: str) -> list[Path]:
    """Every model folder of ``name`` under the runs root (any size), newest first."""
    root = runs_root()
    if not root.is_dir():
        return []
    found = []
    for run in root.iterdir():
        if not run.name.startswith(f"{name}-"):
            continue
        folder = loadable_folder(run)
        config = read_config(folder) if folder is not None else None
        if folder is not None and config is not None and config.get("name") in (None, name):
            found.append(((folder / "config.json").stat().st_mtime, str(folder), folder))
    return [folder for *_, folder in sorted(found, reverse=True)]


def only_run(name: str) -> Path | None:
    """The model folder a bare ``NAME`` loads: that of the one pretrained run of NAME under
    the runs root (its ``final/``, else its highest ``checkpoint-N/``); None when there is
    none.

    Several runs of NAME (two sizes, two seeds) are refused in one line that names them
    and asks for ``NAME@RUN``: taking the newest, as before, made one command evaluate
    another model once a new run appeared, and write it to the same results (issue 47,
    part 8).
    """
    from posharness.base.errors import ModelLoadError

    found = named_runs(name)
    if len(found) <= 1:
        return found[0] if found else None
    root = runs_root()
    runs = sorted(str(run_label(folder).parent) for folder in found)
    raise ModelLoadError(
        f"model {name}: {len(found)} pretrained runs of it in {root} ({', '.join(runs)}): "
        f"say which with {name}@RUN, e.g. --model {name}@{found[0].parent}"
    )


def run_label(folder: Path) -> Path:
    """A model folder as the runs root names it (``tupe-r-tiny/final``), else as given."""
    try:
        return folder.relative_to(runs_root())
    except ValueError:
        return folder


def recorded_plugin(name: str, argument: str | None) -> tuple[Path, dict[str, str]] | None:
    """(the checkpoint folder, its ``pe_origin``) of the checkpoint a spec ``NAME@argument``
    (or a bare ``NAME``: the newest run of it) would load, when that checkpoint records a
    plugin; None otherwise."""
    if argument:
        folder = loadable_folder(Path(argument).expanduser())
        candidates = [folder] if folder is not None else []
    else:
        candidates = named_runs(name)
    for folder in candidates:
        origin = (read_config(folder) or {}).get("pe_origin")
        if isinstance(origin, dict):
            return folder, origin
    return None


def missing_plugin_message(name: str, argument: str | None) -> str | None:
    """The one line for an unknown model ``name`` whose checkpoint records its plugin:
    ``unknown model 'fire': runs/fire-tiny/final was made with a positional scheme from
    the file fire.py: pass --include fire.py``; None when no checkpoint records one."""
    found = recorded_plugin(name, argument)
    if found is None:
        return None
    folder, origin = found
    shown = argument if argument and Path(argument).expanduser() == folder else str(folder)
    return (
        f"unknown model {name!r}: {shown} was made with a positional scheme from "
        f"{origin.get('origin', 'a plugin')} {origin.get('source', '?')}: "
        f"{origin.get('fix', 'install or --include it')}"
    )
