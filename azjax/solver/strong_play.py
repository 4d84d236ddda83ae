"""A yardstick of strong play: solver-labelled positions from the games strong players reach.

>>> env, agent = azjax.agents.load("results/connect_four_gpu", simulations=32)
>>> positions = build_strong_positions(env, network=agent.policy, seed=0)
>>> positions.save("azjax/data/solver_positions/connect_four_strong.npz")
>>> Positions.load(positions_path("connect_four", "strong"))   # `--positions strong`

The standard sets (`azjax.solver.positions`) draw positions from uniformly random games and from
a network's sampled raw policy: most of them are positions no strong player reaches. This set
draws from two kinds of strong games instead:

* **the solver with deviations** (`deviating_solver_policy`): the best score at every ply (the
  fastest win, the slowest loss, a random draw), except a uniformly random legal move with
  probability `opening_epsilon` at each of the first `opening_plies` plies and `epsilon` after,
  so the games leave the solver's single line and reach positions perfect play would punish;
* **a strong network with noiseless search** against itself (`opening_policy` over the agent's
  policy) after `random_plies` uniformly random plies (some games one more), which varies its
  otherwise deterministic games.

**Drawing.** `sample_game_positions` draws positions uniformly among all the live positions of
the games (`(game, ply)` pairs), so the plies weigh as the games hold them, toward the opening
(unlike the standard sets, which draw the ply uniformly first). Each position is kept once
(the start position, common to every game, once in the whole set) and each game gives at most
`per_game` positions. Every position is labelled by the solver with the exact score of every
move (`positions.label`).

The solver is a yardstick only: no learner trains on these labels or positions.

    python -m azjax.solver.strong_play --game connect_four --agent results/connect_four_gpu \
        --out runs/connect_four_strong.npz
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, games, solver
from azjax.games import base
from azjax.solver import positions as positions_lib
from azjax.solver.positions import Positions

Policy = Callable[[Any, jax.Array], jax.Array]  # (states [B], key) -> actions [B] int32

# The committed set's recipe (`build_strong_positions`' defaults).
OPENING_PLIES = 12
OPENING_EPSILON = 0.15
EPSILON = 0.04
RANDOM_PLIES = 3
NETWORK_SIMULATIONS = 32
SOURCE_NAMES = ("solver", "network")  # Short names of the two sources, in order.


# -- The players -----------------------------------------------------------------------------------


def deviation_probability(ply: np.ndarray | int, *, opening_plies: int = OPENING_PLIES,
                          opening_epsilon: float = OPENING_EPSILON,
                          epsilon: float = EPSILON) -> np.ndarray:
  """The chance of a random move at `ply` (any shape): `opening_epsilon` before
  `opening_plies`, `epsilon` from there on."""
  return np.where(np.asarray(ply) < opening_plies, opening_epsilon, epsilon)


def deviating_move(scores: np.ndarray, ply: int, rng: np.random.Generator,
                   **probabilities) -> int:
  """One move of the deviating solver: uniform among the legal moves with probability
  `deviation_probability(ply, **probabilities)`, else the best score (uniform among ties).

  Args:
    scores: `[A]` exact scores of the moves (NaN: illegal), or a function returning them,
      called only when needed (a random move then costs no solve).
    ply: the moves played so far.
  """
  random_move = rng.random() < deviation_probability(ply, **probabilities)
  scores = scores() if callable(scores) else scores
  legal = ~np.isnan(scores)
  if not legal.any():
    return 0
  if random_move:
    return int(rng.choice(np.flatnonzero(legal)))
  return solver.choose_move(scores, rng, keep_result_only=False)


def deviating_solver_policy(env: base.Game, **probabilities) -> Policy:
  """The solver with random deviations (`deviating_move`) as a batched, jittable policy.

  The moves are chosen on the host (`jax.pure_callback`), one state at a time; the solver is
  only asked for the positions where the move is not random. A finished game's action is 0.
  `probabilities`: `opening_plies`, `opening_epsilon`, `epsilon` (`deviation_probability`).
  """
  exact = solver.for_game(env)  # Fails here, not inside a jitted game, when it is missing.

  def host_choose(boards, masks, plies, seeds):
    boards, masks = np.asarray(boards), np.asarray(masks)
    flat_boards = boards.reshape(-1, boards.shape[-1])
    flat_masks = masks.reshape(-1, masks.shape[-1])
    actions = np.zeros(flat_masks.shape[0], np.int32)
    for i, (ply, seed) in enumerate(zip(np.asarray(plies).reshape(-1),
                                        np.asarray(seeds).reshape(-1))):
      if flat_masks[i].any():
        actions[i] = deviating_move(lambda i=i: exact.board_scores(flat_boards[i]), int(ply),
                                    np.random.default_rng(int(seed)), **probabilities)
    return actions.reshape(masks.shape[:-1])

  def policy(states: Any, key: jax.Array) -> jax.Array:
    masks = states.legal_action_mask
    seeds = jax.random.bits(key, masks.shape[:-1], jnp.uint32)
    return jax.pure_callback(host_choose, jax.ShapeDtypeStruct(masks.shape[:-1], jnp.int32),
                             states.board, masks, states.step_count, seeds,
                             vmap_method="broadcast_all")

  return policy


def opening_policy(policy: Policy, *, random_plies: int = RANDOM_PLIES,
                   extra_ply_probability: float = 0.5) -> Policy:
  """`policy` after a random opening: uniformly random legal moves for the first
  `random_plies` plies, and at ply `random_plies` too with probability
  `extra_ply_probability` (drawn per game there), then `policy`.

  Returns:
    a batched policy `(states [B], key) -> [B]` int32.
  """

  def played(states: Any, key: jax.Array) -> jax.Array:
    random_key, coin_key, policy_key = jax.random.split(key, 3)
    random_actions = agents.random_policy(states, random_key)
    coin = jax.random.uniform(coin_key, states.step_count.shape) < extra_ply_probability
    ply = states.step_count
    random_move = (ply < random_plies) | ((ply == random_plies) & coin)
    return jnp.where(random_move, random_actions, policy(states, policy_key)).astype(jnp.int32)

  return played


# -- Drawing positions -----------------------------------------------------------------------------


def sample_game_positions(env: base.Game, moves: np.ndarray, lengths: np.ndarray, num: int,
                          rng: np.random.Generator, *, per_game: int = 1,
                          exclude: set[bytes] | None = None) -> tuple[np.ndarray, np.ndarray]:
  """`num` distinct live positions drawn uniformly among all those of the games.

  Every `(game, ply)` pair with `ply < length` (the position after `ply` moves is live) is
  equally likely, so a ply weighs as many games as reach it; pairs are taken in a random order,
  skipping a game that gave `per_game` positions already and a position already drawn or in
  `exclude` (keys as `positions._position_keys`, updated in place).

  Args:
    moves: `[G, L]` the games' moves (-1 after the end), `lengths`: `[G]` their lengths.
  Returns:
    `(moves [num, L] int8 padded with -1, num_moves [num] int16)`, in draw order.
  Raises:
    ValueError: when the games run out first (play more games).
  """
  moves, lengths = np.asarray(moves), np.asarray(lengths)
  num_games, max_length = moves.shape
  games_of = np.repeat(np.arange(num_games), lengths)
  plies_of = np.concatenate([np.arange(n) for n in lengths]) if num_games else np.zeros(0, int)
  order = rng.permutation(games_of.size)
  seen = set() if exclude is None else exclude
  taken = np.zeros(num_games, np.int64)
  chosen_moves, chosen_plies = [], []
  start = 0
  while len(chosen_moves) < num and start < order.size:
    # A round of candidates (replayed at once to key them); the limits are checked as kept.
    block = order[start:start + 4 * (num - len(chosen_moves))]
    start += block.size
    prefixes = np.full((block.size, max_length), -1, np.int8)
    plies = plies_of[block].astype(np.int16)
    for i, pair in enumerate(block):
      prefixes[i, :plies[i]] = moves[games_of[pair], :plies[i]]
    keys = positions_lib._position_keys(positions_lib.replay(
        env, jnp.asarray(prefixes, jnp.int32), jnp.asarray(plies, jnp.int32)))
    for i, pair in enumerate(block):
      game = games_of[pair]
      if len(chosen_moves) < num and taken[game] < per_game and keys[i] not in seen:
        seen.add(keys[i])
        taken[game] += 1
        chosen_moves.append(prefixes[i])
        chosen_plies.append(plies[i])
  if len(chosen_moves) < num:
    raise ValueError(f"sample_game_positions: {num_games} games gave {len(chosen_moves)} "
                     f"distinct positions, {num} wanted; play more games")
  return np.stack(chosen_moves), np.asarray(chosen_plies, np.int16)


# -- The set ---------------------------------------------------------------------------------------


def build_strong_positions(env: base.Game, *, network: Policy | None, network_name: str = "",
                           solver_positions: int = 500, solver_games: int = 400,
                           network_positions: int = 500, network_games: int = 360,
                           per_game: int = 2, random_plies: int = RANDOM_PLIES,
                           seed: int = 0, log: Any = None, **probabilities) -> Positions:
  """The strong-play set: `solver_positions` from the deviating solver's games (source 0),
  then `network_positions` from `network`'s games after a random opening (source 1; none
  without a network), each drawn by `sample_game_positions` and labelled by the solver.

  Args:
    env: a solved game.
    network: the strong player's batched policy (e.g. `agents.load(run, simulations=32)`'s),
      or None for the solver source alone.
    network_name: how the network source is described in `Positions.sources`.
    solver_games, network_games: games played per source (the positions are drawn from them).
    per_game: at most this many positions from one game.
    random_plies: the network games' random opening (`opening_policy`).
    seed: seeds the games and the draws: the same seed gives the same set.
    log: a `print`-like function for progress, or None.
    probabilities: the deviating solver's (`deviation_probability`).
  """
  rng = np.random.default_rng(seed)
  solver_key, network_key = jax.random.split(jax.random.key(seed))
  described = {**dict(opening_plies=OPENING_PLIES, opening_epsilon=OPENING_EPSILON,
                      epsilon=EPSILON), **probabilities}
  sources = [(f"{SOURCE_NAMES[0]}: best score, a uniformly random move with probability "
              f"{described['opening_epsilon']} at each of the first {described['opening_plies']} "
              f"plies and {described['epsilon']} after",
              deviating_solver_policy(env, **probabilities), solver_positions, solver_games,
              solver_key)]
  if network is not None and network_positions:
    sources.append((f"{SOURCE_NAMES[1]}: {network_name or 'a network'} against itself after "
                    f"{random_plies}-{random_plies + 1} uniformly random plies",
                    opening_policy(network, random_plies=random_plies), network_positions,
                    network_games, network_key))
  seen: set[bytes] = set()
  parts = []
  for index, (description, policy, num, num_games, key) in enumerate(sources):
    start = time.time()
    # `_play_games` rather than its jitted copy: these policies are new objects every build.
    game_moves, lengths = jax.device_get(jax.jit(
        lambda k, p=policy, g=num_games: positions_lib._play_games(env, p, g, k))(key))
    played = time.time() - start
    moves, plies = sample_game_positions(env, game_moves, lengths, num, rng,
                                         per_game=per_game, exclude=seen)
    scores = positions_lib.label(env, moves, plies)
    parts.append((moves, plies, scores, np.full(len(plies), index, np.int8)))
    if log:
      log(f"{description}: {num_games} games in {played:.0f} s, {len(plies)} positions "
          f"labelled in {time.time() - start - played:.0f} s")
  moves, plies, scores, source = (np.concatenate(x) for x in zip(*parts))
  return Positions(game=env.name, moves=moves, num_moves=plies, scores=scores, source=source,
                   sources=tuple(s[0] for s in sources), seed=seed)


def composition(positions: Positions,
                ply_ranges: Sequence[tuple[int, int]] | None = None) -> str:
  """A markdown table of the set: positions (decisive ones in brackets) by source and ply range
  (default: the game's `benchmark_ply_ranges`), and the mover's win / draw / loss counts."""
  from azjax.solver.benchmark import ply_ranges_of  # noqa: PLC0415  (imports this module's)

  ranges = tuple(ply_ranges or ply_ranges_of(positions.game, positions))
  lines = ["| source | " + " | ".join(f"plies {a}-{b}" for a, b in ranges)
           + " | all | win / draw / loss |",
           "|---|" + "---|" * (len(ranges) + 2)]
  decisive, plies, values = positions.decisive, positions.num_moves, positions.values
  groups = [(positions.sources[i].split(":")[0], positions.source == i)
            for i in range(len(positions.sources))] + [("all", np.ones(len(positions), bool))]
  for name, mask in groups:
    cells = [f"{int((mask & (plies >= a) & (plies <= b)).sum())} "
             f"({int((mask & decisive & (plies >= a) & (plies <= b)).sum())})" for a, b in ranges]
    outcome = " / ".join(str(int((mask & (values == v)).sum())) for v in (1, 0, -1))
    lines.append(f"| {name} | " + " | ".join(cells)
                 + f" | {int(mask.sum())} ({int((mask & decisive).sum())}) | {outcome} |")
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m azjax.solver.strong_play",
                                   description="Build and label the strong-play solver set.")
  parser.add_argument("--game", required=True, choices=solver.SOLVED_GAMES,
                      help="the solved game (the shipped set is Connect Four's)")
  parser.add_argument("--agent", default=None, metavar="RUN",
                      help="the run whose network, with noiseless search, plays the network "
                      "games (take another network than the one you mostly score)")
  parser.add_argument("--simulations", type=int, default=NETWORK_SIMULATIONS)
  parser.add_argument("--solver-positions", type=int, default=500)
  parser.add_argument("--solver-games", type=int, default=400)
  parser.add_argument("--network-positions", type=int, default=500)
  parser.add_argument("--network-games", type=int, default=360)
  parser.add_argument("--per-game", type=int, default=2)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", required=True, help="the .npz file")
  args = parser.parse_args(argv)
  env = games.make(args.game)
  network = None
  if args.agent:
    env, agent = agents.load(args.agent, simulations=args.simulations)
    network = agent.policy
  positions = build_strong_positions(
      env, network=network, network_name=f"{args.agent} with {args.simulations}-simulation "
      "noiseless search", solver_positions=args.solver_positions,
      solver_games=args.solver_games, network_positions=args.network_positions,
      network_games=args.network_games, per_game=args.per_game, seed=args.seed, log=print)
  out = positions.save(args.out)
  print(f"wrote {out}: {len(positions)} positions, {int(positions.decisive.sum())} decisive")
  print(composition(positions))


__all__ = [
    "EPSILON", "NETWORK_SIMULATIONS", "OPENING_EPSILON", "OPENING_PLIES", "RANDOM_PLIES",
    "SOURCE_NAMES", "build_strong_positions", "composition", "deviating_move",
    "deviating_solver_policy", "deviation_probability", "main", "opening_policy",
    "sample_game_positions",
]

if __name__ == "__main__":
  main()
