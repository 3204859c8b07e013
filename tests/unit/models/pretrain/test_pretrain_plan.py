"""The plan measures as the run computes (issue 39, part 7): the run's autocast and
compilation, and a recipe's time budget is device-hours in total, shared by a launch."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from posharness.models.pretrain import plan as plan_module
from posharness.models.pretrain.loop import PretrainSettings
from posharness.models.pretrain.parallel import Layout
from posharness.models.pretrain.phases import Phase
from posharness.models.pretrain.plan import (
    PretrainPlan,
    measure_step_seconds,
    steps_for_budget,
    timing_options,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


class Recording(nn.Module):
    """A masked-LM stand-in that notes the autocast its forward pass runs under."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.seen: list[tuple[bool, torch.dtype]] = []

    def forward(self, input_ids, labels, **_):
        self.seen.append((torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))
        out = self.linear(torch.ones(2, 4))
        return SimpleNamespace(loss=out.float().sum())


def measure(model, **options) -> float:
    layout = Layout(global_batch=4, accumulation=2, world_size=1, rank=0)
    return measure_step_seconds(model, layout, 8, 20, "cpu", 0.15, False, **options)


def test_the_warm_up_runs_under_the_runs_autocast():
    for precision, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        model = Recording()
        assert measure(model, precision=precision) > 0
        assert model.seen == [(True, dtype)] * plan_module.WARMUP_PASSES
    fp32 = Recording()
    measure(fp32, precision="no")
    assert [enabled for enabled, _ in fp32.seen] == [False] * plan_module.WARMUP_PASSES
    assert all(p.grad is None for p in fp32.parameters())  # nothing left behind


def test_the_warm_up_is_compiled_when_the_run_is(monkeypatch):
    compiled = []

    def compile_recorder(model, **options):
        compiled.append(options)
        return model

    monkeypatch.setattr(torch, "compile", compile_recorder)
    measure(Recording(), compile_model=True)
    assert compiled == [{"backend": "inductor"}]  # as parallel.accelerator's dynamo backend
    measure(Recording())
    assert len(compiled) == 1


def test_the_plan_takes_the_precision_and_compilation_the_run_hands_accelerate():
    bf16 = PretrainSettings(steps=5, bf16=True, compile=True)
    assert timing_options(bf16, "cuda:0") == ("bf16", True)
    assert timing_options(PretrainSettings(steps=5, fp16=True), "cuda") == ("fp16", False)
    assert timing_options(bf16, "cpu") == ("no", True)  # autocast is CUDA-only in the run


def plan(world: int, seconds: float, budget: float | None) -> PretrainPlan:
    steps = steps_for_budget(budget, seconds, world) if budget else 10
    return PretrainPlan(
        preset="cramming",
        steps=steps,
        layout=Layout(global_batch=64, accumulation=1, world_size=world, rank=0),
        phases=[Phase(1, steps, 16)],
        tokens=steps * 64 * 16,
        seconds_per_step=seconds,
        device="cuda:0",
        out_dir=Path("runs/x"),
        save_every=500,
        precision="bf16",
        compiled=True,
        budget_hours=budget,
    )


def test_a_budget_is_device_hours_in_total_shared_by_the_processes():
    # Two devices halve a step's wall time; the day is one device's, so the steps match.
    one, two = plan(1, 4.0, 24.0), plan(2, 2.0, 24.0)
    assert one.steps == two.steps == 21600
    assert one.estimated_seconds == pytest.approx(24 * 3600)
    assert two.estimated_seconds == pytest.approx(12 * 3600)
    lines = "\n".join(two.lines())
    assert "budget: 24 device-hours in total" in lines
    assert "shared by 2 process(es): 12.0 h of wall time" in lines
    assert "measured at bf16 autocast, compiled" in lines
    assert "budget" not in "\n".join(plan(2, 2.0, None).lines())


def test_the_workflow_measures_with_the_settings_of_the_run(monkeypatch, tmp_path):
    from posharness.models.pretrain.workflow import _plan
    from posharness.models.zoo.encoder import PEForMaskedLM, config_for

    calls = []

    def fake_measure(*arguments):
        calls.append(arguments[-2:])
        return 0.5

    monkeypatch.setattr(plan_module, "measure_step_seconds", fake_measure)
    settings = PretrainSettings(steps=5, batch_size=4, block_size=16, compile=True)
    build = lambda vocabulary: PEForMaskedLM(config_for("nope", "tiny", vocab_size=vocabulary))  # noqa: E731
    _, planned = _plan(build, 50, settings, tmp_path / "run", budget_hours=1.0)
    assert calls == [("no", True)]  # the run's precision on this CPU, compiled
    assert planned.steps == 7200 and planned.compiled and planned.vocabulary == 50
