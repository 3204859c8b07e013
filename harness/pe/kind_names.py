"""The names of the ways a positional encoding can enter the encoder, without torch.

``posharness.pe.kinds`` holds one base class per name; the registry, the mode split and
the rules for combining kinds (``posharness.pe.combination``) read only these names, so
registering a scheme stays free of torch.
"""

from __future__ import annotations

INPUT_EMBEDDING = "input embedding"
LOGIT_TERM = "logit term"
CONTENT_LOGIT_TERM = "content logit term"
UNTIED_PRODUCT = "untied product"
QUERY_KEY_TRANSFORM = "query/key transform"
POSITIONAL_ATTENTION = "positional attention"
POSITION_FREE = "position-free"
COMBINATION = "combination"  # several of the kinds above, each applied where it belongs
KINDS = (
    INPUT_EMBEDDING,
    LOGIT_TERM,
    CONTENT_LOGIT_TERM,
    UNTIED_PRODUCT,
    QUERY_KEY_TRANSFORM,
    POSITIONAL_ATTENTION,
    POSITION_FREE,
    COMBINATION,
)
# The kinds a combination may hold: those that act on one attention's logits side by side.
PART_KINDS = (LOGIT_TERM, UNTIED_PRODUCT, CONTENT_LOGIT_TERM, QUERY_KEY_TRANSFORM)
