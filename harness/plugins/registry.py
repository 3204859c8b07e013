"""One typed registry for every pluggable kind of thing (models, tasks).

Usage::

    from posharness.plugins import register_task

    @register_task("my_probe")
    class MyProbe: ...

Entries can be *lazy*: a ``"module:attr"`` string that is imported only when the entry is
first used, so ``posharness --help`` and ``posharness list`` stay fast and the core never
imports the built-in models or tasks at start-up. Three ways in from outside: the Python
API (the decorators), entry points (groups ``posharness.models`` / ``posharness.tasks``)
and ``--include PATH`` (a .py file or a folder of them). Each entry remembers where it
came from so ``posharness list`` can show it.

One broken plugin must not take the others down (issue 29, "a plugin that raises at
import"): a module-only entry point whose import raises anything is reported on stderr in
one line naming the plugin, its distribution and its error, the other plugins still load,
and an unknown name of that registry later says which plugins failed (the name may have
been theirs). A lazy entry whose module raises is a one-line :class:`UnknownNameError`.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Generic, TypeVar

from posharness.base.errors import OptionError, PosharnessError, UnknownNameError

T = TypeVar("T")

BUILTIN = "built-in"
PLUGIN = "plugin"
INCLUDE = "include"


@dataclass(frozen=True)
class PluginFailure:
    """A plugin whose import raised: what the unknown-name message and stderr name."""

    name: str  # the entry point's name
    distribution: str
    error: str  # "ValueError: boom"

    def line(self) -> str:
        return (
            f"posharness: plugin {self.name!r} from distribution {self.distribution} failed "
            f"to import ({self.error}); its names are unavailable: fix or uninstall "
            f"{self.distribution}"
        )


_LISTINGS = {"model": "posharness list models", "task": "posharness list tasks"}

# Modules of entry points that already failed in this process, with their error: a module
# named by two groups (a family's models and tasks) is tried, and reported, once.
_FAILED_MODULES: dict[str, str] = {}


@dataclass
class Entry(Generic[T]):
    """One registered name: the object itself, or the import path that yields it."""

    name: str
    target: str | None  # "module:attr" while lazy
    obj: T | None
    origin: str  # built-in | plugin (dist name) | include (path)
    source: str  # the distribution or file it came from

    @property
    def loaded(self) -> bool:
        return self.obj is not None


class Registry(Generic[T]):
    """Name → object, with lazy import, aliases, groups and close-match errors."""

    def __init__(self, kind: str, entry_point_group: str, *, listing: str | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        # The command that lists this registry's names, for unknown-name errors: `posharness
        # list models|tasks` for those two; a registry with no listing command names none.
        self.listing = listing or _LISTINGS.get(kind)
        self._entries: dict[str, Entry[T]] = {}
        self._aliases: dict[str, str] = {}
        self._groups: dict[str, tuple[str, ...]] = {}
        self._plugins_loaded = False
        # Plugins of this group that failed to import: (entry point, distribution, error).
        self.failed_plugins: list[PluginFailure] = []
        # While an --include file or plugin module is imported, new registrations take
        # its origin instead of "built-in".
        self._origin_stack: list[tuple[str, str]] = []

    # -- registration -------------------------------------------------------------------
    def register(self, name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[T], T]:
        """Decorator form: ``@registry.register("name")``."""

        def decorate(obj: T) -> T:
            self.add(name, obj, aliases=aliases)
            return obj

        return decorate

    def add(self, name: str, obj: T, *, aliases: tuple[str, ...] = ()) -> None:
        existing = self._entries.get(name)
        if existing is not None:
            target = f"{getattr(obj, '__module__', '')}:{getattr(obj, '__qualname__', '')}"
            if existing.obj is obj or (existing.obj is None and existing.target == target):
                # The lazy entry's own module is being imported: fill it in.
                existing.obj = obj
                self._add_aliases(name, aliases)
                return
            raise OptionError(
                f"{self.kind} name {name!r} is registered twice ({existing.source} and "
                f"{self._current_source()}): rename one of them"
            )
        origin, source = self._origin_stack[-1] if self._origin_stack else (BUILTIN, "posharness")
        self._entries[name] = Entry(name, None, obj, origin, source)
        self._add_aliases(name, aliases)

    def add_lazy(
        self,
        name: str,
        target: str,
        *,
        aliases: tuple[str, ...] = (),
        origin: str | None = None,
        source: str | None = None,
    ) -> None:
        if origin is None or source is None:
            origin, source = (
                self._origin_stack[-1] if self._origin_stack else (BUILTIN, "posharness")
            )
        if name in self._entries:
            return  # an eager registration wins over a lazy one of the same name
        self._entries[name] = Entry(name, target, None, origin, source)
        self._add_aliases(name, aliases)

    def add_group(self, name: str, members: tuple[str, ...]) -> None:
        """A name that expands to several entries (``glue`` → its nine tasks)."""
        self._groups[name] = tuple(members)

    def _add_aliases(self, name: str, aliases: tuple[str, ...]) -> None:
        for alias in aliases:
            self._aliases[alias] = name

    def _current_source(self) -> str:
        return self._origin_stack[-1][1] if self._origin_stack else "posharness"

    # -- lookup -------------------------------------------------------------------------
    def get(self, name: str) -> T:
        self.load_plugins()
        entry = self._entry(name)
        if entry.obj is None:
            assert entry.target is not None
            entry.obj = import_target(entry.target, self.kind, name)
        return entry.obj

    def entry(self, name: str) -> Entry[T]:
        self.load_plugins()
        return self._entry(name)

    def _entry(self, name: str) -> Entry[T]:
        canonical = self._aliases.get(name, name)
        if canonical not in self._entries:
            raise UnknownNameError(self._unknown_message(name))
        return self._entries[canonical]

    def __contains__(self, name: str) -> bool:
        self.load_plugins()
        return self._aliases.get(name, name) in self._entries or name in self._groups

    def names(self) -> list[str]:
        self.load_plugins()
        return sorted(self._entries)

    def entries(self) -> Iterator[Entry[T]]:
        """Every entry, loaded; one whose import fails is reported on stderr in one line
        and left out, so ``posharness list`` still shows the others."""
        for name in self.names():
            entry = self._entries[name]
            if entry.obj is None:
                try:
                    self.get(name)
                except UnknownNameError as exc:
                    print(f"posharness: {exc}", file=sys.stderr)
                    continue
            yield entry

    def groups(self) -> dict[str, tuple[str, ...]]:
        self.load_plugins()
        return dict(self._groups)

    def expand(self, names: list[str]) -> list[str]:
        """Expand groups (recursively) and drop duplicates, keeping first-seen order."""
        self.load_plugins()
        out: list[str] = []
        for name in names:
            if name in self._groups:
                members = self.expand(list(self._groups[name]))
            else:
                self._entry(name)  # raises with close matches
                members = [self._aliases.get(name, name)]
            out.extend(m for m in members if m not in out)
        return out

    def _unknown_message(self, name: str) -> str:
        known = sorted(set(self._entries) | set(self._aliases) | set(self._groups))
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(known)}"
        message = f"unknown {self.kind} {name!r}: {hint}"
        if self.listing:
            message += f" (see `{self.listing}`)"
        if self.failed_plugins:
            failed = "; ".join(
                f"{f.name!r} from {f.distribution} ({f.error})" for f in self.failed_plugins
            )
            message += f"; plugins that failed to import and may provide it: {failed}"
        return message

    # -- plugins ------------------------------------------------------------------------
    def load_plugins(self) -> None:
        """Register the entry points of installed distributions (once, lazily)."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.entry_point_group):
            dist = ep.dist.name if ep.dist is not None else "unknown distribution"
            origin = BUILTIN if dist == "posharness" else PLUGIN
            if ep.attr:
                self.add_lazy(ep.name, f"{ep.module}:{ep.attr}", origin=origin, source=dist)
            else:
                # A module-only entry point registers its names by decorators on import.
                self._import_plugin_module(ep.name, ep.module, origin, dist)

    def _import_plugin_module(self, name: str, module: str, origin: str, dist: str) -> None:
        """Import one module-only plugin; on any exception report it once on stderr,
        remember it for unknown-name messages and go on with the others."""
        error = _FAILED_MODULES.get(module)
        if error is None:
            try:
                with self.origin(origin, dist):
                    importlib.import_module(module)
                return
            except Exception as exc:  # a plugin's bug, of any kind, is its own
                error = _FAILED_MODULES[module] = one_line_error(exc)
                print(PluginFailure(name, dist, error).line(), file=sys.stderr)
        self.failed_plugins.append(PluginFailure(name, dist, error))

    def origin(self, origin: str, source: str) -> _OriginScope:
        return _OriginScope(self, origin, source)


class _OriginScope:
    def __init__(self, registry: Registry, origin: str, source: str) -> None:
        self.registry, self.pair = registry, (origin, source)

    def __enter__(self) -> None:
        self.registry._origin_stack.append(self.pair)

    def __exit__(self, *exc: object) -> None:
        self.registry._origin_stack.pop()


def import_target(target: str, kind: str, name: str):
    """The object a ``"module:attr"`` string names; one-line errors when it is gone."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownNameError(
            f"{kind} {name!r} points to {target!r}, which cannot be imported ({exc}): "
            "reinstall the package that provides it"
        ) from exc
    except Exception as exc:  # the module is there but raises: a bug in the plugin
        raise UnknownNameError(
            f"{kind} {name!r} points to {target!r}, whose import failed "
            f"({one_line_error(exc)}): fix or uninstall the package that provides it"
        ) from exc
    obj = module
    for part in attr.split(".") if attr else []:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UnknownNameError(
                f"{kind} {name!r} points to {target!r}, but {module_name} has no attribute "
                f"{part!r}: reinstall or fix the package that provides it"
            ) from None
    return obj


def one_line_error(exc: BaseException) -> str:
    """``ValueError: boom``, on one line however long the message."""
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def include(path: str | Path, registries: tuple[Registry, ...]) -> list[str]:
    """Import a .py file, or every .py file in a folder, so its decorators register.

    Registrations made while importing are marked with origin ``include`` and the file.
    Returns the module names imported.
    """
    path = Path(path)
    if not path.is_dir() and not path.is_file():  # missing, or a device such as /dev/null
        raise OptionError(
            f"--include {path}: no such file or folder; give a .py file or a folder of them"
        )
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    if path.is_file() and path.suffix != ".py":
        raise OptionError(f"--include {path}: not a .py file; give a Python file or a folder")
    # Installed plugins first: an included file must not shadow them, nor take their origin.
    for registry in registries:
        registry.load_plugins()
    imported = []
    for file in files:
        module_name = f"posharness_include_{abs(hash(str(file.resolve()))):x}_{file.stem}"
        if module_name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(module_name, file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        scopes = [r.origin(INCLUDE, str(file)) for r in registries]
        for scope in scopes:
            scope.__enter__()
        try:
            spec.loader.exec_module(module)
        except PosharnessError as exc:  # already one line with its fix (a refused registration)
            del sys.modules[module_name]
            raise type(exc)(f"--include {file.name}: {exc}") from exc
        except Exception as exc:
            del sys.modules[module_name]
            raise OptionError(
                f"--include {file}: importing it failed ({type(exc).__name__}: {exc}); fix the file"
            ) from exc
        finally:
            for scope in scopes:
                scope.__exit__()
        imported.append(module_name)
    return imported
