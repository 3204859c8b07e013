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


def round_order(rounds: int) -> list[int]:
    """Residues mod ``rounds`` from coarse to fine (0, 2, 1, 3 for 4): after each round the
    settings done are evenly spread over the curve, so a sweep cut short is a coarser one."""

    def spread(j: int) -> float:  # van der Corput: 0, 1/2, 1/4, 3/4, ...
        value, base = 0.0, 0.5
        while j:
            value, j, base = value + base * (j & 1), j >> 1, base / 2
        return value

    order: list[int] = []
    for j in range(4 * rounds):
        residue = int(spread(j) * rounds)
        if residue not in order:
            order.append(residue)
    return order + [r for r in range(rounds) if r not in order]


def run_sweep(config: SweepConfig, data_root: Path, log=print, save=None) -> dict[str, Any]:
    """The whole sweep as a JSON-ready dict (settings, per-repeat accuracies, timings).

    Work goes in rounds: each round trains one chunk of every curve, its settings evenly
    spread over the curve (``round_order``); ``save(result)`` is called after every chunk
    with the settings done so far, so a run stopped early leaves a coarser sweep behind.
    """
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
    data: dict[str, tuple[Dataset, list[np.ndarray]]] = {}
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
        data[name] = (dataset, embed(dataset, vectors, config.oov, config.max_length))
    result["timing"]["prepare_s"] = round(time.perf_counter() - started, 2)
    targets = {curve: grid(config, curve) for curve in config.curves}
    rounds = max(1, -(-config.settings // config.chunk))
    done: dict[str, dict[int, dict[str, Any]]] = {}
    timing: dict[str, dict[str, float]] = {}
    for residue in round_order(rounds):
        for name in config.datasets:
            dataset, sentences = data[name]
            for curve in config.curves:
                key = f"{name}/{curve}"
                chosen = [i for i in range(len(targets[curve])) if i % rounds == residue]
                clock = timing.setdefault(key, {"fit_s": 0.0, "encode_s": 0.0, "train_s": 0.0})
                rows = _chunk(
                    config, [targets[curve][i] for i in chosen], dataset, sentences, clock
                )
                done.setdefault(key, {}).update(zip(chosen, rows, strict=True))
                result["curves"][key] = _curve(done[key], clock, len(targets[curve]))
                result["timing"]["total_s"] = round(time.perf_counter() - started, 1)
                log(
                    f"{key}: {len(done[key])}/{len(targets[curve])} settings "
                    f"(fit {clock['fit_s']:.0f}s, encode {clock['encode_s']:.0f}s, "
                    f"train {clock['train_s']:.0f}s; total {result['timing']['total_s']:.0f}s)"
                )
                if save is not None:
                    save(result)
    return result


_FITTED: dict[tuple[float, float, int], Setting] = {}


def _chunk(config, chunk_targets, dataset, sentences, clock) -> list[dict[str, Any]]:
    """Fit, encode and train one chunk of settings; one row per setting."""
    tick = time.perf_counter()
    settings = []
    for target in chunk_targets:
        key = (*target, config.max_length)
        if key not in _FITTED:
            _FITTED[key] = fit_setting(*target, config.max_length)
        settings.append(_FITTED[key])
    clock["fit_s"] += time.perf_counter() - tick
    tick = time.perf_counter()
    features = encode(attention_tables(settings), sentences, config.pooling)
    clock["encode_s"] += time.perf_counter() - tick
    tick = time.perf_counter()
    scores = train(features, dataset.labels, dataset.split, config.train)
    clock["train_s"] += time.perf_counter() - tick
    dev_best = scores.dev.max(-1)
    return [
        {
            "setting": s.as_dict(),
            "test": scores.test_at_best[:, k].tolist(),
            "dev": dev_best[:, k].tolist(),
            "best_epoch": scores.best_epoch[:, k].tolist(),
        }
        for k, s in enumerate(settings)
    ]


def _curve(rows: dict[int, dict[str, Any]], clock: dict[str, float], planned: int) -> dict:
    """The settings done so far in grid order, accuracies as [R, K] like the tables read."""
    ordered = [rows[i] for i in sorted(rows)]
    return {
        "settings": [row["setting"] for row in ordered],
        "test_accuracy": np.array([row["test"] for row in ordered]).T.tolist(),
        "dev_accuracy": np.array([row["dev"] for row in ordered]).T.tolist(),
        "best_epoch": np.array([row["best_epoch"] for row in ordered]).T.tolist(),
        "planned_settings": planned,
        "timing": {key: round(value, 2) for key, value in clock.items()},
    }
