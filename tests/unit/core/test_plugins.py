"""Specification tests for the plugin system: how outside code adds models and tasks.

Three ways in, each exercised the way a user would use it:

* entry points of an installed distribution (a throwaway package built and installed
  with pip into a temporary folder, then found through ``PYTHONPATH``);
* ``--include PATH`` with a ``.py`` file or a folder of them, using the decorators of
  :mod:`posharness.plugins`;
* the Python API of :class:`posharness.plugins.registry.Registry` (in-process, on a fresh
  registry so the global ones stay untouched).

The command line always runs in a subprocess (``python -m posharness``) so that every
test starts from empty registries, as a real invocation does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from posharness.base.errors import OptionError, PosharnessError, UnknownNameError
from posharness.plugins.registry import BUILTIN, INCLUDE, Registry
from tests.cli_helpers import posharness_cli

# Sentences of different lengths, so batches of two pad; some words are outside the
# tiny vocabulary and split into pieces or become [UNK].
SENTENCES = (
    "the man plays the guitar",
    "a dog runs",
    "the old boat on the river is big with a red car and a small tree",
    "xylophones playing in the park",
)
DIST_NAME = "posharness-demo-plugin"
SUBPROCESS_TIMEOUT = 240

PLUGIN_TEMPLATE = '''\
"""Throwaway posharness plugin written by tests/unit/core/test_plugins.py."""

from pathlib import Path

from posharness.contracts.model_spec import ModelEntry
from posharness.contracts.task import Metric, TaskResult, TaskSpec
@@IMPORTS@@

SENTENCES = @@SENTENCES@@

def build_demo(argument, options):
    """Tiny random BERT served by a test plugin."""
    from posharness.models.hf.adapter import HFEncoderAdapter

    return HFEncoderAdapter(Path(argument), options)


# What `posharness list models` shows for the entry point: declared, not read off the function.
DEMO = ModelEntry(
    build=f"{__name__}:build_demo",
    family="demo",
    modes="both",
    description="Tiny random BERT served by a test plugin.",
)
@@MODEL_REGISTRATION@@

@@TASK_DECORATOR@@
class DemoTask:
    spec = TaskSpec(
        name=@@TASK_NAME@@,
        version="1",
        kind="demo",
        description="mean sequence length of a fixed sentence list",
        main_metric="mean_tokens",
        defaults={},
    )

    def run(self, model, ctx):
        items = model.tokenize(list(SENTENCES))
        norms = []
        for _indices, output in ctx.encoder(frozenset({"hidden"})).batches(items):
            last = output.hidden_states[-1].float()
            real = output.attention_mask.bool()
            norms.extend(last[real].norm(dim=-1).tolist())
        lengths = [len(item) for item in items]
        return TaskResult(
            metrics={
                "mean_tokens": Metric(sum(lengths) / len(lengths), n=len(lengths)),
                "hidden_norm": Metric(sum(norms) / len(norms), n=len(norms)),
            },
            data_hash="demo-sentences-1",
            examples=[{"id": str(i), "tokens": n} for i, n in enumerate(lengths)],
        )
'''


def plugin_source(task_name: str, model_name: str | None = None) -> str:
    """The demo plugin module; with ``model_name`` it registers itself by decorators."""
    decorated = model_name is not None
    replacements = {
        "@@IMPORTS@@": (
            "from posharness.plugins import register_model, register_task" if decorated else ""
        ),
        "@@SENTENCES@@": repr(SENTENCES),
        "@@MODEL_REGISTRATION@@": f"register_model({model_name!r})(DEMO)" if decorated else "",
        "@@TASK_DECORATOR@@": f"@register_task({task_name!r})" if decorated else "",
        "@@TASK_NAME@@": repr(task_name),
    }
    text = PLUGIN_TEMPLATE
    for placeholder, value in replacements.items():
        text = text.replace(placeholder, value)
    return text


# -- helpers -----------------------------------------------------------------------------
def succeeded(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == 0


def explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of ``posharness list`` piped (one tab-separated line per entry), by name."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) > 1:
            rows[cells[0]] = cells
    return rows


def origin_of(rows: dict[str, list[str]], name: str) -> str:
    return rows[name][-1]  # columns: name, kind, description, origin


def assert_one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, explain(proc)
    assert "Traceback" not in proc.stderr, explain(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, explain(proc)
    assert lines[0].startswith("posharness: error: "), explain(proc)
    return lines[0]


@pytest.fixture(scope="module")
def reference(tiny_bert: Path) -> dict[str, object]:
    """What the demo task must report, computed here without posharness.

    Each sentence goes through the model on its own (no padding), so agreement also
    shows that the harness's padding and masks change nothing.
    """
    import torch
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = BertModel.from_pretrained(tiny_bert, attn_implementation="eager").eval()
    lengths, norms = [], []
    with torch.inference_mode():
        for sentence in SENTENCES:
            encoded = tokenizer(sentence, return_tensors="pt")
            lengths.append(int(encoded["input_ids"].shape[1]))
            hidden = model(**encoded).last_hidden_state[0]
            norms.extend(hidden.norm(dim=-1).tolist())
    assert len(set(lengths)) > 1, "sentences must differ in length for padding to matter"
    return {
        "lengths": lengths,
        "mean_tokens": sum(lengths) / len(lengths),
        "hidden_norm": sum(norms) / len(norms),
    }


# -- entry points of an installed distribution -----------------------------------------
@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build and install ``posharness-demo-plugin`` into a private folder, once, offline."""
    root = tmp_path_factory.mktemp("demo-plugin")
    package = root / "src"
    package.mkdir()
    (package / "pyproject.toml").write_text(
        f"""\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "{DIST_NAME}"
version = "0.0.1"
description = "posharness test plugin"

[tool.setuptools]
py-modules = ["posharness_demo_plugin"]

[project.entry-points."posharness.models"]
demo-tiny = "posharness_demo_plugin:DEMO"

[project.entry-points."posharness.tasks"]
demo_task = "posharness_demo_plugin:DemoTask"
"""
    )
    (package / "posharness_demo_plugin.py").write_text(plugin_source("demo_task"))
    site = root / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--target",
            str(site),
            str(package),
        ],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert install.returncode == 0, explain(install)
    entry_points = list(site.glob("*.dist-info/entry_points.txt"))
    assert len(entry_points) == 1, f"pip --target wrote no entry_points.txt: {list(site.iterdir())}"
    assert "demo-tiny = posharness_demo_plugin:DEMO" in entry_points[0].read_text()
    return site


def test_entry_point_model_is_listed_as_plugin_of_its_distribution(
    demo_site: Path, tmp_path: Path
) -> None:
    proc = posharness_cli("list", "models", cwd=tmp_path, pythonpath=demo_site)

    assert succeeded(proc), explain(proc)
    rows = table_rows(proc.stdout)
    assert "demo-tiny" in rows, explain(proc)
    origin = origin_of(rows, "demo-tiny")
    assert "plugin" in origin
    assert DIST_NAME in origin
    assert rows["demo-tiny"][1] == "demo"  # the ModelEntry's declared family
    assert rows["demo-tiny"][2] == "both"  # a factory that declares no modes offers `both`
    assert rows["demo-tiny"][3] == "Tiny random BERT served by a test plugin."
    # the package's own models stay built-in next to the plugin
    assert origin_of(rows, "hf") == BUILTIN
    assert origin_of(rows, "minilm") == BUILTIN


def test_entry_point_task_is_listed_as_plugin(demo_site: Path, tmp_path: Path) -> None:
    proc = posharness_cli("list", "tasks", cwd=tmp_path, pythonpath=demo_site)

    assert succeeded(proc), explain(proc)
    rows = table_rows(proc.stdout)
    assert "demo_task" in rows, explain(proc)
    assert origin_of(rows, "demo_task") == f"plugin: {DIST_NAME}"
    assert rows["demo_task"][1:3] == ["demo", "mean sequence length of a fixed sentence list"]
    assert origin_of(rows, "locality_symmetry") == BUILTIN


def test_without_the_plugin_on_the_path_its_names_are_unknown(tmp_path: Path) -> None:
    proc = posharness_cli("list", "tasks", cwd=tmp_path)

    assert succeeded(proc), explain(proc)
    assert "demo_task" not in table_rows(proc.stdout)


def test_entry_point_plugin_runs_end_to_end(
    demo_site: Path, tiny_bert: Path, reference: dict, tmp_path: Path
) -> None:
    spec = f"demo-tiny@{tiny_bert}"
    results, board_file = tmp_path / "results", tmp_path / "lb.json"

    proc = posharness_cli(
        "run", "--model", spec, "--tasks", "demo_task", "--output-dir", results,
        "--leaderboard", board_file, "--device", "cpu", "--batch-size", "2",
        cwd=tmp_path, pythonpath=demo_site,
    )  # fmt: skip

    assert succeeded(proc), explain(proc)
    assert "1 cell(s) run" in proc.stdout
    found = sorted(results.rglob("demo_task__*.json"))
    assert len(found) == 1, found
    result = json.loads(found[0].read_text())
    assert result["task"]["name"] == "demo_task"
    assert result["task"]["kind"] == "demo"
    assert result["task"]["main_metric"] == "mean_tokens"
    assert result["model"]["spec"].startswith("demo-tiny@")
    # results are portable: a checkpoint outside the working folder by its last parts
    portable = f"…/{tiny_bert.parent.name}/{tiny_bert.name}"
    assert result["model"]["spec"] == f"demo-tiny@{portable}"
    assert result["model"]["details"]["checkpoint"] == portable
    assert result["environment"]["batch"]["sequences"] == len(SENTENCES)
    metrics = result["metrics"]
    assert metrics["mean_tokens"]["value"] == pytest.approx(reference["mean_tokens"], abs=1e-12)
    assert metrics["mean_tokens"]["n"] == len(SENTENCES)
    assert metrics["hidden_norm"]["value"] == pytest.approx(reference["hidden_norm"], rel=1e-5)

    examples = found[0].parent / result["examples_file"]
    lines = examples.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"id": str(i), "tokens": n} for i, n in enumerate(reference["lengths"])
    ]

    board = json.loads(board_file.read_text())
    assert [row["model"] for row in board["rows"]] == [f"demo-tiny@{portable}"]
    row = board["rows"][0]
    assert row["scores"]["demo_task/mean_tokens"]["mean"] == pytest.approx(reference["mean_tokens"])
    assert [(board_file.parent / r).resolve() for r in row["results"]] == [found[0].resolve()]


# -- --include with a .py file or a folder ---------------------------------------------
@pytest.fixture
def include_file(tmp_path: Path) -> Path:
    folder = tmp_path / "my_plugins"
    folder.mkdir()
    path = folder / "inc_plugin.py"
    path.write_text(plugin_source("inc_task", model_name="inc-tiny"))
    return path


def test_include_file_task_is_listed_with_include_origin(
    include_file: Path, tmp_path: Path
) -> None:
    proc = posharness_cli("list", "tasks", "--include", include_file, cwd=tmp_path)

    assert succeeded(proc), explain(proc)
    rows = table_rows(proc.stdout)
    assert "inc_task" in rows, explain(proc)
    assert origin_of(rows, "inc_task") == f"{INCLUDE}: {include_file}"
    assert origin_of(rows, "toeplitz") == BUILTIN


def test_include_folder_loads_every_file_in_it(include_file: Path, tmp_path: Path) -> None:
    proc = posharness_cli("list", "models", "--include", include_file.parent, cwd=tmp_path)

    assert succeeded(proc), explain(proc)
    rows = table_rows(proc.stdout)
    assert "inc-tiny" in rows, explain(proc)
    assert origin_of(rows, "inc-tiny") == f"{INCLUDE}: {include_file}"
    assert rows["inc-tiny"][1] == "demo"


def test_include_file_plugin_runs_end_to_end(
    include_file: Path, tiny_bert: Path, reference: dict, tmp_path: Path
) -> None:
    results = tmp_path / "results"

    proc = posharness_cli(
        "run", "--include", include_file, "--model", f"inc-tiny@{tiny_bert}",
        "--tasks", "inc_task", "--output-dir", results, "--leaderboard", tmp_path / "lb.json",
        "--device", "cpu",
        cwd=tmp_path,
    )  # fmt: skip

    assert succeeded(proc), explain(proc)
    found = sorted(results.rglob("inc_task__*.json"))
    assert len(found) == 1, found
    result = json.loads(found[0].read_text())
    assert result["task"]["name"] == "inc_task"
    assert result["model"]["spec"] == f"inc-tiny@…/{tiny_bert.parent.name}/{tiny_bert.name}"
    assert result["metrics"]["mean_tokens"]["value"] == pytest.approx(reference["mean_tokens"])
    assert result["metrics"]["hidden_norm"]["value"] == pytest.approx(
        reference["hidden_norm"], rel=1e-5
    )
    assert (tmp_path / "lb.json").is_file()


def test_include_file_importing_a_builtin_module_leaves_builtins_built_in(
    tmp_path: Path,
) -> None:
    plugin = tmp_path / "top_level_import.py"
    plugin.write_text(
        "from posharness.models.hf.adapter import HFEncoderAdapter\n"
        "from posharness.plugins import register_model\n\n\n"
        '@register_model("top-tiny")\n'
        "def build(argument, options):\n"
        '    """Imports the HF adapter at module level, as plugins commonly do."""\n'
        "    return HFEncoderAdapter(argument, options)\n"
    )

    proc = posharness_cli("list", "models", "--include", plugin, cwd=tmp_path)

    assert succeeded(proc), explain(proc)
    rows = table_rows(proc.stdout)
    assert origin_of(rows, "top-tiny") == f"{INCLUDE}: {plugin}"
    assert origin_of(rows, "hf") == BUILTIN
    assert origin_of(rows, "minilm") == BUILTIN


def test_include_file_reusing_a_builtin_name_is_refused(tmp_path: Path) -> None:
    plugin = tmp_path / "clash.py"
    plugin.write_text(
        "from posharness.plugins import register_task\n"
        "from posharness.contracts.task import TaskSpec\n\n\n"
        '@register_task("toeplitz")\n'
        "class NotToeplitz:\n"
        '    spec = TaskSpec("toeplitz", "1", "demo", "impostor", "x")\n'
    )

    proc = posharness_cli("list", "tasks", "--include", plugin, cwd=tmp_path)

    line = assert_one_line_error(proc)
    assert "'toeplitz' is registered twice" in line


# -- bad --include input: one line on stderr, exit code 2 ------------------------------
def test_include_of_a_missing_path_is_a_one_line_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_plugin.py"

    proc = posharness_cli("list", "tasks", "--include", missing, cwd=tmp_path)

    line = assert_one_line_error(proc)
    assert str(missing) in line
    assert "no such file or folder" in line
    assert proc.stdout == ""


def test_include_of_a_file_with_a_syntax_error_is_a_one_line_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("from posharness.plugins import register_task\n\ndef oops(:\n    pass\n")

    proc = posharness_cli("list", "tasks", "--include", broken, cwd=tmp_path)

    line = assert_one_line_error(proc)
    assert str(broken) in line
    assert "SyntaxError" in line
    assert proc.stdout == ""


def test_include_of_a_file_that_raises_on_import_is_a_one_line_error(tmp_path: Path) -> None:
    failing = tmp_path / "failing_plugin.py"
    failing.write_text('raise RuntimeError("plugin cannot start:\\nsecond line")\n')

    proc = posharness_cli("run", "--include", failing, "--model", "x", "--tasks", "y", cwd=tmp_path)

    line = assert_one_line_error(proc)
    assert str(failing) in line
    assert "RuntimeError" in line
    assert "plugin cannot start: second line" in line


def test_include_of_a_non_python_file_is_a_one_line_error(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not python\n")

    proc = posharness_cli("list", "models", "--include", notes, cwd=tmp_path)

    line = assert_one_line_error(proc)
    assert "not a .py file" in line


# -- the Python API, in-process, on a fresh registry ------------------------------------
@pytest.fixture
def registry() -> Registry:
    # An entry-point group that no installed distribution uses: nothing arrives unasked.
    fresh: Registry = Registry("task", "posharness.tests.none")
    assert fresh.names() == []
    return fresh


def test_decorator_registers_and_returns_the_object_unchanged(registry: Registry) -> None:
    @registry.register("probe", aliases=("probe-alias",))
    class Probe:
        pass

    assert isinstance(Probe, type)  # the decorator handed the class back
    assert registry.get("probe") is Probe
    assert registry.get("probe-alias") is Probe
    assert "probe" in registry
    assert "probe-alias" in registry
    assert "other" not in registry
    entry = registry.entry("probe")
    assert (entry.name, entry.origin, entry.source) == ("probe", BUILTIN, "posharness")
    assert entry.loaded
    assert registry.names() == ["probe"]  # aliases are not separate names


def test_registrations_inside_an_origin_scope_carry_that_origin(registry: Registry) -> None:
    with registry.origin(INCLUDE, "/plugins/mine.py"):
        registry.add("inside", object())
    registry.add("outside", object())

    inside, outside = registry.entry("inside"), registry.entry("outside")
    assert (inside.origin, inside.source) == (INCLUDE, "/plugins/mine.py")
    assert (outside.origin, outside.source) == (BUILTIN, "posharness")


def test_lazy_entry_resolves_only_on_get(registry: Registry) -> None:
    import json as json_module

    registry.add_lazy("x", "json:dumps", origin="plugin", source="some-dist")

    entry = registry.entry("x")
    assert not entry.loaded
    assert entry.target == "json:dumps"
    assert "x" in registry and registry.names() == ["x"]
    assert not registry.entry("x").loaded  # looking it up does not import it

    assert registry.get("x") is json_module.dumps
    assert registry.entry("x").loaded
    assert (entry.origin, entry.source) == ("plugin", "some-dist")


def test_lazy_entry_imports_its_module_only_on_get(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"lazy_probe_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.add_lazy("thing", f"{module}:Thing")

    assert "thing" in registry
    registry.entry("thing")
    registry.expand(["thing"])
    assert module not in sys.modules

    thing = registry.get("thing")

    assert module in sys.modules
    assert thing is sys.modules[module].Thing
    monkeypatch.delitem(sys.modules, module)


def test_lazy_entry_with_an_unimportable_module_names_the_target(registry: Registry) -> None:
    registry.add_lazy("ghost", "posharness_no_such_module_anywhere:build")

    with pytest.raises(UnknownNameError) as caught:
        registry.get("ghost")

    message = str(caught.value)
    assert "posharness_no_such_module_anywhere:build" in message
    assert "\n" not in message


def test_lazy_entry_with_a_missing_attribute_is_a_user_error(registry: Registry) -> None:
    registry.add_lazy("ghost", "json:no_such_function")

    with pytest.raises(PosharnessError, match="no_such_function"):
        registry.get("ghost")


def test_eager_registration_wins_over_a_later_lazy_one(registry: Registry) -> None:
    def mine() -> None:
        pass

    registry.add("name", mine)
    registry.add_lazy("name", "json:dumps")

    assert registry.get("name") is mine


def test_importing_the_target_of_a_lazy_entry_fills_it_in(registry: Registry) -> None:
    registry.add_lazy("dumps", "json:dumps", origin="plugin", source="some-dist")

    # What happens when the target's module registers itself with a decorator on import.
    registry.add("dumps", json.dumps)

    entry = registry.entry("dumps")
    assert entry.loaded and entry.obj is json.dumps
    assert (entry.origin, entry.source) == ("plugin", "some-dist")


def test_groups_expand_recursively_without_duplicates(registry: Registry) -> None:
    for name in ("a", "b", "c", "d"):
        registry.add(name, object(), aliases=(f"{name}-alias",))
    registry.add_group("inner", ("a", "b"))
    registry.add_group("outer", ("inner", "c", "a-alias"))
    registry.add_group("everything", ("outer", "b", "inner", "d-alias"))

    assert registry.expand(["inner"]) == ["a", "b"]
    assert registry.expand(["outer"]) == ["a", "b", "c"]
    assert registry.expand(["everything"]) == ["a", "b", "c", "d"]
    assert registry.expand(["d", "everything", "c"]) == ["d", "a", "b", "c"]
    assert registry.expand(["b-alias", "b"]) == ["b"]
    assert "outer" in registry
    assert registry.groups() == {
        "inner": ("a", "b"),
        "outer": ("inner", "c", "a-alias"),
        "everything": ("outer", "b", "inner", "d-alias"),
    }


def test_group_with_an_unknown_member_fails_on_expansion(registry: Registry) -> None:
    registry.add("a", object())
    registry.add_group("broken", ("a", "missing"))

    with pytest.raises(UnknownNameError, match="'missing'"):
        registry.expand(["broken"])


@pytest.mark.parametrize("lookup", ["get", "entry", "expand"])
def test_unknown_name_suggests_a_close_match_on_one_line(registry: Registry, lookup: str) -> None:
    registry.add("locality_symmetry", object())
    registry.add("toeplitz", object())
    call = {
        "get": lambda: registry.get("locality_symetry"),
        "entry": lambda: registry.entry("locality_symetry"),
        "expand": lambda: registry.expand(["toeplitz", "locality_symetry"]),
    }[lookup]

    with pytest.raises(UnknownNameError) as caught:
        call()

    message = str(caught.value)
    assert "locality_symetry" in message
    assert "did you mean locality_symmetry" in message
    assert "toeplitz" not in message  # not close, so not suggested
    assert "posharness list tasks" in message
    assert "\n" not in message
    assert isinstance(caught.value, PosharnessError)


def test_unknown_name_without_a_close_match_lists_the_known_names(registry: Registry) -> None:
    registry.add("locality_symmetry", object())
    registry.add("toeplitz", object(), aliases=("tpz",))
    registry.add_group("geometry", ("locality_symmetry", "toeplitz"))

    with pytest.raises(UnknownNameError) as caught:
        registry.get("zzz")

    message = str(caught.value)
    assert "known: geometry, locality_symmetry, toeplitz, tpz" in message
    assert "\n" not in message


def test_registering_a_different_object_under_a_taken_name_is_refused(
    registry: Registry,
) -> None:
    def first() -> None:
        pass

    def second() -> None:
        pass

    registry.add("twice", first)
    registry.add("twice", first)  # the same object again is harmless
    assert registry.get("twice") is first

    with pytest.raises(OptionError) as caught, registry.origin(INCLUDE, "/plugins/other.py"):
        registry.register("twice")(second)

    message = str(caught.value)
    assert "'twice' is registered twice" in message
    assert "(posharness and /plugins/other.py)" in message
    assert "\n" not in message
    assert registry.get("twice") is first  # the first registration stays


def test_registering_over_a_lazy_entry_with_another_object_is_refused(
    registry: Registry,
) -> None:
    registry.add_lazy("dumps", "json:dumps", origin="plugin", source="some-dist")

    with pytest.raises(OptionError, match="registered twice"):
        registry.add("dumps", json.loads)
