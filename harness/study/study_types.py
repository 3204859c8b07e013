"""A study as read from its file: the models with their pretraining seeds, the
``[dynamics]`` choice and the study itself, checked and immutable.

``study_file.py`` builds them from the TOML; every later step (plan, execute, publish,
status) receives them and never reads the file again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.study.plugins import StudyPlugins


@dataclass(frozen=True)
class StudyModel:
    """One row source of the study's tables: a PE pretrained here, or a model used as is."""

    spec: str  # ``bert-a`` (pretrained here), ``hf:…``, ``minilm``, ``tupe-r@checkpoint``
    label: str  # its name in tables and boards
    seeds: tuple[int, ...]  # pretraining seeds; () for a model used as given
    pretrain: Mapping[str, Any] = field(default_factory=dict)  # [pretrain] with overrides
    model_args: Mapping[str, str] = field(default_factory=dict)

    @property
    def pretrained_here(self) -> bool:
        return bool(self.seeds)

    def row_label(self, seed: int | None) -> str:
        """The label of one pretraining seed's row (the bare label with one seed)."""
        return self.label if seed is None or len(self.seeds) < 2 else f"{self.label} s{seed}"


@dataclass(frozen=True)
class Dynamics:
    """``[dynamics]``: every saved checkpoint of each pretraining run evaluated too, so a
    table can read a metric against tokens seen (issue 46, part 2)."""

    runs: tuple[int, ...] = (0,)  # the [[run]] sections (0-based) scored at each checkpoint
    steps: tuple[int, ...] | None = None  # None: every checkpoint the run saves
    # The pretraining seeds whose checkpoints are read (None: every seed): a study given a
    # new seed after its first runs kept only final/ reads the new runs' checkpoints alone.
    seeds: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Study:
    path: Path  # the study file
    text: str  # its text, as read
    name: str
    folder: Path  # the study folder: everything the study writes
    models: tuple[StudyModel, ...]
    runs: tuple[Mapping[str, Any], ...]  # evaluate()'s keywords per [[run]], checked
    tables: tuple[str, ...]
    baselines: tuple[str, ...]  # labels of the models every other is tested against
    allow_missing: bool = False
    resources: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    notes: tuple[str, ...] = ()  # added to every table's caption (substitute data, bounds)
    # the plugins loaded for it ([study] include and the folder's plugins.json): what
    # changed since the last run, and recorded plugins that are gone (study.plugins)
    plugins: StudyPlugins = StudyPlugins()
    # the folder the file's relative paths are read from (the study file's, absolute but
    # not resolved through symlinks: paths are kept as the file writes them, issue 47 part 9)
    base: Path = Path(".")
    dynamics: Dynamics | None = None  # [dynamics], where the file has one

    @property
    def run(self) -> Mapping[str, Any]:
        """The first [run]: where study-wide run settings (the executor) are read."""
        return self.runs[0]

    @property
    def modes(self) -> frozenset[str]:
        """Every mode some [run] evaluates."""
        found = set()
        for run in self.runs:
            modes = run.get("modes", ["both"])
            for mode in [modes] if isinstance(modes, str) else modes:
                found.update(part.strip() for part in mode.split(",") if part.strip())
        return frozenset(found)
