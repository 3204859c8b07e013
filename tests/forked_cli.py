"""``python -m posharness ARGS`` as a fresh process that skips the import of torch.

Tests that start the command line many times (the kill battery starts it about 180 times)
spent most of their time importing torch and transformers, seconds per start, not in the
command. A ``Forker`` is one Python process that imports those two once and then, per
command, forks a child that sets the command's environment, working folder and output
files and runs posharness's ``main`` — exactly what ``python -m posharness`` runs.

The child is a real process of its own: a kill point's SIGKILL ends it as ``kill -9`` ends
a fresh interpreter (its exit code reads -9), its files are its own, and posharness itself
is first imported in the child, after its environment is set, so no posharness state is
shared between commands. Only the already-imported torch and transformers modules are
inherited; no torch thread pool exists before the fork (nothing is computed there).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# Third-party modules every posharness command imports, slowest first (``-X importtime``
# of a geometry run: torch, transformers, matplotlib, scipy, sympy — torch's symbolic
# shapes — accelerate): none of them reads posharness's variables.
PRELOADED = (
    "torch", "transformers", "matplotlib", "matplotlib.pyplot", "scipy.stats", "sympy",
    "accelerate", "safetensors.torch", "rich.console", "jinja2", "pydantic",
)  # fmt: skip

# The forker: reads one JSON request a line, forks, and answers the child's pid and then
# its exit code (negative for a signal, as subprocess reports it). The child leaves the
# loop and runs posharness's main at the top level, so it exits as a script does (atexit
# handlers run: a kill point's tally is written that way).
_FORKER = r"""
import importlib, json, os, sys
for name in PRELOADED:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
from transformers import BertConfig, BertModel, BertTokenizer  # resolve the lazy modules
requests, answers = sys.stdin, sys.stdout
child = None
for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child = request
        break
    answers.write(json.dumps({"pid": pid}) + "\n"); answers.flush()
    _, status = os.waitpid(pid, 0)
    answers.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
    answers.flush()
if child is None:
    sys.exit(0)
os.environ.clear()
os.environ.update(child["env"])
os.chdir(child["cwd"])
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)
for fd, name in ((1, "stdout"), (2, "stderr")):
    os.dup2(os.open(child[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
sys.stdin = open(0, closefd=False)
sys.argv = ["posharness", *child["args"]]
from posharness.cli import main
main()
"""


class Forker:
    """One forking process; ``run`` starts a command and returns it as subprocess would."""

    def __init__(self, env: dict[str, str]) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="posharness-forker-"))
        self._process = subprocess.Popen(
            [sys.executable, "-c", f"PRELOADED = {PRELOADED!r}\n{_FORKER}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
        )
        self._count = 0
        self._pending = b""

    def run(
        self, args: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        self._count += 1
        out = self._folder / f"{self._count}.out"
        err = self._folder / f"{self._count}.err"
        request = {
            "args": args,
            "env": env,
            "cwd": str(cwd or Path.cwd()),
            "stdout": str(out),
            "stderr": str(err),
        }
        assert self._process.stdin and self._process.stdout
        self._process.stdin.write((json.dumps(request) + "\n").encode())
        pid = self._answer(timeout)["pid"]
        try:
            code = self._answer(timeout)["code"]
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._answer(timeout)
            raise
        stdout = out.read_text(errors="replace")
        stderr = err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        return subprocess.CompletedProcess(["posharness", *args], code, stdout, stderr)

    def _answer(self, timeout: float) -> dict[str, int]:
        """The forker's next line, read from its pipe unbuffered (a buffered reader could
        hold the second of two lines while ``select`` waits for more)."""
        assert self._process.stdout
        fd = self._process.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired(["posharness"], timeout)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"the forker ended (exit {self._process.wait()})")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for leftover in self._folder.iterdir():
            leftover.unlink()
        self._folder.rmdir()
