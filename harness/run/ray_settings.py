"""What ``--executor ray`` asks for, checked before planning: no Ray import at load time.

The planner checks these settings (``plan.check_executor``) and the Ray executor uses
them; they sit apart from the executor so that planning never imports the module that
runs the plan (issue 45, part 4: no import circle inside ``posharness.run``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from posharness.base.errors import OptionError

INSTALL_HINT = "--executor ray needs Ray: pip install 'posharness[ray]' (or pip install ray)"
CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class RaySettings:
    """``address``: None starts a local cluster in this process (the test and laptop
    case); ``auto`` joins the cluster ``ray start`` made on this node; ``HOST:PORT`` (or
    ``ray://HOST:PORT``) joins a remote head."""

    address: str | None = None
    cpus_per_cell: float = 1.0
    gpus_per_cell: float = 0.0


def check_settings(settings: RaySettings) -> None:
    """Refuse, before planning, what would fail or hang later: Ray missing, a negative
    or zero resource request, an address nothing listens on."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise OptionError(INSTALL_HINT) from None
    if settings.cpus_per_cell <= 0:
        raise OptionError(f"--cpus-per-cell {settings.cpus_per_cell}: must be positive")
    if settings.gpus_per_cell < 0:
        raise OptionError(f"--gpus-per-cell {settings.gpus_per_cell}: must be 0 or more")
    if settings.address not in (None, "auto"):
        _check_reachable(settings.address)


def _check_reachable(address: str) -> None:
    """A TCP connection to the head within seconds, so a wrong address is one line and
    not Ray's minute of retries."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise OptionError(
            f"--ray-address {address!r}: give auto, HOST:PORT or ray://HOST:PORT "
            "(the address `ray start --head` prints)"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise OptionError(
            f"--ray-address {address}: nothing answers there ({exc.strerror or exc}): start "
            "the head with `ray start --head` and pass the address it prints"
        ) from None
