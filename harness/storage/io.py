"""Files written all or nothing, locks that several processes share, and JSON-lines read
with errors that name file and line.

Every family writes through :func:`atomic_target` (or its text/JSON shorthands): the
content goes to a temporary name in the target's folder and is renamed into place, so a
reader — or a killed run picked up again — never sees half a file. A read-modify-write
that other processes may do at the same moment (a leaderboard merge, a cell's group of
files) holds the target's lock, :func:`exclusive` or :func:`claimed`. Every JSON-lines
reader goes through :func:`json_object_lines`, so a broken line is one message of the
form ``FILE:LINE: what is wrong: what to do``. Under a data-parallel launch only the
main process writes through :func:`atomic_target` (``distributed.py``).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from posharness.base.errors import DataError, OutputError
from posharness.base.faults import kill_point
from posharness.base.process import is_main_process

if TYPE_CHECKING:
    from filelock import BaseFileLock

# The write failures a user can fix (space, quota, permissions); others keep their traceback.
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


_UMASK = os.umask(0)
os.umask(_UMASK)


def temporary_tag() -> str:
    """Part of every temporary name: whose it is (host and process), so a later run can
    tell a killed run's leftovers from a live run's work in progress."""
    return f"ph-{socket.gethostname()}-{os.getpid()}-"


_TAGGED = re.compile(r"ph-(?P<host>.+)-(?P<pid>\d+)-")


def sweep_stale_temporaries(folder: Path, of: str | None = None) -> int:
    """Remove temporaries this host's dead processes left under ``folder``; their count.

    A SIGKILL skips every ``finally``, so a run killed mid-write leaves its temporary
    file (or staging folder) behind; the rerun removes it. Another live process's
    temporaries — a concurrent run on the same folder — are never touched. With ``of``,
    only that file's temporaries, in that folder alone (a leaderboard's, say).
    """
    if not folder.is_dir():
        return 0
    host, removed = socket.gethostname(), 0
    found = folder.glob(f".{of}.ph-*") if of else folder.rglob(".*ph-*")
    for path in found:
        if path.name.endswith(LOCK_SUFFIX):
            continue  # a lock file is never a leftover (see lock_file_of)
        match = _TAGGED.search(path.name)
        if match is None or match["host"] != host or _alive(int(match["pid"])):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed += 1
    return removed


def in_use_by_live_process(path: Path) -> bool:
    """A temporary that a live process on this host (or any process on another host) is
    writing: ``cache prune`` and sweeps must leave it alone."""
    match = _TAGGED.search(path.name)
    if match is None:
        return False
    return match["host"] != socket.gethostname() or _alive(int(match["pid"]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def atomic_target(path: Path, *, hint: str = "choose a writable folder") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` on success,
    removed on failure. ``hint`` ends the one-line error when the folder is not writable.

    Under a data-parallel launch only the main process writes: the others are given a
    scratch file outside every output folder, deleted afterwards, so callers need not
    know about the launch (docs/data_parallel.md)."""
    if not is_main_process():
        with _discarded_write(path) as scratch:
            yield scratch
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.{temporary_tag()}", suffix=".tmp"
        )
        os.close(handle)
    except OSError as exc:
        raise OutputError(
            f"cannot write to {path.parent} ({exc.strerror}): {_advice(exc, hint)}"
        ) from exc
    tmp = Path(name)
    try:
        with write_errors_in_one_line(str(path), hint):  # the old file stays intact
            yield tmp
            kill_point("atomic-write")
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; a result is a normal file
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextmanager
def write_errors_in_one_line(what: str, hint: str) -> Iterator[None]:
    """A write failure in the block that the user can fix (``WRITE_ERRORS``: a full disk,
    a quota, a folder gone read-only mid-run) ends in one line, ``cannot write WHAT
    (reason): fix``, with ``hint`` as the fix; any other OSError keeps its traceback. What
    a file (:func:`atomic_target`) and a report folder are written under alike."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in WRITE_ERRORS:
            raise
        raise OutputError(f"cannot write {what} ({exc.strerror}): {_advice(exc, hint)}") from exc


def _advice(exc: OSError, hint: str) -> str:
    """A full disk is not fixed by another writable folder on the same disk."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free space on that disk, or {hint}"
    return hint


@contextmanager
def _discarded_write(path: Path) -> Iterator[Path]:
    """Where a process other than a launch's main one writes ``path``'s content: a
    private scratch file, removed when the block ends."""
    handle, name = tempfile.mkstemp(prefix=f"posharness-discarded-{path.name}.", suffix=".tmp")
    os.close(handle)
    scratch = Path(name)
    try:
        yield scratch
    finally:
        scratch.unlink(missing_ok=True)


def check_writable_file(path: Path, option: str) -> None:
    """Fail now, in one line, if ``path`` could not be created or replaced later."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
        os.close(handle)
        os.unlink(name)
    except OSError as exc:
        raise OutputError(
            f"{option} {path}: its folder {folder} is not writable ({exc.strerror}): "
            f"pass {option} with a path you can write to"
        ) from exc


LOCK_SUFFIX = ".lock"


def lock_file_of(target: Path) -> Path:
    """The lock file that guards ``target``: ``.<name>.lock``, hidden, beside it.

    It stays after the lock is released, by design: removing a lock file that another
    process has just opened would let that process and a third hold "the" lock at once.
    It holds no data; the readers of results and leaderboards only look at ``*.json``.
    """
    return target.with_name(f".{target.name}{LOCK_SUFFIX}")


@contextmanager
def exclusive(target: Path, *, timeout: float | None, what: str) -> Iterator[None]:
    """Hold ``target``'s lock for the block, waiting at most ``timeout`` seconds for it
    (``None``: as long as the holder works).

    The lock is the operating system's (``flock`` through ``filelock``), so it dies with
    the process that holds it: the kernel closes a dead process's files, SIGKILL included,
    and the lock with them, so a killed run never leaves a lock that stops the next one
    (tests/unit/core/test_concurrent_runs.py kills a holder to show it). Only a live holder
    can make this wait, and past ``timeout`` the wait ends in one line that names the lock
    file; ``what`` (e.g. ``leaderboard board.json``) begins it.
    """
    from filelock import Timeout

    lock = _file_lock(target, what)
    try:
        lock.acquire(timeout=-1 if timeout is None else timeout)
    except Timeout:  # before OSError: filelock's Timeout is one
        raise OutputError(
            f"{what}: another process has held the lock {lock.lock_file} for over {timeout:g} s: "
            "let it finish or stop it (its lock ends with it), then rerun"
        ) from None
    except OSError as exc:
        _raise_lock_error(lock, what, exc)
    try:
        yield
    finally:
        lock.release()


@contextmanager
def claimed(target: Path, *, what: str) -> Iterator[bool]:
    """Hold ``target``'s lock for the block if no other process holds it now; yields
    whether it is held. Lets a run take the work nobody else is doing first and come back
    to the rest (:func:`exclusive`) instead of waiting at the first busy item."""
    from filelock import Timeout

    lock = _file_lock(target, what)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        yield False
        return
    except OSError as exc:
        _raise_lock_error(lock, what, exc)
    try:
        yield True
    finally:
        lock.release()


def _file_lock(target: Path, what: str) -> BaseFileLock:
    from filelock import FileLock

    path = lock_file_of(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"{what}: cannot create the folder of its lock {path} ({exc.strerror}): "
            "choose a writable folder"
        ) from exc
    return FileLock(path)


def _raise_lock_error(lock: BaseFileLock, what: str, exc: OSError) -> NoReturn:
    if exc.errno not in WRITE_ERRORS:
        raise exc
    raise OutputError(
        f"{what}: cannot create its lock {lock.lock_file} ({exc.strerror}): "
        f"{_advice(exc, 'choose a writable folder')}"
    ) from exc


def atomic_write_text(path: Path, text: str, *, hint: str = "choose a writable folder") -> None:
    with atomic_target(path, hint=hint) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_json(path: Path, document: Any, *, indent: int | None = 1) -> None:
    atomic_write_text(path, json.dumps(document, indent=indent) + "\n")


def read_json_or_none(path: Path) -> Any:
    """The JSON document at ``path``, or None where there is none to read: no file yet, or
    one that cannot be read or parsed. For the optional records a run keeps beside its
    outputs (a stage's state, a plan, a report's manifest): each is written whole by
    :func:`atomic_write_json`, so a broken one did not come from us and counts as absent."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def json_object_lines(path: Path, expected: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line of a JSON-lines file.

    ``expected`` says what one line should be (e.g. "one SNLI record"); it ends the
    message when a line is not UTF-8, not JSON, or JSON but not an object.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(
                    f"{path}:{number}: not UTF-8 text: each line must be {expected}"
                ) from None
            if line.strip():
                yield number, parse_json_object(line, f"{path}:{number}", expected)


def parse_json_object(line: str, where: str, expected: str) -> dict[str, Any]:
    """One line that must be a JSON object; ``where`` is ``FILE:LINE`` for the message."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{where}: not a JSON line ({exc.msg} at column {exc.colno}): "
            f"each line must be {expected}"
        ) from None
    if not isinstance(value, dict):
        raise DataError(
            f"{where}: a JSON {type(value).__name__}, not an object: each line must be {expected}"
        )
    return value
