"""The command lines of a README's tour, as a test runs them.

A README block is part of the tour when the line before its opening fence is the marker
comment ``<!-- tour: … -->`` (invisible on a rendered page). Each logical line of such a
block (backslash continuations joined) is one command, run in order from the repository
root. Two trailing comments, explained to readers in the README, change what the test
does with a line:

- ``# example: …`` — the line holds a placeholder (``hf:/path/to/…``): left out;
- ``# long: …`` — the command takes minutes on the README's data: the test appends
  ``--limit N`` (it must then be a ``posharness run``).

Lines that install the package, run this test suite or open a browser are left out by
:data:`NOT_RUN`, each with its reason.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

TOUR_MARKER = re.compile(r"^<!--\s*tour\b.*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
# A command and its trailing comment; README commands never hold a '#' themselves.
COMMENT = re.compile(r"^(?P<code>[^#]*?)\s*(?:#\s*(?P<comment>.*))?$")
# Commands the tour shows but a test must not run, by how they start, with the reason.
NOT_RUN = {
    "pip install": "installs the package: the test runs in the environment it installed "
    "(.ci/run installs with this very line)",
    "python -m pytest": "runs the test suite this test is part of",
    "xdg-open": "opens a browser",
}


@dataclass(frozen=True)
class Command:
    """One logical line of a tour block."""

    code: str  # the shell command, without its trailing comment
    comment: str  # the trailing comment ('' when none)
    line: int  # 1-based line of the README where it starts

    @property
    def example(self) -> bool:
        return self.comment.startswith("example:")

    @property
    def long(self) -> bool:
        return self.comment.startswith("long:")

    @property
    def not_run(self) -> str | None:
        """Why the test leaves this command out, or None when it runs it."""
        if self.example:
            return "a placeholder the reader replaces (# example:)"
        return next((why for start, why in NOT_RUN.items() if self.code.startswith(start)), None)

    def for_test(self, limit: int) -> str:
        """The command as the test runs it: ``--limit`` added where the README says long."""
        if not self.long:
            return self.code
        argv = shlex.split(self.code)
        if argv[:2] != ["posharness", "run"] or "--limit" in argv:
            raise ValueError(
                f"README line {self.line}: '# long:' marks a command the test shortens with "
                f"--limit, so it must be a `posharness run` without one: {self.code}"
            )
        return f"{self.code} --limit {limit}"


def tour_blocks(readme: Path) -> list[list[Command]]:
    """Every block of ``readme`` that a tour marker precedes, in order."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    blocks: list[list[Command]] = []
    index = 0
    while index < len(lines):
        if TOUR_MARKER.match(lines[index]) and index + 1 < len(lines):
            opening = FENCE.match(lines[index + 1])
            if opening is None or opening[1] not in ("bash", "sh", "shell", "console"):
                raise ValueError(
                    f"{readme.name} line {index + 1}: a tour marker must sit right above a "
                    "```bash fence"
                )
            end = index + 2
            while end < len(lines) and not FENCE.match(lines[end]):
                end += 1
            blocks.append(_commands(lines[index + 2 : end], first_line=index + 3))
            index = end
        index += 1
    return blocks


def _commands(body: list[str], first_line: int) -> list[Command]:
    commands: list[Command] = []
    pending: list[str] = []
    start = first_line
    for offset, text in enumerate(body):
        if not pending:
            start = first_line + offset
            if not text.strip() or text.lstrip().startswith("#"):
                continue
        stripped = text.rstrip()
        if stripped.endswith("\\"):  # a continuation: its comment, if any, is on the last line
            pending.append(stripped[:-1].strip())
            continue
        match = COMMENT.match(stripped.strip())
        if match is None:
            raise ValueError(f"README line {first_line + offset}: cannot read {text!r}")
        code = " ".join([*pending, match["code"].strip()])
        commands.append(Command(code, (match["comment"] or "").strip(), start))
        pending = []
    if pending:
        raise ValueError(f"README line {start}: a block ends inside a continued command")
    return commands
