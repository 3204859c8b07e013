"""Task groups: names that expand to several tasks on the command line."""

from posharness.plugins import tasks
from posharness.tasks.finetune_profiles import GROUPS

tasks.add_group("geometry", ("locality_symmetry", "toeplitz"))
# The word-swap probes of Chen et al. 2023 Table 3 (names as in posharness.tasks.shuffle).
tasks.add_group(
    "shuffle",
    ("shuffle_3", "shuffle_4", "shuffle_5", "shuffle_6", "shuffle_random", "shuffle_sr"),
)

# Fine-tune groups (glue, senteval_transfer, chen10) live beside the task profiles.
for _name, _members in GROUPS.items():
    tasks.add_group(_name, _members)
