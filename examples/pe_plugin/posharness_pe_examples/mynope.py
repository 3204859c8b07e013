from posharness.pe import register_variant

register_variant("mynope", "nope", description="NoPE under a name of my own")
