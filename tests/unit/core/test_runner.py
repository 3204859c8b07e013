"""The runner end to end on a tiny random BERT: cells, skipping, caching, resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.base.errors import DataError, OptionError, UnknownNameError
from posharness.contracts.results import SCHEMA_VERSION, read_result
from posharness.run.config import RunConfig
from posharness.run.runner import run

FAST = {"length": "24", "words": "12", "bootstrap": "20"}


def config(tiny_bert: Path, tmp_path: Path, **overrides) -> RunConfig:
    values = dict(
        models=[f"hf:{tiny_bert}"],
        tasks=["locality_symmetry", "toeplitz"],
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={
            "locality_symmetry": {**FAST, "figures": "false"},
            "toeplitz": {"length": "24", "words": "12", "controls": "5", "figures": "false"},
        },
    )
    values.update(overrides)
    return RunConfig(**values)


def test_one_result_file_per_cell_with_schema_and_environment(tiny_bert, tmp_path):
    outcomes = run(config(tiny_bert, tmp_path, seeds=[0, 1]))
    assert len(outcomes) == 4
    files = sorted((tmp_path / "results").rglob("*.json"))
    assert len(files) == 4
    result = read_result(files[0])
    assert result.schema_version == SCHEMA_VERSION
    assert result.model.fingerprint == outcomes[0].result.model.fingerprint
    assert result.mode.name == "both" and result.mode.exact
    assert result.environment.attn_implementation == "eager"
    assert result.environment.packages["torch"].startswith("2.")
    assert result.environment.batch["sequences"] == 12
    assert result.task.data_hash


def test_locality_result_has_per_layer_and_per_head_details(tiny_bert, tmp_path):
    (outcome, _) = run(config(tiny_bert, tmp_path))
    result = outcome.result
    assert set(result.metrics) >= {
        "locality",
        "symmetry",
        "symmetry_magnitude",
        "locality_no_special",
    }
    assert 0 < result.metrics["locality"].value <= 1
    assert (
        result.metrics["locality"].ci_low
        <= result.metrics["locality"].value
        <= result.metrics["locality"].ci_high
    )
    assert len(result.details["per_layer"]) == 2
    assert len(result.details["per_head"]) == 2 and len(result.details["per_head"][0]) == 2
    examples = (outcome.cell.path.parent / result.examples_file).read_text().splitlines()
    assert len(examples) == 12
    first = json.loads(examples[0])
    assert {"id", "locality", "symmetry"} <= set(first)


def test_locality_of_the_average_equals_the_mean_over_words(tiny_bert, tmp_path):
    """Locality is linear in the matrix, so both routes must agree exactly."""
    (outcome, _) = run(config(tiny_bert, tmp_path))
    lines = (outcome.cell.path.parent / outcome.result.examples_file).read_text().splitlines()
    per_word = [json.loads(line)["locality"] for line in lines]
    assert outcome.result.metrics["locality"].value == pytest.approx(
        sum(per_word) / len(per_word), abs=1e-12
    )


def test_finished_cells_are_skipped_and_overwrite_recomputes(tiny_bert, tmp_path):
    first = run(config(tiny_bert, tmp_path))
    path = first[0].cell.path
    before = path.read_bytes()
    second = run(config(tiny_bert, tmp_path))
    assert all(o.skipped for o in second)
    assert path.read_bytes() == before
    third = run(config(tiny_bert, tmp_path, overwrite=True))
    assert not any(o.skipped for o in third)
    assert third[0].result.metrics == first[0].result.metrics


def test_changing_a_task_option_makes_a_new_cell(tiny_bert, tmp_path):
    run(config(tiny_bert, tmp_path))
    changed = config(tiny_bert, tmp_path)
    changed.task_args["locality_symmetry"]["words"] = "10"
    outcomes = run(changed)
    assert not outcomes[0].skipped and outcomes[1].skipped
    assert outcomes[0].result.metrics["locality"].n == 10


def test_both_tasks_share_one_cached_pass_over_the_probe(tiny_bert, tmp_path):
    from posharness.storage.cache import FeatureCache

    run(config(tiny_bert, tmp_path))
    entries = list((tmp_path / "cache" / "identical-word-attention").rglob("*.safetensors"))
    assert len(entries) == 1  # toeplitz reused locality_symmetry's probe attention
    assert FeatureCache(tmp_path / "cache").root is not None


def test_results_are_identical_with_and_without_the_cache(tiny_bert, tmp_path):
    cached = run(config(tiny_bert, tmp_path / "a"))
    run(config(tiny_bert, tmp_path / "a", overwrite=True))  # second pass reads the cache
    fresh = run(config(tiny_bert, tmp_path / "b", cache_dir=None))
    for x, y in zip(cached, fresh, strict=True):
        assert x.result.metrics == y.result.metrics


def test_a_run_killed_before_writing_resumes_to_the_same_result(tiny_bert, tmp_path, monkeypatch):
    import posharness.run.cell as runner  # where a cell writes its result

    reference = run(config(tiny_bert, tmp_path / "reference"))
    calls = {"n": 0}
    real_write = runner.write_result

    def crash_on_second_cell(result, path):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the process dies between cells
        real_write(result, path)

    monkeypatch.setattr(runner, "write_result", crash_on_second_cell)
    with pytest.raises(KeyboardInterrupt):
        run(config(tiny_bert, tmp_path / "killed"))
    assert len(list((tmp_path / "killed" / "results").rglob("*.json"))) == 1
    monkeypatch.setattr(runner, "write_result", real_write)
    resumed = run(config(tiny_bert, tmp_path / "killed"))
    assert [o.skipped for o in resumed] == [True, False]
    for x, y in zip(reference, resumed, strict=True):
        assert x.result.metrics == y.result.metrics
        assert x.result.cell_id == y.result.cell_id


def test_limit_caps_the_number_of_probe_words(tiny_bert, tmp_path):
    (outcome, _) = run(config(tiny_bert, tmp_path, limit=5))
    assert outcome.result.metrics["locality"].n == 5


def test_figures_are_written_next_to_the_result(tiny_bert, tmp_path):
    cfg = config(tiny_bert, tmp_path, tasks=["geometry"])
    cfg.task_args["locality_symmetry"]["figures"] = "true"
    cfg.task_args["toeplitz"]["figures"] = "true"
    outcomes = run(cfg)
    artifacts = [o.cell.path.parent / a for o in outcomes for a in o.result.artifacts]
    names = sorted(p.name for p in artifacts)
    assert names == [
        "attention_average.png",
        "attention_per_layer.png",
        "position_gram.png",
        "positional_term_per_layer.png",  # the embedded corpus gives the positional term
    ]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in artifacts)


@pytest.mark.parametrize(
    ("overrides", "error", "match"),
    [
        ({"tasks": ["locality_symetry"]}, UnknownNameError, "locality_symmetry"),
        ({"models": ["nosuchmodel"]}, UnknownNameError, "unknown model"),
        ({"limit": 0}, OptionError, "positive"),
        ({"modes": ["sideways"]}, OptionError, "choose from"),
        ({"model_args": {"reference_corpus": "/no/such.txt"}}, DataError, "is not a file"),
        ({"model_args": {"absolute": "nope"}}, OptionError, "tisa-mean-word"),
        ({"dtype": "int8"}, OptionError, "--dtype"),
    ],
)
def test_bad_configuration_is_refused_before_any_work(tiny_bert, tmp_path, overrides, error, match):
    with pytest.raises(error, match=match):
        run(config(tiny_bert, tmp_path, **overrides))
    assert not list((tmp_path / "results").rglob("*.json"))


def test_unknown_task_option_names_the_known_ones(tiny_bert, tmp_path):
    cfg = config(tiny_bert, tmp_path)
    cfg.task_args["toeplitz"]["wordz"] = "3"
    with pytest.raises(OptionError, match="known options are"):
        run(cfg)
