"""Under a launch, one process speaks: the others print no warnings.

Every process of a ``torchrun`` / ``accelerate launch`` pretraining runs the same code, so a
warning any of them prints — ours (the vocabulary a corpus yields), transformers',
accelerate's, torch's, a ``warnings.warn`` from a library — came out once per process
(issue 39). The main process keeps them; the others drop warnings and below, from every
logger and from ``warnings``. Errors still print from every process: a process that fails
says why.
"""

from __future__ import annotations

import logging
import warnings

from posharness.base.process import is_main_process, launched


def quiet_unless_main() -> bool:
    """Silence this process's warnings when it is a launch's non-main process.

    Returns whether it did. Process-wide on purpose: such a process exists only to compute
    its share of the run, and its warnings are the main process's again.
    """
    if not launched() or is_main_process():
        return False
    logging.disable(logging.WARNING)  # every logger, whatever its level or handlers
    warnings.simplefilter("ignore")
    try:  # transformers keeps its own verbosity and warns once per process
        from transformers.utils import logging as hf_logging
    except ImportError:
        return True
    hf_logging.set_verbosity_error()
    return True
