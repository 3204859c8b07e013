"""Chen et al.'s controlled sweep (§3.3.1, Figure 3 and Figure A1): accuracy against the
locality (symmetry 1) and the symmetry (locality fixed) of a fixed positional attention.

For each dataset and curve: the targets are fitted to Eq. 8 once, the word vectors are
looked up once per sentence, the pooled sentence vectors of a chunk of settings come from
one batched product (encoder.py), and the chunk's R x K classifiers train together
(training.py). Everything the tables need is returned as one JSON-ready dict; nothing is
averaged here (stats.py does that from the per-repeat numbers).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from posharness.base.errors import OptionError
from posharness.tasks.controlled.data import Dataset, read_dataset
from posharness.tasks.controlled.encoder import Setting, attention_tables, encode, fit_setting
from posharness.tasks.controlled.training import TrainConfig, train
from posharness.tasks.controlled.vectors import coverage, load_vectors

VERSION = "1"
CURVES = ("locality", "symmetry")
OOV = ("zero", "drop")


@dataclass(frozen=True)
class SweepConfig:
    vectors: str
    vectors_format: str = "auto"
    vectors_name: str = ""  # how tables name the vectors; default: the sidecar's or the file's
    datasets: tuple[str, ...] = ("mr", "subj")
    curves: tuple[str, ...] = CURVES
    settings: int = 100  # per curve
    # None: from just above the lowest locality Eq. 8 reaches at max_length (a uniform map:
    # 0.046 at 64 positions; the draft's 0.01 needs about 300) up to 0.99
    locality_range: tuple[float, float] | None = None
    symmetry_range: tuple[float, float] = (0.01, 1.0)
    symmetry_locality: float = 0.2  # the symmetry curve's locality, inside [0.15, 0.3]
    max_length: int = 64
    pooling: str = "max"
    oov: str = "zero"
    coverage_threshold: float = 0.9  # token coverage below this is flagged
    chunk: int = 25  # settings encoded and trained together
    sentences_limit: int | None = None  # tests: the first N sentences of the fixed shuffle
    train: TrainConfig = field(default_factory=TrainConfig)


def grid(config: SweepConfig, curve: str) -> list[tuple[float, float]]:
    """The (locality, symmetry) targets of ``curve``, evenly spaced."""
    if curve == "locality":
        values = np.linspace(*locality_range(config), config.settings)
        return [(float(v), 1.0) for v in values]
    if curve == "symmetry":
        values = np.linspace(*config.symmetry_range, config.settings)
        return [(config.symmetry_locality, float(v)) for v in values]
    raise OptionError(f"curve {curve!r}: expected one of {', '.join(CURVES)}")


def locality_range(config: SweepConfig) -> tuple[float, float]:
    """The locality curve's span: the option, or from the reachable floor (rounded up)."""
    if config.locality_range is not None:
        return config.locality_range
    from posharness.models.zoo.encoder.attenuation import attenuation_matrix
    from posharness.stats.geometry import locality

    floor = locality(attenuation_matrix(config.max_length, 1e-6, 1.0))
    return (float(np.ceil((floor + 0.002) * 100) / 100), 0.99)


def embed(dataset: Dataset, vectors: Any, oov: str, max_length: int) -> list[np.ndarray]:
    """Each sentence as [n, d] vectors, truncated to ``max_length``; an out-of-vocabulary
    word is a zero vector in its place (``oov=zero``) or left out (``oov=drop``)."""
    if oov not in OOV:
        raise OptionError(f"oov={oov!r}: expected one of {', '.join(OOV)}")
    table = np.asarray(vectors.vectors, dtype=np.float32)
    index = vectors.key_to_index
    zero = np.zeros((1, table.shape[1]), dtype=np.float32)
    out = []
    for tokens in dataset.sentences:
        tokens = tokens[:max_length]
        ids = [index.get(word, -1) for word in tokens]
        if oov == "drop":
            ids = [i for i in ids if i >= 0]
        rows = np.concatenate([table, zero])[ids] if ids else zero
        out.append(np.ascontiguousarray(rows))
    return out


def vectors_label(config: SweepConfig) -> str:
    """The name every number is printed under: the option, the trainer's sidecar, the file."""
    if config.vectors_name:
        return config.vectors_name
    sidecar = Path(config.vectors).expanduser().with_suffix(Path(config.vectors).suffix + ".json")
    if sidecar.is_file():
        return str(json.loads(sidecar.read_text()).get("name", Path(config.vectors).name))
    return Path(config.vectors).name


def run_sweep(config: SweepConfig, data_root: Path, log=print) -> dict[str, Any]:
    """The whole sweep as a JSON-ready dict (settings, per-repeat accuracies, timings)."""
    started = time.perf_counter()
    vectors = load_vectors(config.vectors, config.vectors_format)
    loaded = time.perf_counter() - started
    result: dict[str, Any] = {
        "experiment": "chen2023-controlled",
        "version": VERSION,
        "vectors": {
            "name": vectors_label(config),
            "file": Path(config.vectors).name,
            "dimension": int(vectors.vector_size),
            "vocabulary": len(vectors),
        },
        "config": {**asdict(config), "vectors": Path(config.vectors).name},
        "grid": {
            "locality_range": list(locality_range(config)),
            "symmetry_range": list(config.symmetry_range),
            "symmetry_locality": config.symmetry_locality,
        },
        "datasets": {},
        "curves": {},
        "timing": {"load_vectors_s": round(loaded, 2)},
    }
    fitted: dict[tuple[float, float], Setting] = {}
    for name in config.datasets:
        dataset = read_dataset(name, data_root, config.sentences_limit)
        cover = coverage(vectors, dataset.sentences)
        flagged = cover["tokens"] < config.coverage_threshold
        if flagged:
            log(
                f"warning: {result['vectors']['name']} covers {cover['tokens']:.1%} of {name}'s "
                f"tokens, below {config.coverage_threshold:.0%}: its numbers are flagged"
            )
        result["datasets"][name] = {
            "sha256": dataset.sha256,
            "sizes": {
                part: int((dataset.split == i).sum())
                for i, part in enumerate(("train", "dev", "test"))
            },
            "coverage": cover,
            "coverage_flag": bool(flagged),
        }
        sentences = embed(dataset, vectors, config.oov, config.max_length)
        for curve in config.curves:
            result["curves"][f"{name}/{curve}"] = _one_curve(
                config, curve, dataset, sentences, fitted, log
            )
    result["timing"]["total_s"] = round(time.perf_counter() - started, 1)
    return result


def _one_curve(config, curve, dataset, sentences, fitted, log) -> dict[str, Any]:
    timing = {"fit_s": 0.0, "encode_s": 0.0, "train_s": 0.0}
    tick = time.perf_counter()
    settings = []
    for target in grid(config, curve):
        if target not in fitted:
            fitted[target] = fit_setting(*target, config.max_length)
        settings.append(fitted[target])
    timing["fit_s"] = time.perf_counter() - tick
    test, dev_best, best_epoch = [], [], []
    for start in range(0, len(settings), config.chunk):
        chunk = settings[start : start + config.chunk]
        tick = time.perf_counter()
        features = encode(attention_tables(chunk), sentences, config.pooling)
        timing["encode_s"] += time.perf_counter() - tick
        tick = time.perf_counter()
        scores = train(features, dataset.labels, dataset.split, config.train)
        timing["train_s"] += time.perf_counter() - tick
        del features
        test.append(scores.test_at_best)
        dev_best.append(scores.dev.max(-1))
        best_epoch.append(scores.best_epoch)
        log(
            f"{dataset.name}/{curve}: settings {start + len(chunk)}/{len(settings)} "
            f"(encode {timing['encode_s']:.0f}s, train {timing['train_s']:.0f}s)"
        )
    return {
        "settings": [s.as_dict() for s in settings],
        "test_accuracy": np.concatenate(test, axis=1).tolist(),  # [R, K]
        "dev_accuracy": np.concatenate(dev_best, axis=1).tolist(),
        "best_epoch": np.concatenate(best_epoch, axis=1).tolist(),
        "timing": {key: round(value, 2) for key, value in timing.items()},
    }
