"""Evaluation during training: the current network with search against fixed baselines.

The network's variables are an *argument* of the jitted match (not constants closed over), so a
match compiles once per opponent and every later evaluation reuses it.
"""

from __future__ import annotations

import time
from typing import Any

import jax

from azjax import agents, arena
from azjax.solver import benchmark as solver_benchmark


class Evaluator:
  """Plays the trained agent against uniform random and rollout MCTS, both colours."""

  def __init__(self, trainer: Any):
    config = trainer.config
    self.trainer = trainer
    self.num_games = config.eval_games
    game = trainer.game
    search_config = config.search_config(evaluation=True)
    self.agent_name = f"az-{search_config.algorithm}{search_config.simulations}"
    self.opponents = [
        agents.make("random", game),
        agents.make("mcts", game, simulations=config.eval_mcts_simulations),
    ]

    def match(variables, key, opponent_policy):
      # Built at trace time from the traced variables, so nothing is baked into the compile.
      az = agents.make_alphazero(game, model=trainer.model, variables=variables,
                                 simulations=search_config.simulations,
                                 search_config=search_config)
      return arena.match_outcomes(game, az.policy, opponent_policy, self.num_games,
                                  game.max_game_length, key)

    self._matches = {
        opponent.name: jax.jit(lambda v, k, p=opponent.policy: match(v, k, p))
        for opponent in self.opponents
    }

  def evaluate(self, variables: Any, key: jax.Array) -> dict[str, arena.MatchResult]:
    """`{opponent name: MatchResult from the trained agent's side}`; empty if eval_games = 0."""
    if not self.num_games:
      return {}
    results = {}
    for name, match in self._matches.items():
      key, match_key = jax.random.split(key)
      outcomes = match(variables, match_key)
      results[name] = arena.summarize(self.trainer.game, self.agent_name, name, outcomes)
    return results


class SolverEvaluator:
  """Mistakes against perfect play during training (`Config.solver_every`): the raw policy and
  the evaluation search on the game's labelled positions (`azjax.solver.benchmark`), compiled
  once. The positions carry their labels, so no solver is needed while training.

  Raises (on construction, before a run writes anything):
    ValueError: the game has no solver benchmark.
    FileNotFoundError: its positions file is missing.
  """

  def __init__(self, trainer: Any, positions_path: str | None = None):
    config, game = trainer.config, trainer.game
    try:
      path = solver_benchmark.positions_path(
          game.name, positions_path or config.solver_positions or None)
    except ValueError as err:
      raise ValueError(f"config solver_every={config.solver_every}: {err}") from None
    except FileNotFoundError as err:
      raise FileNotFoundError(f"config solver_every: {err} (--set solver_every=0 turns the "
                              "scoring off)") from None
    search = config.search_config(evaluation=True)
    self.bench = solver_benchmark.SolverBenchmark(
        game, trainer.model, solver_benchmark.Positions.load(path),
        simulations=(0, search.simulations), search_config=search)

  def __call__(self, variables: Any, key: jax.Array) -> dict[str, float]:
    """`{"solver/<player>/<metric>": value}` over all positions; players "policy" and
    "search<s>", plus "solver/seconds", the time it took."""
    start = time.time()
    results = self.bench(variables, key)
    row = solver_benchmark.overall(results, prefix="solver/")
    row["solver/seconds"] = round(time.time() - start, 3)
    return row
