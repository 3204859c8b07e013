"""Re-record the source hashes of versioned built-ins after a deliberate change.

    python tests/unit/core/code_versions/record.py            # every kind
    python tests/unit/core/code_versions/record.py splits     # one kind

Bump the version of each changed built-in first (the test that failed names them): a
record taken without a bump hides an edit that changes numbers under an old cell id.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[4]))  # the repository root
    from tests.unit.core.code_versions import KINDS, record

    for kind in sys.argv[1:] or sorted(KINDS):
        if kind not in KINDS:
            raise SystemExit(f"unknown kind {kind!r}: one of {', '.join(sorted(KINDS))}")
        print(f"wrote {record(kind)}")
