"""Alpha-beta with pruning (`alphabeta.search`) against the full-width search at equal depth.

    python -m benchmarks.alphabeta [--batch 16] [--repeats 3]

Both searches use the game's own evaluation and find the same values (tests/test_alphabeta.py),
so the ratio of their times is the pruning's gain. For each game and depth: positions after a
few random plies (seeded), a batch of `--batch` roots searched at once, the median of
`--repeats` timed calls after one compiling call; the pruned search's mean positions stepped
per root; and Slider 5x5 one root at a time (`--batch 1`: seconds a move, the issue's "depth 6
under a second"). A full-width search whose tree does not fit in memory is skipped ("-").
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import functools
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from azjax import alphabeta, games
from azjax.games import base

# (game, options, depths, random plies before the root); the full-width search is skipped
# above its tree-size limit (`alphabeta.check_depth`).
CASES = [
    ("connect_four", {}, (4, 6, 8), 6),
    ("breakthrough", {}, (2, 3, 4), 10),
    ("checkers", {}, (2, 4, 6), 8),
    ("slider", {"size": 5}, (4, 6, 8), 6),
]


def positions(env: base.Game, batch: int, plies: int, seed: int = 0):
  """`batch` live positions after `plies` random actions (a game that ends keeps its last
  live position)."""
  key = jax.random.key(seed)
  states = jax.vmap(env.init)(jax.random.split(key, batch))
  step = jax.jit(jax.vmap(env.step))
  for _ in range(plies):
    key, k = jax.random.split(key)
    after = step(states, base.uniform_legal_actions(k, states.legal_action_mask))
    keep = after.terminated
    states = jax.tree.map(
        lambda a, s: jnp.where(keep.reshape((-1,) + (1,) * (a.ndim - 1)), s, a), after, states)
  return states


def timed(fn, *args, repeats: int) -> tuple[float, object]:
  out = jax.block_until_ready(fn(*args))  # compiles
  times = []
  for _ in range(repeats):
    t = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    times.append(time.perf_counter() - t)
  return statistics.median(times), out


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batch", type=int, default=16)
  parser.add_argument("--repeats", type=int, default=3)
  args = parser.parse_args(argv)
  print(f"{platform.processor() or platform.machine()}, {jax.device_count()} "
        f"{jax.default_backend()} device(s), jax {jax.__version__}; batch {args.batch}, median "
        f"of {args.repeats}\n")
  print("| game | depth | roots | pruned (s) | positions a root | full width (s) | speed-up |")
  print("|---|---|---|---|---|---|---|")
  rows = [(name, options, depth, plies, args.batch) for name, options, depths, plies in CASES
          for depth in depths]
  rows += [("slider", {"size": 5}, depth, 6, 1) for depth in (6, 8)]
  for name, options, depth, plies, batch in rows:
    env = games.make(name, **options)
    states = positions(env, batch, plies)
    pruned = jax.jit(functools.partial(alphabeta.search, env, depth=depth))
    seconds, found = timed(pruned, states, jax.random.key(1), repeats=args.repeats)
    full = "-"
    ratio = "-"
    try:
      alphabeta.check_depth(env.num_actions, depth)
      if env.num_actions ** depth > 1 << 23:  # ~10 GB of leaf states on checkers' depth 3
        raise ValueError("too large for this machine")
      full_width = jax.jit(functools.partial(alphabeta.search_values, env, depth=depth,
                                             max_leaves=1 << 18))
      full_seconds, _ = timed(full_width, states, repeats=1)
      gain = full_seconds / seconds
      full, ratio = f"{full_seconds:.3f}", f"{gain:.1f}x" if gain < 10 else f"{gain:.0f}x"
    except (ValueError, jax.errors.JaxRuntimeError):
      pass
    print(f"| {env.describe()} | {depth} | {batch} | {seconds:.3f} | "
          f"{np.mean(np.asarray(found.nodes)):.0f} | {full} | {ratio} |", flush=True)


if __name__ == "__main__":
  main()
