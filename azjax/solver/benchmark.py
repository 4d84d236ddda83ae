"""Strength against perfect play: mistake rates of a player on positions labelled by the solver.

>>> positions = Positions.load(positions_path("connect_four"))   # the packaged set
>>> bench = SolverBenchmark(env, model, positions, simulations=(0, 32))   # compiles once
>>> metrics = bench(variables, key)   # {"policy": {"all": {...}, "0-10": ...}, "search32": ...}
>>> print(markdown_table(metrics))

**Positions** are live positions, each with the solver's exact score of every move, built and
stored by `azjax.solver.positions` (`Positions`, `build_positions`, `DEFAULT_PATHS`; the names
are re-exported here): Connect Four from uniformly random games and from games of a trained
network, tic-tac-toe every reachable live position.

**Metrics**, for every ply range of the game (`Game.benchmark_ply_ranges`) and over all
positions (`move_metrics`); the position's value `V` is the best value of its moves, the chosen
move's value `q`:

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
games, named by `Positions.sources`), since they differ in difficulty, and says under it that
its mistake rate is over the decisive positions (`TABLE_NOTE`). `--positions strong` (any
command that takes a positions file) scores on positions strong play reaches
(`azjax.solver.strong_play`).

The raw policy plays the most probable legal move; search is the network's evaluation player
(`azjax.search.for_evaluation` of the run's search, as `azjax.agents.make_alphazero` plays it)
with the given simulations. A `SolverBenchmark` jits one function per simulation count with the
network's variables as an argument, so a training loop builds it once and calls it every few
iterations without compiling again.

    python -m azjax.solver.benchmark --game connect_four --agent results/connect_four_gpu \
        --out azjax/data/solver_positions/connect_four.npz

builds and labels a set (`python -m experiments.evaluate --checkpoint RUN --solver` scores a
network on it).
"""

from __future__ import annotations

import argparse
import functools
import json
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, arena, games, search, solver
from azjax.games import base
from azjax.nets import mask_logits
from azjax.solver.positions import (
  BENCHMARK_DIR,
  DEFAULT_PATHS,
  ILLEGAL,
  Positions,
  all_positions,
  build_positions,
  label,
  packaged_path,
  packaged_sets,
  positions_label,
  positions_path,
  replay,
  sample_positions,
)

DRAW_BAND = 1.0 / 3.0  # |v| below this reads as a draw in `value_accuracy`.


# -- Metrics ---------------------------------------------------------------------------------------


def ply_ranges_of(env_or_name: base.Game | str,
                  positions: Positions | None = None) -> tuple[tuple[int, int], ...]:
  """The game's `benchmark_ply_ranges`, or (none given) four equal ranges over the positions'
  plies. A name is looked up in the registry (`Positions.game`)."""
  game = games.game_class(env_or_name) if isinstance(env_or_name, str) else env_or_name
  if game.benchmark_ply_ranges:
    return tuple(game.benchmark_ply_ranges)
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
    search_config: the search, made an evaluation player with `azjax.search.for_evaluation`
      for each count (a run's own: `Config.search_config()`; default `SearchConfig()`);
      extra keyword arguments are `SearchConfig` fields set explicitly (`algorithm="puct"`).
    batch_size: positions evaluated at once (the last batch is padded, so every call has one
      shape).
  """

  def __init__(self, env: base.Game, model: Any, positions: Positions, *,
               simulations: Sequence[int] = (0, 32),
               search_config: search.SearchConfig | None = None,
               batch_size: int = 1024, ply_ranges: Sequence[tuple[int, int]] | None = None,
               **search_kwargs):
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
    eval_fn = agents.network_eval_fn(model)

    def raw(variables, states, key):
      del key
      logits, value = eval_fn(variables, states.observation)
      logits = mask_logits(logits.astype(jnp.float32), states.legal_action_mask)
      return jnp.argmax(logits, axis=-1).astype(jnp.int32), value.astype(jnp.float32)

    # The estimate is the Q-value of the move played (`action_value`), not the root's mean
    # value, which also averages the simulations spent refuting worse moves (Gumbel's
    # sequential halving visits many) and so reads a won position as less won.
    def searched(variables, states, key, config):
      out = search.search(env, eval_fn, config, variables, states, key)
      return out.action, out.action_value

    self._players = {}
    base_config = search_config or search.SearchConfig()
    for s in self.simulations:
      if s == 0:
        self._players["policy"] = jax.jit(raw)
        continue
      config = search.for_evaluation(base_config, s, **search_kwargs)
      self._players[f"search{s}"] = jax.jit(functools.partial(searched, config=config))

  @property
  def players(self) -> tuple[str, ...]:
    """The players scored, in order: "policy" (raw) and "search<s>"."""
    return tuple(self._players)

  @property
  def num_batches(self) -> int:
    """The batches of `batch_size` positions each player is evaluated in."""
    return len(self._batches)

  def player_actions(self, name: str, variables: Any, key: jax.Array, *,
                     on_batch: Callable[[], None] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One player's `(actions [N], value estimates [N])` on every position; `on_batch()` is
    called after each batch (a progress bar's step: a command's Ctrl-C acts between batches)."""
    parts = []
    for batch in self._batches:
      key, batch_key = jax.random.split(key)
      parts.append(jax.device_get(self._players[name](variables, batch, batch_key)))
      if on_batch is not None:
        on_batch()
    actions, estimates = (np.concatenate(x)[:len(self.positions)] for x in zip(*parts))
    return actions, estimates

  def actions(self, variables: Any, key: jax.Array) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`{player: (actions [N], value estimates [N])}` on every position."""
    return {name: self.player_actions(name, variables, key) for name in self._players}

  def metrics(self, actions: dict[str, tuple[np.ndarray, np.ndarray]]
              ) -> dict[str, dict[str, dict[str, float]]]:
    """`{player: move_metrics}` of `actions` (as `actions` returns them, or some players')."""
    return {name: move_metrics(self.positions, moves, estimates, ply_ranges=self.ply_ranges,
                               by_source=True)
            for name, (moves, estimates) in actions.items()}

  def __call__(self, variables: Any, key: jax.Array) -> dict[str, dict[str, dict[str, float]]]:
    """`{player: move_metrics}`, players "policy" (raw) and "search<s>"."""
    return self.metrics(self.actions(variables, key))


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
# Printed under every table: what the rates are over.
TABLE_NOTE = ("Mistake rate: mistakes over the decisive positions (those where some move loses "
              "value; elsewhere no move is a mistake). Optimal and value accuracy: over all "
              "positions.")


def _percent(x: float) -> str:
  return "-" if x != x else f"{100 * x:.1f}%"


def source_label(index: int, sources: Sequence[str] | None = None) -> str:
  """`"src<index>"`, with the source's short name (its description up to a colon or comma)
  if given."""
  if sources is None or index >= len(sources):
    return f"src{index}"
  return f"src{index} {sources[index].split(':')[0].split(',')[0]}"


def markdown_table(results: dict[str, dict[str, dict[str, float]]],
                   sources: Sequence[str] | None = None) -> str:
  """One row per player and ply range, then overall ("all"), then each source ("src<i>",
  named by `sources`, e.g. `Positions.sources`), under `TABLE_HEADER` and over `TABLE_NOTE`."""
  lines = [TABLE_HEADER]
  for player, by_range in results.items():
    source_rows = [r for r in by_range if r.startswith("src")]
    ranges = [r for r in by_range if r != "all" and r not in source_rows]
    for plies in ranges + ["all"] + source_rows:
      m = by_range[plies]
      name = source_label(int(plies[3:]), sources) if plies in source_rows else plies
      lines.append(
          f"| {player} | {name} | {m['positions']} | {m['decisive']} | {m['mistakes']} "
          f"| {_percent(m['mistake_rate'])} | {_percent(m['optimal_rate'])} "
          f"| {_percent(m.get('value_accuracy', float('nan')))} |")
  return "\n".join(lines + ["", TABLE_NOTE])


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
  parser = argparse.ArgumentParser(prog="python -m azjax.solver.benchmark",
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
  parser.add_argument("--out", default=None,
                      help="the .npz file (default: the packaged set, "
                      "azjax/data/solver_positions/GAME.npz)")
  args = parser.parse_args(argv)
  env = games.make(args.game)
  if args.all:
    sources = [("every reachable live position", None, 0, 0)]
  else:
    sources = [("uniformly random play", agents.random_policy, args.random_positions,
                args.games)]
    if args.agent:
      from azjax.runs import checkpoint  # noqa: PLC0415

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


__all__ = [
    # The position sets (`azjax.solver.positions`).
    "BENCHMARK_DIR", "DEFAULT_PATHS", "ILLEGAL", "Positions", "all_positions", "build_positions",
    "label", "packaged_path", "packaged_sets", "positions_label",
    "positions_path", "replay", "sample_positions",
    # Scoring players on them.
    "DRAW_BAND", "OVERALL_METRICS", "SolverBenchmark", "TABLE_HEADER", "TABLE_NOTE",
    "evaluate_agent", "evaluate_policy", "flatten", "main", "markdown_table", "move_metrics",
    "overall", "play_vs_solver", "ply_ranges_of", "source_label",
]

if __name__ == "__main__":
  main()
