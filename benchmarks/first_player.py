"""Where a Connect Four network gives away its first-player win against the perfect solver.

Plays `--games` games with the network (Gumbel search, `--simulations`) as first player
against the solver agent (random among result-keeping moves for its first two moves, then the
slowest loss), as `experiments.evaluate --opponents solver` does, and labels every network
move with the solver: a mistake is a move whose exact value is below the position's. Prints
one line a game (result, the ply and kind of the first mistake) and a summary.

    python -m benchmarks.first_player results/connect_four_cpu --games 20
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from azjax import agents, runs, solver

KIND = {(1, 0): "win->draw", (1, -1): "win->loss", (0, -1): "draw->loss"}


def play_games(run_dir: str, games: int, simulations: int, seed: int) -> list[dict]:
  """Each game's result for the network (+1/0/-1) and its mistakes as `(ply, kind)`."""
  env, agent = runs.load(run_dir, simulations=simulations)
  opponent = agents.make_solver(env)
  key = jax.random.key(seed)
  key, init_key = jax.random.split(key)
  states = jax.vmap(env.init)(jax.random.split(init_key, games))
  step = jax.jit(jax.vmap(env.step))
  network_policy, solver_policy = jax.jit(agent.policy), jax.jit(opponent.policy)
  mistakes: list[list[tuple[int, str]]] = [[] for _ in range(games)]
  returns = np.zeros(games)
  for ply in range(env.max_game_length):
    if bool(np.all(np.asarray(states.terminated))):
      break
    key, move_key = jax.random.split(key)
    if ply % 2 == 0:  # The network moves first.
      actions = np.asarray(network_policy(states, move_key))
      values = solver.move_values(env, states)  # [B, A], NaN for finished games
      live = ~np.asarray(states.terminated)
      for g in np.flatnonzero(live):
        best = int(solver.position_value(values[g]))
        got = int(values[g, actions[g]])
        if got < best:
          mistakes[g].append((ply, KIND[(best, got)]))
    else:
      actions = np.asarray(solver_policy(states, move_key))
    states = step(states, jax.numpy.asarray(actions, jax.numpy.int32))
    returns += np.asarray(states.rewards)[:, 0]
  return [{"result": int(returns[g]), "mistakes": mistakes[g]} for g in range(games)]


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run_dir")
  parser.add_argument("--games", type=int, default=20)
  parser.add_argument("--simulations", type=int, default=32)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  results = play_games(args.run_dir, args.games, args.simulations, args.seed)
  for g, r in enumerate(results):
    first = r["mistakes"][0] if r["mistakes"] else None
    print(f"game {g:2d}: {'WDL'[1 - r['result']]}  mistakes {len(r['mistakes'])}"
          + (f", first at ply {first[0]} ({first[1]})" if first else ""))
  wdl = [sum(r["result"] == v for r in results) for v in (1, 0, -1)]
  plies = [r["mistakes"][0][0] for r in results if r["mistakes"]]
  print(f"{args.run_dir}: {wdl[0]}/{wdl[1]}/{wdl[2]} as first player in {args.games} games; "
        f"games with a mistake {len(plies)}, first mistakes at plies {sorted(plies)}")


if __name__ == "__main__":
  main()
