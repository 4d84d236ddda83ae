"""Linear probes of layer activations, with splits grouped by game and controls.

A probe reads a concept off a layer's activations `x` `[N, ...]` (flattened to `[N, F]`) with a
linear model on standardised features:

    "sgd"       SGDClassifier (hinge loss, averaged), as in the thesis  binary, balanced accuracy
    "logistic"  LogisticRegression (L2, C=1)                        binary, balanced accuracy
    "ridge"     Ridge (penalty chosen on held-out training games)   counts, R^2 on the test games

Classifiers weigh the classes inversely to their frequency and are scored by balanced accuracy
(0.5 = chance whatever the class ratio). Every split keeps whole games on one side
(`grouped_split`): positions of one game are strongly correlated, and a probe tested on games
it has seen measures memory, not the concept. A score means little alone; `experiments.probe`
reports each one beside the same probe on a randomly initialised network of the same shape and
on the raw input.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from scipy.linalg import LinAlgWarning
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

PROBES = ("sgd", "logistic", "ridge")
CLASSIFIERS = ("sgd", "logistic")
METRICS = {"sgd": "balanced_accuracy", "logistic": "balanced_accuracy", "ridge": "r2"}
# Fewest examples of each class a train or test side needs for a classifier score.
MIN_PER_CLASS = 5
RIDGE_ALPHAS = (1.0, 10.0, 100.0, 1000.0)
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


def flatten(x: np.ndarray) -> np.ndarray:
  """`[N, ...]` -> `[N, F]` float32."""
  x = np.asarray(x, np.float32)
  return x.reshape(len(x), -1)


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


def make_probe(kind: str, seed: int = 0, *, scaling: str = "feature",
               ridge_alpha: float = 100.0):
  """An unfitted scikit-learn pipeline: scaling, then the linear model `kind`.

  `scaling`: "feature" (StandardScaler; the best probes) or "global" (`GlobalScaler`; for
  concept activation vectors, whose direction in the activation space matters).
  """
  if kind == "sgd":
    # Averaged SGD: the plain iterate jumps around and was 2-5 points worse on our data.
    # scikit-learn's default penalty (the thesis' probe); 50 epochs: the averaged weights
    # barely move after that, and TCAV needs dozens of fits per layer.
    model = SGDClassifier(loss="hinge", alpha=1e-4, average=True, class_weight="balanced",
                          max_iter=50, tol=1e-3, random_state=seed)
  elif kind == "logistic":
    # C=1 read material advantage off the raw input at 0.998 where C=0.1 gave 0.952 (6x6).
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000)
  elif kind == "ridge":
    model = Ridge(alpha=ridge_alpha)
  else:
    raise ValueError(f"probe: unknown kind {kind!r}; use one of {PROBES}")
  if scaling not in ("feature", "global"):
    raise ValueError(f"probe: unknown scaling {scaling!r}; use feature or global")
  return make_pipeline(StandardScaler() if scaling == "feature" else GlobalScaler(), model)


def fit(kind: str, x: np.ndarray, y: np.ndarray, seed: int = 0, *, scaling: str = "feature",
        groups: np.ndarray | None = None):
  """Fits probe `kind` on `x` `[N, ...]` and labels `y` `[N]` (0/1 for classifiers).

  Ridge's penalty is chosen among `RIDGE_ALPHAS` on a split of `groups` (the training games)
  when they are given, else it is 100: the best penalty differs between a 72-feature input
  and a 1152-feature block by two orders of magnitude.
  """
  x, y = flatten(x), _targets(kind, y)
  with warnings.catch_warnings(), threadpool_limits(limits=BLAS_THREADS):
    # A probe that has not fully converged in its budget is still a valid (weaker) probe.
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.simplefilter("ignore", LinAlgWarning)  # ridge on collinear units is still fine
    alpha = 100.0
    if kind == "ridge" and groups is not None and len(np.unique(groups)) >= 2:
      alpha = _ridge_alpha(x, y, groups, seed)
    return make_probe(kind, seed, scaling=scaling, ridge_alpha=alpha).fit(x, y)


def _ridge_alpha(x: np.ndarray, y: np.ndarray, groups: np.ndarray, seed: int) -> float:
  """The penalty of `RIDGE_ALPHAS` with the best R^2 on held-out games of the training set."""
  inner, held_out = grouped_split(groups, test_fraction=0.25, seed=seed + 7919)
  scaler = StandardScaler().fit(x[inner])
  x_inner, x_held = scaler.transform(x[inner]), scaler.transform(x[held_out])
  def held_out_r2(alpha):
    return r2_score(y[held_out], Ridge(alpha=alpha).fit(x_inner, y[inner]).predict(x_held))
  return max(RIDGE_ALPHAS, key=held_out_r2)


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
          test_fraction: float = 0.25) -> float:
  """Test score of probe `kind` on one grouped split (seeded): balanced accuracy or R^2.

  Returns NaN when a side lacks `MIN_PER_CLASS` examples of a class (or, for ridge, any spread
  of the target): such a score would be noise.
  """
  train, test = grouped_split(groups, test_fraction=test_fraction, seed=seed)
  y = _targets(kind, y)
  if not _scorable(kind, y[train], y[test]):
    return float("nan")
  x = flatten(x)
  probe = fit(kind, x[train], y[train], seed, groups=np.asarray(groups)[train])
  with threadpool_limits(limits=BLAS_THREADS):
    predicted = probe.predict(x[test])
  if kind in CLASSIFIERS:
    return float(balanced_accuracy_score(y[test], predicted))
  return float(r2_score(y[test], predicted))


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
           seeds: tuple[int, ...] = (0, 1, 2), test_fraction: float = 0.25) -> Scores:
  """`score` for each seed."""
  return Scores(tuple(score(kind, x, y, groups, seed=s, test_fraction=test_fraction)
                      for s in seeds))


def direction(probe) -> np.ndarray:
  """`[F]` unit vector in the raw (unscaled) feature space along which the fitted probe's
  decision function (or prediction) grows: its weights divided by the scaler's scales. For a
  classifier fitted with `scaling="global"` this is the concept activation vector."""
  scaler, model = probe[0], probe[-1]
  weights = np.asarray(model.coef_, np.float64).reshape(-1) / scaler.scale_
  norm = np.linalg.norm(weights)
  return (weights / norm if norm > 0 else weights).astype(np.float32)
