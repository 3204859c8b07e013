"""From options to result files: the run configuration, the plan and each cell's key, the
runner, degenerate-outcome flags, per-mode summaries and the executors."""
