"""Built-in tasks, one package per task family (geometry, dep_heads, finetune, shuffle,
senteval, length); each registers its own names through a ``posharness.tasks`` entry point."""
