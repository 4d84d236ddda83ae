"""Diagnostic: scores a TD-Leaf CNN Slider run with its value pooled as sum / 25, not a mean.

    python -m benchmarks.slider_pool_sum results/slider/tdleaf_vh --sizes 6 --games 64
    # slider 6x6, 64 games: 21/13/30, score 0.430 [0.316, 0.552] (the mean pool: 0.375 in 200)

On 5x5 the two are the same; on a larger board the sum does not dilute the pooled features by
the board's area. Patches the value head's mean for this process only.
"""

from __future__ import annotations

import argparse

import jax.numpy as jnp

from azjax.cli import slider
from azjax.nets import layers


class SumPool:
  """`jnp`, except that a mean over the board axes (1, 2) is a sum / 25."""

  def __init__(self, jnp):
    self._jnp = jnp

  def __getattr__(self, name):
    return getattr(self._jnp, name)

  def mean(self, x, axis=None, **kwargs):
    if axis == (1, 2):
      return self._jnp.sum(x, axis=axis, **kwargs) / 25.0
    return self._jnp.mean(x, axis=axis, **kwargs)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run", help="a TD-Leaf CNN Slider run directory")
  parser.add_argument("--sizes", default="6", help="board sizes, comma-separated")
  parser.add_argument("--games", type=int, default=64)
  args = parser.parse_args(argv)
  layers.jnp = SumPool(jnp)
  sizes = [int(s) for s in args.sizes.split(",")]
  print(slider.score(args.run, sizes, args.games, None, None, 0, None))


if __name__ == "__main__":
  main()
