"""The ``posharness`` command line: one module per command, a thin shell over the API.

The core's commands live beside this file: ``run``, ``list``, ``describe``,
``leaderboard``, ``compare``, ``report``, ``cache``, ``study`` and the ``build-probes`` group (whose
subcommands come from families). Families contribute their own commands (``pretrain``,
``loss-curves``, ``build-probes shuffle``) through the entry point group
``posharness.commands`` — a name (``pretrain``) or ``GROUP.NAME``
(``build-probes.shuffle``) pointing at a click command — so a plugin adds a command the
same way it adds a task, and the core imports no family. Entry points are read only when
a command is looked up or listed (docs/contributing/add-a-command.md).

Every user-facing failure is a :class:`PosharnessError`; it is caught here once and printed
on stderr (one line; a plan's problems one line each) with the error's exit code (2, or 1
when cells failed while the rest of the run went ahead). Heavy libraries are imported
inside commands, so ``--help`` and bad-input errors answer at once.
"""

from __future__ import annotations

import gc
import sys
from importlib.metadata import entry_points

import click

from posharness.base.errors import PosharnessError
from posharness.base.version import __version__

PROG = "posharness"
COMMANDS_GROUP = "posharness.commands"


class PluggableGroup(click.Group):
    """A click group that also holds the commands families declare as entry points."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._plugged = False

    def _plug(self) -> None:
        if self._plugged:
            return
        self._plugged = True
        for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
            group_name, _, name = ep.name.rpartition(".")
            target = self if not group_name else self.commands.get(group_name)
            if isinstance(target, _LazyCommand):  # a core group, loaded to take the command
                target = self.commands[group_name] = target.load()
            if not isinstance(target, click.Group):
                continue  # a subcommand of a group this version does not have
            target.add_command(_LazyCommand(name or ep.name, ep.value), name or ep.name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._plug()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        self._plug()
        command = super().get_command(ctx, name)
        return command.load() if isinstance(command, _LazyCommand) else command


class _LazyCommand(click.Command):
    """A command (the core's or a family's), imported when it is called or its help is
    shown."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name)
        self.target = target

    def load(self) -> click.Command:
        from posharness.plugins.registry import import_target

        command = import_target(self.target, "command", self.name or "")
        if not isinstance(command, click.Command):
            raise PosharnessError(f"command {self.name!r} at {self.target} is not a click command")
        return command

    def get_short_help_str(self, limit: int = 45) -> str:
        return self.load().get_short_help_str(limit)


class PluggableSubgroup(click.Group):
    """A core group whose subcommands come from families (``build-probes``)."""

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        return command.load() if isinstance(command, _LazyCommand) else command

    def list_commands(self, ctx: click.Context) -> list[str]:
        root = ctx.find_root().command
        if isinstance(root, PluggableGroup):
            root._plug()
        return super().list_commands(ctx)


@click.group(
    cls=PluggableGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name=PROG)
def cli() -> None:
    """Evaluate positional encodings of BERT-style encoders.

    \b
    Your own PE: declare it with @register_pe (posharness.pe), then pass
    --include FILE.py to any command, or install it as a distribution with a
    posharness.pe entry point (docs/new_pe.md). A study records its plugins.
    """


@cli.group(name="build-probes", cls=PluggableSubgroup)
def build_probes() -> None:
    """Build probe datasets that the papers describe but never released."""


# The core's commands, imported when one is called or its help is shown (as families'
# are): `posharness run` loads neither the report nor the cache commands.
CORE_COMMANDS = {
    "run": "posharness.cli.run_command:run",
    "list": "posharness.cli.listing:list_command",
    "describe": "posharness.cli.describe:describe",
    "leaderboard": "posharness.cli.leaderboard_commands:leaderboard",
    "compare": "posharness.cli.compare_command:compare",
    "report": "posharness.cli.report_command:report",
    "cache": "posharness.cli.cache_commands:cache",
    "study": "posharness.cli.study_command:study",
}
for _name, _target in CORE_COMMANDS.items():
    cli.add_command(_LazyCommand(_name, _target), _name)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn user errors into their message on stderr and their exit code."""
    if argv is None:  # the process is this command (console script, python -m posharness)
        # What start-up imported (modules, classes, schemas) lives as long as the process:
        # out of the collector's reach, a run's collections stop rescanning it (a failing
        # command answered ~30 ms later without this). Not done when called in-process.
        gc.freeze()
    try:
        _run_cli(argv)
    except PosharnessError as exc:
        _fail(str(exc), exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _fail("interrupted: rerun the same command to resume where it stopped", 130)
    except click.ClickException as exc:
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see `{exc.ctx.command_path} --help`)"
        _fail(exc.format_message().replace("\n", " ") + hint, exc.exit_code or 2)
    except KeyboardInterrupt:
        _fail("interrupted: rerun the same command to resume where it stopped", 130)
    sys.exit(0)


def _run_cli(argv: list[str] | None) -> None:
    """The command, then, under a data-parallel launch, leaving its process group."""
    from posharness.base.distributed import leave

    try:
        cli.main(args=argv, prog_name=PROG, standalone_mode=False)
    except BaseException:
        leave(finished=False)
        raise
    leave(finished=True)


def _fail(message: str, code: int) -> None:
    click.echo(f"{PROG}: error: {message}", err=True)
    sys.exit(code)
