"""A pretraining run's saved checkpoints as a series of models, keyed by step and tokens seen.

``NAME@RUN/checkpoint-*`` stands for every ``checkpoint-N/`` that ``posharness pretrain
--save-every N`` kept in RUN; ``NAME@RUN/*`` adds the run's ``final/``. Each becomes one
model spec (``NAME@RUN/checkpoint-N``), in step order, with the step and the tokens seen
its pretraining card records (``pretraining.json``, else ``trainer_state.json``): the axis
of a training-dynamics curve (issue 46, part 2; DESIGN §12 "Dynamics"). Where ``final/``
holds the same step as the last checkpoint (a run that saved at its last step), the
series keeps ``final/`` once, under the name other boards use for it.

A checkpoint that cannot be evaluated (no ``config.json``, no weights, a card that is not
JSON) is left out with one line naming it, and the others are evaluated. Kept free of
torch: the planner expands a series before any weights are read.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from posharness.base.errors import OptionError

_log = logging.getLogger(__name__)  # shown on stderr by Python's last-resort handler

PATTERNS = ("checkpoint-*", "*")  # the last path part of a series spec
CARD = "pretraining.json"  # models/pretrain/card.py writes it into every saved folder
STATE = "trainer_state.json"  # models/pretrain/checkpoint.py: checkpoints only
FINAL = "final"
LEFT_OUT = "left out of the series; the other checkpoints are evaluated"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")
_SERIES = re.compile(r"^(?P<name>[^@:]+)@(?P<run>.+)/(?P<pattern>checkpoint-\*|\*)$")


class SeriesPoint(NamedTuple):
    """One checkpoint of a series: its spec, its optimizer step and the tokens it was
    trained on (None when its card predates the record)."""

    spec: str
    step: int
    tokens_seen: int | None


def is_series(text: str) -> bool:
    """Whether a ``--model`` value names a checkpoint series (``NAME@RUN/checkpoint-*``)."""
    return _SERIES.match(text.strip()) is not None


def expand_checkpoint_series(
    text: str, on_skip: Callable[[str], None] | None = None
) -> list[SeriesPoint]:
    """Every saved checkpoint of the series ``text`` names, ordered by step.

    ``on_skip`` receives one line per checkpoint left out (damaged or incomplete); by
    default the line goes to stderr. Raises a one-line :class:`OptionError` when ``text``
    is no series spec, the run folder does not exist or holds no checkpoint at all.
    """
    match = _SERIES.match(text.strip())
    if match is None:
        raise OptionError(
            f"model spec {text!r} is no checkpoint series: use NAME@RUN/checkpoint-* "
            "(every saved checkpoint) or NAME@RUN/* (and final/)"
        )
    name, run_text, pattern = match["name"], match["run"], match["pattern"]
    run = Path(run_text).expanduser()
    if not run.is_dir():
        what = "is not a folder" if run.exists() else "does not exist"
        raise OptionError(
            f"{text}: {run_text} {what}: give a run folder written by `posharness pretrain`"
        )
    skip = on_skip or _warn
    points: dict[int, SeriesPoint] = {}
    for folder, step in _saved_folders(run, with_final=pattern == "*"):
        spec = f"{name}@{run_text}/{folder.name}"
        problem = _damage(folder)
        tokens, recorded = _card_facts(folder) if problem is None else (None, None)
        if problem is None and step is None and recorded is None:
            problem = f"neither {CARD} nor {STATE} records its step"
        if problem is not None:
            skip(f"{spec}: {problem}: {LEFT_OUT}")
            continue
        step = step if step is not None else recorded
        assert step is not None
        if step in points and folder.name != FINAL:
            continue  # final/ at the last checkpoint's step: the same model, kept once
        points[step] = SeriesPoint(spec, step, tokens)
    if not points:
        raise OptionError(
            f"{text}: no saved checkpoint in {run_text} to evaluate: pretrain with "
            "--save-every N to keep checkpoints along the way"
        )
    return [points[step] for step in sorted(points)]


def _saved_folders(run: Path, with_final: bool) -> list[tuple[Path, int | None]]:
    """``checkpoint-N/`` folders with their N, then ``final/`` (step from its card)."""
    found: list[tuple[Path, int | None]] = sorted(
        (
            (child, int(match[1]))
            for child in run.iterdir()
            if child.is_dir() and (match := _CHECKPOINT.fullmatch(child.name))
        ),
        key=lambda item: item[1],
    )
    if with_final and (run / FINAL).is_dir():
        found.append((run / FINAL, None))
    return found


def _damage(folder: Path) -> str | None:
    """Why ``folder`` cannot be loaded as a model, or None (no weights read)."""
    config = folder / "config.json"
    if not config.is_file():
        return "no config.json (an incomplete or damaged checkpoint)"
    try:
        json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "config.json is not JSON (a damaged checkpoint)"
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        return "no weights (*.safetensors) in it (an incomplete or damaged checkpoint)"
    for file in weights:
        if not _whole_safetensors(file):
            return f"{file.name} is cut short or not a safetensors file (a damaged checkpoint)"
    return None


def _whole_safetensors(file: Path) -> bool:
    """Whether the file holds every byte its header promises: a safetensors file is an
    8-byte little-endian header length, a JSON header giving each tensor's byte range,
    then the data. Reads the header only."""
    try:
        size = file.stat().st_size
        with file.open("rb") as handle:
            length = int.from_bytes(handle.read(8), "little")
            if length <= 0 or 8 + length > size:
                return False
            header = json.loads(handle.read(length))
    except (OSError, ValueError):
        return False
    ends = [
        entry["data_offsets"][1]
        for key, entry in header.items()
        if key != "__metadata__" and isinstance(entry, dict) and "data_offsets" in entry
    ]
    return 8 + length + max(ends, default=0) <= size


def _card_facts(folder: Path) -> tuple[int | None, int | None]:
    """(tokens seen, step) as the folder's card records them, else its trainer state."""
    for file in (CARD, STATE):
        try:
            record = json.loads((folder / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            tokens = record.get("tokens_seen")
            return (tokens if isinstance(tokens, int) else None), record["step"]
    return None, None


def _warn(line: str) -> None:
    _log.warning("posharness: %s", line)


def load_failure_line(spec: str, error: BaseException) -> str:
    """The line for a series checkpoint whose weights fail to load (the others run)."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{spec}: cannot be loaded ({first}): {LEFT_OUT}"


__all__ = ["SeriesPoint", "expand_checkpoint_series", "is_series", "load_failure_line"]
