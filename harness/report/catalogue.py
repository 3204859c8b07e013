"""Which kind a task is (``TaskSpec.kind``: attention-geometry, probe …), and how it
describes itself; the report files its tasks in sections by kind.

A leaderboard stores task names only. The kind comes from the task's own result files
when they are at hand (``TaskInfo.kind``: right even for a plugin that is not installed
here), else from the task registry (the same lazy entries ``posharness list tasks``
shows), else the task is filed under "other tasks" — a report never fails for not knowing.
"""

from __future__ import annotations

from posharness.base.errors import PosharnessError
from posharness.contracts.results import TaskInfo

OTHER = "other tasks"


class TaskCatalogue:
    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}
        self._registered: dict[str, tuple[str, str] | None] = {}
        self._groups: dict[str, tuple[str, ...]] | None = None

    def learn(self, task: TaskInfo) -> None:
        self._kinds.setdefault(task.name, task.kind)

    def kind(self, task: str) -> str:
        if task in self._kinds:
            return self._kinds[task]
        spec = self._spec(task)
        return spec[0] if spec else OTHER

    def description(self, task: str) -> str | None:
        spec = self._spec(task)
        return spec[1] if spec else None

    def kind_of_summary(self, prefix: str) -> str:
        """A run's cross-mode summary folder is named after its task or its task group
        (``dep_heads__seed0__summary``, ``shuffle__seed0__summary``)."""
        if prefix in self._kinds or self._spec(prefix):
            return self.kind(prefix)
        members = self._group_members(prefix)
        return self.kind(members[0]) if members else OTHER

    def _spec(self, task: str) -> tuple[str, str] | None:
        if task not in self._registered:
            from posharness.plugins import tasks

            try:
                spec = tasks.get(task)().spec
                self._registered[task] = (spec.kind, spec.description)
            except (PosharnessError, ImportError, TypeError):
                self._registered[task] = None  # a group name, or a plugin not installed
        return self._registered[task]

    def _group_members(self, group: str) -> tuple[str, ...]:
        if self._groups is None:
            from posharness.plugins import tasks

            try:
                self._groups = tasks.groups()
            except PosharnessError:
                self._groups = {}
        return self._groups.get(group, ())
