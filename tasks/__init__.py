"""Built-in tasks, one module per task family."""
