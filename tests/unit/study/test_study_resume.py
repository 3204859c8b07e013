"""A study killed with SIGKILL in pretraining and again in evaluation is finished by the
same command, with the numbers of a study that was never interrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posharness.base.errors import StagesFailed
from posharness.base.faults import ENV_VAR
from posharness.study.workflow import run_study, study_status
from tests.unit.study.conftest import PRETRAIN_STUDY, write_study

pytestmark = pytest.mark.slow


def _quiet(line: str) -> None:
    pass


def _scores(study_folder: Path) -> dict[str, float]:
    found = {}
    for board in sorted((study_folder / "boards").glob("*.json")):
        for row in json.loads(board.read_text())["rows"]:
            for key, score in row["scores"].items():
                found[f"{board.stem}/{row['mode']}/{key}"] = score["mean"]
    return found


def _plan(path: Path) -> list[str]:
    from posharness.study.plan_text import plan_lines
    from posharness.study.workflow import plan_study

    return plan_lines(plan_study(path))


def _study(folder: Path, corpus: Path) -> Path:
    folder.mkdir()
    (folder / "corpus.txt").write_bytes(corpus.read_bytes())
    # No feature cache: the second study must encode again to be killed in encoding.
    return write_study(
        folder,
        PRETRAIN_STUDY.replace(
            'device = "cpu"\ntask_args', 'device = "cpu"\nno_cache = true\ntask_args'
        ),
    )


def test_killed_in_pretraining_and_in_evaluation_it_resumes_to_the_same_numbers(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _study(tmp_path / "a", corpus)
    run_study(reference, _quiet)
    expected = _scores(reference.parent / "study")
    assert expected and all(key.split("/")[0] in ("bert-a", "alibi") for key in expected)

    interrupted = _study(tmp_path / "b", corpus)
    assert "time: not measured yet" in "\n".join(_plan(interrupted))
    # 1. Every pretraining child dies (SIGKILL) at its third step, after checkpoint-2.
    monkeypatch.setenv(ENV_VAR, "pretrain-step:3")
    with pytest.raises(StagesFailed) as caught:
        run_study(interrupted, _quiet)
    monkeypatch.delenv(ENV_VAR)
    assert len(caught.value.failures) == 2
    states = dict((stage, state) for stage, state, _ in study_status(interrupted))
    assert states["pretrain/bert-a/seed0"] == "failed" and states["corpus"] == "done"
    assert (interrupted.parent / "study" / "pretrain" / "bert-a-seed0" / "checkpoint-2").is_dir()
    assert "tokens/s this study's runs measured" in "\n".join(_plan(interrupted))

    # 2. The study process itself dies (SIGKILL) in its second encoded batch.
    env = {**os.environ, ENV_VAR: "encode-batch:2"}
    command = [sys.executable, "-m", "posharness", "study", "run", str(interrupted)]
    killed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]

    # 3. The same command finishes it.
    outcome = run_study(interrupted, _quiet)
    assert outcome.failed == {}
    assert _scores(interrupted.parent / "study") == pytest.approx(expected, rel=1e-6, abs=1e-9)
    log = json.loads(
        (interrupted.parent / "study" / "pretrain" / "bert-a-seed0" / "loss_log.json").read_text()
    )
    assert [s["from_step"] for s in log["sessions"]] == [0, 2]  # resumed, not restarted

    # Two study folders compare board to board, as any two runs do.
    from posharness.boards.compare import compare_files

    board = Path("study") / "boards" / "alibi.json"
    compared = compare_files(reference.parent / board, interrupted.parent / board)
    metrics = [m for row in compared for m in row.metrics if m.a is not None]
    # equal numbers are a verdict of numerical precision, never a test (stats.precision)
    assert metrics and all(abs(m.delta) < 1e-9 for m in metrics)
    # so no equal pair is tested, and those with per-example outputs say why: exact
    assert all(m.test is None for m in metrics) and any(m.exact for m in metrics)
