"""A fixed-size replay buffer that lives on the device.

Positions are written the moment they are searched, before their game has ended, and their value
target is filled in when it ends: each row remembers which game slot (`game`) and which game in
that slot (`episode`) it came from. Only rows with a known outcome (`has_target`) are sampled, so
no value target is ever faked or bootstrapped. Rows are written in blocks of `B` (the self-play
batch) into a ring of `N` rows, `N` a multiple of `B`.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp


@chex.dataclass(frozen=True)
class ReplayBuffer:
  observation: chex.Array  # [N, R, C, P] float32: network input, mover's side
  policy: chex.Array  # [N, A] float32: the search's action weights (the policy target)
  legal_mask: chex.Array  # [N, A] bool
  value: chex.Array  # [N] float32: the game's outcome from the mover's side (once known)
  player: chex.Array  # [N] int32: the player to move
  game: chex.Array  # [N] int32: the self-play slot the position came from
  episode: chex.Array  # [N] int32: which game of that slot
  has_target: chex.Array  # [N] bool: the outcome is known (the row may be sampled)
  pointer: chex.Array  # [] int32: the next row to write

  @property
  def capacity(self) -> int:
    return self.value.shape[0]

  @property
  def num_targets(self) -> chex.Array:
    return jnp.sum(self.has_target, dtype=jnp.int32)


def init(capacity: int, observation_shape: tuple[int, ...], num_actions: int) -> ReplayBuffer:
  return ReplayBuffer(
      observation=jnp.zeros((capacity,) + tuple(observation_shape), jnp.float32),
      policy=jnp.zeros((capacity, num_actions), jnp.float32),
      legal_mask=jnp.zeros((capacity, num_actions), jnp.bool_),
      value=jnp.zeros(capacity, jnp.float32),
      player=jnp.zeros(capacity, jnp.int32),
      game=jnp.full(capacity, -1, jnp.int32),
      episode=jnp.full(capacity, -1, jnp.int32),
      has_target=jnp.zeros(capacity, jnp.bool_),
      pointer=jnp.int32(0),
  )


def add(buffer: ReplayBuffer, observation: chex.Array, policy: chex.Array, legal_mask: chex.Array,
        player: chex.Array, episode: chex.Array) -> ReplayBuffer:
  """Writes one position per self-play slot (a block of `B` rows), outcome unknown.

  Args:
    buffer: the buffer.
    observation: `[B, R, C, P]`.
    policy: `[B, A]` search action weights.
    legal_mask: `[B, A]`.
    player: `[B]` the mover.
    episode: `[B]` the game number of each slot.
  """
  batch = player.shape[0]
  start = buffer.pointer

  def put(dst, src):
    return jax.lax.dynamic_update_slice_in_dim(dst, src.astype(dst.dtype), start, axis=0)

  return buffer.replace(
      observation=put(buffer.observation, observation),
      policy=put(buffer.policy, policy),
      legal_mask=put(buffer.legal_mask, legal_mask),
      value=put(buffer.value, jnp.zeros(batch)),
      player=put(buffer.player, player),
      game=put(buffer.game, jnp.arange(batch, dtype=jnp.int32)),
      episode=put(buffer.episode, episode),
      has_target=put(buffer.has_target, jnp.zeros(batch, jnp.bool_)),
      pointer=(start + batch) % buffer.capacity,
  )


def assign_outcomes(buffer: ReplayBuffer, ended: chex.Array, episode: chex.Array,
                    final_rewards: chex.Array) -> ReplayBuffer:
  """Fills in the value targets of every stored position of the games that just ended.

  Args:
    buffer: the buffer.
    ended: `[B]` bool, slot `b`'s game ended on this move.
    episode: `[B]` the number of the game that ended in each slot.
    final_rewards: `[B, 2]` the rewards of the final transition, i.e. the outcome for each player.
  """
  slot = jnp.maximum(buffer.game, 0)  # -1 marks a never-written row; has_target stays False.
  hit = (buffer.game >= 0) & ended[slot] & (buffer.episode == episode[slot]) & ~buffer.has_target
  outcome = jnp.where(buffer.player == 0, final_rewards[slot, 0], final_rewards[slot, 1])
  return buffer.replace(
      value=jnp.where(hit, outcome, buffer.value),
      has_target=buffer.has_target | hit,
  )


def sample(buffer: ReplayBuffer, key: chex.PRNGKey, shape: int | tuple[int, ...]):
  """Samples rows uniformly among those with a known outcome (with replacement).

  Args:
    shape: the batch shape, e.g. `b` or `(K, b)` for K minibatches at once. Drawing every
      minibatch of an iteration before its SGD loop keeps the (large) buffer out of the loop,
      which XLA:CPU otherwise handles an order of magnitude slower.
  Returns:
    `(observation [*shape, R, C, P], policy [*shape, A], legal_mask [*shape, A], value [*shape])`.
  """
  shape = (shape,) if isinstance(shape, int) else tuple(shape)
  weights = buffer.has_target.astype(jnp.float32)
  # With no target yet every row is equally likely (the caller does not train on that batch).
  weights = jnp.where(jnp.any(buffer.has_target), weights, 1.0)
  index = jax.random.choice(key, buffer.capacity, shape, p=weights / weights.sum())
  return (buffer.observation[index], buffer.policy[index], buffer.legal_mask[index],
          buffer.value[index])
