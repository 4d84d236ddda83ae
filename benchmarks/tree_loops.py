"""mctx's tree loops against azjax's batched ones (`azjax.search.use_batched_loops`).

    python -m benchmarks.tree_loops --simulations 8 16 32

Breakthrough 8x8 (192 actions) with the `breakthrough8_cpu` preset's MLP, freshly initialised
(its cost does not depend on its weights), and its 4 considered root actions: one Gumbel search
of each of 512 positions taken 4 to 40 random moves into a game, with mctx's own descent and
backward pass and with the batched ones (the same trees: `tests/test_search.py`), then both
again with a stand-in network that costs nothing. Each figure is the best of 5 timed calls
after a warm-up.
"""

from __future__ import annotations

import argparse
import dataclasses

import jax
import jax.numpy as jnp

from azjax import search
from azjax.config.presets import preset
from azjax.games import base
from azjax.train import Trainer
from benchmarks.timing import best_time

BATCH = 512


def positions(game, count: int, key: jax.Array):
  """`count` states, the i-th after 4 + i % 37 uniformly random moves (or the game's end)."""
  init_key, play_key = jax.random.split(key)
  states = jax.vmap(game.init)(jax.random.split(init_key, count))
  plies = 4 + jnp.arange(count) % 37
  for ply, move_key in enumerate(jax.random.split(play_key, 40)):
    stepped = jax.vmap(game.step)(states, base.uniform_legal_actions(move_key,
                                                                     states.legal_action_mask))
    live = (ply < plies) & ~states.terminated
    states = jax.vmap(base.tree_select)(live, stepped, states)
  return states


def search_time(game, eval_fn, config, variables, states, batched: bool) -> float:
  """Seconds for one search of every state of `states` with the algorithm's mctx policy."""

  def run(variables, states, key):
    root = search.root_output(eval_fn, variables, states)
    return search.policy(game, eval_fn, config, variables, states, root, key,
                         batched_loops=batched)[0]

  return best_time(jax.jit(run), variables, states, jax.random.key(1), repeats=5)[0]


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--simulations", type=int, nargs="+", default=[8, 16, 32])
  parser.add_argument("--preset", default="breakthrough8_cpu")
  args = parser.parse_args()
  config = preset(args.preset)
  trainer = Trainer.create(config)
  variables = trainer.variables(trainer.init())
  game = trainer.game
  states = positions(game, BATCH, jax.random.key(0))
  states = jax.tree.map(lambda x: x[~states.terminated], states)

  def free_eval(variables, observation):
    del variables
    return (jnp.zeros((observation.shape[0], game.num_actions)),
            jnp.zeros(observation.shape[0]))

  print(f"# {int(states.terminated.shape[0])} {config.game} positions, "
        f"{config.max_num_considered_actions} considered actions; seconds a search of all")
  print("| simulations | network | mctx's loops s | batched loops s | ratio |\n"
        "|---|---|---|---|---|")
  for simulations in args.simulations:
    search_config = dataclasses.replace(config.search_config(), simulations=simulations)
    for name, eval_fn in (("the preset's", trainer.eval_fn),
                          ("none (zeros)", free_eval)):
      times = [search_time(game, eval_fn, search_config, variables, states, batched)
               for batched in (False, True)]
      print(f"| {simulations} | {name} | {times[0]:.3f} | {times[1]:.3f} | "
            f"{times[0] / times[1]:.2f} |", flush=True)


if __name__ == "__main__":
  main()
