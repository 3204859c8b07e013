"""``--task-arg`` values are read as the option's declared type (its default's); a value that does
not parse says what was expected, with an example, in words a user can act on."""

from __future__ import annotations

import pytest

from posharness.base.errors import OptionError
from posharness.contracts.task import TaskSpec, resolve_options

SPEC = TaskSpec(
    "demo", "1", "test", "a task with one option of each kind", "x",
    defaults={"epochs": 3, "learning_rate": 2e-5, "figures": True, "pooling": "mean"},
)  # fmt: skip


def test_values_take_the_type_of_the_default():
    given = {"epochs": "5", "learning_rate": "1e-4", "figures": "no", "pooling": "cls"}
    options = resolve_options(SPEC, given)
    assert options == {"epochs": 5, "learning_rate": 1e-4, "figures": False, "pooling": "cls"}


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("epochs", "abc", "demo.epochs=abc: expected a whole number, e.g. demo.epochs=3"),
        ("epochs", "2.5", "--task-arg demo.epochs=2.5: expected a whole number"),
        ("learning_rate", "fast", "expected a number, e.g. demo.learning_rate=0.5"),
        ("figures", "maybe", "--task-arg demo.figures=maybe: expected true or false"),
    ],
)
def test_a_value_that_does_not_parse_names_what_was_expected(key, raw, message):
    with pytest.raises(OptionError) as caught:
        resolve_options(SPEC, {key: raw})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_key_lists_the_tasks_real_options_with_their_help():
    from posharness.api import get_task

    with pytest.raises(OptionError) as caught:
        resolve_options(get_task("toeplitz").spec, {"control": "5"})
    message = str(caught.value)
    assert message.startswith("task toeplitz has no option 'control': known options are ")
    assert "controls (int, default 20: Permutations in the shuffled control.)" in message
    assert "words (int, default 100: " in message and "\n" not in message
