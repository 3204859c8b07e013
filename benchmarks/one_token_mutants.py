"""Plant one-token mutations one at a time and count how many the covering tests catch.

    python benchmarks/one_token_mutants.py --files harness/stats/paired_tests.py \
        --tests tests/unit/pins tests/unit/core/test_paired_statistics.py --count 20

Each mutant changes one token of one file — an operator (+ -, * /, < <=, == !=, and or),
a constant (0 -> 1, 1 -> 2, 2 -> 3, n -> n + 1), a unary minus dropped, or a call swapped
(min max, all any, argmin argmax, abs dropped) — the kind of slip a review misses (issue
49). The script copies the working tree to a temporary folder, points the editable
install of ``posharness`` at the copy (a ``sitecustomize`` on PYTHONPATH), and plants each
mutant there, so the tree you work in is never written. Then it runs the tests with
``-x -q`` and restores the file byte for byte. A mutant is caught when the tests fail.
The tests must pass unmutated first (the baseline), or nothing is counted.

Some mutants are equivalent (no behaviour changes: a default seed that no caller relies
on, a permutation of independent draws); read the MISSED lines before adding a test.
Timings are wall clock: each mutant costs one pytest start-up (imports of torch etc.).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tokenize
from pathlib import Path

SWAPS = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "**": "*",
    "//": "/",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "and": "or",
    "or": "and",
    "True": "False",
    "False": "True",
}
CALLS = {
    "min": "max",
    "max": "min",
    "all": "any",
    "any": "all",
    "argmin": "argmax",
    "argmax": "argmin",
    "abs": "",
}
_UNARY_BEFORE = {"(", ",", "=", "[", "return", ":", "**", "*", "/", "+", "-"}
_SITE = """import os, sys
tree, source = os.environ["MUTANTS_TREE"], os.environ["MUTANTS_SOURCE"]
for finder in sys.meta_path:
    mapping = getattr(sys.modules.get(getattr(finder, "__module__", "")), "MAPPING", None)
    if isinstance(mapping, dict) and "posharness" in mapping:
        for key, value in list(mapping.items()):
            if value.startswith(source):
                mapping[key] = tree + value[len(source):]
"""


def constant_mutant(text: str) -> str | None:
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        return None
    if "e" in text.lower() or "j" in text.lower():
        return None  # tolerances and complex literals: rarely a slip
    if value in (0, 1, 2):
        return {0: "1", 1: "2", 2: "3"}[int(value)] + (".0" if "." in text else "")
    return repr(value * 2) if "." in text else str(int(value) + 1)


def mutants_of(root: Path, path: str) -> list[tuple[str, int, int, str, str]]:
    """Every one-token mutant of ``path``: (path, line, column, old, new)."""
    source = (root / path).read_text()
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found = []
    for index, token in enumerate(tokens):
        before = tokens[index - 1].string if index else ""
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        where = (path, token.start[0], token.start[1], token.string)
        if token.type == tokenize.OP and token.string in SWAPS:
            if token.string in ("*", "**") and before in ("(", ",", "", "=", "["):
                continue  # *args, **kwargs
            if token.string == "-" and before in _UNARY_BEFORE:
                found.append((*where, ""))
            else:
                found.append((*where, SWAPS[token.string]))
        elif token.type == tokenize.NAME and token.string in SWAPS:
            found.append((*where, SWAPS[token.string]))
        elif token.type == tokenize.NAME and token.string in CALLS and after == "(":
            found.append((*where, CALLS[token.string]))
        elif token.type == tokenize.NUMBER:
            new = constant_mutant(token.string)
            if new is not None:
                found.append((*where, new))
    return found


def copy_tree(source: Path, target: Path) -> None:
    """The files git would see (tracked and untracked, not ignored), copied to ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=source,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        origin = source / name.decode()
        if origin.is_file():
            destination = target / name.decode()
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(origin.read_bytes())


def run_tests(tree: Path, env: dict[str, str], tests: list[str], timeout: int) -> int | str:
    command = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:cacheprovider"]
    try:
        return subprocess.run(
            command, cwd=tree, env=env, capture_output=True, timeout=timeout
        ).returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", required=True, help="files to mutate")
    parser.add_argument("--tests", nargs="+", required=True, help="pytest paths to run")
    parser.add_argument("--count", type=int, default=20, help="mutants drawn at random")
    parser.add_argument("--seed", type=int, default=0, help="which mutants are drawn")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test run")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/one_token_mutants.json"))
    args = parser.parse_args()
    source = Path.cwd().resolve()
    with tempfile.TemporaryDirectory(prefix="mutants-") as scratch:
        tree, site = Path(scratch) / "tree", Path(scratch) / "site"
        copy_tree(source, tree)
        site.mkdir()
        (site / "sitecustomize.py").write_text(_SITE)
        env = dict(
            os.environ,
            MUTANTS_TREE=str(tree),
            MUTANTS_SOURCE=str(source),
            PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
        )
        if run_tests(tree, env, args.tests, args.timeout) != 0:
            print("the tests fail without any mutant: fix them first", file=sys.stderr)
            return 2
        pool = [m for path in args.files for m in mutants_of(tree, path)]
        random.Random(args.seed).shuffle(pool)
        records = []
        for path, line, column, old, new in pool[: args.count]:
            file = tree / path
            original = file.read_bytes()
            lines = original.decode().splitlines(keepends=True)
            text = lines[line - 1]
            lines[line - 1] = text[:column] + new + text[column + len(old) :]
            start = time.perf_counter()
            try:
                file.write_text("".join(lines))
                code = run_tests(tree, env, args.tests, args.timeout)
            finally:
                file.write_bytes(original)
            caught = code != 0
            records.append({"file": path, "line": line, "old": old, "new": new, "caught": caught})
            verdict = "CAUGHT" if caught else "MISSED"
            seconds = time.perf_counter() - start
            print(f"{verdict} {seconds:5.0f}s {path}:{line} {old!r} -> {new!r} | {text.strip()}")
    caught = sum(r["caught"] for r in records)
    print(f"caught {caught} of {len(records)} mutants ({len(pool)} possible)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"caught": caught, "mutants": records}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
