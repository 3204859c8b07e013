"""Optional abilities are protocols checked when a run is planned: a task that needs one
the model lacks fails before any work, in one line naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.base.errors import PosharnessError
from posharness.contracts.adapter import ChecksModes, FineTunable, HasPositionalTerm
from posharness.contracts.task import ReadsData, SummarizesGroup, SummarizesModes
from posharness.run.plan import check_capabilities


class AnalysisOnlyAdapter:
    """Enough of an adapter for the check: no tokenize_pairs, no for_classification."""

    spec = "analysis-only"


def test_a_fine_tune_task_refuses_a_model_that_cannot_be_fine_tuned():
    from posharness.api import get_task

    with pytest.raises(PosharnessError) as caught:
        check_capabilities("analysis-only", AnalysisOnlyAdapter(), get_task("rte"))
    message = str(caught.value)
    assert "rte" in message and "analysis-only" in message
    assert "FineTunable (tokenize_pairs, for_classification)" in message
    assert "\n" not in message


def test_tasks_without_requirements_accept_any_adapter():
    from posharness.api import get_task

    check_capabilities("analysis-only", AnalysisOnlyAdapter(), get_task("locality_symmetry"))


def test_the_hugging_face_adapter_has_every_optional_ability(tiny_bert: Path):
    from posharness.contracts.model_spec import LoadOptions
    from posharness.models.hf.adapter import HFEncoderAdapter

    model = HFEncoderAdapter(tiny_bert, LoadOptions(device="cpu"))
    for ability in (FineTunable, HasPositionalTerm, ChecksModes):
        assert isinstance(model, ability), ability.__name__


def test_task_hooks_are_declared_by_the_tasks_that_have_them():
    from posharness.api import get_task

    assert isinstance(get_task("dep_heads"), ReadsData)
    assert isinstance(get_task("dep_heads"), SummarizesModes)
    assert isinstance(get_task("shuffle_sr"), SummarizesGroup)
    assert not isinstance(get_task("toeplitz"), SummarizesGroup)
    assert isinstance(get_task("snli"), ReadsData)


def test_the_python_api_loads_a_model_and_refuses_an_unknown_option(tiny_bert: Path):
    import posharness

    model = posharness.load_model(f"hf:{tiny_bert}", device="cpu", model_args={})
    assert model.spec == f"hf:{tiny_bert}" and len(model.fingerprint()) == 16
    with pytest.raises(PosharnessError, match="unknown option 'dtyp'"):
        posharness.load_model(f"hf:{tiny_bert}", dtyp="float32")
