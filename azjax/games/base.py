"""Contracts shared by every game: the state fields, the `Game` interface, notation helpers.

Every game module defines a frozen `State` pytree (a `flax.struct.dataclass`) holding at least
the fields of `StateLike` below, and a `Game` subclass whose `init` and `step` are pure functions
of one unbatched state. Batching happens outside, with `jax.vmap`, at a few named places
(self-play, the arena, benchmarks).

Conventions (every game; tests in `tests/test_api.py` check them):

* Player 0 moves first and sits at the bottom of the board (ranks 1, 2, ...).
* Boards, observations and actions are stored **from the point of view of the player to move**.
  For the board games with forward direction (Breakthrough, checkers) player 1's view is the
  absolute board rotated by 180 degrees, as if the two players sat across the table; the square
  index `i` (row-major, row 0 = the mover's home rank) maps to absolute square
  `rows * cols - 1 - i` for player 1. Connect Four and tic-tac-toe have no forward direction,
  so only the piece planes swap.
* Actions are square-major: `action = square * K + direction`, so a policy reshapes to
  `[rows, cols, K]` (Connect Four: `action = column`).
* `rewards[p]` is the reward of the last transition to player `p`; it is non-zero only on the
  transition that ends the game, and `rewards[0] + rewards[1] == 0` always.
* Stepping a terminated state is a **no-op**: the state comes back unchanged except that
  `rewards` is zeroed (so summing rewards over a trajectory never double counts).
* Playing an illegal action in a live state is a **loss for the mover**: the game ends with
  reward -1 for the mover and +1 for the opponent, and the board is left as it was. This is
  pgx's convention; it keeps every game in a batch well defined and makes an agent bug show up
  in its results instead of silently changing the rules.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol, Sequence

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array
PRNGKey = jax.Array

FILES = "abcdefghijklmnopqrstuvwxyz"


class StateLike(Protocol):
  """The fields every game state carries (shapes for one unbatched state).

  `A` is the game's number of actions, `R, C` its rows and columns, `P` its observation planes.
  """

  current_player: Array  # [] int32, 0 or 1: the player to move
  legal_action_mask: Array  # [A] bool; all False once terminated
  terminated: Array  # [] bool
  rewards: Array  # [2] float32: reward of the last transition to player 0 and 1
  step_count: Array  # [] int32: number of actions played so far
  last_move: Array  # [2] int32: absolute (from, to) squares of the last action, -1 if none

  @property
  def observation(self) -> Array:  # [R, C, P] float32, from the mover's side
    ...


class Game:
  """Interface of a two-player, zero-sum, perfect-information game.

  Subclasses set the attributes below and implement `init`, `step`, `_observe`,
  `action_to_move`, `_parse_move` and `board_array`. `init` and `step` must be pure,
  unbatched, jit- and vmap-able, with no Python control flow on traced values.
  """

  name: str
  rows: int
  cols: int
  num_actions: int
  action_planes: int  # K in `action = square * K + direction`
  observation_shape: tuple[int, int, int]
  num_players: int = 2
  # The longest a game can last, in actions (used to size buffers and loops).
  max_game_length: int
  # Glyphs used by `azjax.render` for the absolute board codes of `board_array`.
  piece_symbols: dict[int, str]

  # -- Pure array functions --------------------------------------------------------------------
  def init(self, key: PRNGKey) -> Any:
    """Returns the start position. `key` is accepted for API uniformity (rules are fixed)."""
    raise NotImplementedError

  def step(self, state: Any, action: Array) -> Any:
    """Plays `action` (int32 scalar) for `state.current_player`. See module docstring."""
    raise NotImplementedError

  def observe(self, state: Any) -> Array:
    """`[R, C, P]` float32 observation from the mover's side (same as `state.observation`)."""
    return state.observation

  def symmetries(self) -> tuple["Symmetry", ...]:
    """The board's symmetries other than the identity (default: none, as in checkers).

    Training can augment its samples with them (`azjax.augment`): a symmetry must map every
    position to one with the same value, and each legal move to a legal move of equal value.
    """
    return ()

  # -- Python-side helpers (not jitted) --------------------------------------------------------
  def board_array(self, state: Any) -> np.ndarray:
    """`[rows, cols]` int array of piece codes in absolute orientation (row 0 = rank 1)."""
    raise NotImplementedError

  def action_to_move(self, state: Any, action: int) -> str:
    """Notation of `action` for the player to move in `state`, e.g. "a2a3"."""
    raise NotImplementedError

  def _parse_move(self, state: Any, move: str) -> int:
    """Parses a well-formed move string into an action id, or raises ValueError.

    Needs not check legality; `move_to_action` does.
    """
    raise NotImplementedError

  def legal_actions(self, state: Any) -> list[int]:
    return [int(a) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]

  def legal_moves(self, state: Any) -> list[str]:
    return [self.action_to_move(state, a) for a in self.legal_actions(state)]

  def move_to_action(self, state: Any, move: str) -> int:
    """Action id of `move` in `state`; raises ValueError naming the problem and the legal moves.

    Never changes `state` (states are immutable values).
    """
    if not isinstance(move, str):
      raise ValueError(f"{self.name}: a move must be a string, got {type(move).__name__}")
    move = move.strip().lower()
    if bool(state.terminated):
      raise ValueError(f"{self.name}: the game is over; no move can be played")
    try:
      action = self._parse_move(state, move)
    except ValueError as err:
      raise ValueError(f"{err}; legal moves: {' '.join(self.legal_moves(state))}") from None
    if not bool(np.asarray(state.legal_action_mask)[action]):
      raise ValueError(
          f"{self.name}: illegal move {move!r}; legal moves: {' '.join(self.legal_moves(state))}")
    return action

  def __repr__(self) -> str:
    return f"{type(self).__name__}(name={self.name!r}, rows={self.rows}, cols={self.cols})"


class Symmetry(NamedTuple):
  """A board symmetry as two permutations (gather indices), applied by `azjax.augment`.

  The transformed position's observation at cell `i` is the original's at `cells[i]`
  (cells row-major over `[R, C]`, every plane alike), and its policy (and legal mask) at
  action `a` is the original's at `actions[a]`.
  """

  cells: np.ndarray  # [R * C] int32
  actions: np.ndarray  # [A] int32


def mirror_cells(rows: int, cols: int) -> np.ndarray:
  """`[rows * cols]` gather indices of the left-right mirror (file a <-> the last file)."""
  grid = np.arange(rows * cols).reshape(rows, cols)
  return grid[:, ::-1].reshape(-1).astype(np.int32)


# -- Square notation -------------------------------------------------------------------------------

_SQUARE_RE = re.compile(r"([a-z])(\d+)")


def square_name(square: int, cols: int) -> str:
  """Absolute square index (row-major, row 0 = rank 1) -> "a1"."""
  row, col = divmod(int(square), cols)
  return f"{FILES[col]}{row + 1}"


def parse_squares(text: str, rows: int, cols: int, game: str) -> list[int]:
  """Splits a string of concatenated squares ("a2a3", "c3e5g7") into absolute square indices.

  Raises:
    ValueError: when the string is not squares, or a square is off the board.
  """
  text = text.strip().lower()
  parts = _SQUARE_RE.findall(text)
  if not parts or "".join(f + r for f, r in parts) != text:
    raise ValueError(f"{game}: malformed move {text!r}: expected squares like 'a2a3'")
  squares = []
  for file, rank in parts:
    col, row = FILES.index(file), int(rank) - 1
    if not (0 <= col < cols and 0 <= row < rows):
      raise ValueError(
          f"{game}: square {file}{rank} is off the {rows}x{cols} board "
          f"(files a-{FILES[cols - 1]}, ranks 1-{rows})")
    squares.append(row * cols + col)
  return squares


def to_absolute_square(square: int, player: int, num_squares: int) -> int:
  """Maps a square index in the mover's frame to the absolute frame (rotation by 180 degrees).

  The map is its own inverse, so it also maps absolute squares to the mover's frame.
  """
  return int(square) if int(player) == 0 else num_squares - 1 - int(square)


# -- Batched helpers used by self-play, the arena, tests and benchmarks -----------------------------


def _mix32(x: Array) -> Array:
  """MurmurHash3's 32-bit finaliser: a bijection on uint32 with full avalanche."""
  x = x ^ (x >> 16)
  x = x * jnp.uint32(0x85EBCA6B)
  x = x ^ (x >> 13)
  x = x * jnp.uint32(0xC2B2AE35)
  return x ^ (x >> 16)


def pick_legal_action(bits: Array, legal_action_mask: Array) -> Array:
  """A uniformly random legal action of one state, given one random uint32 `bits`.

  Each action gets the score `hash(bits, action)`; the legal action with the highest score is
  chosen. The hash's low bits are replaced by the action index, so the choice is a single `max`
  reduction (no `cumsum`, no `argmax`, one random number per state): on a CPU this is several
  times cheaper than `jax.random.categorical`, which matters when the game step itself costs a
  few hundred operations. Ties in the remaining high bits (probability about `A / 2**24`) go to
  the higher index. Returns 0 when no action is legal.

  Args:
    bits: `[]` uint32 random bits.
    legal_action_mask: `[A]` bool.
  Returns:
    `[]` int32 action.
  """
  num_actions = legal_action_mask.shape[-1]
  index_bits = max(1, (num_actions - 1).bit_length())
  index = jnp.arange(num_actions, dtype=jnp.uint32)
  score = (_mix32(bits ^ (index * jnp.uint32(0x9E3779B9))) << index_bits) | index
  best = jnp.max(jnp.where(legal_action_mask, score, jnp.uint32(0)))
  return (best & jnp.uint32((1 << index_bits) - 1)).astype(jnp.int32)


def uniform_legal_action(key: PRNGKey, legal_action_mask: Array) -> Array:
  """Samples uniformly among the legal actions of one state (`[A]` mask -> `[]` int32)."""
  return pick_legal_action(jax.random.bits(key, (), jnp.uint32), legal_action_mask)


def uniform_legal_actions(key: PRNGKey, legal_action_mask: Array) -> Array:
  """Batched `uniform_legal_action`: `[B, A]` masks -> `[B]` int32, one key for the batch."""
  bits = jax.random.bits(key, legal_action_mask.shape[:1], jnp.uint32)
  return jax.vmap(pick_legal_action)(bits, legal_action_mask)


def step_autoreset(game: Game, state: Any, action: Array, key: PRNGKey) -> Any:
  """Steps one state; a state that was already terminated is replaced by a fresh game.

  The terminal state itself is returned once (so its rewards can be read) and reset on the
  following call.
  """
  stepped = game.step(state, action)
  fresh = game.init(key)
  return jax.tree.map(lambda f, s: jnp.where(state.terminated, f, s), fresh, stepped)


def start_fields(legal_action_mask: Array) -> dict[str, Array]:
  """The `StateLike` fields of a start position, player 0 to move (a game adds its board)."""
  return dict(
      current_player=jnp.int32(0),
      legal_action_mask=jnp.asarray(legal_action_mask, dtype=jnp.bool_),
      terminated=jnp.bool_(False),
      rewards=jnp.zeros(2, dtype=jnp.float32),
      step_count=jnp.int32(0),
      last_move=jnp.full(2, -1, dtype=jnp.int32),
  )


def piece_planes(board: Array, rows: int, cols: int) -> Array:
  """`[..., rows, cols, 2]` float32 planes (mover's pieces, opponent's) of a flat +1/-1 board.

  Works on batched boards (`[..., rows * cols]`): leading dimensions are kept.
  """
  board = board.reshape(board.shape[:-1] + (rows, cols))
  return jnp.stack([board == 1, board == -1], axis=-1).astype(jnp.float32)


def zero_sum_rewards(player: Array, mover_reward: Array) -> Array:
  """`[2]` float32 rewards: `mover_reward` to `player`, its negation to the other player.

  Written with `where` rather than a scatter, which vectorises better under `vmap`.
  """
  mover_reward = jnp.asarray(mover_reward, jnp.float32)
  return jnp.where(jnp.arange(2) == player, mover_reward, -mover_reward)


def tree_select(pred: Array, on_true: Any, on_false: Any) -> Any:
  """`jnp.where` over two pytrees of identical structure (`pred` is a scalar bool)."""
  return jax.tree.map(lambda t, f: jnp.where(pred, t, f), on_true, on_false)


def stack_states(states: Sequence[Any]) -> Any:
  """Stacks unbatched states into one batched state `[B, ...]`."""
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def unstack_state(states: Any, index: int) -> Any:
  """Takes game `index` out of a batched state."""
  return jax.tree.map(lambda x: x[index], states)
