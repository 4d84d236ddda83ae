"""Symmetry augmentation of training samples: each sample is seen under a random symmetry.

A game lists its board symmetries (`Game.symmetries()`, e.g. Connect Four's left-right mirror,
tic-tac-toe's 7 rotations and reflections) as gather indices over cells and actions. Applying
one to a sample transforms its observation, policy target and legal mask consistently, and
keeps its value target, so the network sees every position as it would look under any of them
for free: no extra self-play.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from azjax.games.base import Game


def tables(game: Game) -> tuple[np.ndarray, np.ndarray]:
  """`(cells [S, R*C], actions [S, A])` int32 gather indices, the identity first (`S >= 1`)."""
  cells = [np.arange(game.rows * game.cols, dtype=np.int32)]
  actions = [np.arange(game.num_actions, dtype=np.int32)]
  for symmetry in game.symmetries():
    cells.append(np.asarray(symmetry.cells, np.int32))
    actions.append(np.asarray(symmetry.actions, np.int32))
  return np.stack(cells), np.stack(actions)


def apply(index: chex.Array, observation: chex.Array, *per_action: chex.Array,
          cells: chex.Array, actions: chex.Array) -> tuple[chex.Array, ...]:
  """Transforms each sample by its symmetry `index` (0 is the identity).

  Args:
    index: `[*batch]` int32 symmetry of each sample.
    observation: `[*batch, R, C, P]`.
    *per_action: `[*batch, A]` arrays indexed by action: the policy target, the legal mask, and
      (KataGo's auxiliary target) the opponent's reply policy and legal mask. A symmetry maps
      the reply's actions as it maps the mover's: each game's symmetries commute with the change
      to the opponent's frame (Breakthrough: a half turn; the others keep the board).
    cells, actions: `tables(game)`.
  Returns:
    `(observation, *per_action)` with the same shapes.
  """
  *batch, rows, cols, planes = observation.shape
  flat = observation.reshape((*batch, rows * cols, planes))
  flat = jnp.take_along_axis(flat, jnp.asarray(cells)[index][..., None], axis=-2)
  gather = jnp.asarray(actions)[index]
  return (flat.reshape(observation.shape),
          *(jnp.take_along_axis(x, gather, axis=-1) for x in per_action))


def random(key: chex.PRNGKey, game: Game, observation: chex.Array,
           *per_action: chex.Array) -> tuple[chex.Array, ...]:
  """Each sample under a uniformly random symmetry of `game` (itself when it has none):
  `(observation, *per_action)` as `apply` transforms them."""
  cells, actions = tables(game)
  if len(cells) == 1:
    return (observation, *per_action)
  index = jax.random.randint(key, observation.shape[:-3], 0, len(cells))
  return apply(index, observation, *per_action, cells=cells, actions=actions)
