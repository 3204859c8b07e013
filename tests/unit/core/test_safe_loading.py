"""Nothing the harness loads can run code: no pickle, torch.load only with weights_only,
never trust_remote_code. Scanned in the package's own source."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [p for folder in ("harness", "models", "tasks") for p in (ROOT / folder).rglob("*.py")]


def _code_lines():
    for path in SOURCES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if code.strip():
                yield path.relative_to(ROOT), number, code


def test_no_pickle_anywhere():
    use = re.compile(r"\bimport (c?pickle|dill)\b|\b(c?pickle|dill)\.(load|loads|dump|Unpickler)")
    found = [f"{p}:{n}" for p, n, code in _code_lines() if use.search(code)]
    assert not found, found


def test_torch_load_only_with_weights_only():
    found = [
        f"{p}:{n}"
        for p, n, code in _code_lines()
        if "torch.load(" in code and "weights_only=True" not in code
    ]
    assert not found, found


def test_remote_code_is_never_trusted():
    found = [
        f"{p}:{n}"
        for p, n, code in _code_lines()
        if re.search(r"trust_remote_code\s*=\s*True", code)
    ]
    assert not found, found


def test_the_scan_sees_the_package():
    assert len(SOURCES) > 100
