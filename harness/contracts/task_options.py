"""A task's options, declared: each one a name, a type, a default and a one-line help.

A family writes them once in its ``TaskSpec(options=...)``; ``--task-arg TASK.KEY=VALUE``
is read through them (:func:`posharness.contracts.task.resolve_options`), and ``posharness
list tasks --format json`` and ``posharness describe TASK`` show them. A plugin that still
passes plain ``defaults={...}`` gets one undocumented option per key, typed by its default,
which is how every option was read before declarations existed; so an option's value, and
the cell id hashed from it, is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from posharness.base.errors import OptionError

# The types a --task-arg string can be read as; what a value that does not parse should
# have been, in words and by example (a default of 0 may mean "the protocol's", so the
# example is not the default).
TYPES: dict[type, tuple[str, str]] = {
    bool: ("true or false", "false"),
    int: ("a whole number", "3"),
    float: ("a number", "0.5"),
    str: ("text", "x"),
}
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


@dataclass(frozen=True)
class TaskOption:
    """One task option. ``type`` defaults to the type of ``default``; a declared type must
    agree with it, so a declaration never changes what a value resolves to."""

    name: str
    default: Any  # bool, int, float or str; a plugin's other default is read as text
    help: str = ""
    type: type | None = None

    def __post_init__(self) -> None:
        kind = type(self.default)
        if self.type is None:
            object.__setattr__(self, "type", kind)
        elif self.type is not kind:
            raise TypeError(f"task option {self.name}: type {self.type.__name__} but default "
                            f"{self.default!r}")  # fmt: skip

    @property
    def type_name(self) -> str:
        return self.value_type.__name__

    @property
    def value_type(self) -> type:
        return self.type or type(self.default)

    def read(self, task: str, raw: Any) -> Any:
        """A ``--task-arg`` value (a string, or a typed value from Python) as this option's
        type; one line naming what was expected when it does not parse."""
        kind = self.value_type
        if isinstance(raw, kind) and kind is not bool:
            return raw
        try:
            if kind is bool:
                lowered = str(raw).lower()
                if lowered not in _TRUE | _FALSE:
                    raise ValueError(raw)
                return lowered in _TRUE
            if kind is int:
                return int(raw)
            if kind is float:
                return float(raw)
        except ValueError:
            words, example = TYPES[kind]
            raise OptionError(
                f"--task-arg {task}.{self.name}={raw}: expected {words}, "
                f"e.g. {task}.{self.name}={example}"
            ) from None
        return str(raw)

    def describe(self) -> dict[str, Any]:
        """The option as JSON-ready fields, for listings."""
        return {"name": self.name, "type": self.type_name, "default": self.default,
                "help": self.help}  # fmt: skip


def declared(defaults: dict[str, Any], options: tuple[TaskOption, ...]) -> tuple[TaskOption, ...]:
    """Every option of a spec: the declared ones, then one per plain default not declared."""
    names = {option.name for option in options}
    if len(names) != len(options):
        raise TypeError(f"task options declared twice: {sorted(o.name for o in options)}")
    extra = tuple(TaskOption(key, value) for key, value in defaults.items() if key not in names)
    return (*options, *extra)


def unknown_option(task: str, key: str, options: tuple[TaskOption, ...]) -> OptionError:
    """The error for ``--task-arg TASK.KEY`` with a KEY the task does not take: its real
    options with their help, on one line."""
    if not options:
        return OptionError(f"task {task} has no option {key!r}: it takes no options")
    listed = "; ".join(
        f"{o.name} ({o.type_name}, default {o.default!r}{': ' + o.help if o.help else ''})"
        for o in sorted(options, key=lambda o: o.name)
    )
    return OptionError(f"task {task} has no option {key!r}: known options are {listed}")
