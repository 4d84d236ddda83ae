"""Strength against perfect play: positions labelled by the solver, and mistake rates.

>>> positions = Positions.load("results/solver_benchmark/connect_four.npz")
>>> bench = SolverBenchmark(env, model, positions, simulations=(0, 32))   # compiles once
>>> metrics = bench(variables, key)   # {"policy": {"all": {...}, "0-10": ...}, "search32": ...}
>>> print(markdown_table(metrics))

**Positions** are live positions stored as the move sequences that reach them from the start
(small, and replayed through `env.step`), each labelled with the solver's exact score of every
move (`azjax.solver`: positive wins, 0 draws, negative loses, from the mover's side). A set is
built by `build_positions` (seeded, reproducible): Connect Four from uniformly random games and
from games of a trained network sampling from its raw policy, tic-tac-toe every reachable live
position (`all_positions`). A position is drawn by first drawing its ply uniformly over the
game's length, then a game that lasted longer than that, so every ply range is represented;
a set holds each position once.

**Metrics**, for every ply range of `PLY_RANGES` and over all positions (`move_metrics`); the
position's value `V` is the best value of its moves, the chosen move's value `q`:

* `mistake_rate`: the share of moves with `q < V` (a win thrown to a draw or a loss, a draw
  thrown to a loss), over the **decisive** positions only, those whose moves do not all have
  the same value: elsewhere no mistake is possible (every move of a lost position loses) and
  counting them would dilute the rate.
* `optimal_rate`: the share of moves with the best exact score (the perfect player's own
  choice: the fastest win, the slowest loss, any draw in a drawn position), over all positions.
  Stricter than `1 - mistake_rate`: a slower win is not a mistake but is not optimal.
* `value_accuracy`: the share of positions whose value estimate `v` (the network's value for
  the raw policy; with search, the search's Q-value of the move it plays) matches `V`:
  `v >= 1/3` for a win, `v <= -1/3` for a loss, `|v| < 1/3` for a draw; with `value_mse`, the
  mean of `(v - V)^2`.

Each table also splits the positions by source ("src0", "src1": random play, a network's
games), since the two differ in difficulty.

The raw policy plays the most probable legal move; search is the network with mctx
(`azjax.agents.make_alphazero`, noiseless) with the given simulations. A `SolverBenchmark`
jits one function per simulation count with the network's variables as an argument, so a
training loop builds it once and calls it every few iterations without compiling again.

    python -m azjax.solver_benchmark --game connect_four --agent results/connect_four_gpu \
        --out results/solver_benchmark/connect_four.npz

builds and labels a set (`python -m experiments.evaluate --checkpoint RUN --solver` scores a
network on it).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, arena, solver
from azjax.games import base

ILLEGAL = -128  # The stored score of an illegal move (int8).
DRAW_BAND = 1.0 / 3.0  # |v| below this reads as a draw in `value_accuracy`.
# Inclusive ply ranges (plies played before the position: 0 is the start).
PLY_RANGES = {
    "connect_four": ((0, 10), (11, 20), (21, 30), (31, 41)),
    "tic_tac_toe": ((0, 2), (3, 5), (6, 8)),
}
DEFAULT_PATHS = {
    "connect_four": "results/solver_benchmark/connect_four.npz",
    "tic_tac_toe": "results/solver_benchmark/tic_tac_toe.npz",
}


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


# -- Metrics ---------------------------------------------------------------------------------------


def ply_ranges_of(env_or_name: base.Game | str,
                  positions: Positions | None = None) -> tuple[tuple[int, int], ...]:
  """The game's `PLY_RANGES`, or four equal ranges over the positions' plies."""
  name = env_or_name if isinstance(env_or_name, str) else env_or_name.name
  if name in PLY_RANGES:
    return PLY_RANGES[name]
  top = int(positions.num_moves.max()) if positions is not None and len(positions) else 3
  edges = np.linspace(0, top + 1, 5).astype(int)
  return tuple((int(a), int(b) - 1) for a, b in zip(edges[:-1], edges[1:]) if b > a)


def move_metrics(positions: Positions, actions: np.ndarray, estimates: np.ndarray | None = None,
                 *, ply_ranges: Sequence[tuple[int, int]] | None = None,
                 by_source: bool = False) -> dict[str, dict[str, float]]:
  """The metrics of the module docstring for one player's moves, by ply range and overall.

  Args:
    positions: the `N` labelled positions.
    actions: `[N]` the player's move in each position. An illegal move loses in azjax, so it
      counts as a losing, non-optimal move.
    estimates: `[N]` the player's value of each position (mover's side), or None.
    ply_ranges: inclusive `(first, last)` plies; default `ply_ranges_of(positions.game)`.
    by_source: add the positions of each source apart, as `"src0"`, `"src1"`, ... (the
      indices of `positions.sources`), when there are several.
  Returns:
    `{"all": m, "0-10": m, ...}` with `m` = `{"positions", "decisive", "mistakes",
    "mistake_rate", "optimal_rate"}` plus `"value_accuracy"` and `"value_mse"` when
    `estimates` is given; a rate over no positions is NaN.
  """
  actions = np.asarray(actions, np.int64)
  rows = np.arange(len(positions))
  scores = positions.move_scores
  values = positions.move_values
  legal = positions.legal[rows, actions.clip(0, scores.shape[1] - 1)] & (actions >= 0) & (
      actions < scores.shape[1])
  safe = actions.clip(0, scores.shape[1] - 1)
  chosen_value = np.where(legal, values[rows, safe], -1.0)
  chosen_score = np.where(legal, scores[rows, safe], -np.inf)
  position_value = positions.values
  mistakes = chosen_value < position_value
  optimal = chosen_score == solver.position_value(scores)
  decisive = positions.decisive
  if estimates is not None:
    v = np.asarray(estimates, np.float64)
    predicted = np.where(v >= DRAW_BAND, 1.0, np.where(v <= -DRAW_BAND, -1.0, 0.0))
    value_correct = predicted == position_value
    value_error = (v - position_value) ** 2

  def summary(mask: np.ndarray) -> dict[str, float]:
    n, d = int(mask.sum()), int((mask & decisive).sum())
    m = int((mask & decisive & mistakes).sum())
    out = {"positions": n, "decisive": d, "mistakes": m,
           "mistake_rate": m / d if d else float("nan"),
           "optimal_rate": float(optimal[mask].mean()) if n else float("nan")}
    if estimates is not None:
      out["value_accuracy"] = float(value_correct[mask].mean()) if n else float("nan")
      out["value_mse"] = float(value_error[mask].mean()) if n else float("nan")
    return out

  plies = positions.num_moves
  result = {"all": summary(np.ones(len(positions), bool))}
  for first, last in ply_ranges or ply_ranges_of(positions.game, positions):
    result[f"{first}-{last}"] = summary((plies >= first) & (plies <= last))
  if by_source and len(positions.sources) > 1:
    for index in range(len(positions.sources)):
      result[f"src{index}"] = summary(positions.source == index)
  return result


class SolverBenchmark:
  """A network's metrics on a set of positions: raw policy and search, compiled once.

  Args:
    env: the game.
    model: the Flax network (`azjax.nets.make`); its `apply(variables, observations,
      train=False)` gives `(logits [B, A], value [B])`.
    positions: the labelled positions (`Positions.load`).
    simulations: 0 for the raw policy (argmax of the masked logits, the network's value as the
      estimate), `s > 0` for search with `s` simulations (the Q-value of its move as the
      estimate).
    algorithm: "gumbel" or "puct"; extra keyword arguments go to `azjax.search.SearchConfig`
      (noiseless by default, as `agents.make_alphazero`).
    batch_size: positions evaluated at once (the last batch is padded, so every call has one
      shape).
  """

  def __init__(self, env: base.Game, model: Any, positions: Positions, *,
               simulations: Sequence[int] = (0, 32), algorithm: str = "gumbel",
               batch_size: int = 1024, ply_ranges: Sequence[tuple[int, int]] | None = None,
               **search_kwargs):
    import mctx  # noqa: PLC0415

    from azjax.nets import mask_logits  # noqa: PLC0415
    from azjax.search import SearchConfig, make_recurrent_fn  # noqa: PLC0415

    if positions.game != env.name:
      raise ValueError(f"positions of {positions.game!r} for a {env.name!r} network")
    if any(s < 0 for s in simulations) or not simulations:
      raise ValueError(f"simulations: expected counts >= 0 (0: raw policy), got {simulations}")
    self.env, self.positions = env, positions
    self.simulations = tuple(dict.fromkeys(int(s) for s in simulations))
    self.ply_ranges = ply_ranges
    count = len(positions)
    self.batch_size = min(batch_size, count)
    padded = -(-count // self.batch_size) * self.batch_size
    index = np.concatenate([np.arange(count), np.zeros(padded - count, np.int64)])
    states = positions.states(env)
    self._batches = [jax.tree.map(lambda x, i=index[k:k + self.batch_size]: x[i], states)
                     for k in range(0, padded, self.batch_size)]

    def eval_fn(variables, observation):
      return model.apply(variables, observation, train=False)

    def root(variables, states):
      logits, value = eval_fn(variables, states.observation)
      logits = mask_logits(logits.astype(jnp.float32), states.legal_action_mask)
      return logits, value.astype(jnp.float32)

    def raw(variables, states, key):
      del key
      logits, value = root(variables, states)
      return jnp.argmax(logits, axis=-1).astype(jnp.int32), value

    recurrent_fn = make_recurrent_fn(env, eval_fn)

    # mctx directly rather than `azjax.search.search`, for the Q-value of the move played: the
    # root's mean value also averages the simulations spent refuting worse moves (Gumbel's
    # sequential halving visits many), which reads a won position as less won. The moves are
    # the same as the agent's (its forced-move shortcut changes no decision).
    def searched(variables, states, key, config):
      logits, value = root(variables, states)
      first = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
      invalid = ~states.legal_action_mask  # Every benchmark position is live.
      if config.algorithm == "gumbel":
        out = mctx.gumbel_muzero_policy(
            variables, key, first, recurrent_fn, num_simulations=config.simulations,
            invalid_actions=invalid, max_num_considered_actions=config.max_num_considered_actions,
            gumbel_scale=config.gumbel_scale)
        action = out.action
      else:
        out = mctx.muzero_policy(
            variables, key, first, recurrent_fn, num_simulations=config.simulations,
            invalid_actions=invalid, dirichlet_fraction=config.dirichlet_fraction,
            dirichlet_alpha=config.dirichlet_alpha, pb_c_init=config.pb_c_init,
            pb_c_base=config.pb_c_base)
        action = jnp.argmax(out.action_weights, axis=-1)
      action = action.astype(jnp.int32)
      q = jnp.take_along_axis(out.search_tree.summary().qvalues, action[:, None], axis=1)[:, 0]
      return action, q.astype(jnp.float32)

    self._players = {}
    for s in self.simulations:
      if s == 0:
        self._players["policy"] = jax.jit(raw)
        continue
      config = SearchConfig(**{"algorithm": algorithm, "simulations": s, "gumbel_scale": 0.0,
                               "dirichlet_fraction": 0.0, "temperature_moves": 0,
                               **search_kwargs})
      config.validate()
      self._players[f"search{s}"] = jax.jit(functools.partial(searched, config=config))

  def actions(self, variables: Any, key: jax.Array) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`{player: (actions [N], value estimates [N])}` on every position."""
    out = {}
    for name, player in self._players.items():
      parts = []
      for batch in self._batches:
        key, batch_key = jax.random.split(key)
        parts.append(jax.device_get(player(variables, batch, batch_key)))
      actions, estimates = (np.concatenate(x)[:len(self.positions)] for x in zip(*parts))
      out[name] = (actions, estimates)
    return out

  def __call__(self, variables: Any, key: jax.Array) -> dict[str, dict[str, dict[str, float]]]:
    """`{player: move_metrics}`, players "policy" (raw) and "search<s>"."""
    return {name: move_metrics(self.positions, actions, estimates, ply_ranges=self.ply_ranges,
                               by_source=True)
            for name, (actions, estimates) in self.actions(variables, key).items()}


_BENCHMARKS: dict[tuple, tuple[SolverBenchmark, tuple]] = {}


def evaluate_agent(env: base.Game, model: Any, variables: Any, positions: Positions,
                   simulations: Sequence[int] = (0, 32), *, key: jax.Array | None = None,
                   **kwargs) -> dict[str, dict[str, dict[str, float]]]:
  """`SolverBenchmark(env, model, positions, simulations=..., **kwargs)(variables, key)`.

  The benchmark is kept for the same `(env, model, positions, simulations, kwargs)` objects,
  so calling this every few training iterations compiles only the first time.
  """
  cache_key = (id(env), id(model), id(positions), tuple(simulations),
               tuple(sorted(kwargs.items())))
  if cache_key not in _BENCHMARKS:
    if len(_BENCHMARKS) >= 8:
      _BENCHMARKS.clear()
    bench = SolverBenchmark(env, model, positions, simulations=simulations, **kwargs)
    # The objects are kept alive with it, so their ids cannot be reused by others.
    _BENCHMARKS[cache_key] = (bench, (env, model, positions))
  return _BENCHMARKS[cache_key][0](variables, jax.random.key(0) if key is None else key)


def evaluate_policy(env: base.Game, agent: agents.Agent, positions: Positions, key: jax.Array,
                    *, ply_ranges: Sequence[tuple[int, int]] | None = None
                    ) -> dict[str, dict[str, float]]:
  """`move_metrics` of any agent's moves (`agent.act` on all positions at once)."""
  actions = np.asarray(agent.act(positions.states(env), key))
  return move_metrics(positions, actions, ply_ranges=ply_ranges)


def play_vs_solver(env: base.Game, agent: agents.Agent, games_per_side: int, key: jax.Array,
                   **solver_kwargs) -> arena.MatchResult:
  """`agent` against the solver agent (`azjax.agents.make_solver(**solver_kwargs)`,
  by default random among result-keeping moves for its first two moves), `games_per_side` games
  as each colour; `result.first` is the agent's W/D/L as the first player."""
  opponent = agents.make("solver", env, **solver_kwargs)
  return arena.play(env, agent, opponent, 2 * games_per_side, key)


# -- Tables ----------------------------------------------------------------------------------------

TABLE_HEADER = ("| player | plies or source | positions | decisive | mistakes | mistake rate "
                "| optimal | value accuracy |\n|---|---|---|---|---|---|---|---|")


def _percent(x: float) -> str:
  return "-" if x != x else f"{100 * x:.1f}%"


def markdown_table(results: dict[str, dict[str, dict[str, float]]]) -> str:
  """One row per player and ply range, then overall ("all"), then each source ("src<i>"),
  under `TABLE_HEADER`."""
  lines = [TABLE_HEADER]
  for player, by_range in results.items():
    sources = [r for r in by_range if r.startswith("src")]
    ranges = [r for r in by_range if r != "all" and r not in sources]
    for plies in ranges + ["all"] + sources:
      m = by_range[plies]
      lines.append(
          f"| {player} | {plies} | {m['positions']} | {m['decisive']} | {m['mistakes']} "
          f"| {_percent(m['mistake_rate'])} | {_percent(m['optimal_rate'])} "
          f"| {_percent(m.get('value_accuracy', float('nan')))} |")
  return "\n".join(lines)


# The headline numbers of a player, over all positions: learning curves and training logs.
OVERALL_METRICS = ("mistake_rate", "optimal_rate", "value_accuracy")


def overall(results: dict[str, dict[str, dict[str, float]]],
            prefix: str = "") -> dict[str, float]:
  """`{f"{prefix}<player>/<metric>": value}` of every player's `OVERALL_METRICS` over all
  positions (`results` as `SolverBenchmark` returns them); a player without value estimates
  (an alpha-beta player's moves alone) has no value accuracy."""
  return {f"{prefix}{player}/{name}": float(by_range["all"][name])
          for player, by_range in results.items() for name in OVERALL_METRICS
          if name in by_range["all"]}


def flatten(results: dict[str, dict[str, dict[str, float]]],
            prefix: str = "solver") -> dict[str, float]:
  """`{"solver/policy/all/mistake_rate": ..., ...}`, for metric logs."""
  return {f"{prefix}/{player}/{plies}/{name}": float(value)
          for player, by_range in results.items() for plies, m in by_range.items()
          for name, value in m.items()}


# -- Command line: build a set ---------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m azjax.solver_benchmark",
                                   description="Build and label a solver benchmark set.")
  parser.add_argument("--game", required=True, choices=solver.SOLVED_GAMES)
  parser.add_argument("--agent", default=None, metavar="RUN",
                      help="a run directory whose network, sampling from its raw policy, plays "
                      "the agent games")
  parser.add_argument("--random-positions", type=int, default=500)
  parser.add_argument("--agent-positions", type=int, default=500)
  parser.add_argument("--games", type=int, default=4000,
                      help="games played per source, positions are drawn from them")
  parser.add_argument("--all", action="store_true",
                      help="every reachable live position instead (small games)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", default=None, help="the .npz file (default: DEFAULT_PATHS)")
  args = parser.parse_args(argv)
  from azjax import games  # noqa: PLC0415

  env = games.make(args.game)
  if args.all:
    sources = [("every reachable live position", None, 0, 0)]
  else:
    sources = [("uniformly random play", agents.random_policy, args.random_positions,
                args.games)]
    if args.agent:
      from azjax import checkpoint  # noqa: PLC0415

      _, _, model, abstract = agents.load_network(args.agent)
      variables = checkpoint.load_model(args.agent, abstract)
      player = agents.make_raw_policy(env, model=model, variables=variables, sample=True)
      sources.append((f"{args.agent} raw policy, sampled, against itself", player.policy,
                      args.agent_positions, args.games))
  positions = build_positions(env, sources, seed=args.seed, log=print)
  out = positions.save(args.out or DEFAULT_PATHS[args.game])
  print(f"wrote {out}: {len(positions)} positions, "
        f"{int(positions.decisive.sum())} decisive; values (win/draw/loss) "
        + "/".join(str(int(np.sum(positions.values == v))) for v in (1, 0, -1)))
  summary = {name: int(np.sum(positions.source == i)) for i, name in enumerate(positions.sources)}
  print(json.dumps(summary, indent=1))


if __name__ == "__main__":
  main()
