"""The zoo's named models: each a scheme plus option values, declared as data.

Names follow the papers: BERT-A / BERT-R / TUPE-A / TUPE-R (Ke et al. 2021, Table 1),
TISA alone or on top of learned absolute positions (Wennberg & Henter 2021, Table 3),
BERT-A* / BERT-A*-s / BERT-A*-Seq (Chen et al. 2023 §3.3.2, draft §5). A plugin names its
own models the same way (``posharness.pe.register_variant``). Kept free of torch: the
names are registered whenever the model registry loads, the schemes only when one is built.
"""

from __future__ import annotations

from posharness.pe import register_variant

register_variant(
    "bert-a", "ape", description="BERT-A: learned absolute positions added at the input"
)
# TUPE's BERT-R: learned absolute input positions plus the T5 bucketed relative bias.
register_variant(
    "bert-r",
    "t5",
    absolute="learned",
    description="BERT-R: learned absolute positions + T5 bucketed relative bias",
)
register_variant(
    "tupe-a", "tupe-a", description="TUPE-A: untied positional attention with the [CLS] reset"
)
register_variant(
    "tupe-a-tie-cls", "tupe-a", tie_cls=True, description="TUPE-A without the [CLS] reset"
)
register_variant("tupe-r", "tupe-r", description="TUPE-R: TUPE-A + T5 bucketed relative bias")
register_variant("tisa", "tisa", description="TISA: Toeplitz kernel scores, no absolute positions")
register_variant(
    "tisa-ape", "tisa", absolute="learned", description="TISA on top of learned absolute positions"
)
register_variant(
    "bert-a-star",
    "attenuated",
    attenuation_learnable="head",
    description="BERT-A*: attenuated encoding (Eq. 8), w and s learnable per head",
)
register_variant(
    "bert-a-star-s",
    "attenuated",
    attenuation_learnable="layer",
    description="BERT-A*-s: attenuated encoding shared within each layer",
)
register_variant(
    "bert-a-star-fixed",
    "attenuated",
    attenuation_learnable="fixed",
    description="attenuated encoding with fixed w and s",
)
register_variant(
    "bert-a-star-seq",
    "sequence",
    attenuation_learnable="head",
    description="BERT-A*-Seq: CA(PA(X)), positional then content attention",
)
register_variant("rope", "rope", description="rotary position embedding on queries and keys")
register_variant("alibi", "alibi", description="ALiBi linear distance biases")
register_variant(
    "sinusoidal", "sinusoidal", description="fixed sinusoidal positions added at the input"
)
register_variant("shaw", "shaw", description="Shaw et al. relative key embeddings (clipped at 16)")
register_variant("t5", "t5", description="T5 bucketed relative bias, no absolute positions")
register_variant("nope", "nope", description="no positional information at all")
