"""A fixed-size replay buffer that lives on the device.

Positions are written the moment they are searched, before their game has ended, and their value
target is filled in when it ends: each row remembers which game of its slot (`episode`) it came
from. Only rows with a known outcome (`has_target`) are sampled, so no value target is ever faked
or bootstrapped.

Layout: `[T, B]`, one block of `B` rows (one per self-play slot) per move, in a ring of `T`
blocks (`N = T * B` rows). Column `b` only ever holds slot `b`'s positions, so when the slots are
split over devices (`azjax/sharding.py` splits axis 1 with the games) every device writes, and
fills in the outcomes of, its own games' rows: self-play sends nothing between devices. A flat
`[N]` ring split into contiguous rows would put each move's block on one device and make XLA
gather the whole buffer onto every device at every move. Row-major, `[T, B]` is that flat ring.
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp


@chex.dataclass(frozen=True)
class ReplayBuffer:
  observation: chex.Array  # [T, B, R, C, P] float32: network input, mover's side
  policy: chex.Array  # [T, B, A] float32: the search's action weights (the policy target)
  legal_mask: chex.Array  # [T, B, A] bool
  value: chex.Array  # [T, B] float32: the game's outcome from the mover's side (once known)
  root_value: chex.Array  # [T, B] float32: the search's value of the position, mover's side
  # [T, B] bool: the policy is a target. False for the cheap searches of playout cap
  # randomisation, whose few simulations barely improve on the prior (KataGo, section 3.1).
  full_search: chex.Array
  player: chex.Array  # [T, B] int32: the player to move
  episode: chex.Array  # [T, B] int32: which game of the row's slot (column); -1: never written
  has_target: chex.Array  # [T, B] bool: the outcome is known (the row may be sampled)
  pointer: chex.Array  # [] int32: the next block to write

  @property
  def capacity(self) -> int:
    """`N = T * B` rows."""
    return self.value.shape[0] * self.value.shape[1]

  @property
  def num_targets(self) -> chex.Array:
    return jnp.sum(self.has_target, dtype=jnp.int32)


def init(capacity: int, batch: int, observation_shape: tuple[int, ...],
         num_actions: int) -> ReplayBuffer:
  """An empty buffer of `capacity` rows for `batch` self-play slots (`capacity % batch == 0`)."""
  if capacity % batch:
    raise ValueError(f"replay capacity {capacity} is not a multiple of the batch {batch}")
  rows = (capacity // batch, batch)
  return ReplayBuffer(
      observation=jnp.zeros(rows + tuple(observation_shape), jnp.float32),
      policy=jnp.zeros(rows + (num_actions,), jnp.float32),
      legal_mask=jnp.zeros(rows + (num_actions,), jnp.bool_),
      value=jnp.zeros(rows, jnp.float32),
      root_value=jnp.zeros(rows, jnp.float32),
      full_search=jnp.zeros(rows, jnp.bool_),
      player=jnp.zeros(rows, jnp.int32),
      episode=jnp.full(rows, -1, jnp.int32),
      has_target=jnp.zeros(rows, jnp.bool_),
      pointer=jnp.int32(0),
  )


def add(buffer: ReplayBuffer, observation: chex.Array, policy: chex.Array, legal_mask: chex.Array,
        player: chex.Array, episode: chex.Array, root_value: chex.Array | None = None,
        full_search: chex.Array | bool = True) -> ReplayBuffer:
  """Writes one position per self-play slot (the block at `pointer`), outcome unknown.

  Args:
    buffer: the buffer.
    observation: `[B, R, C, P]`.
    policy: `[B, A]` search action weights.
    legal_mask: `[B, A]`.
    player: `[B]` the mover.
    episode: `[B]` the game number of each slot.
    root_value: `[B]` the search's root value, mover's side (default 0).
    full_search: `[B]` or `[]` bool, whether `policy` is a policy target.
  """
  if root_value is None:
    root_value = jnp.zeros_like(player, jnp.float32)
  full_search = jnp.broadcast_to(jnp.asarray(full_search, jnp.bool_), player.shape)
  start = buffer.pointer

  def put(dst, src):
    # Along the block axis only: each slot's row stays in its column (and on its device).
    return jax.lax.dynamic_update_slice_in_dim(dst, src.astype(dst.dtype)[None], start, axis=0)

  return buffer.replace(
      observation=put(buffer.observation, observation),
      policy=put(buffer.policy, policy),
      legal_mask=put(buffer.legal_mask, legal_mask),
      value=put(buffer.value, jnp.zeros_like(player, jnp.float32)),
      root_value=put(buffer.root_value, root_value),
      full_search=put(buffer.full_search, full_search),
      player=put(buffer.player, player),
      episode=put(buffer.episode, episode),
      has_target=put(buffer.has_target, jnp.zeros_like(player, jnp.bool_)),
      pointer=(start + 1) % buffer.value.shape[0],
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
  # Column b is slot b, so every test below is elementwise against a [B] row broadcast over the
  # T blocks. A never-written row's episode (-1) matches no slot's (>= 0).
  hit = ended & (buffer.episode == episode) & ~buffer.has_target
  outcome = jnp.where(buffer.player == 0, final_rewards[:, 0], final_rewards[:, 1])
  return buffer.replace(
      value=jnp.where(hit, outcome, buffer.value),
      has_target=buffer.has_target | hit,
  )


class Batch(NamedTuple):
  """Training samples; every field has the batch shape `[*shape]` in front. The last three are
  None unless sampled with `replies=True`."""

  observation: chex.Array  # [*shape, R, C, P]
  policy: chex.Array  # [*shape, A] the search's action weights
  legal_mask: chex.Array  # [*shape, A]
  value: chex.Array  # [*shape] the game's outcome, mover's side (or its lambda-return)
  root_value: chex.Array  # [*shape] the search's root value, mover's side
  full_search: chex.Array  # [*shape] bool: `policy` is a policy target
  # The opponent's reply, KataGo's auxiliary policy target: the search's action weights at the
  # next position of the same game (the opponent's, in its frame), that position's legal mask,
  # and whether there is one (the game went on, the row is stored and a full search's).
  reply_policy: chex.Array | None = None  # [*shape, A]
  reply_legal_mask: chex.Array | None = None  # [*shape, A]
  has_reply: chex.Array | None = None  # [*shape] bool


def sample(buffer: ReplayBuffer, key: chex.PRNGKey, shape: int | tuple[int, ...],
           replies: bool = False, value_lambda: float = 1.0, lambda_moves: int = 0) -> Batch:
  """Samples rows uniformly among those with a known outcome (with replacement).

  In the `[T, B]` layout the moves of slot `b`'s game are consecutive blocks of column `b`, so
  a row's successors are read without storing anything more.

  Args:
    shape: the batch shape, e.g. `b` or `(K, b)` for K minibatches at once. Drawing every
      minibatch of an iteration before its SGD loop keeps the (large) buffer out of the loop,
      which XLA:CPU otherwise handles an order of magnitude slower.
    replies: also gather each row's successor (`Batch.reply_policy`).
    value_lambda, lambda_moves: with `value_lambda < 1`, `Batch.value` is the lambda-return
      of the search's root values at the game's next `lambda_moves` positions instead of the
      outcome (`lambda_return`).
  """
  shape = (shape,) if isinstance(shape, int) else tuple(shape)
  weights = buffer.has_target.reshape(-1).astype(jnp.float32)
  # With no target yet every row is equally likely (the caller does not train on that batch).
  weights = jnp.where(jnp.any(buffer.has_target), weights, 1.0)
  # A row of the flat (row-major) ring, then its block and column.
  block, column = jnp.divmod(
      jax.random.choice(key, buffer.capacity, shape, p=weights / weights.sum()),
      buffer.value.shape[1])
  stored = Batch._fields[:Batch._fields.index("reply_policy")]  # The buffer's own columns.
  batch = Batch(*(getattr(buffer, name)[block, column] for name in stored))
  if value_lambda < 1:
    batch = batch._replace(value=lambda_return(buffer, block, column, value_lambda,
                                               lambda_moves))
  if not replies:
    return batch
  after, same_game = successor(buffer, block, column, 1)
  return batch._replace(reply_policy=buffer.policy[after, column],
                        reply_legal_mask=buffer.legal_mask[after, column],
                        has_reply=same_game & buffer.full_search[after, column])


def successor(buffer: ReplayBuffer, block: chex.Array, column: chex.Array,
              k: int | chex.Array) -> tuple[chex.Array, chex.Array]:
  """The block of the row `k` moves after each row `(block, column)` and whether it is one of
  the same game: `(block, same_game bool)`, both shaped as `block`, `column` and `k`
  broadcast together (`[*s]`, or `[H, *s]` for `k` of shape `[H, 1, ...]`).

  A column's episodes only grow from the oldest block (the one at `pointer`, written next) to
  the newest, so the `k`-th next block holds the same game exactly when it is newer than the row
  and carries the row's episode (a game that ended sooner left a later one there).
  """
  blocks = buffer.value.shape[0]
  newer = (buffer.pointer - block - 1) % blocks  # Rows written after this one in its column.
  after = (block + k) % blocks
  return after, (k <= newer) & (buffer.episode[after, column] == buffer.episode[block, column])


def lambda_return(buffer: ReplayBuffer, block: chex.Array, column: chex.Array, lam: float,
                  moves: int) -> chex.Array:
  """TD(lambda) value targets of the rows `(block, column)` (each `[*s]`), mover's side.

  With `q_k` the search's root value `k` moves later (from this row's mover's side: a row of
  the same mover keeps its sign, as after a checkers jump), the return is
  `sum_k (1 - lam) * lam ** (k - 1) * q_k + (the rest of the weight) * outcome` over `k = 1 ..
  moves` moves of the same game: `G_t = (1 - lam) q_{t+1} + lam G_{t+1}`, with `G = outcome`
  at the game's last row, cut after `moves` moves by putting the outcome in place of what
  follows. `lam = 1` is the outcome; the search values carry less noise than one game's result.
  """
  k = jnp.arange(1, moves + 1).reshape((moves,) + (1,) * block.ndim)  # [H, 1, ...]
  after, same_game = successor(buffer, block, column, k)  # [H, *s]
  q = buffer.root_value[after, column]
  q = jnp.where(buffer.player[after, column] == buffer.player[block, column], q, -q)
  w = jnp.where(same_game, (1.0 - lam) * lam ** (k - 1.0), 0.0)
  return jnp.sum(w * q, axis=0) + (1.0 - jnp.sum(w, axis=0)) * buffer.value[block, column]


def flat_layout(like: ReplayBuffer) -> dict:
  """What an older azjax saved for a buffer shaped like `like`: one flat ring of `N` rows with a
  `game` column (each row's slot) and a row pointer. Shapes and dtypes (a target to restore
  into); leading axes before `[T, B]` (a sweep's `[K]`) are kept."""
  lead = like.pointer.ndim

  def flat(x):
    return jax.ShapeDtypeStruct(x.shape[:lead] + (x.shape[lead] * x.shape[lead + 1],)
                                + x.shape[lead + 2:], x.dtype)

  fields = {name: flat(x) for name, x in like.items() if name != "pointer"}
  return {**fields, "game": fields["episode"], "pointer": jax.ShapeDtypeStruct(
      like.pointer.shape, like.pointer.dtype)}


def from_flat_layout(flat: dict, like: ReplayBuffer) -> ReplayBuffer:
  """The `[T, B]` buffer holding what `flat` (as `flat_layout`, restored) held: row-major, the
  flat ring's row `t * B + b` is block `t`, column `b`, and that row's slot was `b` too."""
  lead = like.pointer.ndim
  fields = {name: jnp.reshape(flat[name], like[name].shape)
            for name in like.keys() if name != "pointer"}
  return ReplayBuffer(**fields, pointer=flat["pointer"] // like.value.shape[lead + 1])
