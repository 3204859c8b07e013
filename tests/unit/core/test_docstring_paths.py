"""Every file path the code's docstrings and comments, the docs and the README mention exists.

A moved or renamed module leaves its old path behind in prose (``faults.py`` cited a
kill-battery test under a folder that never existed; the registry's usage example named a
module the decorator had left). Reviewers read those paths and follow them, so a stale one
is a small lie. This test finds every ``folder/file.py`` or ``folder/file.md`` in

- the docstrings and comments of ``harness/``, ``models/`` and ``tasks/``;
- ``docs/**/*.md`` and ``README.md``;

and requires the file to exist, resolved against the repository root, the mentioning
file's folder or any folder above it (``run/cell.py`` inside ``harness/run/``), or, for the
import spelling ``posharness/…``, the folder it installs from (``posharness/models/`` →
``models/``, ``posharness/tasks/`` → ``tasks/``, else ``harness/``). Web addresses are
skipped. Paths that are examples or live in other projects are listed in ``ALLOWED``.

Dotted module names in the same texts (``posharness.contracts.task.TaskSpec``) get the
same check: the modules must exist and the first name after the last module must appear
in it, so a module that moved in a layering is not cited under its old name.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("harness", "models", "tasks")

# A path with at least one folder, ending in .py or .md; not the tail of a longer path,
# a URL, a placeholder (<area>/x.py) or a shell variable ($OUT/x.py).
PATH = re.compile(r"(?<![\w/.\-~$<{])((?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_.\-]+\.(?:py|md))(?![\w/])")
URL = re.compile(r"\b[a-z][a-z+.\-]*://\S+")

# (mentioning file, path) pairs that need not exist, each with its reason.
ALLOWED: dict[tuple[str, str], str] = {
    # Files of the original SentEval repository (facebookresearch/SentEval), whose
    # classifier protocol the probing grid follows.
    ("docs/tasks/senteval.md", "senteval/tools/classifier.py"): "SentEval's own file",
    ("docs/tasks/senteval.md", "senteval/tools/validation.py"): "SentEval's own file",
    ("docs/tasks/senteval.md", "tools/classifier.py"): "SentEval's own file",
    ("docs/tasks/senteval.md", "tools/validation.py"): "SentEval's own file",
    ("tasks/senteval/probe_rules.py", "senteval/tools/classifier.py"): "SentEval's own file",
    ("tasks/senteval/probe_rules.py", "senteval/tools/validation.py"): "SentEval's own file",
    ("tasks/senteval/probe_grid.py", "tools/classifier.py"): "SentEval's own file",
    ("tasks/senteval/probe_grid.py", "tools/validation.py"): "SentEval's own file",
    # Files of LongEmbed (dwzhu-pku/LongEmbed), whose truncation the passkey docs describe.
    ("docs/tasks/length.md", "src/encoder_model.py"): "LongEmbed's own file",
    ("docs/tasks/length.md", "src/utils.py"): "LongEmbed's own file",
}
# (mentioning file, dotted name) that are not modules of this repository, with the reason.
ALLOWED_NAMES: dict[tuple[str, str], str] = {}


def _old_flat_path(name: str) -> bool:
    """A module path of the flat core that still imports (with a DeprecationWarning, from
    ``base/moved_modules.py``): named on purpose where a text explains the move."""
    from posharness.base.moved_modules import MOVED

    return any(name == old or name.startswith(old + ".") for old in MOVED)


# Entry-point groups: names in the posharness namespace that are not modules.
ENTRY_POINT_GROUPS = ("posharness.commands", "posharness.study_stages", "posharness.study_tables")
DOTTED = re.compile(r"(?<![\w.])(posharness(?:\.[A-Za-z_]\w*)+)")

# Example paths a reader replaces with their own.
EXAMPLE_PREFIXES = ("path/to/", "my_package/", "my_plugins/")


def docstrings_and_comments(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring and comment of a Python file."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring and node.body:
                yield node.body[0].lineno, docstring
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def markdown_lines(path: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)


def sources() -> Iterator[tuple[Path, Iterator[tuple[int, str]]]]:
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield path, docstrings_and_comments(path)
    for path in [*sorted((REPO / "docs").rglob("*.md")), REPO / "README.md"]:
        yield path, markdown_lines(path)


def _found(pattern: re.Pattern[str]) -> Iterator[tuple[str, int, str]]:
    for path, texts in sources():
        where = path.relative_to(REPO).as_posix()
        for line, text in texts:
            for found in pattern.finditer(URL.sub(" ", text)):
                yield where, line, found.group(1)


def mentions() -> Iterator[tuple[str, int, str]]:
    """(mentioning file relative to the repo, line, path mentioned)."""
    return _found(PATH)


def dotted_mentions() -> Iterator[tuple[str, int, str]]:
    """(mentioning file, line, ``posharness.…`` name)."""
    return _found(DOTTED)


def names_a_module(name: str) -> bool:
    """Whether ``posharness.a.b[.attr…]`` walks through existing packages to a module (or a
    package) and the first name after it occurs in that module's text."""
    parts = name.split(".")[1:]
    if parts and parts[0] in ("models", "tasks"):
        folder, parts = REPO / parts[0], parts[1:]
    else:
        folder = REPO / "harness"
    for position, part in enumerate(parts):
        if (folder / part).is_dir():
            folder = folder / part
            continue
        if (folder / f"{part}.py").is_file():
            rest = parts[position + 1 :]
            text = (folder / f"{part}.py").read_text(encoding="utf-8")
            return not rest or re.search(rf"\b{re.escape(rest[0])}\b", text) is not None
        init = folder / "__init__.py"
        return init.is_file() and re.search(rf"\b{re.escape(part)}\b", init.read_text()) is not None
    return True


def resolves(mentioned: str, where: str) -> bool:
    candidates = [REPO / mentioned]
    if mentioned.startswith("posharness/"):
        rest = mentioned.removeprefix("posharness/")
        top, _, inner = rest.partition("/")
        folder = top if top in ("models", "tasks") and inner else "harness"
        candidates.append(REPO / folder / (inner if folder != "harness" else rest))
    folder = (REPO / where).parent
    while folder != REPO:
        candidates.append(folder / mentioned)
        folder = folder.parent
    return any(candidate.exists() for candidate in candidates)


def test_every_mentioned_path_exists() -> None:
    stale = [
        f"{where}:{line}: {mentioned}"
        for where, line, mentioned in mentions()
        if (where, mentioned) not in ALLOWED
        and not mentioned.startswith(EXAMPLE_PREFIXES)
        and not resolves(mentioned, where)
    ]
    assert not stale, "paths mentioned but not in the repository:\n" + "\n".join(stale)


def test_every_mentioned_module_name_exists() -> None:
    stale = [
        f"{where}:{line}: {name}"
        for where, line, name in dotted_mentions()
        if (where, name) not in ALLOWED_NAMES
        and name not in ENTRY_POINT_GROUPS
        and not names_a_module(name)
        and not _old_flat_path(name)
    ]
    assert not stale, "module names mentioned but not in the repository:\n" + "\n".join(stale)


def test_every_allowed_path_is_still_mentioned_and_still_missing() -> None:
    """An allowance nobody needs any more (the text moved on, or the file came back) goes."""
    seen = {(where, mentioned) for where, _, mentioned in mentions()}
    unneeded = [
        f"{where}: {mentioned}"
        for where, mentioned in ALLOWED
        if (where, mentioned) not in seen or resolves(mentioned, where)
    ]
    names = {(where, name) for where, _, name in dotted_mentions()}
    unneeded += [
        f"{where}: {name}"
        for where, name in ALLOWED_NAMES
        if (where, name) not in names or names_a_module(name)
    ]
    assert not unneeded, "remove from ALLOWED or ALLOWED_NAMES:\n" + "\n".join(unneeded)


def test_the_scan_finds_paths_in_each_kind_of_text() -> None:
    """The scan itself: docstrings, comments and markdown all reach it."""
    found = {(where, mentioned) for where, _, mentioned in mentions()}
    assert ("harness/base/faults.py", "tests/unit/core/test_kill_battery.py") in found
    assert ("README.md", "docs/README.md") in found
    assert any(where.startswith("docs/") for where, _ in found)
    assert resolves("posharness/contracts/adapter.py", "README.md")
    assert resolves("posharness/models/decompose/core.py", "README.md")
    assert not resolves("posharness/identity.py", "README.md")
    assert names_a_module("posharness.contracts.task.TaskSpec")
    assert names_a_module("posharness.models.decompose.core")
    assert not names_a_module("posharness.identity")
    assert not names_a_module("posharness.contracts.task.NoSuchThing")
