"""How many torch threads a CPU pretraining process uses: its share of the cores.

PyTorch starts as many intra-op threads as the machine has cores, in every process. Two
pretraining runs on a 2-core machine then run four threads on two cores, and a step that
takes 0.54 s with one thread each took 5.5 s (issue 46: the cpu-hour study's plan said
3.0 h; the run took 14 min once each ran one thread). So a pretraining process on the CPU
takes ``max(1, cores // processes)`` threads, where ``processes`` counts the pretraining
processes running on this machine, itself included (a data-parallel launch's workers are
such processes too). ``OMP_NUM_THREADS``, when set, is the user's choice and is kept; a
line then says when it oversubscribes the cores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath

VARIABLE = "OMP_NUM_THREADS"


@dataclass(frozen=True)
class ThreadChoice:
    threads: int  # torch intra-op threads this process uses
    cores: int  # the cores this process may run on
    processes: int  # pretraining processes on this machine, this one included
    given: int | None  # OMP_NUM_THREADS when the user set it

    @property
    def fair_share(self) -> int:
        return max(1, self.cores // self.processes)

    @property
    def oversubscribed(self) -> bool:
        """More threads than this process's share of the cores (one thread each is the
        floor: with more runs than cores there is nothing fewer to ask for)."""
        return self.threads > self.fair_share

    def line(self) -> str:
        """What the run says about its threads (stderr, once)."""
        where = f"{self.cores} core(s), {self.processes} pretraining process(es) running here"
        if self.given is None:
            return (
                f"threads: {self.threads} torch thread(s) per process ({where}; {VARIABLE} sets it)"
            )
        if self.oversubscribed:
            return (
                f"threads: {VARIABLE}={self.given} with {where} oversubscribes the cores "
                f"({self.threads * self.processes} threads; each step can slow several-fold): "
                f"set {VARIABLE}={self.fair_share}"
            )
        return f"threads: {self.threads} ({VARIABLE}; {where})"


def choose_threads(cores: int, processes: int, environ: Mapping[str, str]) -> ThreadChoice:
    """The thread count for one of ``processes`` pretraining processes on ``cores`` cores."""
    cores, processes = max(1, cores), max(1, processes)
    given = _positive_int(environ.get(VARIABLE))
    if given is not None:
        return ThreadChoice(given, cores, processes, given)
    return ThreadChoice(max(1, cores // processes), cores, processes, None)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. under a Slurm job or
    ``taskset``), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def is_pretraining_command(argv: Iterable[str]) -> bool:
    """Whether a command line is a Python process running ``posharness pretrain``
    (``python …/bin/posharness pretrain``, ``python -m posharness pretrain``); a shell or
    ``timeout`` around it is not counted, only the interpreter doing the work."""
    args = list(argv)
    if not args or not PurePath(args[0]).name.startswith("python"):
        return False
    names = [PurePath(arg).name for arg in args[1:]]
    return "pretrain" in names and any(n in ("posharness", "posharness.__main__") for n in names)


def pretraining_processes() -> int:
    """Pretraining processes on this machine, this one included: those whose command line
    is one (:func:`is_pretraining_command`) and that start no such process themselves (a
    launcher's workers count, not the launcher)."""
    import psutil

    me = psutil.Process()
    matched = set()
    for process in psutil.process_iter(["pid", "ppid", "cmdline"]):
        try:
            if is_pretraining_command(process.info["cmdline"] or ()):
                matched.add((process.info["pid"], process.info["ppid"]))
        except (psutil.Error, TypeError):
            continue
    parents = {ppid for _, ppid in matched}
    workers = {pid for pid, _ in matched if pid not in parents}
    ancestors = {parent.pid for parent in me.parents()}
    return len(workers - ancestors - {me.pid}) + 1


def set_pretraining_threads(
    cores: int | None = None,
    processes: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> ThreadChoice:
    """Choose this process's threads (:func:`choose_threads`) and give them to torch,
    unless ``OMP_NUM_THREADS`` is set (torch has read it already)."""
    import torch

    choice = choose_threads(
        usable_cores() if cores is None else cores,
        pretraining_processes() if processes is None else processes,
        os.environ if environ is None else environ,
    )
    if choice.given is None:
        torch.set_num_threads(choice.threads)
    return choice


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value >= 1 else None
