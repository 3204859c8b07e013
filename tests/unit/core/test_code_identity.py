"""The code identity of a plugin's object (issue 29, part 4): a code edit changes it, a
comment, docstring or formatting edit does not, and no machine path enters it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from posharness.base.errors import OptionError
from posharness.plugins.code_identity import code_identity, source_digest, source_files

PLUGIN = '''"""A plugin."""

SCALE = 2.0


class Bias:
    """Adds a bias."""

    def forward(self, x):
        # doubled
        return x * SCALE
'''


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_code_edits_count_and_comments_docstrings_formatting_do_not(tmp_path):
    file = tmp_path / "plugin.py"
    file.write_text(PLUGIN)
    base = source_digest([file])
    file.write_text(
        PLUGIN.replace('"""Adds a bias."""', '"""Adds a bias, scaled."""')
        .replace("# doubled", "# multiplied by the scale")
        .replace("SCALE = 2.0", "SCALE = (\n    2.0\n)\n\n")
    )
    assert source_digest([file]) == base
    file.write_text(PLUGIN.replace("SCALE = 2.0", "SCALE = -200.0"))
    assert source_digest([file]) != base


def test_no_machine_path_enters_the_digest(tmp_path):
    for where in ("a", "b/c"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "plugin.py").write_text(PLUGIN)
    assert source_digest([tmp_path / "a" / "plugin.py"]) == source_digest(
        [tmp_path / "b" / "c" / "plugin.py"]
    )


def test_an_include_file_is_its_own_source_and_a_package_is_all_of_its_files(tmp_path):
    file = tmp_path / "single.py"
    file.write_text(PLUGIN)
    module = load(file, "posharness_test_single_plugin")
    try:
        assert source_files(module.Bias) == [file.resolve()]
        assert code_identity(module.Bias) == f"src:{source_digest([file])}"
        assert code_identity(module.Bias, version=3) == "v3"
    finally:
        del sys.modules["posharness_test_single_plugin"]

    package = tmp_path / "site" / "my_pe_plugin"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "scheme.py").write_text(PLUGIN)
    (package / "helpers.py").write_text("def helper():\n    return 1\n")
    sys.path.insert(0, str(tmp_path / "site"))
    try:
        from my_pe_plugin.sub import scheme  # type: ignore[import-not-found]

        files = source_files(scheme.Bias)
        assert {f.name for f in files} == {"__init__.py", "scheme.py", "helpers.py"}
        before = code_identity(scheme.Bias)
        (package / "helpers.py").write_text("def helper():\n    return 2\n")
        assert code_identity(scheme.Bias) != before  # a helper beside the scheme counts
    finally:
        sys.path.remove(str(tmp_path / "site"))
        for name in [n for n in sys.modules if n.startswith("my_pe_plugin")]:
            del sys.modules[name]


def test_an_object_without_a_source_file_asks_for_a_version():
    namespace: dict = {"__name__": "posharness_test_no_file"}
    exec("class Made: pass", namespace)
    with pytest.raises(OptionError, match="declare its code version"):
        code_identity(namespace["Made"])
    assert code_identity(namespace["Made"], version="2") == "v2"


def test_the_digest_is_the_same_on_every_python():
    """Recorded digests (tests/unit/core/code_versions/) are checked on whatever Python CI
    runs: the normalised text must not follow ``ast.dump``'s changes between versions.
    This value was recorded on Python 3.11; a different one means the walker changed."""
    from posharness.plugins.code_identity import normalised_source

    assert normalised_source("def f(x):\n    '''doc'''\n    return x\n") == (
        "Module(body=[FunctionDef(name='f',args=arguments(args=[arg(arg='x')]),"
        "body=[Return(value=Name(id='x',ctx=Load()))])])"
    )


def test_module_closure_follows_a_packages_imports(tmp_path):
    from posharness.plugins.code_identity import module_closure

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import x\n\ndef f():\n    import pkg.c\n")
    (package / "b.py").write_text("from pkg import d\nimport os\nx = 1\n")
    (package / "c.py").write_text("")
    (package / "d.py").write_text("")
    (package / "unused.py").write_text("")
    found = module_closure([package / "a.py"], "pkg", package, exclude=("c.py",))
    assert [path.name for path in found] == ["a.py", "b.py", "d.py"]
