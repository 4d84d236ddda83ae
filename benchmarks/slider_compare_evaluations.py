"""How close a TD-Leaf Slider evaluation is to the hand-written one, over its snapshots.

    python -m benchmarks.slider_compare_evaluations results/slider/tdleaf

Over positions of random play: the correlation of the learned value with the hand-written
evaluation's, and a linear fit of the learned pre-tanh value on the five features (pieces,
three move counts, distance, bias), for every third snapshot (`RUN/models/<iteration>`, which
results/ no longer commits: a run trained here, or `git checkout d67b7e4 --
results/slider/tdleaf/models` for the committed one).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from azjax import tdleaf
from azjax.games import base
from azjax.runs import checkpoint


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run", help="a TD-Leaf Slider run directory with snapshots")
  parser.add_argument("--states", type=int, default=256, help="random games played")
  parser.add_argument("--every", type=int, default=3, help="every Nth snapshot")
  args = parser.parse_args(argv)
  learner, _ = tdleaf.load(args.run)
  abstract = learner.evaluator.init(jax.random.key(0))
  env = learner.env
  key, init_key = jax.random.split(jax.random.key(3))
  states = jax.vmap(env.init)(jax.random.split(init_key, args.states))
  step = jax.jit(jax.vmap(env.step))
  features = []
  for t in range(40):
    key, move_key = jax.random.split(key)
    states = step(states, base.uniform_legal_actions(move_key, states.legal_action_mask))
    if t % 4 == 3:
      features.append(jax.vmap(env.evaluation_features)(states)[~states.terminated])
  x = jnp.concatenate(features)
  hand = jnp.tanh(-2 * x[:, 4] + 0.25 * x[:, 1])
  for iteration, _ in checkpoint.list_models(args.run)[::args.every]:
    params = checkpoint.load_model(args.run, abstract, step=iteration)
    value = np.asarray(jax.vmap(lambda f, p=params: learner.evaluator.value(p, f))(x))
    a = np.c_[np.asarray(x), np.ones(len(x))]
    fit = np.linalg.lstsq(a, np.arctanh(np.clip(value, -0.999, 0.999)), rcond=None)[0]
    print(iteration, "correlation with the hand-written evaluation",
          round(float(np.corrcoef(value, hand)[0, 1]), 3), "linear fit", np.round(fit, 2))


if __name__ == "__main__":
  main()
