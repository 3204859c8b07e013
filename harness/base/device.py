"""Choosing where to run: ``auto`` prefers CUDA, then Apple's MPS, then the CPU."""

from __future__ import annotations

import os
import re
import sys

from posharness.base.errors import OptionError

_VALID = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


def check_device_name(name: str) -> str:
    """Validate the spelling without importing torch (fast failure on bad input)."""
    name = name.strip().lower()
    if not _VALID.match(name):
        raise OptionError(f"--device {name!r}: use auto, cpu, cuda, cuda:N or mps")
    return name


def resolve_device(name: str) -> str:
    name = check_device_name(name)
    if name == "cpu" or (name == "auto" and not _accelerator_possible()):
        return "cpu"  # decided without importing torch: keeps finished reruns fast
    import torch

    if name == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise OptionError(
                f"--device {name}: no CUDA device is visible here; use --device cpu or auto"
            )
        index = int(name.split(":")[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise OptionError(
                f"--device {name}: only {torch.cuda.device_count()} CUDA device(s) visible; "
                "pick a smaller index"
            )
    if name == "mps" and not torch.backends.mps.is_available():
        raise OptionError("--device mps: MPS is not available here; use --device cpu or auto")
    return name


def device_type(device: str) -> str:
    return device.split(":")[0]


def _accelerator_possible() -> bool:
    """False only when this Linux machine certainly has no GPU driver (no device nodes)."""
    if not sys.platform.startswith("linux"):
        return True
    nodes = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")
    return any(os.path.exists(node) for node in nodes)


def resolve_dtype(name: str, device: str) -> str:
    """``auto`` is bf16 on CUDA (half the memory, same range) and float32 elsewhere."""
    if name == "auto":
        return "bfloat16" if device.startswith("cuda") else "float32"
    return name
