"""Solver benchmark sets: live positions labelled with the exact score of every move.

>>> positions = build_positions(env, [("uniformly random play", agents.random_policy, 500, 4000)])
>>> positions.save(DEFAULT_PATHS[env.name])
>>> positions = Positions.load(positions_path("connect_four"))   # the packaged set
>>> states = positions.states(env)   # [N], replayed through env.step

A position is stored as the move sequence that reaches it from the start (small, and replayed
through `env.step`), with the solver's exact score of every move (`azjax.solver`: positive
wins, 0 draws, negative loses, from the mover's side). A set is built by `build_positions`
(seeded, reproducible) from several sources: games of a policy against itself (Connect Four:
uniformly random games, and games of a trained network sampling from its raw policy), or every
reachable live position of a small game (`all_positions`, tic-tac-toe). A position is drawn by
first drawing its ply uniformly over the game's length, then a game that lasted longer than
that, so every ply range is represented; a set holds each position once.

`azjax.solver.benchmark` scores players on a set; its command line builds one.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, solver
from azjax.games import base

ILLEGAL = -128  # The stored score of an illegal move (int8).
# The labelled sets ship inside the package (package data, pyproject.toml), read with
# importlib.resources so that an installed wheel finds them as a checkout does: `<game>.npz`,
# the default set of every solved game, and named sets `<game>_<name>.npz` beside it.
BENCHMARK_DIR = str(importlib.resources.files("azjax") / "data" / "solver_positions")
DEFAULT_PATHS = {name: f"{BENCHMARK_DIR}/{name}.npz" for name in solver.SOLVED_GAMES}


def is_set_name(path: str | None) -> bool:
  """Whether `path` names a shipped set ("strong") rather than a file."""
  return bool(path) and Path(path).suffix == "" and "/" not in path and not Path(path).exists()


def packaged_path(game: str, name: str | None = None) -> str:
  """The packaged set `name` of `game` (`None`: its default set), whether or not it exists."""
  return f"{BENCHMARK_DIR}/{game if name is None else f'{game}_{name}'}.npz"


def packaged_sets(game: str) -> list[str | None]:
  """The names of `game`'s packaged sets (`None`: the default one), the default first."""
  directory = Path(BENCHMARK_DIR)
  names = [None] if (directory / f"{game}.npz").exists() else []
  return names + sorted(p.stem[len(game) + 1:] for p in directory.glob(f"{game}_*.npz"))


def positions_label(path: str | Path) -> str:
  """How tables name a set: a packaged one as `azjax/data/solver_positions/<file>` (not the
  machine's install path, which committed tables must not hold), another by its path."""
  path = Path(path)
  if path.resolve().parent == Path(BENCHMARK_DIR).resolve():
    return f"azjax/data/solver_positions/{path.name}"
  return str(path)


def positions_path(game: str, path: str | None = None, *, name: str | None = None) -> str:
  """The labelled positions to score `game` on: `path` (a file, or a packaged set's name such
  as "strong", `azjax.solver.strong_play`'s positions of strong play), else the game's
  packaged set `name` (`None`: its default set, `DEFAULT_PATHS`).

  Raises:
    ValueError: no `path` and the game has no such packaged set.
    FileNotFoundError: `path` does not exist.
  """
  if is_set_name(path):
    name, path = path, None
  if path is None:
    path = packaged_path(game, name)
    if not Path(path).exists():
      solved = ", ".join(DEFAULT_PATHS)
      have = ", ".join("default" if n is None else n for n in packaged_sets(game)) or "none"
      which = "" if name is None else f" set {name!r}"
      raise ValueError(f"{game} has no solver benchmark{which} (solved games: {solved}; its "
                       f"packaged sets: {have}); pass the positions file")
  if not Path(path).exists():
    raise FileNotFoundError(f"the solver benchmark {path} does not exist")
  return path


# -- Positions -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)  # Arrays: compared and hashed by identity.
class Positions:
  """`N` labelled live positions of one game (`L` = the game's longest game, `A` its actions).

  Attributes:
    game: the game's name.
    moves: `[N, L]` int8 actions from the start, padded with -1.
    num_moves: `[N]` int16 moves played, i.e. the position's ply (0: the start).
    scores: `[N, A]` int8 exact scores of every move, mover's side (`azjax.solver`);
      `ILLEGAL` for illegal moves.
    source: `[N]` int8 index into `sources`.
    sources: how each group of positions was made, e.g. "random play".
    seed: the seed that made the set.
  """

  game: str
  moves: np.ndarray
  num_moves: np.ndarray
  scores: np.ndarray
  source: np.ndarray
  sources: tuple[str, ...]
  seed: int = 0

  def __len__(self) -> int:
    return int(self.num_moves.shape[0])

  @property
  def legal(self) -> np.ndarray:
    """`[N, A]` bool."""
    return self.scores != ILLEGAL

  @property
  def move_scores(self) -> np.ndarray:
    """`[N, A]` float64 scores, NaN for illegal moves."""
    return np.where(self.legal, self.scores.astype(np.float64), np.nan)

  @property
  def move_values(self) -> np.ndarray:
    """`[N, A]` float64 values (+1 win, 0 draw, -1 loss), NaN for illegal moves."""
    return solver.scores_to_values(self.move_scores)

  @property
  def values(self) -> np.ndarray:
    """`[N]` float64: each position's value, mover's side."""
    return solver.position_value(self.move_values)

  @property
  def decisive(self) -> np.ndarray:
    """`[N]` bool: the moves do not all have the same value (a mistake is possible)."""
    values = self.move_values
    low = np.min(np.where(self.legal, values, np.inf), axis=-1)
    return low < self.values

  def subset(self, index: np.ndarray) -> "Positions":
    """The positions `index` selects (a bool mask or indices)."""
    return dataclasses.replace(self, moves=self.moves[index], num_moves=self.num_moves[index],
                               scores=self.scores[index], source=self.source[index])

  def states(self, env: base.Game) -> Any:
    """The game states `[N]`, replayed from the start through `env.step` (one jit)."""
    return replay(env, jnp.asarray(self.moves, jnp.int32), jnp.asarray(self.num_moves, jnp.int32))

  def save(self, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, game=np.array(self.game), moves=self.moves,
                        num_moves=self.num_moves, scores=self.scores, source=self.source,
                        sources=np.array(self.sources), seed=np.array(self.seed))
    return path

  @classmethod
  def load(cls, path: str | Path) -> "Positions":
    with np.load(path, allow_pickle=False) as data:
      return cls(game=str(data["game"]), moves=data["moves"], num_moves=data["num_moves"],
                 scores=data["scores"], source=data["source"],
                 sources=tuple(str(s) for s in data["sources"]), seed=int(data["seed"]))


def _replay(env: base.Game, moves: jax.Array, num_moves: jax.Array) -> Any:
  """States `[N]` after the first `num_moves[i]` of `moves[i]` (`[N, L]`) from the start."""

  def one(moves, n):
    def body(i, state):
      return base.tree_select(i < n, env.step(state, moves[i]), state)

    return jax.lax.fori_loop(0, moves.shape[0], body, env.init(jax.random.key(0)))

  return jax.vmap(one)(moves, num_moves)


# Compiled once per game object and shape.
replay = jax.jit(_replay, static_argnums=0)


def _position_keys(states: Any) -> list[bytes]:
  """One key per state `[N]` that identifies the position: the mover and the observation,
  which carries everything the rules use (DESIGN.md)."""
  observation = np.asarray(states.observation)
  player = np.asarray(states.current_player)
  return [bytes([int(p)]) + o.tobytes() for p, o in zip(player, observation)]


# -- Building a set --------------------------------------------------------------------------------


def _play_games(env: base.Game, policy: agents.Policy, num_games: int,
                key: jax.Array) -> tuple[jax.Array, jax.Array]:
  """`num_games` games of `policy` against itself: `(moves [G, L] (-1 after the end), lengths
  [G])`, `L = env.max_game_length`."""
  init_key, play_key = jax.random.split(key)
  states = jax.vmap(env.init)(jax.random.split(init_key, num_games))

  def ply(carry, key):
    states, length = carry
    live = ~states.terminated
    actions = policy(states, key).astype(jnp.int32)
    states = jax.vmap(env.step)(states, actions)
    return (states, length + live.astype(jnp.int32)), jnp.where(live, actions, -1)

  (_, lengths), moves = jax.lax.scan(
      ply, (states, jnp.zeros(num_games, jnp.int32)),
      jax.random.split(play_key, env.max_game_length))
  return moves.T, lengths


_play_games_jit = jax.jit(_play_games, static_argnums=(0, 1, 2))


def sample_positions(env: base.Game, moves: np.ndarray, lengths: np.ndarray, num: int,
                     rng: np.random.Generator, *,
                     exclude: set[bytes] | None = None) -> tuple[np.ndarray, np.ndarray]:
  """`num` distinct live positions from played games: `(moves [num, L], num_moves [num])`.

  Each draw picks a ply `t` uniformly in `[0, L)`, then an unused game longer than `t` (its
  position after `t` moves is live); a ply no unused game reaches is drawn again. Positions in
  `exclude` (keys as `_position_keys`, updated in place) or drawn before are skipped.

  Raises:
    ValueError: when the games run out first (play more games).
  """
  moves, lengths = np.asarray(moves), np.asarray(lengths)
  num_games, max_length = moves.shape
  seen = set() if exclude is None else exclude
  used = np.zeros(num_games, bool)
  chosen_moves, chosen_plies = [], []
  while len(chosen_moves) < num:
    # Draw a round of candidates, replay them, and keep the new positions in draw order.
    wanted, picks, tries = 2 * (num - len(chosen_moves)), [], 0
    while len(picks) < wanted and not used.all() and tries < 100 * wanted:
      tries += 1
      t = int(rng.integers(0, max_length))
      candidates = np.flatnonzero(~used & (lengths > t))
      if candidates.size:
        game = int(rng.choice(candidates))
        used[game] = True
        picks.append((game, t))
    if not picks:
      raise ValueError(f"sample_positions: {num_games} games gave {len(chosen_moves)} distinct "
                       f"positions, {num} wanted; play more games")
    prefixes = np.full((len(picks), max_length), -1, np.int8)
    plies = np.array([t for _, t in picks], np.int16)
    for i, (game, t) in enumerate(picks):
      prefixes[i, :t] = moves[game, :t]
    keys = _position_keys(replay(env, jnp.asarray(prefixes, jnp.int32), jnp.asarray(plies)))
    for i, position_key in enumerate(keys):
      if position_key not in seen and len(chosen_moves) < num:
        seen.add(position_key)
        chosen_moves.append(prefixes[i])
        chosen_plies.append(plies[i])
  return np.stack(chosen_moves), np.asarray(chosen_plies, np.int16)


def all_positions(env: base.Game) -> tuple[np.ndarray, np.ndarray]:
  """Every reachable live position of a small game, breadth first: `(moves [N, L], num_moves
  [N])`, each reached by the first move sequence found (tic-tac-toe: 4520 positions)."""
  max_length = env.max_game_length
  actions = jnp.arange(env.num_actions, dtype=jnp.int32)
  children_of = jax.jit(jax.vmap(jax.vmap(env.step, (None, 0)), (0, None)))
  level_moves = np.full((1, max_length), -1, np.int8)
  states = replay(env, jnp.asarray(level_moves, jnp.int32), jnp.zeros(1, jnp.int32))
  all_moves, all_plies = [], []
  for ply in range(max_length):
    all_moves.append(level_moves)
    all_plies.append(np.full(len(level_moves), ply, np.int16))
    children = children_of(states, actions)  # [K, A]
    legal = np.asarray(states.legal_action_mask)
    alive = legal & ~np.asarray(children.terminated)
    parents, taken = np.nonzero(alive)
    if not parents.size:
      break
    flat = jax.tree.map(lambda x: x[parents, taken], children)
    keys = _position_keys(flat)
    first = sorted({k: i for i, k in reversed(list(enumerate(keys)))}.values())
    level_moves = level_moves[parents[first]].copy()
    level_moves[:, ply] = taken[first]
    states = jax.tree.map(lambda x: x[np.asarray(first)], flat)
  return np.concatenate(all_moves), np.concatenate(all_plies)


def label(env: base.Game, moves: np.ndarray, num_moves: np.ndarray) -> np.ndarray:
  """`[N, A]` int8 exact scores of the positions (`ILLEGAL` for illegal moves).

  Raises:
    ValueError: if a position is not live.
  """
  states = replay(env, jnp.asarray(moves, jnp.int32), jnp.asarray(num_moves, jnp.int32))
  if np.any(np.asarray(states.terminated)):
    raise ValueError("label: some move sequences end the game")
  scores = solver.move_scores(env, states)
  return np.where(np.isnan(scores), ILLEGAL, scores).astype(np.int8)


def build_positions(env: base.Game, sources: Sequence[tuple[str, agents.Policy | None, int, int]],
                    *, seed: int = 0, log: Any = None) -> Positions:
  """A labelled set from several sources of games.

  Args:
    env: the game.
    sources: `(description, policy, positions, games)` each: `positions` distinct positions
      sampled (`sample_positions`) from `games` games of `policy` against itself; a `None`
      policy takes every reachable live position (`all_positions`) instead. Positions already
      taken by an earlier source are not repeated.
    seed: seeds the games and the draws.
    log: a `print`-like function for progress, or None.
  """
  rng = np.random.default_rng(seed)
  key = jax.random.key(seed)
  seen: set[bytes] = set()
  parts = []
  for index, (description, policy, num, num_games) in enumerate(sources):
    start = time.time()
    if policy is None:
      moves, plies = all_positions(env)
    else:
      key, games_key = jax.random.split(key)
      game_moves, lengths = jax.device_get(_play_games_jit(env, policy, num_games, games_key))
      moves, plies = sample_positions(env, game_moves, lengths, num, rng, exclude=seen)
    scores = label(env, moves, plies)
    parts.append((moves, plies, scores, np.full(len(plies), index, np.int8)))
    if log:
      log(f"{description}: {len(plies)} positions in {time.time() - start:.0f} s")
  moves, plies, scores, source = (np.concatenate(x) for x in zip(*parts))
  return Positions(game=env.name, moves=moves, num_moves=plies, scores=scores, source=source,
                   sources=tuple(s[0] for s in sources), seed=seed)
