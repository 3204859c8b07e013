"""A new user's first hour (issue 19): every problem of a run reported at once, cheapest
first, and every command or option an error suggests succeeds when followed — each
suggestion below is executed, not only read."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from posharness.base.errors import OptionError
from posharness.run.plan import check_task_arg_targets
from posharness.run.task_checks import task_args_for
from tests.cli_helpers import cli, one_line_error, run_isolated
from tests.unit.models.zoo.test_native_models import run_geometry, write_corpus

GLUE = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli")
# What makes a suggested pretraining run finish in seconds; click keeps the last value of
# a repeated option, so these follow the suggestion instead of editing it.
TINY_RECIPE = ("--size", "tiny", "--steps", "2", "--batch-size", "2", "--block-size", "24")


def suggested_command(message: str) -> list[str]:
    """The first `posharness …` command quoted in an error message, as argv."""
    match = re.search(r"`(posharness [^`]+)`", message)
    assert match, message
    return shlex.split(match[1])[1:]


def test_the_headline_command_lists_every_problem_at_once_model_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        "run",
        "--model",
        "tupe-r",
        "--tasks",
        "glue,shuffle_sr",
        "--output-dir",
        str(tmp_path / "results"),
        "--no-cache",
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    header, *problems = err.strip().splitlines()
    assert header.endswith("12 problems stop this run (nothing was run):")
    assert "model tupe-r has no checkpoint" in problems[0]  # the cheapest check comes first
    for name, line in zip(GLUE, problems[1:10], strict=True):
        assert line.startswith(f"  - {name}: no train split found"), line
    assert "shuffle probes need SNLI" in problems[10]
    assert problems[11].startswith("  - snli: no train split found")  # the classifier's data
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))


def test_the_suggested_pretrain_command_makes_the_checkpoint_a_bare_name_then_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_geometry(tmp_path, "tupe-r") == 2
    argv = suggested_command(one_line_error(capsys))
    # the first suggestion is the recipe that learns on a CPU (issue 45), run here shrunk
    assert argv[:3] == ["pretrain", "--model", "tupe-r"]
    assert argv[argv.index("--recipe") + 1] == "cpu-hour" and "narrow" in argv
    corpus = write_corpus(tmp_path / "corpus.txt")
    argv = [str(corpus) if arg == "CORPUS" else arg for arg in argv]
    assert cli(*argv, *TINY_RECIPE, "--vocab-size", "120", "--device", "cpu") == 0
    assert run_geometry(tmp_path, "tupe-r") == 0
    # the bare name stood for its one run's final/, and its results folder says so
    assert (tmp_path / "results" / "tupe-r-tupe-r-tiny-final").is_dir()
    # the run folder itself is accepted where its final/ is meant
    run_folder = tmp_path / "runs" / "tupe-r-tiny"
    assert (run_folder / "final" / "config.json").is_file()
    assert run_geometry(tmp_path / "again", f"tupe-r@{run_folder}") == 0


def test_the_suggested_random_initialisation_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_geometry(tmp_path, "bert-a") == 2
    assert "--model-arg init=random" in one_line_error(capsys)
    code = run_geometry(
        tmp_path, "bert-a", "--model-arg", "init=random", "--model-arg", "size=tiny"
    )
    assert code == 0


def test_snli_options_reach_the_word_swap_probes_that_reuse_its_classifier() -> None:
    from posharness.plugins import tasks

    probe = tasks.get("shuffle_sr")()
    check_task_arg_targets({"snli": {"train": "t.jsonl"}}, ["shuffle_sr"])
    assert task_args_for(probe, {"snli": {"train": "t.jsonl"}})["train"] == "t.jsonl"
    own = {"snli": {"train": "t.jsonl"}, "shuffle_sr": {"train": "mine.jsonl"}}
    assert task_args_for(probe, own)["train"] == "mine.jsonl"  # the task's own value wins
    assert task_args_for(probe, {"shuffle": {"bootstrap": "7"}})["bootstrap"] == "7"
    with pytest.raises(OptionError, match="borrow its options"):
        check_task_arg_targets({"snli": {"protocol_only": "x"}}, ["shuffle_sr"])
    with pytest.raises(OptionError, match="does not include"):
        check_task_arg_targets({"cola": {"train": "x"}}, ["shuffle_sr"])


def test_a_data_dir_that_does_not_exist_is_called_that(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    code = cli("run", "--model", "minilm", "--tasks", "dep_heads", "--data-dir", str(missing))
    assert code == 2
    assert f"--data-dir {missing} does not exist" in one_line_error(capsys)


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_folder_given_as_a_leaderboard_is_called_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    board = Path(__file__).resolve().parents[3] / "leaderboards" / "minilm.json"
    args = [str(tmp_path), str(board)] if command == "compare" else [str(tmp_path)]
    if command == "report":
        args += ["-o", str(tmp_path / "report")]
    assert cli(command, *args) == 2
    assert f"{tmp_path} is a folder: give the leaderboard JSON file itself" in one_line_error(
        capsys
    )


def test_run_isolated_data_dirs_exist(tmp_path: Path) -> None:
    """The shared helper keeps giving an existing --data-dir (it is now checked)."""
    assert run_isolated(tmp_path, "--model", "nope-such-model", "--tasks", "dep_heads") == 2
    assert (tmp_path / "data").is_dir()


@pytest.mark.parametrize(("umask", "mode"), [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """Results are readable by the group when the umask says so (mkstemp alone gives 0600)."""
    import os
    import subprocess
    import sys

    target = tmp_path / "result.json"
    code = "import sys; from pathlib import Path\n"
    code += "from posharness.storage.io import atomic_write_text\n"
    code += "atomic_write_text(Path(sys.argv[1]), '{}')\n"
    subprocess.run(
        [sys.executable, "-c", code, str(target)],
        check=True,
        preexec_fn=lambda: os.umask(umask),  # noqa: PLW1509 - the child's umask is the point
    )
    assert target.stat().st_mode & 0o777 == mode


def test_the_three_modes_need_no_dataset(tmp_path: Path, tiny_bert: Path) -> None:
    """With neither --data-dir nor reference_corpus, the embedded corpus is used and
    recorded like any other (name and hash), so the quickstart shows three modes."""
    import json

    from posharness.models.decompose.reference import EMBEDDED_CORPUS, find_reference_corpus

    corpus = find_reference_corpus(None, None, "tisa-mean-word")
    assert corpus.path == EMBEDDED_CORPUS and corpus.label.startswith("reference_text/english.txt")
    assert (EMBEDDED_CORPUS.parent / "SOURCE.md").is_file()
    code = cli(
        "run", "--model", f"hf:{tiny_bert}", "--tasks", "locality_symmetry",
        "--mode", "both,contextual,positional", "--device", "cpu",
        "--task-arg", "locality_symmetry.words=4", "--task-arg", "locality_symmetry.length=16",
        "--output-dir", str(tmp_path / "results"), "--no-cache",
    )  # fmt: skip
    assert code == 0
    positional = next((tmp_path / "results").rglob("locality_symmetry__positional__seed0.json"))
    mode = json.loads(positional.read_text())["mode"]
    assert mode["reference_corpus"].startswith("reference_text/english.txt (sha256 ")


def test_long_phases_have_labelled_progress(tmp_path: Path, tiny_bert: Path) -> None:
    """Checking task data and the pass over the reference corpus show up as labelled bars
    (no silent ``cells 0/?``); so do the summaries' figures where a task draws them."""
    from posharness.api import evaluate
    from posharness.run.runner import SilentReporter

    labels: list[tuple[str, int]] = []

    class Recording(SilentReporter):
        def progress(self, label: str, total: int):  # type: ignore[override]
            labels.append((label, total))
            return lambda n: None

    evaluate(
        f"hf:{tiny_bert}",
        ["locality_symmetry", "toeplitz"],
        ["both", "positional"],
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={
            "locality_symmetry": {"words": 4, "length": 16},
            "toeplitz": {"words": 4, "length": 16, "controls": 2},
        },
        reporter=Recording(),
    )
    names = [label for label, _ in labels]
    assert ("checking task data", 2) in labels
    assert "reference statistics over english.txt" in names


def test_the_headline_command_fails_without_importing_any_model_code(tmp_path: Path) -> None:
    """What keeps the complete list of problems within seconds: no model's code (the zoo's
    encoder, transformers' modelling) is imported to find that none can run. Checked by
    what was imported, not by a clock."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from posharness.cli import main\n"
        "try:\n"
        "    main(['run', '--model', 'tupe-r', '--tasks', 'glue,shuffle_sr', '--no-cache',\n"
        f"          '--output-dir', {str(tmp_path / 'results')!r}])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "heavy = ('posharness.models.zoo.encoder', 'transformers.modeling_utils')\n"
        "print('imported', [m for m in heavy if m in sys.modules])\n"
    )
    env = {**os.environ, "POSHARNESS_RUNS": str(tmp_path / "runs")}  # no checkpoint there
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert "exit 2" in proc.stdout, proc.stderr[-2000:]
    assert "imported []" in proc.stdout, proc.stdout
