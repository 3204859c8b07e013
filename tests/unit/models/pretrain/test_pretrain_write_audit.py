"""Only the main process writes (issue 39, part 6): under a 2-process launch, the other
process creates, changes or removes nothing in the run folder, the prepared corpora or the
tokenizer it was given.

How it is seen: the launch runs with ``write_audit/`` on ``PYTHONPATH``, so each of its
Python processes imports ``write_audit/sitecustomize.py`` at start-up; in the process whose
``RANK`` is not 0 it reports on stderr every file or folder under the watched folders that
Python code opens for writing, creates, renames, removes or copies (an audit hook:
``sys.addaudithook`` sees the interpreter's ``open``, ``os.mkdir``, ``os.rename``,
``os.remove``, ``shutil`` events whichever library makes them), and every ``torch.save`` or
safetensors ``save_file`` into them (native writers, wrapped as their modules load). Its
docstring says what stays unseen; the files the launch leaves are compared with those of
one process in ``test_pretrain_data_parallel.py``.

The launch gives ``--tokenizer``: every process used to save it into the run folder.
About 20 s on 2 cores (one 2-process launch), hence ``slow``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.models.pretrain.test_pretrain_data_parallel import run_pretrain

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

AUDIT = Path(__file__).parent / "write_audit"


def audited(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("write-audit ")]


def test_the_audit_sees_a_write_of_a_process_other_than_the_main_one(tmp_path) -> None:
    """The check itself: a rank-1 process that writes in a watched folder is reported."""
    import subprocess
    import sys

    watched = tmp_path / "run"
    script = (
        "import pathlib, torch\n"
        f"run = pathlib.Path({str(watched)!r})\n"
        "(run / 'sub').mkdir(parents=True)\n"
        "(run / 'sub' / 'a.json').write_text('{}')\n"
        "torch.save({}, run / 'b.pt')\n"
        f"pathlib.Path({str(tmp_path / 'elsewhere.txt')!r}).write_text('not watched')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(AUDIT), "POSHARNESS_WRITE_AUDIT": str(watched)}
    env |= {"RANK": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert set(audited(done.stderr)) == {  # mkdir(parents=True) tries sub twice
        f"write-audit rank 1: os.mkdir {watched}",
        f"write-audit rank 1: os.mkdir {watched / 'sub'}",
        f"write-audit rank 1: open {watched / 'sub' / 'a.json'}",
        f"write-audit rank 1: torch.serialization.save {watched / 'b.pt'}",
    }


def test_only_the_main_process_writes_under_a_launch(corpus, tokenizer, tmp_path) -> None:
    tokenizer.save_pretrained(str(tmp_path / "tok"))
    run, corpora = tmp_path / "run", tmp_path / "corpora"  # run_pretrain's --prepared-dir
    watched = os.pathsep.join(str(p) for p in (run, corpora, tmp_path / "tok"))
    proc = run_pretrain(
        run, corpus, 2, "--tokenizer", str(tmp_path / "tok"),
        environment={"PYTHONPATH": str(AUDIT), "POSHARNESS_WRITE_AUDIT": watched,
                     "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (run / "final" / "model.safetensors").is_file()
    assert (run / "tokenizer" / "tokenizer.json").is_file()  # the main process saved it
    assert audited(proc.stderr) == []
