"""Which checkpoint a model spec evaluates: a bare zoo name never silently changes model
(issue 47, part 8), and a run's saved checkpoints evaluate as a series keyed by step and
tokens seen (issue 46, part 2). One tiny TUPE-R run (4 steps, a checkpoint every 2) is
pretrained once for the module, in a few seconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from posharness.base.errors import ModelLoadError, OptionError
from posharness.contracts.checkpoint_series import SeriesPoint, expand_checkpoint_series
from posharness.contracts.model_spec import LoadOptions, parse_model_spec, resolve_model_spec
from posharness.run.config import RunConfig
from posharness.run.plan import plan
from tests.cli_helpers import cli
from tests.unit.models.zoo.test_native_models import write_corpus

PROBE = ("words=4", "length=24", "bootstrap=0")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``posharness pretrain --size tiny --steps 4 --save-every 2``: checkpoint-2,
    checkpoint-4 and final/ (the same step as checkpoint-4)."""
    root = tmp_path_factory.mktemp("tiny-run")
    corpus = write_corpus(root / "corpus.txt")
    run = root / "tupe-r-tiny"
    with pytest.MonkeyPatch.context() as env:  # module scope: conftest's isolation is not on
        env.setenv("POSHARNESS_RUNS", str(root / "runs"))
        env.setenv("POSHARNESS_CACHE", str(root / "cache"))
        env.setenv("HF_HUB_OFFLINE", "1")
        code = cli(
            "pretrain", "--model", "tupe-r", "--corpus", str(corpus), "--size", "tiny",
            "--steps", "4", "--save-every", "2", "--batch-size", "2", "--block-size", "24",
            "--vocab-size", "120", "--device", "cpu", "--out", str(run),
            "--prepared-dir", str(root / "corpora"),
        )  # fmt: skip
    assert code == 0
    return run


def _config(tmp_path: Path, model: str) -> RunConfig:
    return RunConfig(
        models=[model],
        tasks=["locality_symmetry"],
        modes=["both"],
        output_dir=tmp_path / "results",
        cache_dir=None,
        task_args={"locality_symmetry": dict(option.split("=") for option in PROBE)},
    )


def _runs_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    root.mkdir(exist_ok=True)
    monkeypatch.setenv("POSHARNESS_RUNS", str(root))
    return root


# --- a bare name (issue 47, part 8) ------------------------------------------------------


def test_a_bare_name_stands_for_its_only_run_named_in_full(
    tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _runs_root(tmp_path, monkeypatch)
    shutil.copytree(tiny_run, root / "tupe-r-tiny")

    spec = resolve_model_spec(parse_model_spec("tupe-r"), LoadOptions())

    assert spec.text == f"tupe-r@{root / 'tupe-r-tiny' / 'final'}"  # every line names it
    assert spec.slug == "tupe-r-tupe-r-tiny-final"  # its results folder says which run
    untrained = LoadOptions(model_args=(("init", "random"),))
    assert resolve_model_spec(parse_model_spec("tupe-r"), untrained).text == "tupe-r"


def test_two_checkpoints_of_one_pe_never_write_the_same_result_file(
    tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same command before and after the run finished: checkpoint-2, then final/."""
    root = _runs_root(tmp_path, monkeypatch)
    shutil.copytree(tiny_run, root / "tupe-r-tiny", ignore=shutil.ignore_patterns("final", "*-4"))
    (before,) = plan(_config(tmp_path, "tupe-r"), "cpu")
    shutil.copytree(tiny_run / "final", root / "tupe-r-tiny" / "final")
    (after,) = plan(_config(tmp_path, "tupe-r"), "cpu")

    assert before.path != after.path
    assert before.spec.text.endswith("checkpoint-2") and after.spec.text.endswith("final")
    assert before.label.startswith(before.spec.text)  # the run's lines on stdout name it


def test_several_runs_of_a_bare_name_ask_for_name_at_run_in_one_line(
    tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _runs_root(tmp_path, monkeypatch)
    for size in ("tiny", "narrow"):
        shutil.copytree(tiny_run, root / f"tupe-r-{size}")

    with pytest.raises(ModelLoadError) as refused:
        resolve_model_spec(parse_model_spec("tupe-r"), LoadOptions())

    line = str(refused.value)
    assert "\n" not in line
    assert "2 pretrained runs of it" in line and "(tupe-r-narrow, tupe-r-tiny)" in line
    assert "say which with tupe-r@RUN" in line


# --- a checkpoint series (issue 46, part 2) ----------------------------------------------


def test_a_series_is_every_saved_checkpoint_in_step_order_with_tokens_seen(
    tiny_run: Path,
) -> None:
    tokens = json.loads((tiny_run / "checkpoint-2" / "pretraining.json").read_text())
    per_step = tokens["tokens_seen"] // 2  # 2 x 24-token blocks a step

    checkpoints = expand_checkpoint_series(f"tupe-r@{tiny_run}/checkpoint-*")
    everything = expand_checkpoint_series(f"tupe-r@{tiny_run}/*")

    assert checkpoints == [
        SeriesPoint(f"tupe-r@{tiny_run}/checkpoint-2", 2, 2 * per_step),
        SeriesPoint(f"tupe-r@{tiny_run}/checkpoint-4", 4, 4 * per_step),
    ]
    # final/ holds step 4 too: the same model, kept once under the name boards use
    assert [(p.spec.rsplit("/", 1)[1], p.step) for p in everything] == [
        ("checkpoint-2", 2),
        ("final", 4),
    ]


def test_a_damaged_or_incomplete_checkpoint_is_named_and_the_others_kept(
    tiny_run: Path, tmp_path: Path
) -> None:
    run = shutil.copytree(tiny_run, tmp_path / "run")
    weights = run / "checkpoint-2" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])  # cut short, as by a full disk
    (run / "checkpoint-6").mkdir()  # a save that never finished
    lines: list[str] = []

    points = expand_checkpoint_series(f"tupe-r@{run}/*", lines.append)

    assert [p.step for p in points] == [4]
    assert len(lines) == 2
    assert "checkpoint-2: model.safetensors is cut short" in lines[0]
    assert "checkpoint-6: no config.json" in lines[1]
    assert all(line.endswith("the other checkpoints are evaluated") for line in lines)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("tupe-r@{missing}/checkpoint-*", "does not exist"),
        ("tupe-r@{empty}/checkpoint-*", "no saved checkpoint"),
    ],
)
def test_a_series_with_nothing_to_evaluate_is_one_line(
    tmp_path: Path, spec: str, says: str
) -> None:
    (tmp_path / "empty").mkdir()
    text = spec.format(missing=tmp_path / "missing", empty=tmp_path / "empty")
    with pytest.raises(OptionError, match=says) as refused:
        expand_checkpoint_series(text)
    assert "\n" not in str(refused.value)


def test_running_a_series_evaluates_each_checkpoint_into_its_own_results(
    tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog
) -> None:
    run = shutil.copytree(tiny_run, tmp_path / "run")
    (run / "checkpoint-4" / "config.json").write_text("{not json")
    options = [arg for option in PROBE for arg in ("--task-arg", f"locality_symmetry.{option}")]

    code = cli(
        "run", "--model", f"tupe-r@{run}/checkpoint-*", "--tasks", "locality_symmetry",
        *options, "--device", "cpu", "--output-dir", str(tmp_path / "results"), "--no-cache",
    )  # fmt: skip

    assert code == 0
    assert f"tupe-r@{run}/checkpoint-4: config.json is not JSON" in caplog.text
    folders = sorted(p.name for p in (tmp_path / "results").iterdir() if p.is_dir())
    assert len(folders) == 1 and folders[0].endswith("checkpoint-2")
    assert "checkpoint-2" in capsys.readouterr().out


def test_a_twenty_checkpoint_series_gets_a_board_name_the_file_system_takes(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from posharness.boards.admission import default_board

    folders = [f"tupe-r-runs-tupe-r-narrow-seed0-checkpoint-{n}" for n in range(20)]
    cells = [SimpleNamespace(key=SimpleNamespace(folder=folder)) for folder in folders]

    path = default_board(cells, tmp_path)  # type: ignore[arg-type]

    assert path.name.startswith(f"{folders[0]}__and-19-more-") and len(path.name) < 150
    path.write_text("{}")  # 20 names joined were 900 characters: refused by the disk
    assert default_board(cells[:2], tmp_path).name == "__".join(folders[:2]) + ".json"
