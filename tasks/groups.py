"""Task groups: names that expand to several tasks on the command line."""

from posharness.plugins import tasks
from posharness.tasks.finetune_profiles import GROUPS

tasks.add_group("geometry", ("locality_symmetry", "toeplitz"))

# Fine-tune groups (glue, senteval_transfer, chen10) live beside the task profiles.
for _name, _members in GROUPS.items():
    tasks.add_group(_name, _members)
