"""Four positional encodings declared on posharness.pe (docs/new_pe.md in posharness).

Importing this package registers them; the ``posharness.pe`` entry point does it for every
posharness command.
"""

from posharness_pe_examples import clipped_bias, mynope, partial_rotary, sinusoid_init

__all__ = ["clipped_bias", "mynope", "partial_rotary", "sinusoid_init"]
