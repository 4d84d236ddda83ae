"""A trained agent against OpenSpiel's C++ rollout MCTS: games one by one against side by side.

    python -m benchmarks.openspiel_match --checkpoint results/checkers_gpu
    python -m benchmarks.openspiel_match --checkpoint results/checkers_gpu --games 16 \
        --simulations 128 --bot-simulations 100

Plays the same colour-balanced match twice: one game after another (`play_game`, the agent
searching one board at a time), then all games side by side (`play_games`, one batched search
per ply over the boards where the agent is to move). The agent and the game's batched init and
step are compiled for every batch size first, so the times are play only. The bots are seeded
alike; the agent's random stream is not, so the two scores may differ by chance. Needs the
open-spiel extra.
"""

from __future__ import annotations

import argparse
import time

import jax

from azjax import agents, runs
from azjax.evaluate import openspiel_bridge as ob


def compile_sizes(env, agent: agents.Agent, largest: int) -> None:
  """Compiles `agent` for the batch sizes `play_games` uses: powers of two up to `largest`."""
  size = 1
  while True:
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), size))
    jax.block_until_ready(agent.act(states, jax.random.key(0)))
    if size >= largest:
      return
    size *= 2


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m benchmarks.openspiel_match",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--checkpoint", required=True, help="a run directory")
  parser.add_argument("--games", type=int, default=8, help="even: half with each colour")
  parser.add_argument("--simulations", type=int, default=32, help="the agent's search")
  parser.add_argument("--bot-simulations", type=int, default=10, help="OpenSpiel's MCTS")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  if args.games <= 0 or args.games % 2:
    parser.error(f"--games must be positive and even, got {args.games}")

  env, agent = runs.load(args.checkpoint, simulations=args.simulations)
  game = ob.openspiel_game(env)
  players = [i % 2 for i in range(args.games)]

  def bots():
    return [ob.openspiel_mcts_bot(game, args.bot_simulations, args.seed + i)
            for i in range(args.games)]

  key = jax.random.key(args.seed)
  compile_sizes(env, agent, args.games)
  # And the game's batched init and step, for one game and for all of them.
  ob.play_games(env, agent, bots()[:1], players[:1], key, game=game, max_steps=2)
  ob.play_games(env, agent, bots(), players, key, game=game, max_steps=2)
  t0 = time.perf_counter()
  alone = [ob.play_game(env, agent, bot, player, jax.random.fold_in(key, i), game=game)
           for i, (bot, player) in enumerate(zip(bots(), players))]
  one_by_one = time.perf_counter() - t0
  t0 = time.perf_counter()
  together = ob.play_games(env, agent, bots(), players, key, game=game)
  side_by_side = time.perf_counter() - t0

  def score(results):
    return (sum(results) / len(results) + 1) / 2

  print(f"backend {jax.default_backend()}; agent {agent.name}; opponent "
        f"openspiel-mcts{args.bot_simulations}")
  print("| game | games | one by one (s) | side by side (s) | speed-up | score one by one "
        "| score side by side |")
  print("|---|---|---|---|---|---|---|")
  print(f"| {env.name} | {args.games} | {one_by_one:.1f} | {side_by_side:.1f} "
        f"| {one_by_one / side_by_side:.2f}x | {score(alone):.3f} | {score(together):.3f} |")


if __name__ == "__main__":
  main()
