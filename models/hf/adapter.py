"""Hugging Face encoders behind the ``ModelAdapter`` protocol (``hf:<hub id or folder>``).

The model is loaded with eager attention. For the families in ``decompose/split_table.py``
the same loaded model also runs in modes ``contextual`` and ``positional``
(``decompose/``); the family's definition options and reference corpus arrive as
``--model-arg KEY=VALUE``. Their attention runs through torch's fused SDPA whenever a
call wants no attention weights, and eager when it does (``--model-arg attention=auto``,
the default; ``eager`` or ``sdpa`` force one, ``decompose/paths.py``). The path that
ran is in every ``EncoderOutput`` and, through :meth:`HFEncoderAdapter.attention_path`,
in every result. Other model types run eager.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from posharness.base.device import resolve_dtype
from posharness.base.errors import ModelLoadError, OptionError, UnsupportedModeError
from posharness.contracts.adapter import (
    ATTENTIONS,
    HIDDEN,
    EncoderBatch,
    EncoderOutput,
    Mode,
    ModeSupport,
    PECard,
    TokenizedText,
)
from posharness.contracts.model_spec import LoadOptions
from posharness.models.decompose.controller import Decomposition, ReferenceLayout
from posharness.models.decompose.paths import (
    ATTENTION_KEY,
    AUTO,
    EAGER,
    attention_choice,
    resolve_path,
)
from posharness.models.decompose.split_table import split_for, supported_model_types
from posharness.models.decompose.versions import split_identity
from posharness.models.hf.cards import pe_card_for
from posharness.models.hf.checkpoint import checkpoint_fingerprint, load_encoder
from posharness.models.hf.vocabulary import whole_word_vocabulary

ATTN_IMPLEMENTATION = "eager"  # what transformers loads; part of the fingerprint
DTYPES = ("float32", "bfloat16", "float16")
LAYER_KEYS = ("num_hidden_layers", "n_layers", "num_layers", "n_layer")
HEAD_KEYS = ("num_attention_heads", "n_heads", "num_heads", "n_head")


def _first_int(config: dict[str, Any], *names: str) -> int:
    """Families name the same size differently (T5 num_layers, XLNet n_layer, ...)."""
    for name in names:
        if config.get(name):
            return int(config[name])
    return 0


class HFEncoderAdapter:
    """A transformers ``AutoModel`` encoder and its tokenizer.

    Construction reads only ``config.json`` and hashes files; the weights and tokenizer
    load on first use. That keeps a rerun whose cells are all finished (the runner needs
    only the fingerprint to know) to a fraction of a second.
    """

    # A model type outside decompose/split_table.py runs eager; a subclass whose model fuses
    # every mode itself (the native zoo) says so here.
    fuses_every_mode = False

    def __init__(self, folder: Path, options: LoadOptions, hub_commit: str | None = None) -> None:
        self.spec = f"hf:{folder}"
        self.folder = folder
        self.hub_commit = hub_commit
        self.dtype = resolve_dtype(options.dtype, options.device)
        self._device = options.device
        try:
            self.config_dict = json.loads((folder / "config.json").read_text())
        except (OSError, ValueError) as exc:
            raise ModelLoadError(
                f"cannot read {folder / 'config.json'} ({exc}): fix or replace the file"
            ) from exc
        config = self.config_dict
        self.num_layers = _first_int(config, *LAYER_KEYS)
        self.num_heads = _first_int(config, *HEAD_KEYS)
        self.cache_dir = options.cache_dir  # where the reference statistics are cached
        self._options = options
        self.attention = attention_choice(dict(options.model_args).get(ATTENTION_KEY))
        self.decomposition = self._decomposition(options)
        if self.decomposition is not None:
            self.modes = self.decomposition.modes
        else:
            self.modes = {Mode.BOTH: ModeSupport(exact=True, definition="model as trained")}
        self._fingerprint: str | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._special_frame: tuple[tuple[int, ...], tuple[int, ...], bool] = ((), (), False)

    def _decomposition(self, options: LoadOptions) -> Decomposition | None:
        model_type = str(self.config_dict.get("model_type", "unknown"))
        family = split_for(model_type)
        args = {k: v for k, v in options.model_args if k != ATTENTION_KEY}
        if family is None:
            if args:
                raise OptionError(
                    f"--model-arg {next(iter(args))}: {self.spec} is a {model_type} model, "
                    "which has no contextual/positional split (families with one: "
                    f"{', '.join(supported_model_types())})"
                )
            if self.attention not in (AUTO, EAGER):
                raise OptionError(
                    f"--model-arg attention={self.attention}: {self.spec} is a {model_type} "
                    "model, which runs eager attention here: use attention=auto or eager"
                )
            return None
        positions = int(self.config_dict.get("max_position_embeddings", 512))
        return Decomposition(
            family,
            args,
            options.data_dir,
            positions - self._position_offset,
            self.spec,
            self.attention,
            self.config_dict,
        )

    def fresh_decomposition(self) -> Decomposition | None:
        """A new switchboard with the same choices, for another copy of the weights."""
        return self._decomposition(self._options)

    # -- lazy loading -------------------------------------------------------------------
    @property
    def model(self) -> Any:
        if self._model is None:
            self._load()
        return self._model

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._load()
        return self._tokenizer

    def _load(self) -> None:
        model_type = str(self.config_dict.get("model_type"))
        model, tokenizer = load_encoder(self.folder, model_type, self.dtype, ATTN_IMPLEMENTATION)
        model.to(self._device)
        if self.decomposition is not None:
            self.decomposition.install(model)
        self._model, self._tokenizer = model, tokenizer
        self._special_frame = self._find_special_frame()

    @property
    def pad_token_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad) if pad is not None else 0

    @property
    def max_length(self) -> int:
        """Longest input, special tokens included: the position table or the tokenizer limit."""
        positions = (
            int(self.config_dict.get("max_position_embeddings", 512)) - self._position_offset
        )
        limit = getattr(self.tokenizer, "model_max_length", positions) or positions
        return int(min(positions, limit))

    # -- identity -----------------------------------------------------------------------
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            split = split_identity(self.decomposition.family) if self.decomposition else None
            self._fingerprint = checkpoint_fingerprint(
                self.folder, self.hub_commit, self.dtype, ATTN_IMPLEMENTATION, split
            )
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        decomposition = self.decomposition.describe() if self.decomposition else None
        return {
            "decomposition": decomposition,
            "family": self.config_dict.get("model_type", "unknown"),
            "checkpoint": str(self.folder),
            "hub_commit": self.hub_commit,
            "dtype": self.dtype,
            "device": self.device,
            "attn_implementation": ATTN_IMPLEMENTATION,
            "attention": self.attention,  # the path choice; each result records the path
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
        }

    def pe_card(self) -> PECard:
        from posharness.models.hf.position_table import learned_positions

        learned = learned_positions(self.config_dict)
        return pe_card_for(
            str(self.config_dict.get("model_type", "unknown")), self.position_embeddings(), learned
        )

    @property
    def device(self) -> str:
        return self._device

    def to(self, device: str) -> HFEncoderAdapter:
        self._device = device
        if self._model is not None:
            self._model.to(device)
        return self

    # -- inputs -------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str] | Sequence[Sequence[str]]) -> list[TokenizedText]:
        if not texts:
            return []
        split = not isinstance(texts[0], str)
        enc = self.tokenizer(
            list(texts) if not split else [list(t) for t in texts],
            is_split_into_words=split,
            truncation=True,
            max_length=self.max_length,
            return_special_tokens_mask=True,
        )
        return _tokenized(enc, with_word_ids=True)

    def _find_special_frame(self) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
        """Learn where this tokenizer puts its special tokens from one real encoding.

        Some families prefix ([CLS] x [SEP]), others suffix (XLNet: x <sep> <cls>); reading
        the frame off an actual encoding works for all of them without a per-family table.
        """
        enc = self.tokenizer("hello", return_special_tokens_mask=True)
        ids, specials = enc["input_ids"], enc["special_tokens_mask"]
        words = [i for i, s in enumerate(specials) if not s]
        first, last = (words[0], words[-1]) if words else (len(ids), len(ids) - 1)
        has_types = "token_type_ids" in enc
        return tuple(ids[:first]), tuple(ids[last + 1 :]), has_types

    def wrap_token_ids(self, token_ids: Sequence[int]) -> TokenizedText:
        if self._tokenizer is None:
            self._load()  # the special-token frame is read off the loaded tokenizer
        prefix, suffix, has_types = self._special_frame
        ids = (*prefix, *token_ids, *suffix)
        special = (True,) * len(prefix) + (False,) * len(token_ids) + (True,) * len(suffix)
        words = (None,) * len(prefix) + tuple(range(len(token_ids))) + (None,) * len(suffix)
        return TokenizedText(ids, special, words, (0,) * len(ids) if has_types else None)

    def probe_vocabulary(self) -> list[tuple[str, int]]:
        return whole_word_vocabulary(
            self.tokenizer.get_vocab(), set(self.tokenizer.all_special_ids)
        )

    # -- running ------------------------------------------------------------------------
    def check_mode(self, mode: Mode) -> None:
        """Fail before any work if ``mode`` is missing or needs data that is not there."""
        if mode not in self.modes:
            model_type = self.config_dict.get("model_type", "unknown")
            families = ", ".join(supported_model_types())
            raise UnsupportedModeError(
                f"{self.spec} ({model_type}) supports modes {', '.join(self.modes)}, not "
                f"{mode}: drop it from --mode (splits exist for {families})"
            )
        if self.decomposition is not None:
            self.decomposition.check_ready(mode)

    def _use_mode(self, mode: Mode) -> None:
        self.check_mode(mode)
        if self.decomposition is None:
            return
        model = self.model
        if mode is not Mode.BOTH:
            self.decomposition.prepare(model, self.reference_statistics)
        self.decomposition.set_mode(model, mode)

    def attention_path(self, mode: Mode, want: frozenset[str]) -> str:
        """``sdpa`` or ``eager``: the attention code ``encode(batch, mode, want)`` runs, and
        (``want`` empty) a classifier from :meth:`for_classification` trains with.

        A request for ``attentions`` is eager; so is every call of a model type without a
        split family. Raises ``OptionError`` where ``attention=sdpa`` cannot be honoured.
        """
        weights = ATTENTIONS in want
        if self.decomposition is not None:
            return self.decomposition.attention_path(mode, weights)
        return resolve_path(self.attention, weights) if self.fuses_every_mode else EAGER

    def encode(self, batch: EncoderBatch, mode: Mode, want: frozenset[str]) -> EncoderOutput:
        path = self.attention_path(mode, want)
        self._use_mode(mode)
        batch = batch.to(self.device)
        kwargs: dict[str, Any] = {
            "input_ids": batch.input_ids,
            "attention_mask": batch.attention_mask,
            "output_hidden_states": HIDDEN in want,
            "output_attentions": ATTENTIONS in want,
            "return_dict": True,
        }
        if batch.token_type_ids is not None and self._accepts_token_types():
            kwargs["token_type_ids"] = batch.token_type_ids
        import torch

        with torch.inference_mode():
            out = self.model(**kwargs)
        return EncoderOutput(
            hidden_states=tuple(out.hidden_states) if HIDDEN in want else None,
            attentions=tuple(out.attentions) if ATTENTIONS in want else None,
            attention_mask=batch.attention_mask,
            special_tokens_mask=batch.special_tokens_mask,
            word_ids=batch.word_ids,
            attn_implementation=path,
        )

    # -- fine-tuning ----------------------------------------------------------------------
    def tokenize_pairs(
        self, first: Sequence[str], second: Sequence[str] | None, max_length: int
    ) -> list[TokenizedText]:
        """Sentences or sentence pairs as one input each, truncated longest-first."""
        if not first:
            return []
        enc = self.tokenizer(
            list(first),
            list(second) if second is not None else None,
            truncation=True,
            max_length=min(max_length, self.max_length),
            return_special_tokens_mask=True,
        )
        return _tokenized(enc, with_word_ids=False)  # pairs: fine-tuning needs no word ids

    def for_classification(self, num_labels: int, mode: Mode) -> Any:
        """A trainable copy with a fresh head; ``num_labels=1`` is a regression head."""
        from posharness.models.hf.classifier import build_classifier

        return build_classifier(self, num_labels, mode)

    def for_masked_lm(self, mode: Mode) -> Any:
        """The checkpoint's own masked-LM head (``HasMaskedLM``; ``masked_lm.py``)."""
        from posharness.models.hf.masked_lm import hf_masked_lm

        return hf_masked_lm(self, mode)

    def masked_lm_head_missing(self) -> str | None:
        from posharness.models.hf.masked_lm import head_missing

        return head_missing(self.config_dict, self.spec)

    def _accepts_token_types(self) -> bool:
        return int(self.config_dict.get("type_vocab_size", 0) or 0) > 0

    # -- decomposition statistics ---------------------------------------------------------
    _progress: Callable[[str, int], Callable[[int], None]] | None = None

    def set_progress(self, progress: Callable[[str, int], Callable[[int], None]] | None) -> None:
        """Show the pass over the reference corpus (``ShowsProgress``): seconds to minutes
        on a CPU, otherwise a silent pause before the first cell's bar moves."""
        self._progress = progress

    def reference_statistics(self, layout: ReferenceLayout) -> Any:
        """Mean attention inputs per layer and position over the packed reference corpus
        (``reference_statistics.py``), cached per checkpoint and corpus."""
        from posharness.models.hf.reference_statistics import mean_inputs_over_corpus

        assert self.decomposition is not None
        return mean_inputs_over_corpus(self, self.decomposition.family, layout, self._progress)

    def positional_scores(self, length: int) -> Any:
        if self.decomposition is None:
            return None
        model = self.model
        self.decomposition.check_ready(Mode.POSITIONAL)
        self.decomposition.prepare(model, self.reference_statistics)
        return self.decomposition.positional_scores(model, length)

    # -- positions (position_table.py) -------------------------------------------------
    @property
    def _position_offset(self) -> int:
        from posharness.models.hf.position_table import position_offset

        return position_offset(self.config_dict)

    def position_embeddings(self) -> Any:
        from posharness.models.hf.position_table import position_embeddings

        return position_embeddings(self.model, self.config_dict)


def _tokenized(enc: Any, with_word_ids: bool) -> list[TokenizedText]:
    """One ``TokenizedText`` per row of a fast tokenizer's batch encoding."""
    types = enc.get("token_type_ids")
    return [
        TokenizedText(
            input_ids=tuple(ids),
            special_tokens_mask=tuple(bool(s) for s in enc["special_tokens_mask"][i]),
            word_ids=tuple(enc.word_ids(i)) if with_word_ids else (),
            token_type_ids=tuple(types[i]) if types is not None else None,
        )
        for i, ids in enumerate(enc["input_ids"])
    ]
