"""The command line as a user meets it: bad input gives one line, exit code 2, fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FAST_ARGS = [
    "--task-arg",
    "locality_symmetry.length=24",
    "--task-arg",
    "locality_symmetry.words=8",
    "--task-arg",
    "locality_symmetry.bootstrap=10",
    "--task-arg",
    "locality_symmetry.figures=false",
    "--device",
    "cpu",
]


def tiny_run(tiny_bert: Path, *extra: str) -> list[str]:
    """`posharness run` of the fast locality task on the tiny test BERT."""
    return ["run", "--model", f"hf:{tiny_bert}", "--tasks", "locality_symmetry", *extra, *FAST_ARGS]


def posharness(
    *args: str, cwd: Path, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "posharness", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("posharness: error:")
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["run", "--model", "minilmm", "--tasks", "toeplitz"], ["unknown model", "minilm"]),
        (["run", "--model", "minilm", "--tasks", "toeplits"], ["unknown task", "toeplitz"]),
        (["run", "--model", "hf:./no/such/dir", "--tasks", "toeplitz"], ["does not exist"]),
        (
            ["run", "--model", "hf:nobody/missing-model", "--tasks", "toeplitz"],
            ["not in the local cache"],
        ),
        (
            ["run", "--model", "minilm", "--tasks", "toeplitz", "--limit", "0"],
            ["--limit", "positive"],
        ),
        (
            ["run", "--model", "minilm", "--tasks", "toeplitz", "--batch-size", "0"],
            ["--batch-size"],
        ),
        (
            ["run", "--model", "minilm", "--tasks", "toeplitz", "--batch-size", "many"],
            ["--batch-size"],
        ),
        (["run", "--model", "minilm", "--tasks", "toeplitz", "--device", "tpu"], ["--device"]),
        (["run", "--model", "minilm", "--tasks", "toeplitz", "--mode", "sideways"], ["--mode"]),
        (
            ["run", "--model", "minilm", "--tasks", "toeplitz", "--task-arg", "oops"],
            ["TASK.KEY=VALUE"],
        ),
        (["run", "--model", "minilm"], ["--tasks"]),
        (["list", "widgets"], ["widgets"]),
        (["leaderboard", "show", "missing.json"], ["does not exist"]),
        (["leaderboard", "build", "no-results-here", "-o", "lb.json"], ["does not exist"]),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(tmp_path, args, fragments):
    proc = posharness(*args, cwd=tmp_path)
    assert_one_line_error(proc, *fragments)
    assert not list(tmp_path.rglob("*.json"))


def test_unwritable_output_folder(tmp_path, tiny_bert):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = posharness(*tiny_run(tiny_bert, "--output-dir", str(blocker / "results")), cwd=tmp_path)
    assert_one_line_error(proc, "not writable", "--output-dir")


def test_full_run_then_rerun_skips_and_shows_the_leaderboard(tmp_path, tiny_bert):
    args = tiny_run(tiny_bert, "--leaderboard", "lb.json")
    first = posharness(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "locality" in first.stdout and "1 cell(s) run" in first.stdout
    second = posharness(*args, cwd=tmp_path)
    assert second.returncode == 0 and "0 cell(s) run, 1 already finished" in second.stdout
    shown = posharness("leaderboard", "show", "lb.json", "--format", "csv", cwd=tmp_path)
    header, row = shown.stdout.strip().splitlines()
    assert "locality_symmetry/locality" in header and row.split(",")[2] == "both"
    md = posharness("leaderboard", "show", "lb.json", "--format", "md", cwd=tmp_path)
    assert md.stdout.startswith("| PE family | model | mode |")


def test_corrupt_cache_entry_is_reported_with_the_fix(tmp_path, tiny_bert):
    args = tiny_run(tiny_bert)
    env = {"POSHARNESS_CACHE": str(tmp_path / "cache")}
    assert posharness(*args, cwd=tmp_path, env_extra=env).returncode == 0
    (entry,) = (tmp_path / "cache" / "identical-word-attention").rglob("*.safetensors")
    entry.write_bytes(b"\x00garbage")
    proc = posharness(*args, "--overwrite", cwd=tmp_path, env_extra=env)
    assert_one_line_error(proc, "corrupt", "--no-cache")
    ok = posharness(*args, "--overwrite", "--no-cache", cwd=tmp_path, env_extra=env)
    assert ok.returncode == 0


def test_files_of_another_schema_version_are_refused(tmp_path, tiny_bert):
    args = tiny_run(tiny_bert, "--leaderboard", "lb.json")
    assert posharness(*args, cwd=tmp_path).returncode == 0
    (result_file,) = (tmp_path / "results").rglob("*.json")
    data = json.loads(result_file.read_text())
    data["schema_version"] = 99
    result_file.write_text(json.dumps(data))
    proc = posharness("leaderboard", "build", "results", "-o", "new.json", cwd=tmp_path)
    assert_one_line_error(proc, "schema_version 99")
    assert not (tmp_path / "new.json").exists()
    board = json.loads((tmp_path / "lb.json").read_text())
    board["schema_version"] = 0
    (tmp_path / "old.json").write_text(json.dumps(board))
    assert_one_line_error(
        posharness("leaderboard", "show", "old.json", cwd=tmp_path), "schema_version 0"
    )


KILLER = """
import os, signal
import posharness.run.cell as runner  # where a cell writes its result
_real = runner.write_result
_count = {"n": 0}
def _write_then_die(result, path):
    _count["n"] += 1
    if _count["n"] == int(os.environ["DIE_AT"]):
        os.kill(os.getpid(), signal.SIGKILL)
    _real(result, path)
runner.write_result = _write_then_die
"""


def test_kill_9_mid_run_resumes_to_the_uninterrupted_results(tmp_path, tiny_bert):
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    args = tiny_run(tiny_bert, "--seed", "0,1,2", "--output-dir", "out")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    clean = posharness(*args, cwd=tmp_path / "a")
    assert clean.returncode == 0
    killed = posharness(
        *args, "--include", str(killer), cwd=tmp_path / "b", env_extra={"DIE_AT": "2"}
    )
    assert killed.returncode == -9
    assert len(list((tmp_path / "b" / "out").rglob("*.json"))) == 1
    assert not list((tmp_path / "b" / "out").rglob("*.tmp"))
    resumed = posharness(*args, cwd=tmp_path / "b")
    assert resumed.returncode == 0 and "2 cell(s) run, 1 already finished" in resumed.stdout
    for seed in (0, 1, 2):
        name = f"locality_symmetry__both__seed{seed}.json"
        a = json.loads(next((tmp_path / "a" / "out").rglob(name)).read_text())
        b = json.loads(next((tmp_path / "b" / "out").rglob(name)).read_text())
        assert a["metrics"] == b["metrics"] and a["cell_id"] == b["cell_id"]


def test_python_dash_m_and_console_script_agree(tmp_path):
    proc = posharness("--version", cwd=tmp_path)
    assert proc.returncode == 0 and "posharness" in proc.stdout


def test_three_modes_give_three_cells_that_state_their_split(tmp_path, tiny_bert):
    args = tiny_run(
        tiny_bert,
        "--mode",
        "both,contextual,positional",
        "--model-arg",
        "absolute=mean-word-stream",
        "--leaderboard",
        "lb.json",
    )
    proc = posharness(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = {p.name: json.loads(p.read_text()) for p in (tmp_path / "results").rglob("*.json")}
    assert len(results) == 3
    by_mode = {r["mode"]["name"]: r for r in results.values()}
    assert by_mode["both"]["mode"]["definition"] == "model as trained"
    for mode in ("contextual", "positional"):
        info = by_mode[mode]["mode"]
        assert info["definition"] == "mean-word-stream" and info["exact"] is False
        assert info["content_free_delta"] is True
    localities = {m: r["metrics"]["locality"]["value"] for m, r in by_mode.items()}
    assert len(set(localities.values())) == 3  # each mode attends differently
    term = {r["metrics"]["positional_term_locality"]["value"] for r in by_mode.values()}
    assert len(term) == 1  # delta does not depend on the mode a cell runs in
    shown = posharness("leaderboard", "show", "lb.json", "--format", "csv", cwd=tmp_path)
    assert sorted(line.split(",")[2] for line in shown.stdout.strip().splitlines()[1:]) == [
        "both",
        "contextual",
        "positional",
    ]


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (
            ["--mode", "positional", "--model-arg", "reference_corpus=/no/such.txt"],
            ["reference corpus /no/such.txt is not a file", "reference_corpus=FILE"],
        ),
        (["--model-arg", "absolute=nope"], ["absolute=nope", "tisa-mean-word"]),
        (["--model-arg", "colour=red"], ["--model-arg colour", "reference_corpus", "attention"]),
        (["--model-arg", "oops"], ["KEY=VALUE"]),
    ],
)
def test_bad_mode_options_give_one_line(tmp_path, tiny_bert, extra, fragments):
    proc = posharness(*tiny_run(tiny_bert, *extra), cwd=tmp_path)
    assert_one_line_error(proc, *fragments)
    assert not list(tmp_path.rglob("*.json"))


def test_a_second_run_adds_its_task_to_the_same_leaderboard(tmp_path, tiny_bert, capsys):
    from tests.cli_helpers import run_isolated

    def run_task(task: str) -> int:
        fast = [f"{task}.length=24", f"{task}.words=8", f"{task}.figures=false"]
        options = [part for option in fast for part in ("--task-arg", option)]
        return run_isolated(tmp_path, "--model", f"hf:{tiny_bert}", "--tasks", task, *options)

    assert run_task("locality_symmetry") == 0
    assert run_task("toeplitz") == 0
    assert "(1 row gained a task)" in " ".join(capsys.readouterr().out.split())
    board = json.loads((tmp_path / "board.json").read_text())
    assert {column["task"] for column in board["columns"]} == {"locality_symmetry", "toeplitz"}
    (row,) = board["rows"]
    assert any(k.startswith("locality_symmetry/") for k in row["scores"])
    assert any(k.startswith("toeplitz/") for k in row["scores"])
