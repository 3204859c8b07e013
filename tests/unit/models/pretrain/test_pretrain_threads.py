"""Pretraining takes its share of the cores (issue 46, part 5): several runs on 2 cores
never run more threads than cores unless OMP_NUM_THREADS asks for it, and then say so."""

from __future__ import annotations

import pytest
import torch

from posharness.models.pretrain import threads
from posharness.models.pretrain.threads import choose_threads, is_pretraining_command


@pytest.mark.parametrize(
    ("cores", "processes", "expected"),
    [(2, 1, 2), (2, 2, 1), (2, 3, 1), (16, 2, 8), (16, 3, 5), (1, 4, 1)],
)
def test_unset_threads_are_the_cores_shared_among_the_pretraining_processes(
    cores: int, processes: int, expected: int
) -> None:
    choice = choose_threads(cores, processes, {})
    assert choice.threads == expected and choice.given is None and not choice.oversubscribed
    assert f"{expected} torch thread(s) per process" in choice.line()


def test_a_given_omp_num_threads_is_kept_and_oversubscription_is_said() -> None:
    fitting = choose_threads(16, 2, {"OMP_NUM_THREADS": "4"})
    assert fitting.threads == 4 and not fitting.oversubscribed

    crowded = choose_threads(2, 3, {"OMP_NUM_THREADS": "4"})
    assert crowded.threads == 4 and crowded.oversubscribed
    assert "OMP_NUM_THREADS=4 with 2 core(s), 3 pretraining process(es)" in crowded.line()
    assert crowded.line().endswith("set OMP_NUM_THREADS=1")
    assert choose_threads(2, 1, {"OMP_NUM_THREADS": "zero"}).given is None  # not a count
    # one thread each is the floor: three runs on two cores ask for nothing fewer
    assert not choose_threads(2, 3, {"OMP_NUM_THREADS": "1"}).oversubscribed


def test_the_process_count_is_read_from_the_command_lines_of_the_interpreters() -> None:
    python = "/venv/bin/python3"
    assert is_pretraining_command([python, "/venv/bin/posharness", "pretrain", "--model", "x"])
    assert is_pretraining_command([python, "-m", "posharness", "pretrain"])
    assert not is_pretraining_command([python, "/venv/bin/posharness", "run", "--model", "x"])
    assert not is_pretraining_command(["timeout", "600", "posharness", "pretrain"])
    assert not is_pretraining_command(["bash", "-c", "posharness pretrain --model x"])
    assert threads.pretraining_processes() >= 1  # this one, at least


def test_two_runs_on_two_cores_set_one_torch_thread_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "pretraining_processes", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        choice = threads.set_pretraining_threads()
        assert choice.threads == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
