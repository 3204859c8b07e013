"""Pretraining stages on Ray: a cluster that cannot give a job its GPUs is refused in one
line before any stage runs (a task asking for them would wait forever)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.study.conftest import PRETRAIN_STUDY, write_study

pytestmark = pytest.mark.slow
pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]'")


def test_gpus_a_pretraining_job_asks_for_that_no_node_has_are_one_line(
    tmp_path: Path, corpus: Path
) -> None:
    text = PRETRAIN_STUDY.replace("[run]", "[resources]\ngpus_per_pretrain = 2\n\n[run]")
    text = text.replace('modes = ["both"]', 'modes = ["both"]\nexecutor = "ray"')
    study = write_study(tmp_path, text)
    done = subprocess.run(
        [sys.executable, "-m", "posharness", "study", "run", str(study)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("posharness: error:") and "[resources] gpus_per_pretrain 2" in error
    assert not (tmp_path / "study" / "pretrain").exists()  # nothing was trained
