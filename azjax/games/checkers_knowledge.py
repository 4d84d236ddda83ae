"""What a checkers player knows beyond the rules: alpha-beta's hand-written evaluation and the
concepts for probing (`Checkers.alphabeta_evaluation` and `Checkers.concepts` hand these out).
It shares the board's sizes with the rules through `checkers_board`, and imports nothing of
`checkers` itself, so the game and its knowledge form no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np

from azjax.games import base
from azjax.games.checkers_board import COLS, KING, MAN, NUM_ACTIONS, NUM_SQUARES, ROWS

if TYPE_CHECKING:
  from azjax.games.checkers import Checkers, State

# Alpha-beta's evaluation weights (a man counts 1).
KING_WEIGHT = 1.5
GUARD_WEIGHT = 0.2
ADVANCE_WEIGHT = 0.05


def evaluation(state: State) -> jax.Array:
  """Alpha-beta's evaluation from the mover's side; works batched.

  `men + KING_WEIGHT * kings` (own minus opponent) `+ GUARD_WEIGHT * guards` (own pieces on
  row 0 minus opponent pieces on row 7, their home rank) `+ ADVANCE_WEIGHT * advancement` (own
  men's rows minus the opponent men's `7 - row`).
  """
  board = state.board
  row = (jnp.arange(NUM_SQUARES) // COLS).astype(jnp.float32)
  f32 = lambda x: x.astype(jnp.float32)  # noqa: E731
  men = f32(board == MAN).sum(-1) - f32(board == -MAN).sum(-1)
  kings = f32(board == KING).sum(-1) - f32(board == -KING).sum(-1)
  guards = (f32(board > 0) * (row == 0)).sum(-1) - (f32(board < 0) * (row == 7)).sum(-1)
  advancement = (f32(board == MAN) * row).sum(-1) - (f32(board == -MAN) * (7 - row)).sum(-1)
  return men + KING_WEIGHT * kings + GUARD_WEIGHT * guards + ADVANCE_WEIGHT * advancement


_DIAGONALS = ((1, -1), (1, 1), (-1, -1), (-1, 1))  # (row, column) steps; rows + 1 = forward
_CENTRE = np.zeros((ROWS, COLS), np.bool_)
_CENTRE[2:6, 2:6] = True


def victims(grid: jax.Array, side: int) -> jax.Array:
  """`[8, 8]` bool: the pieces of `-side` that a piece of `side` could jump right now.

  `grid` is in the mover's frame; `side` +1 is the mover (men move towards higher rows), -1
  the opponent (men move towards lower rows); kings jump in all four diagonals. The landing
  square must be empty and on the board. Whose turn it is, and a pending multi-jump, are not
  considered.
  """
  attackers = grid * side > 0
  kings = grid * side == KING
  targets = grid * side < 0
  empty = grid == 0
  found = jnp.zeros(grid.shape, jnp.bool_)
  for dr, dc in _DIAGONALS:
    may_move = attackers & (kings | (dr == side))
    attacker_behind = base.shift_grid(may_move, -dr, -dc, False)
    landing_free = base.shift_grid(empty, dr, dc, False)
    found = found | (targets & attacker_behind & landing_free)
  return found


def concepts(game: Checkers) -> dict[str, base.Concept]:
  """The checkers concepts, from the mover's side (+1 / +2 own man / king, -1 / -2 the
  opponent's), for probing:

      material             own pieces - opponent pieces (kings count 1)                 (count)
      material_advantage   material > 0                                                (binary)
      king_difference      own kings - opponent kings                                   (count)
      forced_jump          the mover must capture (a jump is available or pending)     (binary)
      multi_jump_available a legal jump after which the same piece must jump again     (binary)
      pieces_en_prise      own pieces the opponent could capture if it were to move     (count)
      back_rank_guards     own pieces on the mover's home rank (they stop crowning)     (count)
      promotion_threat     a legal move of the mover crowns a man                      (binary)
      centre_control       own - opponent pieces on the 8 dark squares of the central 4x4 (count)
  """

  def grid(state):
    return jnp.asarray(state.board, jnp.int32).reshape(ROWS, COLS)

  def children(state):
    """The state after each action (vmapped `step`); only legal ones are meaningful."""
    actions = jnp.arange(NUM_ACTIONS, dtype=jnp.int32)
    return jax.vmap(game.step, in_axes=(None, 0))(state, actions)

  def material(state):
    g = grid(state)
    return jnp.sum(g > 0) - jnp.sum(g < 0)

  def multi_jump(state):
    after = children(state)
    again = (after.current_player == state.current_player) & ~after.terminated
    return jnp.any(state.legal_action_mask & again)

  def promotion(state):
    # Crowning ends the turn, so a crowned man is a king of the side that just moved: -2 in
    # the child's board (the opponent's frame).
    after = children(state)
    kings_after = jnp.sum(after.board == -KING, axis=-1)
    return jnp.any(state.legal_action_mask & (after.current_player != state.current_player)
                   & (kings_after > jnp.sum(state.board == KING)))

  def centre(state):
    g = grid(state)
    return jnp.sum((g > 0) & _CENTRE) - jnp.sum((g < 0) & _CENTRE)

  items = [
      ("material", material, False, "own pieces - opponent pieces"),
      ("material_advantage", lambda s: material(s) > 0, True, "material > 0"),
      ("king_difference", lambda s: jnp.sum(grid(s) == KING) - jnp.sum(grid(s) == -KING), False,
       "own kings - opponent kings"),
      ("forced_jump", lambda s: jnp.any(victims(grid(s), 1)) | (s.jump_square >= 0),
       True, "the mover must capture"),
      ("multi_jump_available", multi_jump, True, "a jump that must continue"),
      ("pieces_en_prise", lambda s: jnp.sum(victims(grid(s), -1)), False,
       "own pieces the opponent could take"),
      ("back_rank_guards", lambda s: jnp.sum(grid(s)[0] > 0), False,
       "own pieces on the home rank"),
      ("promotion_threat", promotion, True, "a legal move crowns a man"),
      ("centre_control", centre, False, "own - opponent pieces in the centre"),
  ]
  return {name: base.Concept.of(name, fn, binary, doc) for name, fn, binary, doc in items}
