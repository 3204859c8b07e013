"""posharness: an evaluation harness for positional encodings in BERT-style encoders.

Load an encoder (a Hugging Face checkpoint or a registered PE variant), run it in an
attention mode and score it on registered tasks; results are JSON files per cell and
leaderboards built from them. The command line (``posharness``) is a thin shell over
:mod:`posharness.runner`, :mod:`posharness.leaderboard` and :mod:`posharness.compare`.
"""

__version__ = "0.1.0"
