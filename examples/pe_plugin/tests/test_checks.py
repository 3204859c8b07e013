"""Every scheme of the package passes posharness's numerical checks (``check-pe``)."""

import posharness_pe_examples  # noqa: F401  (registers the schemes, installed or not)
import pytest

from posharness.models.zoo.check import assert_pe_ok

NAMES = ["mynope", "clipped-bias", "p-rope", "ape-sin-init"]


@pytest.mark.parametrize("name", NAMES)
def test_scheme_passes_check_pe(name: str) -> None:
    assert_pe_ok(name)


def test_scheme_options_are_checked_too() -> None:
    assert_pe_ok("clipped-bias", max_distance=4)
    assert_pe_ok("p-rope", fraction=0.5)
