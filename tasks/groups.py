"""Task groups: names that expand to several tasks on the command line."""

from posharness.plugins import tasks

tasks.add_group("geometry", ("locality_symmetry", "toeplitz"))
