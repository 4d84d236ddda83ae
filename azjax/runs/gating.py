"""Gating (AlphaGo Zero, the Breakthrough thesis): the trained network replaces the best one, which
self-play uses, only if it wins more than `gating_threshold` of a match against it.

A step of its own after `Trainer.iteration`, so that the training core does not depend on the
evaluation layer (agents, arena). `gated(trainer)` is the iteration followed by the match and the
swap, one pure function of `(state, hyper)`: it is jitted as the iteration is (`jit_iteration`)
and vmapped over a sweep's configurations the same way. The state keeps the best network in
`best_params` / `best_batch_stats` (`{}` without gating), so checkpoints load as before.
"""

from __future__ import annotations

from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp

from azjax import agents, arena
from azjax.runs import checkpoint
from azjax.train import Hyper, Trainer, TrainState, iteration_keys


def _player(trainer: Trainer, variables: dict):
  """The gating match's player for `variables`: the raw policy, sampled, or the search."""
  config = trainer.config
  if config.gating_player == "search":
    # The run's evaluation player with Gumbel noise at the root kept on purpose: two
    # deterministic players would replay the same two games.
    return agents.make_alphazero(trainer.game, model=trainer.model, variables=variables,
                                 simulations=config.eval_simulations,
                                 search_config=config.search_config(), gumbel_scale=1.0).policy
  # Sampled, not argmax: two deterministic players would replay the same two games.
  return agents.make_raw_policy(trainer.game, model=trainer.model, variables=variables,
                                sample=True).policy


def score(trainer: Trainer, candidate: dict, best: dict, key: chex.Array) -> chex.Array:
  """`[]` score (wins + draws / 2, per game) of `candidate` against `best`, both colours.

  Args:
    candidate, best: network variables (`{"params", "batch_stats"}`; an empty collection, a
      network without BatchNorm, is left out).
  """
  candidate = {k: v for k, v in candidate.items() if v}
  best = {k: v for k, v in best.items() if v}
  outcomes = arena.match_outcomes(trainer.game, _player(trainer, candidate),
                                  _player(trainer, best), trainer.config.gating_games,
                                  trainer.game.max_game_length, key)
  return jnp.mean((outcomes["outcome"] + 1.0) / 2.0)


def gate(trainer: Trainer, state: TrainState, metrics: dict, key: chex.Array,
         hyper: Hyper | None = None) -> tuple[TrainState, dict]:
  """After an iteration: the trained network plays the best one and replaces it if it scores
  above the threshold. Nothing is replaced while the buffer is not ready (`metrics["trained"]`
  false: the network has not changed).

  Returns:
    `(state, metrics)` with `gating_score` (`[]`, NaN when not trained) and `gating_accepted`.
  """
  trained = metrics["trained"]
  best = checkpoint.model_variables(
      state.replace(params=state.best_params, batch_stats=state.best_batch_stats))
  match_score = score(trainer, Trainer.variables(state), best, key)
  threshold = trainer.hyper(hyper).gating_threshold
  accept = trained & (match_score > threshold)
  best_params, best_batch_stats = jax.tree.map(
      lambda new, old: jnp.where(accept, new, old), (state.params, state.batch_stats),
      (state.best_params, state.best_batch_stats))
  metrics = dict(metrics, gating_score=jnp.where(trained, match_score, jnp.nan),
                 gating_accepted=accept)
  return state.replace(best_params=best_params, best_batch_stats=best_batch_stats), metrics


def gated(trainer: Trainer) -> Callable[..., tuple[TrainState, dict]]:
  """`trainer.iteration` followed by `gate`: `(state, hyper=None) -> (state, metrics)`.

  The match's key is the one the iteration sets aside for gating (`train.iteration_keys`), so
  a gated run draws the same numbers as when gating lived inside the iteration.
  """

  def step(state: TrainState, hyper: Any = None) -> tuple[TrainState, dict]:
    gating_key = iteration_keys(state.key).gating
    state, metrics = trainer.iteration(state, hyper)
    return gate(trainer, state, metrics, gating_key, hyper)

  return step


def step_fn(trainer: Trainer) -> Callable[..., tuple[TrainState, dict]]:
  """The function one training step runs: `gated(trainer)` with gating, else the iteration."""
  return gated(trainer) if trainer.config.gating else trainer.iteration
