"""What a model and a task promise each other and what a cell leaves behind: the adapter
protocol, the task protocol and its spec, model specs, result files and metric types."""
