"""The bottom layer: errors, the device, process-group facts, fault injection, the
environment record and lazy exports. Imports nothing else from the core."""
