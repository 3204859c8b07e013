"""kill -9 anywhere, rerun, and get the uninterrupted run's numbers — with no temporary or
torn file left.

Each family's command first runs uninterrupted with ``POSHARNESS_COUNT_POINTS`` set, which
tallies how often it passes each named kill point (``posharness.base.faults``). Kill points are
then drawn, seeded, from that tally: the command is started with
``POSHARNESS_KILL_AT=POINT:N`` and SIGKILLs itself the N-th time it passes POINT, exactly
as ``kill -9`` would, but at a moment that does not depend on the clock. The same command
is rerun; its results (every metric, every per-example row), its leaderboard and its
files must equal the uninterrupted run's. Families: the geometry grid (encoding, cache,
result and leaderboard writes), a fine-tune (optimizer steps, cached runs, writes), a
probe build (inside and between its files) and a masked-LM pretraining (optimizer steps,
its log and checkpoint writes; the final weights must be bit-identical). The fast tier
kills at two points per family; the slow tier at twenty, drawn from each named point in
turn.

Every command starts as a child forked from one process that imported torch and
transformers once (tests/forked_cli.py): a real process that dies by SIGKILL, without the
seconds of imports each of the battery's ~180 starts paid before.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from posharness.base.faults import COUNT_VAR, ENV_VAR
from tests.forked_cli import Forker
from tests.snli_parsed import snli_records, write_jsonl
from tests.unit.models.zoo.test_native_models import write_corpus
from tests.unit.tasks.finetune.test_finetune_task import write_rte

FAST_POINTS = 2
SLOW_POINTS = 20
TIMEOUT = 600


@dataclass(frozen=True)
class Family:
    name: str
    args: tuple[str, ...]  # after `posharness`, with {out} for the work folder
    points: frozenset[str]  # the stages a kill must be able to hit
    prepare: str = ""  # what to write into {out} first


FAMILIES = {
    "geometry": Family(
        "geometry",
        (
            "run", "--model", "hf:{model}", "--tasks", "locality_symmetry,toeplitz",
            "--mode", "both,positional", "--model-arg", "absolute=mean-word-stream",
            "--batch-size", "2", "--device", "cpu",
            "--task-arg", "locality_symmetry.words=6", "--task-arg", "locality_symmetry.length=16",
            "--task-arg", "toeplitz.words=6", "--task-arg", "toeplitz.length=16",
            "--task-arg", "toeplitz.controls=3",
            "--output-dir", "{out}/results", "--cache-dir", "{out}/cache",
            "--leaderboard", "{out}/board.json",
        ),
        frozenset({"encode-batch", "atomic-write"}),
    ),
    "finetune": Family(
        "finetune",
        (
            "run", "--model", "hf:{model}", "--tasks", "rte", "--device", "cpu",
            "--task-arg", "rte.epochs=2", "--task-arg", "rte.batch_size=4",
            "--task-arg", "rte.bootstrap=50", "--data-dir", "{out}/data",
            "--output-dir", "{out}/results", "--cache-dir", "{out}/cache",
            "--leaderboard", "{out}/board.json",
        ),
        frozenset({"train-step", "atomic-write"}),
        prepare="rte",
    ),
    "probes": Family(
        "probes",
        ("build-probes", "shuffle", "--snli", "{out}/snli.jsonl", "--out", "{out}/probes"),
        frozenset({"probe-record", "probe-file"}),
        prepare="snli",
    ),
    "pretrain": Family(
        "pretrain",
        (
            "pretrain", "--model", "tupe-r", "--size", "tiny", "--corpus", "{out}/corpus.txt",
            "--vocab-size", "120", "--batch-size", "4", "--block-size", "24", "--steps", "14",
            "--save-every", "3", "--device", "cpu", "--out", "{out}/run",
        ),
        frozenset({"pretrain-step", "atomic-write"}),
        prepare="corpus",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def forker() -> Iterator[Forker]:
    started = Forker({**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"})
    yield started
    started.close()


def posharness(forker: Forker, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return forker.run(args, {**os.environ, **env}, timeout=TIMEOUT)


def command(family: Family, model: Path, out: Path) -> list[str]:
    if family.prepare == "rte" and not (out / "data").exists():
        write_rte(out / "data")
    if family.prepare == "snli" and not (out / "snli.jsonl").exists():
        out.mkdir(parents=True, exist_ok=True)
        write_jsonl(out / "snli.jsonl", snli_records(60, seed=0, prefix="k"))
    if family.prepare == "corpus" and not (out / "corpus.txt").exists():
        out.mkdir(parents=True, exist_ok=True)
        write_corpus(out / "corpus.txt")
    return [a.format(model=model, out=out) for a in family.args]


def snapshot(out: Path) -> dict[str, object]:
    """What a run leaves that a user reads: result metrics and rows, the board's scores;
    for a probe build, every probe file."""
    state: dict[str, object] = {}
    if (out / "run").is_dir():
        return pretraining_snapshot(out / "run")
    if (out / "probes").is_dir():
        files = {p.name: p.read_text() for p in sorted((out / "probes").iterdir())}
        return json.loads(json.dumps(files).replace(str(out), "{out}"))
    for path in sorted((out / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        if "cell_id" not in data:
            continue
        key = str(path.relative_to(out))
        state[key] = (data["cell_id"], data["metrics"], _numbers(data["details"]))
        if data.get("examples_file"):
            state[key + ":examples"] = (path.parent / data["examples_file"]).read_text()
    board = json.loads((out / "board.json").read_text())
    state["board"] = [(row["mode"], row["scores"]) for row in board["rows"]]
    return json.loads(json.dumps(state).replace(str(out), "{out}"))  # paths name the folder


def pretraining_snapshot(run: Path) -> dict[str, object]:
    """The final model's bytes (weights and tokenizer), every logged loss and the
    checkpoints kept; seconds are left out (a resumed run is slower by design)."""
    final = run / "final"
    log = json.loads((run / "loss_log.json").read_text())
    return {
        "final": {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(final.rglob("*"))
            if p.is_file() and p.suffix in {".safetensors", ".txt"}
        },
        "losses": [(r["step"], r["loss"], r["learning_rate"]) for r in log["records"]],
        "checkpoints": sorted(p.name for p in run.glob("checkpoint-*")),
    }


def _numbers(details: object) -> object:
    """Details without provenance that a resume changes by design (a run read back from
    the cache says so); every number stays."""
    if isinstance(details, dict):
        return {k: _numbers(v) for k, v in details.items() if not _provenance(k)}
    if isinstance(details, list):
        return [_numbers(v) for v in details]
    return details


def _provenance(key: str) -> bool:
    return key == "from_cache" or "second" in key  # cache hits and timings, not results


def leftovers(out: Path) -> list[str]:
    """Temporaries (tagged ph-HOST-PID-) or half-written JSON after the rerun."""
    stale = [str(p) for p in out.rglob("*ph-*")]
    stale += [str(p) for p in out.rglob("*.tmp")]  # a pretraining checkpoint being written
    for path in out.rglob("*.json"):
        try:
            json.loads(path.read_text())
        except ValueError:
            stale.append(f"torn: {path}")
    return stale


@pytest.fixture(scope="module")
def references(
    tiny_bert: Path, tmp_path_factory, forker: Forker
) -> dict[str, tuple[dict, dict[str, int]]]:
    """Each family run once uninterrupted: its snapshot and how often it passed each point."""
    found = {}
    for name, family in FAMILIES.items():
        out = tmp_path_factory.mktemp(f"reference-{name}")
        tally = out / "points.json"
        proc = posharness(forker, command(family, tiny_bert, out), {COUNT_VAR: str(tally)})
        assert proc.returncode == 0, proc.stderr[-2000:]
        found[name] = (snapshot(out), json.loads(tally.read_text()))
    return found


def kill_points(tally: dict[str, int], count: int, seed: int) -> list[tuple[str, int]]:
    """``count`` seeded (point, pass) pairs taken from each named point in turn, so a point
    passed a few times (a probe file's rename) is not drowned by one passed hundreds of
    times (a record written)."""
    rng = random.Random(seed)
    queues = []
    for point, passes in sorted(tally.items()):
        order = list(range(1, passes + 1))
        rng.shuffle(order)
        queues.append([(point, n) for n in order])
    chosen: list[tuple[str, int]] = []
    while len(chosen) < count and any(queues):
        for queue in queues:
            if queue and len(chosen) < count:
                chosen.append(queue.pop())
    return chosen


def battery(
    family: str, count: int, tiny_bert: Path, tmp_path: Path, references, forker: Forker
) -> None:
    reference, tally = references[family]
    assert FAMILIES[family].points <= set(tally), tally
    for index, (point, n) in enumerate(kill_points(tally, count, seed=len(family))):
        out = tmp_path / f"{point}-{n}-{index}"
        args = command(FAMILIES[family], tiny_bert, out)
        killed = posharness(forker, args, {ENV_VAR: f"{point}:{n}"})
        assert killed.returncode == -9, (point, n, killed.returncode, killed.stderr[-1000:])
        rerun = posharness(forker, args, {})
        assert rerun.returncode == 0, (point, n, rerun.stderr[-2000:])
        assert snapshot(out) == reference, f"killed at {point}:{n}, the rerun differs"
        assert leftovers(out) == [], (point, n, leftovers(out))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_run_killed_at_a_few_points_resumes_to_the_same_numbers(
    family, tiny_bert, tmp_path, references, forker
):
    battery(family, FAST_POINTS, tiny_bert, tmp_path, references, forker)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_run_killed_at_twenty_points_resumes_to_the_same_numbers(
    family, tiny_bert, tmp_path, references, forker
):
    battery(family, SLOW_POINTS, tiny_bert, tmp_path, references, forker)
