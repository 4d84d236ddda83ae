"""Where a self-play move's time goes: the network, or the rest (tree search, rules, replay).

    python -m benchmarks.search_share --preset breakthrough8_cpu "hidden=512" "seed=0"

For each configuration (the preset with `field=value,...` changes), times `selfplay.play_chunk`
(one iteration's self-play: `selfplay_steps` moves in each of `selfplay_batch` games) with the
preset's network, freshly initialised (its cost does not depend on its weights), then with a
stand-in of the same output shapes that costs nothing (zero logits and values), then the
network alone on as many positions as the searches evaluate. Each figure is the best of 5 timed
calls after a warm-up.
"""

from __future__ import annotations

import argparse
import dataclasses

import jax
import jax.numpy as jnp

from azjax import selfplay
from azjax.config.presets import preset
from azjax.train import Trainer
from benchmarks.timing import best_time


def shares(config) -> dict[str, float]:
  trainer = Trainer.create(config)
  state = trainer.init()
  variables = trainer.variables(state)
  game, search = trainer.game, config.search_config()

  def free_eval(variables, observation):
    del variables
    return (jnp.zeros((observation.shape[0], game.num_actions)),
            jnp.zeros(observation.shape[0]))

  def chunk_with(eval_fn):
    return jax.jit(lambda sp, key: selfplay.play_chunk(
        game, eval_fn, search, variables, sp, key, config.selfplay_steps)[0].games)

  key = jax.random.key(1)
  full = best_time(chunk_with(trainer.eval_fn), state.selfplay, key, repeats=5)[0]
  free = best_time(chunk_with(free_eval), state.selfplay, key, repeats=5)[0]
  evaluations = config.selfplay_batch * config.selfplay_steps * (config.simulations + 1)
  # The searches' evaluations, one batch of `selfplay_batch` positions after another.
  observations = jnp.zeros((evaluations // config.selfplay_batch, config.selfplay_batch)
                           + game.observation_shape)
  forward = jax.jit(lambda obs: jax.lax.map(lambda o: trainer.eval_fn(variables, o), obs))
  network = best_time(forward, observations, repeats=5)[0]
  return {"self-play": full, "without the network": free, "the network alone": network}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("changes", nargs="+", help="field=value,... replacements of the preset")
  parser.add_argument("--preset", default="breakthrough8_cpu")
  args = parser.parse_args()
  print(f"| changes to the {args.preset} preset | self-play s | without the network s | "
        "the network alone s |\n|---|---|---|---|")
  for arg in args.changes:
    changes = eval(f"dict({arg})")  # noqa: S307 - a command-line list of field=value pairs
    row = shares(dataclasses.replace(preset(args.preset), **changes))
    print(f"| {arg} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |", flush=True)


if __name__ == "__main__":
  main()
