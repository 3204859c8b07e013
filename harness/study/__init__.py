"""Studies: one TOML file that takes a set of positional encodings from pretraining to the
seed papers' tables (docs/studies.md).

The core's study layer sits between the command line and the Python API: it plans the
study's stages (corpus → pretraining → evaluation cells → boards → tables → report), runs
what is missing, and renders tables whose rows are models. It knows no family: the
pretraining stage and the papers' tables reach it through entry points
(``posharness.study_stages``, ``posharness.study_tables``); the papers' own studies are
written by their family's ``posharness reproduce`` command.
"""
