"""Diagnostic: score a TD-Leaf CNN run with its value pooled as sum / 25 instead of a mean.

On 5x5 the two are the same; on a larger board the sum does not dilute the pooled features by
the board's area. Patches the value head's mean for this process only:

    python results/slider/tdleaf_vh/pool_sum.py results/slider/tdleaf_vh 6 64
    # slider 6x6, 64 games: 21/13/30, score 0.430 [0.316, 0.552] (the mean pool: 0.375 in 200)
"""

import sys

import jax.numpy as jnp

from azjax.cli import slider
from azjax.nets import layers


class _SumPool:
  """`jnp`, except that a mean over the board axes (1, 2) is a sum / 25."""

  def __getattr__(self, name):
    return getattr(jnp, name)

  def mean(self, x, axis=None, **kwargs):
    if axis == (1, 2):
      return jnp.sum(x, axis=axis, **kwargs) / 25.0
    return jnp.mean(x, axis=axis, **kwargs)


if __name__ == "__main__":
  run, sizes, games = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
  layers.jnp = _SumPool()
  print(slider.score(run, sizes, games, None, None, 0, None))
