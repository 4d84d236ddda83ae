"""Evaluation during training: the current network with search against fixed baselines.

The network's variables are an *argument* of the jitted match (not constants closed over), so a
match compiles once per opponent and every later evaluation reuses it.
"""

from __future__ import annotations

from typing import Any

import jax

from azjax import agents, arena
from azjax.search import search


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
      def az_policy(states, key):
        return search(game, trainer.eval_fn, search_config, variables, states, key).action
      return arena.match_outcomes(game, az_policy, opponent_policy, self.num_games,
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
