"""Warnings once under a launch (issue 39, part 6): every process of a launch ran the same
code, so each warning came out once per process (the vocabulary warning twice under 2
processes). The main process keeps them; the others print errors only."""

from __future__ import annotations

import logging
import warnings

import pytest

from posharness.models.pretrain.launch_output import quiet_unless_main


@pytest.fixture
def restored():
    """The process-wide switches ``quiet_unless_main`` turns, put back after the test."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    with warnings.catch_warnings():
        yield
    logging.disable(logging.NOTSET)
    hf_logging.set_verbosity(verbosity)


LOGGERS = (
    "posharness.models.pretrain.workflow",  # ours: the vocabulary a corpus yields
    "transformers.tokenization_utils_base",
    "accelerate.accelerator",
    "torch.distributed",
)


def heard(quiet_expected: bool) -> tuple[list[bool], list[bool], int]:
    """(each logger prints a warning, each prints an error, Python warnings shown) after
    ``quiet_unless_main``, with transformers at its usual warning verbosity."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_warning()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        assert quiet_unless_main() is quiet_expected
        warnings.warn("a library's deprecation", FutureWarning, stacklevel=1)
    loggers = [logging.getLogger(name) for name in LOGGERS]
    return (
        [logger.isEnabledFor(logging.WARNING) for logger in loggers],
        [logger.isEnabledFor(logging.ERROR) for logger in loggers],
        len(shown),
    )


@pytest.mark.parametrize(("rank", "quiet"), [("0", False), ("1", True)])
def test_only_the_main_process_of_a_launch_prints_warnings(
    rank, quiet, monkeypatch, restored
) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", rank)
    warns, errors, python_warnings = heard(quiet)
    assert warns == [not quiet] * len(LOGGERS)
    assert errors == [True] * len(LOGGERS)  # a failing process still says why
    assert python_warnings == (0 if quiet else 1)


def test_a_single_process_keeps_its_warnings(monkeypatch, restored) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setenv("RANK", "3")  # a stray RANK alone is no launch
    assert heard(False) == ([True] * len(LOGGERS), [True] * len(LOGGERS), 1)
