"""The zoo's named models: each a scheme plus option values, declared as data.

Names follow the papers: BERT-A / BERT-R / TUPE-A / TUPE-R (Ke et al. 2021, Table 1),
TISA alone or on top of learned absolute positions (Wennberg & Henter 2021, Table 3),
BERT-A* / BERT-A*-s / BERT-A*-Seq (Chen et al. 2023 §3.3.2, draft §5) and the draft's
ablations BERT-only-c / -p (App. B.5, C.2). A plugin names its
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
# BERT-A* as Chen et al. (2023, §3.3.2, App. A.2) train it: the attenuated weights of Eq. 8
# pre-computed as a table per layer and head, added to the logits (Listing 1), learnable.
register_variant(
    "bert-a-star",
    "attenuated-table",
    attenuation_learnable="head",
    description="BERT-A*: Eq. 8 weight table per layer and head, learnable (Chen et al.)",
)
register_variant(
    "bert-a-star-s",
    "attenuated-table",
    attenuation_learnable="layer",
    description="BERT-A*-s: Eq. 8 weight table per layer, shared by its heads, learnable",
)
register_variant(
    "bert-a-star-fixed",
    "attenuated-table",
    attenuation_learnable="fixed",
    description="BERT-A: Eq. 8 weight table, frozen (Chen et al.'s BERT-A)",
)
register_variant(
    "bert-a-star-seq",
    "sequence-table",
    attenuation_learnable="head",
    description="BERT-A*-Seq: the learnable table as positional attention, CA(PA(X))",
)
# The project's own variant (waves 2-3): only w and s learnable, softmax every forward.
register_variant(
    "bert-a-star-ws",
    "attenuated",
    attenuation_learnable="head",
    description="project variant: Eq. 8 with w and s learnable per head (not Chen's BERT-A*)",
)
register_variant(
    "bert-a-star-ws-s",
    "attenuated",
    attenuation_learnable="layer",
    description="project variant: Eq. 8 with w and s learnable per layer",
)
register_variant(
    "bert-a-star-ws-fixed",
    "attenuated",
    attenuation_learnable="fixed",
    description="project variant: Eq. 8 with fixed w and s, softmax over the real keys",
)
register_variant(
    "bert-a-star-ws-seq",
    "sequence",
    attenuation_learnable="head",
    description="project variant: CA(PA(X)) with w and s learnable per head",
)
# Chen et al.'s ICLR draft, Table 3 (softmaxed ALiBi) and Table 7 (ablations of Eq. 2).
register_variant(
    "alibi-softmax",
    "alibi-softmax",
    description="softmax of the ALiBi biases added to the logits (draft Table 3, ALiBi)",
)
register_variant(
    "alibi-seq",
    "alibi-seq",
    description="softmaxed ALiBi as positional attention, CA(PA(X)) (draft ALiBi-Seq)",
)
register_variant(
    "bert-only-c",
    "nope",
    description="BERT-only-c: Eq. 2 without the positions p_i (the same model as nope)",
)
register_variant(
    "bert-only-p",
    "positions-only",
    description="BERT-only-p: Eq. 2 without the words x_i, logits from positions only",
)
register_variant("rope", "rope", description="rotary position embedding on queries and keys")
register_variant(
    "xpos", "xpos", description="xPos: rotary with a query/key scale zeta^((n - m)/B) (Sun et al.)"
)
register_variant("alibi", "alibi", description="ALiBi linear distance biases")
register_variant(
    "sinusoidal", "sinusoidal", description="fixed sinusoidal positions added at the input"
)
register_variant("shaw", "shaw", description="Shaw et al. relative key embeddings (clipped at 16)")
register_variant("t5", "t5", description="T5 bucketed relative bias, no absolute positions")
register_variant("nope", "nope", description="no positional information at all")
