"""User-facing failures.

Every failure a user can cause (a bad name, a missing file, a wrong option) is raised as a
subclass of :class:`PosharnessError` with a message that says what was wrong and what to
do: one line, except :class:`PlanProblems`, which lists every problem of a plan at once,
one line each. The CLI catches this base class once, prints the message and exits with
the class's ``exit_code`` (2; 1 for :class:`CellsFailed`, where the run itself went
ahead); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class PosharnessError(Exception):
    """Base of every error the CLI turns into a one-line message and ``exit_code``."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        # Keep the promise of one line even when a library message is folded in.
        super().__init__(" ".join(str(message).split()))


class UnknownNameError(PosharnessError):
    """A model, task or group name that no registry knows."""


class ModelLoadError(PosharnessError):
    """A checkpoint that cannot be found or loaded (missing path, hub id offline)."""


class DataError(PosharnessError):
    """Input data that is missing or malformed."""


class OptionError(PosharnessError):
    """A command-line or API option with an invalid value."""


class CacheError(PosharnessError):
    """A cache entry that cannot be read or written."""


class SchemaError(PosharnessError):
    """A results or leaderboard file that is not of the schema this version reads."""


class TaskOutputError(PosharnessError):
    """A task (usually a plugin) returned outputs that break the task contract, e.g. a
    per-example output without an id."""


class OutputError(PosharnessError):
    """An output location that cannot be written."""


class UnsupportedModeError(PosharnessError):
    """An attention mode the model does not implement."""


class SettingsConflictError(PosharnessError):
    """A leaderboard merge that would put one task's scores under two settings in a row."""


class PlanProblems(PosharnessError):
    """Everything that stops a run, found while planning and reported at once.

    A user fixing one missing dataset per attempt (CoLA, then QQP, then SNLI) and only
    then learning that the model has no checkpoint wastes an attempt per problem; the
    plan collects every model, option and data problem of the run, cheapest first, and
    this error lists them, one line each.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = [" ".join(p.split()) for p in problems]
        lines = [f"{len(self.problems)} problems stop this run (nothing was run):"]
        lines += [f"  - {problem}" for problem in self.problems]
        Exception.__init__(self, "\n".join(lines))


class DistributedLaunchError(PosharnessError):
    """A data-parallel launch (``accelerate launch``, ``torchrun``) that cannot run as
    asked: accelerate missing, or combined with ``--executor ray``."""


class CellsFailed(PosharnessError):
    """Cells that failed on a distributed executor (a worker died, a task raised) while
    the others finished: the finished ones are in ``outcomes`` (and on the leaderboard);
    rerunning the same command retries exactly the failed ones."""

    exit_code = 1

    def __init__(self, failures: list[str], outcomes: list[object]) -> None:
        self.failures = [" ".join(f.split()) for f in failures]
        self.outcomes = outcomes
        lines = [
            f"{len(self.failures)} cell(s) failed, {len(outcomes)} finished; rerun the same "
            "command to retry the failed ones:"
        ]
        lines += [f"  - {failure}" for failure in self.failures]
        Exception.__init__(self, "\n".join(lines))


class StudyFileError(PosharnessError):
    """A study file that cannot be read as asked: bad TOML, an unknown key or model, a
    value of the wrong type; the message names the file, the line and the key."""


class StudyChanged(PosharnessError):
    """A study file whose settings changed since stages of it finished: the message says
    what changed and which finished stages it would invalidate, instead of mixing."""


class StagesFailed(PosharnessError):
    """Stages of a study that failed while the others went on: each with its one-line
    error; rerunning the study retries exactly these (and what waits on them)."""

    exit_code = 1

    def __init__(self, failures: list[str]) -> None:
        self.failures = [" ".join(f.split()) for f in failures]
        lines = [
            f"{len(self.failures)} stage(s) of the study failed; fix what they say and rerun "
            "the same `posharness study run` to retry them:"
        ]
        lines += [f"  - {failure}" for failure in self.failures]
        Exception.__init__(self, "\n".join(lines))
