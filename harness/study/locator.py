"""Where a key or value sits in a study file, for messages that point at its line.

``tomllib`` keeps no line numbers, so the lines are found again in the file's text: a key
under its section (``[run]``, the second ``[[run]]``, ``[run.task_args]``), a name inside
a list (``tables = ["chen2023.fig3"]``), a task option written inline
(``task_args = { locality_symmetry = { word = 30 } }``) or under its own header
(``[run.task_args.locality_symmetry]``). A line that cannot be found is left out of the
message, never guessed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from posharness.base.errors import StudyFileError

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")


def close_matches(given: str, choices: Iterable[object]) -> list[str]:
    """Up to three known names close to ``given`` (``word`` → ``words``)."""
    return difflib.get_close_matches(given, [str(c) for c in choices], n=3, cutoff=0.5)


class Locator:
    """The lines of one study file, searched by section, key and value."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.lines = path, text.splitlines()

    def _sections(self) -> Iterator[tuple[int, str, int, str]]:
        """(line number, section path, index of the [[section]] it is in, line) for each
        line that is not a header; the index counts ``[[run]]`` headers (0 for ``[run]``)."""
        current, counts, index = "", {}, 0
        for number, line in enumerate(self.lines, 1):
            header = _HEADER.match(line)
            if header:
                current = header.group(2)
                top = current.split(".")[0]
                if header.group(1) == "[[" and "." not in current:
                    counts[top] = counts.get(top, -1) + 1
                index = counts.get(top, 0)
                continue
            yield number, current, index, line

    @staticmethod
    def _assigns(key: str) -> re.Pattern[str]:
        """``key =`` at a line's start or inside an inline table (``{ key = …``)."""
        return re.compile(rf"(^|[{{,]\s*)\s*[\"']?{re.escape(key)}[\"']?\s*=")

    def line_of(self, section: str, key: str, index: int | None = None) -> int | None:
        """The line of ``key`` in ``section`` (its ``index``-th ``[[section]]`` where given);
        with no section, the line of the header ``[key]`` / ``[[key]]``."""
        if not section:
            for number, line in enumerate(self.lines, 1):
                header = _HEADER.match(line)
                if header and header.group(2) == key:
                    return number
            return None
        pattern = self._assigns(key)
        for number, current, at, line in self._sections():
            if current.split(".")[0] != section or (index is not None and at != index):
                continue
            if pattern.search(line.split("#")[0]):
                return number
        return None

    def line_of_value(
        self, section: str, key: str, value: str, index: int | None = None
    ) -> int | None:
        """The line holding the quoted ``value`` of ``key`` (a list may span lines), else
        the key's line."""
        quoted = re.compile(rf"[\"']{re.escape(value)}[\"']")
        start = self.line_of(section, key, index)
        if start is not None:
            for number in range(start, len(self.lines) + 1):
                text = self.lines[number - 1]
                if quoted.search(text):
                    return number
                if "]" in text.split("#")[0] and number > start:
                    break
        return start

    def line_of_task_option(self, index: int, task: str, key: str) -> int | None:
        """The line that gives ``task``'s option ``key`` in the ``index``-th run section:
        inline beside the task's name, or under a header naming the task; else the line
        of the section's ``task_args``."""
        pattern = self._assigns(key)
        named = re.compile(rf"[\"']?{re.escape(task)}[\"']?\s*=")
        for number, current, at, line in self._sections():
            if current.split(".")[0] != "run" or at != index:
                continue
            code = line.split("#")[0]
            under_task = current.split(".")[-1].strip("\"'") == task
            after_task = code[named.search(code).end() :] if named.search(code) else None
            if after_task is not None and re.search(
                rf"[{{,]\s*[\"']?{re.escape(key)}[\"']?\s*=", after_task
            ):
                return number
            if under_task and pattern.search(code):
                return number
        return self.line_of("run", "task_args", index)

    def error(
        self,
        section: str,
        key: str,
        problem: str,
        choices: Iterable[object] = (),
        given: str | None = None,
        line: int | None = None,
    ) -> StudyFileError:
        """One line: the file, the line, the key, the problem, close matches to ``given``
        (the key itself when no value is named) among ``choices``."""
        line = line if line is not None else self.line_of(section, key)
        at = f"{self.path}" + (f" line {line}" if line else "")
        name = f"[{section}] {key}" if section else f"[{key}]"
        close = close_matches(given if given is not None else key, choices)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return StudyFileError(f"{at}: {name}: {problem}{hint}")
