"""A study's corpus and pretraining stages as Ray tasks, with the resources they declare.

Each pretraining job is one Ray task holding ``[resources] gpus_per_pretrain`` GPUs and
``cpus_per_pretrain`` CPUs; with ``processes_per_pretrain`` above one it is a multi-GPU
``accelerate launch`` job inside that task. The corpus stage runs first, then every
pretraining job at once (Ray queues what the cluster cannot hold). A cluster whose
largest node has fewer GPUs than a job asks for is refused before anything runs: such a
task would wait forever. Evaluation cells then go to Ray the way ``run --executor ray``
sends them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError
from posharness.study.dag import CORPUS, Stage
from posharness.study.folder import StudyFolder
from posharness.study.stages import TrainingStage
from posharness.study.study_file import Study


class RayStages:
    def __init__(self, study: Study) -> None:
        from posharness.run.executors.ray import RaySettings

        try:  # refused here, before any stage runs, not as a traceback in the first one
            import ray  # noqa: F401
        except ImportError:
            raise OptionError(
                "[run] executor = \"ray\" needs Ray: pip install 'posharness[ray]' (or "
                'pip install ray), or set executor = "serial"'
            ) from None

        self.cpus = study.resources.get("cpus_per_pretrain", 1.0)
        self.gpus = study.resources.get("gpus_per_pretrain", 0.0)
        self.processes = int(study.resources.get("processes_per_pretrain", 1))
        self.settings = RaySettings(study.run.get("ray_address"), self.cpus, self.gpus)
        self.connected = False

    def launcher(self) -> tuple[str, ...]:
        if self.processes <= 1:
            return ()
        return ("accelerate", "launch", "--num_processes", str(self.processes), "-m")

    def connect(self) -> None:
        from posharness.run.executors.ray import connect

        try:
            connect(self.settings)  # refuses a cluster whose nodes lack the GPUs asked for
        except OptionError as exc:
            raise OptionError(
                str(exc)
                .replace("--gpus-per-cell", "[resources] gpus_per_pretrain")
                .replace("--cpus-per-cell", "[resources] cpus_per_pretrain")
            ) from None
        self.connected = True

    def run(
        self,
        stages: list[Stage],
        folder: StudyFolder,
        training: TrainingStage | None,
        outcome: Any,
        say: Callable[[str], None],
    ) -> None:
        from posharness.study.execute import record

        if not stages:
            return
        import ray

        self.connect()
        remote = ray.remote(num_cpus=self.cpus, num_gpus=self.gpus, max_retries=0)(_stage_task)
        corpora = [s for s in stages if s.kind == CORPUS]
        for stage in corpora:  # first: every pretraining job reads what they prepare
            say(f"{stage.id}: running on Ray")
            log = str(folder.log(stage.id))
            error = ray.get(remote.remote(stage.commands, str(folder.root), log, ()))
            record(stage, folder, training, error, outcome, say)
        jobs = {}
        for stage in (s for s in stages if s.kind != CORPUS):
            if any(d in outcome.failed for d in stage.depends):
                outcome.blocked[stage.id] = next(d for d in stage.depends if d in outcome.failed)
                continue
            say(f"{stage.id}: submitted to Ray")
            log = str(folder.log(stage.id))
            ref = remote.remote(stage.commands, str(folder.root), log, self.launcher())
            jobs[ref] = stage
        folder.mark_running([s.id for s in jobs.values()])
        while jobs:
            done, _ = ray.wait(list(jobs), num_returns=1)
            for ref in done:
                stage = jobs.pop(ref)
                try:
                    error = ray.get(ref)
                except Exception as exc:  # a dead worker: one line, the others go on
                    error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                record(stage, folder, training, error, outcome, say)
        self.close()

    def close(self) -> None:
        if self.connected:
            from posharness.run.executors.ray import shutdown

            shutdown()
            self.connected = False


def _stage_task(commands: Any, root: str, log: str, launcher: tuple[str, ...]) -> str | None:
    """On a worker: the stage's commands in order, from the study folder with paths
    relative to it, as a serial study runs them (``execute.run_commands``); None, or the
    first one-line error."""
    from posharness.study.execute import run_commands

    return run_commands(commands, Path(root), Path(log), launcher)
