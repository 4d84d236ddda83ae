"""Concept activation vectors (CAVs), TCAV with a significance test, and a causal check.

TCAV (Kim et al. 2018) as the Breakthrough thesis uses it, with the chosen action as the class:

* CAV `v` `[F]`: the unit normal of a linear classifier separating positions with and without
  the concept at a layer, in the raw activation space (centred, one global scale; `cav`),
  pointing towards the concept.
* Sensitivity of one position: the directional derivative `grad_h L . v` of the chosen action's
  loss `L = -log p(action | position)` (legal-masked softmax) with respect to the layer's
  activation `h`. A negative value means that moving the activation towards the concept makes
  the chosen action more likely.
* TCAV score: the share of positions with a negative derivative. Positions with a single legal
  action are left out: their loss is 0 whatever the activation.
* Significance: `runs` CAVs of the concept, each trained on a random half of the games, against
  `runs` CAVs trained on the same halves with the labels shuffled (random concepts of the same
  class balance); a two-sided Welch t-test on the two sets of TCAV scores. A score is only
  meaningful when it differs from those of random directions.

Beyond the thesis, `causal_curve` adds `alpha * scale * v` to the activation of every position
and measures how the value head and the policy move; `scale` is the gap between the two classes'
mean projections on `v`, so `alpha = 1` moves a position without the concept by about the
average difference between positions with and without it. A random direction of the same norm
is the control. Layers: "input" (the observation itself) and the body's layers ("stem",
"block_i"), which feed both heads through the `perturbations` hook of `azjax.nets.layers.sow`;
the head trunks each feed one output only and are not used here.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from azjax.nets import masked_log_softmax, masked_softmax
from azjax.probe import probes


def is_body_layer(layer: str) -> bool:
  """Whether TCAV and the causal check can act at `layer` (input, stem and blocks)."""
  return layer in ("input", "stem") or layer.startswith("block_")


def apply_at(model: Any, variables: Any, obs: jax.Array, layer: str,
             delta: jax.Array) -> tuple[jax.Array, jax.Array]:
  """`(logits [B, A], value [B])` with `delta` (broadcastable to the layer's activation
  `[B, ...]`) added to the activation at `layer`."""
  if layer == "input":
    return model.apply(variables, obs + delta, train=False)
  if not is_body_layer(layer):
    raise ValueError(f"tcav: cannot act at layer {layer!r}; use input, stem or block_<i>")
  return model.apply({**variables, "perturbations": {layer: delta}}, obs, train=False)


def chosen_action_loss(logits: jax.Array, legal_mask: jax.Array,
                       actions: jax.Array) -> jax.Array:
  """`[B]` loss `-log p(action)` under the legal-masked softmax of `logits` `[B, A]`."""
  log_probs = masked_log_softmax(logits, legal_mask)
  return -jnp.take_along_axis(log_probs, actions[:, None], axis=-1)[:, 0]


@functools.lru_cache(maxsize=None)
def _gradient_fn(model: Any, layer: str):
  """Jitted `(variables, obs, mask, actions, zeros [B, ...]) -> d loss / d activation`."""

  def total_loss(delta, variables, obs, mask, actions):
    logits, _ = apply_at(model, variables, obs, layer, delta)
    # BatchNorm runs on its averages, so positions do not interact: the gradient of the sum
    # with respect to position i's activation is that of position i's own loss.
    return jnp.sum(chosen_action_loss(logits, mask, actions))

  return jax.jit(jax.grad(total_loss))


def loss_gradients(model: Any, variables: Any, observations: np.ndarray,
                   legal_mask: np.ndarray, actions: np.ndarray, layer: str,
                   layer_shape: Sequence[int], *, batch: int = 512) -> np.ndarray:
  """`[N, F]` gradients of each position's chosen-action loss at `layer` (flattened).

  Args:
    observations: `[N, R, C, P]`; legal_mask: `[N, A]` bool; actions: `[N]` int.
    layer_shape: the activation's shape without the batch dimension (e.g. `[R, C, F]`).
  """
  fn = _gradient_fn(model, layer)
  count = len(observations)
  out = []
  for start in range(0, count, batch):
    parts = [np.asarray(a)[start:start + batch] for a in (observations, legal_mask, actions)]
    size = len(parts[0])
    if size < batch and count > batch:  # pad to one compiled shape
      parts = [np.concatenate([p, np.repeat(p[:1], batch - size, axis=0)]) for p in parts]
    zeros = jnp.zeros((len(parts[0]), *layer_shape), jnp.float32)
    grads = fn(zeros, variables, jnp.asarray(parts[0], jnp.float32), jnp.asarray(parts[1]),
               jnp.asarray(parts[2], jnp.int32))
    out.append(np.asarray(grads)[:size].reshape(size, -1))
  return np.concatenate(out)


def cav(x: np.ndarray, y: np.ndarray, *, kind: str = "sgd", seed: int = 0) -> np.ndarray:
  """`[F]` unit concept activation vector from activations `x` `[N, ...]` and 0/1 labels.

  The classifier sees centred activations divided by one global scale, so its normal is the
  concept's direction in the activation space itself (as in TCAV) and not one distorted by
  per-unit standardisation.
  """
  return probes.direction(probes.fit(kind, x, y, seed, scaling="global"))


def tcav_score(gradients: np.ndarray, v: np.ndarray) -> float:
  """Share of positions whose loss decreases along `v`: `mean(gradients @ v < 0)`.

  Rows that are all zero (a single legal action) are left out; NaN if none is left.
  """
  informative = np.any(gradients != 0, axis=1)
  if not informative.any():
    return float("nan")
  return float(np.mean(gradients[informative] @ v < 0))


@dataclasses.dataclass(frozen=True)
class TcavResult:
  """TCAV scores of `runs` concept CAVs and `runs` random-label CAVs, and their t-test."""

  scores: tuple[float, ...]
  random_scores: tuple[float, ...]
  p_value: float

  @property
  def score(self) -> float:
    return _mean(self.scores)

  @property
  def score_std(self) -> float:
    return _std(self.scores)

  @property
  def random_score(self) -> float:
    return _mean(self.random_scores)

  @property
  def random_std(self) -> float:
    return _std(self.random_scores)

  def significant(self, level: float = 0.05) -> bool:
    return bool(self.p_value < level)


def _mean(values: Sequence[float]) -> float:
  return float(np.mean(values)) if len(values) else float("nan")


def _std(values: Sequence[float]) -> float:
  return float(np.std(values)) if len(values) else float("nan")


def t_test(scores: Sequence[float], random_scores: Sequence[float]) -> float:
  """Two-sided Welch t-test p-value; 0 or 1 when both sets are constant (no variance)."""
  a, b = np.asarray(scores, np.float64), np.asarray(random_scores, np.float64)
  if np.ptp(a) == 0 and np.ptp(b) == 0:
    return 1.0 if a[0] == b[0] else 0.0
  with warnings.catch_warnings():
    # One constant set (e.g. every concept CAV gives the same score) is a valid input; scipy
    # warns about precision there.
    warnings.simplefilter("ignore", RuntimeWarning)
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def tcav_test(x: np.ndarray, y: np.ndarray, gradients: np.ndarray, groups: np.ndarray, *,
              runs: int = 10, kind: str = "sgd", seed: int = 0) -> TcavResult:
  """TCAV of a concept at one layer, with its t-test against random-label CAVs.

  Args:
    x: `[N, ...]` activations at the layer; y: `[N]` 0/1 concept labels.
    gradients: `[N, F]` chosen-action loss gradients at the layer (`loss_gradients`).
    groups: `[N]` game ids; each run trains on a random half of the games.
    runs: concept CAVs and random CAVs (10 or more, as TCAV asks). A run whose half of the
      games lacks one of the classes is skipped; with fewer than 2 runs left the p-value is
      NaN.
  """
  x = probes.flatten(x)
  y = (np.asarray(y) > 0.5).astype(np.int64)
  scores, random_scores = [], []
  for run in range(runs):
    half, _ = probes.grouped_split(groups, test_fraction=0.5, seed=seed + run)
    if min(np.sum(y[half] == 0), np.sum(y[half] == 1)) < 2:
      continue  # a half without both classes gives no CAV
    shuffled = np.random.default_rng(seed + run).permutation(y[half])
    scores.append(tcav_score(gradients, cav(x[half], y[half], kind=kind, seed=seed + run)))
    random_scores.append(
        tcav_score(gradients, cav(x[half], shuffled, kind=kind, seed=seed + run)))
  if len(scores) < 2 or not np.all(np.isfinite(scores + random_scores)):
    return TcavResult(tuple(scores), tuple(random_scores), float("nan"))
  return TcavResult(tuple(scores), tuple(random_scores), t_test(scores, random_scores))


# -- Causal check ---------------------------------------------------------------------------------


def class_gap(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> float:
  """Mean projection on `v` of the positions with the concept minus those without."""
  projection = probes.flatten(x) @ v
  positive = np.asarray(y) > 0.5
  return float(projection[positive].mean() - projection[~positive].mean())


@functools.lru_cache(maxsize=None)
def _shifted_fn(model: Any, layer: str):
  """Jitted `(variables, obs, mask, delta [...]) -> (probs [B, A], value [B])`."""

  def shifted(variables, obs, mask, delta):
    logits, value = apply_at(model, variables, obs, layer, delta[None])
    return masked_softmax(logits, mask), value

  return jax.jit(shifted)


def causal_curve(model: Any, variables: Any, observations: np.ndarray, legal_mask: np.ndarray,
                 actions: np.ndarray, layer: str, direction: np.ndarray,
                 layer_shape: Sequence[int], alphas: Sequence[float], *,
                 scale: float = 1.0) -> dict[str, np.ndarray]:
  """How the network's outputs move as `alpha * scale * direction` is added at `layer`.

  Returns:
    `{name: [len(alphas)] float64}`: "alpha"; "value" (mean value head, mover's side);
    "value_change" (mean change from alpha 0); "kl" (mean KL(policy at 0 || policy at
    alpha)); "top1_agreement" (share of positions whose most likely action is unchanged);
    "chosen_prob" (mean probability of the chosen action).
  """
  fn = _shifted_fn(model, layer)
  obs = jnp.asarray(observations, jnp.float32)
  mask = jnp.asarray(legal_mask)
  actions = np.asarray(actions)
  shape = tuple(layer_shape)
  base_probs, base_value = (np.asarray(a, np.float64)
                            for a in fn(variables, obs, mask, jnp.zeros(shape, jnp.float32)))
  legal = np.asarray(legal_mask)
  rows = {k: [] for k in ("alpha", "value", "value_change", "kl", "top1_agreement",
                          "chosen_prob")}
  for alpha in alphas:
    delta = jnp.asarray((alpha * scale * direction).reshape(shape), jnp.float32)
    probs, value = (np.asarray(a, np.float64) for a in fn(variables, obs, mask, delta))
    eps = 1e-12
    kl = np.sum(np.where(legal, base_probs * (np.log(base_probs + eps) - np.log(probs + eps)),
                         0.0), axis=-1)
    rows["alpha"].append(float(alpha))
    rows["value"].append(float(value.mean()))
    rows["value_change"].append(float((value - base_value).mean()))
    rows["kl"].append(float(kl.mean()))
    rows["top1_agreement"].append(
        float(np.mean(probs.argmax(-1) == base_probs.argmax(-1))))
    rows["chosen_prob"].append(float(np.take_along_axis(probs, actions[:, None], -1).mean()))
  return {k: np.asarray(v, np.float64) for k, v in rows.items()}


def random_direction(size: int, seed: int = 0) -> np.ndarray:
  """`[size]` unit vector uniform on the sphere: the causal check's control direction."""
  v = np.random.default_rng(seed).standard_normal(size)
  return (v / np.linalg.norm(v)).astype(np.float32)
