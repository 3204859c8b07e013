"""The bottom layer: errors, the device, process-group facts, fault injection and the
environment record. Imports nothing else from the core."""
