"""One per-example output of a cell: what ``compare``'s paired tests, the degenerate-outcome
flags, the examples bundle and the report read.

A task returns its examples as :class:`Example` objects (or plain mappings, validated on
the way to disk); the runner writes them to ``examples.jsonl`` as flat JSON objects, and
every reader parses them back through :func:`read_example`. An example without an ``id``
is refused when the cell is written, not silently dropped when it is compared: the id is
what pairs two models' outputs on the same input.

Named fields are the ones readers interpret; anything else a task keeps (the per-example
value of each metric, the probe word, the sentence) travels as an extra field and is
reached with :meth:`Example.value`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from posharness.base.errors import DataError, TaskOutputError


class Example(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1)  # stable across models: what pairs two cells' outputs
    split: str | None = None  # the data split it comes from (fine-tune report splits)
    prefix: str | None = None  # metric-name prefix of its split (``matched_``, ``dev_``)
    label: Any = None  # gold label
    prediction: Any = None  # the model's prediction
    score: float | None = None  # a continuous output where a task has one

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def value(self, name: str) -> Any:
        """A named field or an extra (a metric's per-example value); None when absent."""
        if name in type(self).model_fields:
            return getattr(self, name)
        return (self.model_extra or {}).get(name)

    def has(self, name: str) -> bool:
        """Whether the task recorded ``name`` for this example (a named field it set, or
        an extra)."""
        return name in self.model_fields_set or name in (self.model_extra or {})

    def record(self) -> dict[str, Any]:
        """The flat JSON object written to disk: the fields the task set, then extras."""
        return self.model_dump(exclude_unset=True)


def as_examples(task: str, examples: Iterable[Example | Mapping[str, Any]]) -> list[Example]:
    """A task's examples, validated before they are written; one line naming the task and
    the first bad example otherwise."""
    return [
        example
        if isinstance(example, Example)
        else _validated(
            example,
            lambda reason, n=position: TaskOutputError(
                f"task {task!r} returned per-example output {n} without a usable 'id' "
                f"({reason}): every example needs a non-empty id so compare can pair it "
                "with another model's"
            ),
        )
        for position, example in enumerate(examples)
    ]


def read_example(record: Mapping[str, Any], where: str) -> Example:
    """One example as a run wrote it; a record without an id is damage, said in one line."""
    return _validated(
        record,
        lambda reason: DataError(
            f"{where}: a per-example output without a usable 'id' ({reason}): rerun the "
            "cell, or rebuild the bundle from its results"
        ),
    )


def _validated(record: Any, error: Callable[[str], Exception]) -> Example:
    try:
        return Example.model_validate(dict(record))
    except (ValidationError, TypeError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "record"
            reason = f"{where}: {first.get('msg', 'invalid')}"
        else:
            reason = str(exc)
        raise error(reason) from None
