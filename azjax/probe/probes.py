"""Linear probes of layer activations, with splits grouped by game and controls.

A probe reads a concept off a layer's activations `x` `[N, ...]` (flattened to `[N, F]`) with a
linear model on standardised features:

    "sgd"       SGDClassifier (hinge loss, averaged), as in the thesis  binary, balanced accuracy
    "logistic"  LogisticRegression (L2)                             binary, balanced accuracy
    "ridge"     Ridge                                               counts, R^2 on the test games

With `tune`, a model's penalty is chosen from its grid (`PENALTIES`) by the score on held-out
games of the training side (an inner grouped split; the test games are never seen); without it
the penalty is `DEFAULT_PENALTY` (for SGD, scikit-learn's default, as in the thesis). By default
only Ridge is tuned (`TUNED`): its best penalty moves by orders of magnitude between a 128-unit
input and an 8192-unit block (with a fixed one a control read R^2 = -2). Tuning a classifier
costs one fit per grid value more; in an exploratory check on the 8x8 network it did not raise
material advantage's scores, so the classifiers keep the thesis' defaults unless asked.

A probe reads either every unit (`features="flat"`, as the thesis) or, with
`features="pooled"` (`features`), each channel summed over the board: `[N, R, C, K]` -> `[N, K]`.
A count concept (material, mobility) is a sum over squares, and a flat probe must learn equal
weights for 64 squares from a few thousand positions: on 6000 positions of the 8x8 network
(`results/breakthrough_gpu/probe_flat/`, `probe_pooled/`) the flat SGD probe read material
advantage off the raw input at 0.865, the pooled one at 1.000. Pooling is the cheaper, fairer
reader of such concepts, for the trained network and its controls alike.

Classifiers weigh the classes inversely to their frequency and are scored by balanced accuracy
(0.5 = chance whatever the class ratio). Every split keeps whole games on one side
(`grouped_split`): positions of one game are strongly correlated, and a probe tested on games
it has seen measures memory, not the concept. A score means little alone; `experiments.probe`
reports each one beside the same probe on a randomly initialised network of the same shape and
on the raw input.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings

import numpy as np
from scipy.linalg import LinAlgWarning
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

PROBES = ("sgd", "logistic", "ridge")
FEATURES = ("flat", "pooled")
CLASSIFIERS = ("sgd", "logistic")
METRICS = {"sgd": "balanced_accuracy", "logistic": "balanced_accuracy", "ridge": "r2"}
# Fewest examples of each class a train or test side needs for a classifier score.
MIN_PER_CLASS = 5
# The penalty grids: SGD's alpha (L2 weight), LogisticRegression's C (inverse L2 weight),
# Ridge's alpha. Ridge's reaches 1e5: on 8192-unit blocks 1e3 still overfitted a control to
# R^2 = -2.
PENALTIES = {
    "sgd": (1e-4, 1e-3, 1e-2, 1e-1),
    "logistic": (0.01, 0.1, 1.0),
    "ridge": (1.0, 10.0, 100.0, 1e3, 1e4, 1e5),
}
DEFAULT_PENALTY = {"sgd": 1e-4, "logistic": 1.0, "ridge": 100.0}
TUNED = ("ridge",)
# BLAS threads inside a probe fit. These are small dense problems, and on a busy 2-core machine
# two OpenBLAS threads made a LogisticRegression fit 100 times slower (18 s against 0.14 s).
BLAS_THREADS = 1


def grouped_split(groups: np.ndarray, *, test_fraction: float = 0.25,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
  """Random train/test split of the rows of `groups` `[N]` with no group on both sides.

  A `test_fraction` share of the distinct groups (at least one, and at least one left for
  training) goes to the test side.

  Returns:
    `(train, test)`: sorted int64 row indices.
  Raises:
    ValueError: with fewer than two groups, or a fraction outside (0, 1).
  """
  groups = np.asarray(groups)
  if not 0.0 < test_fraction < 1.0:
    raise ValueError(f"grouped_split: test_fraction must be in (0, 1), got {test_fraction}")
  unique = np.unique(groups)
  if len(unique) < 2:
    raise ValueError(f"grouped_split: need at least two groups, got {len(unique)}")
  shuffled = np.random.default_rng(seed).permutation(unique)
  num_test = min(max(1, int(round(test_fraction * len(unique)))), len(unique) - 1)
  is_test = np.isin(groups, shuffled[:num_test])
  return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def sample_games(groups: np.ndarray, size: int, *, seed: int = 0) -> np.ndarray:
  """Sorted row indices of whole games drawn at random from `groups` `[N]` (game ids) until they
  hold at least `size` rows (all rows if there are fewer): a smaller dataset with the same
  game structure, for the costly per-position analyses (TCAV, causal curves)."""
  groups = np.asarray(groups)
  if size <= 0:
    raise ValueError(f"sample_games: size must be positive, got {size}")
  unique, counts = np.unique(groups, return_counts=True)
  order = np.random.default_rng(seed).permutation(len(unique))
  enough = int(np.searchsorted(np.cumsum(counts[order]), size)) + 1
  return np.flatnonzero(np.isin(groups, unique[order[:enough]]))


def flatten(x: np.ndarray) -> np.ndarray:
  """`[N, ...]` -> `[N, F]` float32."""
  x = np.asarray(x, np.float32)
  return x.reshape(len(x), -1)


def features(x: np.ndarray, mode: str = "flat") -> np.ndarray:
  """A layer's activations `x` as probe features, `[N, F]` float32.

  "flat": every unit (`flatten`). "pooled": a board layer `[N, R, C, K]` summed over its
  squares, `[N, K]`; a layer without a board (a vector `[N, F]`) is used as it is.
  """
  if mode not in FEATURES:
    raise ValueError(f"probe: unknown features {mode!r}; use one of {FEATURES}")
  x = np.asarray(x, np.float32)
  if mode == "pooled" and x.ndim == 4:
    return x.sum(axis=(1, 2))
  return flatten(x)


class FeatureScaler(TransformerMixin, BaseEstimator):
  """Standardises every feature, with a floor on the scale it divides by.

  A unit that is almost constant on the training games (a ReLU that fired once) would be
  divided by a tiny deviation, and on a test position where it fires its standardised value
  reaches 1e4-1e5: a linear probe's prediction then explodes (Ridge read R^2 = -270 on the
  8x8 stem for this reason alone). No unit is divided by less than `floor` times the median
  deviation of the units that vary.
  """

  def __init__(self, floor: float = 0.01):
    self.floor = floor

  def fit(self, x, y=None):
    del y
    self.mean_ = np.mean(x, axis=0)
    std = np.std(x, axis=0)
    varying = std[std > 0]
    floor = self.floor * float(np.median(varying)) if varying.size else 1.0
    self.scale_ = np.maximum(std, floor)
    return self

  def transform(self, x):
    return (x - self.mean_) / self.scale_


class GlobalScaler(TransformerMixin, BaseEstimator):
  """Centres every feature and divides all of them by one global standard deviation.

  Unlike per-feature standardisation this keeps the geometry of the activation space, so the
  fitted weights point along the concept's direction there (per-feature scaling would
  inflate the weight of nearly constant units, e.g. ReLUs that are almost always 0).
  """

  def fit(self, x, y=None):
    del y
    self.mean_ = np.mean(x, axis=0)
    self.scale_ = float(np.std(x)) or 1.0
    return self

  def transform(self, x):
    return (x - self.mean_) / self.scale_


def _scaler(scaling: str):
  if scaling not in ("feature", "global"):
    raise ValueError(f"probe: unknown scaling {scaling!r}; use feature or global")
  return FeatureScaler() if scaling == "feature" else GlobalScaler()


def make_probe(kind: str, seed: int = 0, *, scaling: str = "feature",
               penalty: float | None = None):
  """An unfitted scikit-learn pipeline: scaling, then the linear model `kind`.

  `scaling`: "feature" (`FeatureScaler`; the best probes) or "global" (`GlobalScaler`; for
  concept activation vectors, whose direction in the activation space matters). `penalty`:
  SGD's alpha, LogisticRegression's C or Ridge's alpha (default `DEFAULT_PENALTY[kind]`).
  """
  if kind not in PROBES:
    raise ValueError(f"probe: unknown kind {kind!r}; use one of {PROBES}")
  penalty = DEFAULT_PENALTY[kind] if penalty is None else penalty
  if kind == "sgd":
    # Averaged SGD: the plain iterate jumps around and was 2-5 points worse on our data.
    # 50 epochs: the averaged weights barely move after that, and TCAV needs dozens of fits
    # per layer.
    model = SGDClassifier(loss="hinge", alpha=penalty, average=True, class_weight="balanced",
                          max_iter=50, tol=1e-3, random_state=seed)
  elif kind == "logistic":
    model = LogisticRegression(C=penalty, class_weight="balanced", max_iter=1000)
  else:
    model = Ridge(alpha=penalty)
  return make_pipeline(_scaler(scaling), model)


def fit(kind: str, x: np.ndarray, y: np.ndarray, seed: int = 0, *, scaling: str = "feature",
        groups: np.ndarray | None = None, tune: bool | None = None):
  """Fits probe `kind` on `x` `[N, ...]` and labels `y` `[N]` (0/1 for classifiers).

  With `tune` (default: `kind in TUNED`) and the games `groups` `[N]` of the rows, the penalty
  is the one of `PENALTIES[kind]` that scores best on held-out games of these rows
  (`choose_penalty`); otherwise it is `DEFAULT_PENALTY[kind]`.
  """
  x, y = flatten(x), _targets(kind, y)
  penalty = None
  if tune is None:
    tune = kind in TUNED
  if tune and groups is not None:
    penalty = choose_penalty(kind, x, y, groups, seed, scaling=scaling)
  with _quiet():
    return make_probe(kind, seed, scaling=scaling, penalty=penalty).fit(x, y)


def choose_penalty(kind: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray, seed: int = 0,
                   *, scaling: str = "feature") -> float:
  """The penalty of `PENALTIES[kind]` with the best held-out score on an inner grouped split
  of the rows of `x` `[N, F]` (ties go to the stronger penalty).

  Falls back to `DEFAULT_PENALTY[kind]` when the inner split cannot be scored (one game, or
  too few examples of a class on a side).
  """
  groups = np.asarray(groups)
  if len(np.unique(groups)) < 2:
    return DEFAULT_PENALTY[kind]
  x, y = flatten(x), _targets(kind, y)
  inner, held_out = grouped_split(groups, test_fraction=0.25, seed=seed + 7919)
  if not _scorable(kind, y[inner], y[held_out]):
    return DEFAULT_PENALTY[kind]
  # Scale once: every candidate sees the same features.
  scaler = _scaler(scaling).fit(x[inner])
  x_inner, x_held = scaler.transform(x[inner]), scaler.transform(x[held_out])
  strongest_first = sorted(PENALTIES[kind], reverse=kind != "logistic")
  best, best_score = DEFAULT_PENALTY[kind], -np.inf
  with _quiet():
    for penalty in strongest_first:
      model = make_probe(kind, seed, penalty=penalty)[-1].fit(x_inner, y[inner])
      value = _metric(kind, y[held_out], model.predict(x_held))
      if value > best_score + 1e-9:
        best, best_score = penalty, value
  return best


@contextlib.contextmanager
def _quiet():
  """Silences convergence warnings and pins BLAS to `BLAS_THREADS` inside a fit or predict."""
  with warnings.catch_warnings(), threadpool_limits(limits=BLAS_THREADS):
    # A probe that has not fully converged in its budget is still a valid (weaker) probe.
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.simplefilter("ignore", LinAlgWarning)  # ridge on collinear units is still fine
    yield


def _metric(kind: str, y_true: np.ndarray, y_pred: np.ndarray) -> float:
  if kind in CLASSIFIERS:
    return float(balanced_accuracy_score(y_true, y_pred))
  return float(r2_score(y_true, y_pred))


def _targets(kind: str, y: np.ndarray) -> np.ndarray:
  y = np.asarray(y)
  return (y > 0.5).astype(np.int64) if kind in CLASSIFIERS else y.astype(np.float64)


def _scorable(kind: str, y_train: np.ndarray, y_test: np.ndarray) -> bool:
  """Whether both sides have enough of each class (classifiers) or any spread (ridge)."""
  if kind not in CLASSIFIERS:
    return np.ptp(y_train) > 0 and np.ptp(y_test) > 0
  return all(min(np.sum(side == 0), np.sum(side == 1)) >= MIN_PER_CLASS
             for side in (y_train, y_test))


def score(kind: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray, *, seed: int = 0,
          test_fraction: float = 0.25, tune: bool | None = None) -> float:
  """Test score of probe `kind` on one grouped split (seeded): balanced accuracy or R^2.

  The penalty is tuned on the training games only (`fit`). Returns NaN when a side lacks
  `MIN_PER_CLASS` examples of a class (or, for ridge, any spread of the target): such a score
  would be noise.
  """
  train, test = grouped_split(groups, test_fraction=test_fraction, seed=seed)
  y = _targets(kind, y)
  if not _scorable(kind, y[train], y[test]):
    return float("nan")
  x = flatten(x)
  probe = fit(kind, x[train], y[train], seed, groups=np.asarray(groups)[train], tune=tune)
  with _quiet():
    return _metric(kind, y[test], probe.predict(x[test]))


@dataclasses.dataclass(frozen=True)
class Scores:
  """Scores of one probe over several seeds (each seed: its own split and fit)."""

  values: tuple[float, ...]

  @property
  def mean(self) -> float:
    finite = [v for v in self.values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")

  @property
  def std(self) -> float:
    finite = [v for v in self.values if np.isfinite(v)]
    return float(np.std(finite)) if finite else float("nan")


def scores(kind: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray, *,
           seeds: tuple[int, ...] = (0, 1, 2), test_fraction: float = 0.25,
           tune: bool | None = None) -> Scores:
  """`score` for each seed."""
  return Scores(tuple(score(kind, x, y, groups, seed=s, test_fraction=test_fraction, tune=tune)
                      for s in seeds))


def direction(probe) -> np.ndarray:
  """`[F]` unit vector in the raw (unscaled) feature space along which the fitted probe's
  decision function (or prediction) grows: its weights divided by the scaler's scales. For a
  classifier fitted with `scaling="global"` this is the concept activation vector."""
  scaler, model = probe[0], probe[-1]
  weights = np.asarray(model.coef_, np.float64).reshape(-1) / scaler.scale_
  norm = np.linalg.norm(weights)
  return (weights / norm if norm > 0 else weights).astype(np.float32)
