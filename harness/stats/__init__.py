"""Numbers made from model outputs: geometry of attention maps, classification scores,
the paired tests and resampling behind ``compare``, and figure helpers."""
