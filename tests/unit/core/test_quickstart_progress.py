"""Nothing the quickstart runs is silent for long (issue 45, part 3): a newcomer's first
cell said nothing for 84 s, most of it resampling the probe words for the intervals and
the paired replicates (3,000 geometry evaluations). That work now has its own bar, which
counts every draw, and a log gets a line at most every 30 s."""

from __future__ import annotations

from pathlib import Path

from posharness.base.progress_lines import DEFAULT_INTERVAL


def test_resampling_the_words_is_a_counted_phase(tmp_path: Path, tiny_bert: Path) -> None:
    from posharness.api import evaluate
    from posharness.run.runner import SilentReporter

    counted: dict[str, list[int]] = {}

    class Recording(SilentReporter):
        def progress(self, label: str, total: int):  # type: ignore[override]
            counted[label] = [total, 0]
            return lambda n: counted[label].__setitem__(1, counted[label][1] + n)

    evaluate(
        f"hf:{tiny_bert}",
        ["locality_symmetry"],
        ["both"],
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={
            "locality_symmetry": {"words": 4, "length": 16, "bootstrap": 5, "paired_replicates": 3}
        },
        reporter=Recording(),
    )
    assert counted["resampling the words"] == [5 * 2 + 3, 5 * 2 + 3]


def test_a_log_hears_from_a_long_phase_at_least_every_30_s() -> None:
    assert DEFAULT_INTERVAL <= 30


def test_a_silent_cell_says_it_is_still_running_once_an_interval_passes() -> None:
    from posharness.cli.heartbeat import Heartbeat

    now = [0.0]
    lines: list[str] = []
    beat = Heartbeat(lines.append, 30.0, clock=lambda: now[0])
    beat.check()
    assert lines == []  # no cell running
    beat.cell("minilm · locality_symmetry · both · seed 0")
    now[0] = 29.0
    beat.check()
    assert lines == []
    now[0] = 31.0
    beat.check()
    assert lines == ["still on minilm · locality_symmetry · both · seed 0, 31 s in"]
    beat.heard()  # a progress line was written: the next beat waits a whole interval
    now[0] = 50.0
    beat.check()
    assert len(lines) == 1
    beat.idle()
    now[0] = 500.0
    beat.check()
    assert len(lines) == 1
    beat.close()
