"""English checkers (draughts) on 8x8, with the rules of OpenSpiel's `checkers`.

Men stand on the dark squares (a1 is dark). Player 0 (`o`, kings `O`) starts on ranks 1-3 and
moves first; player 1 (`x`, kings `X`) starts on ranks 6-8. Men move and capture one square
diagonally forward; kings one square in any of the four diagonals (no flying kings). Capturing
is mandatory but any capture may be chosen (no longest-capture rule). A capture that can
continue must continue with the same piece: every hop is one action and the same player stays
to move (`current_player` does not change). A man that reaches the far rank is crowned and its
turn ends, even if it could capture again. The game is drawn once 40 consecutive actions
contain no capture (every action counts, a capture resets the counter); this is checked before
the rule that the player to move with no legal move loses.

Squares are numbered row-major from the mover's home rank (the mover's frame). For player 0
this is the absolute board; for player 1 it is the absolute board rotated by 180 degrees, so
mover square `i` is absolute square `63 - i` (the rotation keeps dark squares dark). As seen by
player 0, at the start:

    8 | 56 57 58 59 60 61 62 63      . x . x . x . x
    7 | 48 49 50 51 52 53 54 55      x . x . x . x .
    6 | 40 41 42 43 44 45 46 47      . x . x . x . x
    5 | 32 33 34 35 36 37 38 39      . . . . . . . .
    4 | 24 25 26 27 28 29 30 31      . . . . . . . .
    3 | 16 17 18 19 20 21 22 23      o . o . o . o .
    2 |  8  9 10 11 12 13 14 15      . o . o . o . o
    1 |  0  1  2  3  4  5  6  7      o . o . o . o .
          a  b  c  d  e  f  g  h      a b c d e f g h

Actions are square-major in the mover's frame: `action = square * 4 + direction`, with
directions 0 = forward-left (row + 1, col - 1, square + 7), 1 = forward-right (square + 9),
2 = backward-left (square - 9) and 3 = backward-right (square - 7). Capturing is mandatory, so
in any position the legal actions are either all jumps or all simple moves, and (square,
direction) names one move: a jump over the adjacent square when captures are available, else a
one-square move. Reversing the 256 actions maps the mover's frame to the opponent's (square
`i -> 63 - i` and direction `d -> 3 - d`).

The board is stored from the mover's side (1 own man, 2 own king, -1 / -2 the opponent's, 0
empty), rotated and negated only when the turn passes. `step` packs it into three 32-bit
bitboards of the dark squares, plays the action and generates the next legal actions with
shifts and masks on those (see "Bitboards" below), and unpacks the result: no gathers or
scatters with traced indices, and only the packing and unpacking touch all 64 squares, so it
vectorises well under `vmap`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from azjax.games import base, checkers_knowledge, notation
from azjax.games.checkers_board import (  # noqa: F401 (the game's sizes, named here too)
  COLS,
  KING,
  MAN,
  NUM_ACTIONS,
  NUM_DIRECTIONS,
  NUM_SQUARES,
  ROWS,
)

# The draw rule: this many consecutive actions without a capture end the game.
MAX_ACTIONS_WITHOUT_CAPTURE = 40
MAX_HISTORY = 8  # The most positions a network may see (`Checkers(history=...)`).

# Row and column change of one step in each direction (mover's frame).
ROW_STEPS = (1, 1, -1, -1)
COL_STEPS = (-1, 1, -1, 1)

_SQUARES = np.arange(NUM_SQUARES)
_ROW, _COL = np.divmod(_SQUARES, COLS)
_DARK = (_ROW + _COL) % 2 == 0  # [64] bool; a1 = square 0 is dark
# [64] int8 start position, the same in both frames: three ranks of men on each side.
_START = np.select([_DARK & (_ROW < 3), _DARK & (_ROW >= ROWS - 3)], [MAN, -MAN], 0).astype(np.int8)


@struct.dataclass
class State:
  """One checkers position (shapes unbatched)."""

  current_player: jax.Array  # [] int32
  legal_action_mask: jax.Array  # [256] bool
  terminated: jax.Array  # [] bool
  rewards: jax.Array  # [2] float32
  step_count: jax.Array  # [] int32
  last_move: jax.Array  # [2] int32: absolute (from, to) squares of the last hop, -1 if none
  # [64] int8 in the mover's frame: 1 own man, 2 own king, -1 / -2 opponent man / king, 0 empty.
  board: jax.Array
  jump_square: jax.Array  # [] int32, mover's frame: the piece that must go on jumping, or -1
  no_capture_count: jax.Array  # [] int32: consecutive actions without a capture
  # [H - 1, 64] int8: the boards of the H - 1 positions before this one, newest first, in player
  # 0's frame (absolute), empty before the game's start; H is the game's `history` (1: none).
  previous: jax.Array

  @property
  def observation(self) -> jax.Array:
    """`[8, 8, 6 + 4 (H - 1)]` float32 in the mover's frame; works on batched states too.

    Planes: own men, own kings, opponent men, opponent kings, the square of the piece that must
    continue a multi-jump (all zero if none), and `no_capture_count / 40` everywhere; then, with
    a history of `H` positions, the same four piece planes of each earlier position (newest
    first), seen from the side of the player to move now.
    """
    batch = self.board.shape[:-1]
    board = self.board
    jump = jnp.arange(NUM_SQUARES) == jnp.asarray(self.jump_square)[..., None]
    count = jnp.broadcast_to(
        (jnp.asarray(self.no_capture_count, jnp.float32) / MAX_ACTIONS_WITHOUT_CAPTURE)[..., None],
        board.shape)
    planes = jnp.stack([board == MAN, board == KING, board == -MAN, board == -KING, jump], -1)
    planes = [planes.astype(jnp.float32), count[..., None]]
    earlier = self.previous.shape[-2]
    if earlier:
      mover = (jnp.asarray(self.current_player) == 1)[..., None, None]
      seen = jnp.where(mover, -self.previous[..., ::-1], self.previous)  # [..., H - 1, 64]
      pieces = jnp.stack([seen == MAN, seen == KING, seen == -MAN, seen == -KING], -1)
      pieces = jnp.swapaxes(pieces, -3, -2).reshape(batch + (NUM_SQUARES, 4 * earlier))
      planes.append(pieces.astype(jnp.float32))
    return jnp.concatenate(planes, axis=-1).reshape(batch + (ROWS, COLS, 6 + 4 * earlier))


def _remember(state: State) -> jax.Array:
  """`state.previous` one step on: `state.board` (in player 0's frame) in front, the oldest
  board dropped."""
  absolute = jnp.where(state.current_player == 1, -state.board[::-1], state.board)
  earlier = state.previous.shape[0]
  return jnp.concatenate([absolute[None], state.previous])[:earlier]


# -- Bitboards ----------------------------------------------------------------------------------
# Inside `step` the position is held as three uint32 bitboards over the 32 dark squares (own
# pieces, opponent pieces, kings of either side), so move generation is a few dozen scalar
# operations per game instead of passes over the 64 squares. Dark square `s` (64-square index,
# mover's frame) is bit `s >> 1` (`4 * row + col // 2`); rotating the board by 180 degrees,
# `s -> 63 - s`, reverses the 32 bits. A step in each direction moves a bit by an amount that
# depends on the parity of its row:
#
#   direction        rows 0, 2, 4, 6          rows 1, 3, 5, 7
#   0 forward-left   +3 (not from column a)   +4
#   1 forward-right  +4                       +5 (not from column h)
#   2 backward-left  -5 (not from column a)   -4
#   3 backward-right -4                       -3 (not from column h)
#
# and bits pushed past either end of the 32 fall off the board.
_U32 = np.uint32
_EVEN_ROWS = _U32(0x0F0F0F0F)
_ODD_ROWS = _U32(0xF0F0F0F0)
_EVEN_NOT_A = _U32(0x0F0F0F0F & 0xEEEEEEEE)  # even rows, not the first dark square (column a)
_ODD_NOT_H = _U32(0xF0F0F0F0 & 0x77777777)  # odd rows, not the last dark square (column h)
_BIT_OF_SQUARE = (_SQUARES >> 1).astype(np.uint32)  # [64]: bit index of each (dark) square
_WEIGHTS = np.where(_DARK, _U32(1) << _BIT_OF_SQUARE, 0).astype(np.uint32)  # [64]


def _sources(x: jax.Array, direction: int) -> jax.Array:
  """Bits whose one step in `direction` lands on a bit of `x` (and stays on the board)."""
  if direction == 0:
    return ((x >> 3) & _EVEN_NOT_A) | ((x >> 4) & _ODD_ROWS)
  if direction == 1:
    return ((x >> 4) & _EVEN_ROWS) | ((x >> 5) & _ODD_NOT_H)
  if direction == 2:
    return ((x << 5) & _EVEN_NOT_A) | ((x << 4) & _ODD_ROWS)
  return ((x << 4) & _EVEN_ROWS) | ((x << 3) & _ODD_NOT_H)


def _reverse_bits(x: jax.Array) -> jax.Array:
  """Reverses the 32 bits of `x`: the board seen from the other side."""
  x = ((x >> 1) & _U32(0x55555555)) | ((x & _U32(0x55555555)) << 1)
  x = ((x >> 2) & _U32(0x33333333)) | ((x & _U32(0x33333333)) << 2)
  x = ((x >> 4) & _U32(0x0F0F0F0F)) | ((x & _U32(0x0F0F0F0F)) << 4)
  x = ((x >> 8) & _U32(0x00FF00FF)) | ((x & _U32(0x00FF00FF)) << 8)
  return (x >> 16) | (x << 16)


def _pack(board: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
  """`[..., 64]` int8 board -> uint32 bitboards (own pieces, opponent pieces, all kings)."""
  def bits(where):
    return jnp.sum(jnp.where(where, _WEIGHTS, _U32(0)), axis=-1, dtype=jnp.uint32)
  return bits(board > 0), bits(board < 0), bits(jnp.abs(board) == KING)


def _unpack(own: jax.Array, opp: jax.Array, kings: jax.Array) -> jax.Array:
  """Inverse of `_pack`: `[..., 64]` int8 board."""
  def bit(x):
    return ((x[..., None] >> _BIT_OF_SQUARE) & 1).astype(jnp.int8) * _DARK.astype(np.int8)
  piece = 1 + bit(kings)
  return bit(own) * piece - bit(opp) * piece


def _jump_sets(opp: jax.Array, empty: jax.Array, movers: jax.Array,
               king_movers: jax.Array) -> list[jax.Array]:
  """Per direction, the bits of `movers` (men and kings; kings only backwards) that can jump."""
  return [(movers if d < 2 else king_movers) & _sources(opp & _sources(empty, d), d)
          for d in range(NUM_DIRECTIONS)]


def _legal_sets(own, opp, kings, movers) -> list[jax.Array]:
  """Per direction, the bits of the pieces with a legal action: jumps if any, else steps.

  `movers` is `own`, or the one piece that must continue a multi-jump (which has a jump).
  """
  empty = ~(own | opp)
  own_kings = own & kings
  jumps = _jump_sets(opp, empty, movers, movers & kings)
  steps = [(own if d < 2 else own_kings) & _sources(empty, d) for d in range(NUM_DIRECTIONS)]
  any_jump = (jumps[0] | jumps[1] | jumps[2] | jumps[3]) != 0
  return [jnp.where(any_jump, j, s) for j, s in zip(jumps, steps)]


def _mask(sets: list[jax.Array]) -> jax.Array:
  """Per-direction bit sets -> `[..., 256]` bool legal action mask (square-major)."""
  sets = jnp.stack(sets, axis=-1)[..., None, :]  # [..., 1, 4]
  mask = ((sets >> _BIT_OF_SQUARE[:, None]) & 1).astype(jnp.bool_) & _DARK[:, None]
  return mask.reshape(mask.shape[:-2] + (NUM_ACTIONS,))


def _movers(own: jax.Array, jump_square: jax.Array) -> jax.Array:
  """The pieces allowed to move: all own pieces, or the one continuing a multi-jump."""
  return jnp.where(jump_square >= 0, _U32(1) << (jump_square >> 1).astype(jnp.uint32), own)


@jax.jit
def _has_capture(board: jax.Array, jump_square: jax.Array) -> jax.Array:
  """Whether the legal actions are jumps: `board` `[64]` and `jump_square` in the mover's frame."""
  own, opp, kings = _pack(board)
  movers = _movers(own, jump_square)
  jumps = _jump_sets(opp, ~(own | opp), movers, movers & kings)
  return (jumps[0] | jumps[1] | jumps[2] | jumps[3]) != 0


class Checkers(base.Game):
  """English checkers, 8x8 (OpenSpiel rules). See the module docstring for frames and actions."""

  name = "checkers"
  rows = ROWS
  cols = COLS
  num_actions = NUM_ACTIONS
  action_planes = NUM_DIRECTIONS
  options_spec = (base.Option(
      "history", int, "positions the network sees, the current one and those before it (the "
      "source project's 5)", low=1, high=MAX_HISTORY),)
  # A true upper bound. A game has at most 23 captures (the side that loses its 12th piece has
  # no move left, so the other side lost at most 11), each capture is one action, and a run of
  # actions without a capture is at most 39 long (the 40th ends the game in a draw). With k
  # captures a game lasts at most 40k + 40 actions when it ends in a draw (k <= 22) and 40k
  # when it ends at its 23rd capture: at most 920 either way. (OpenSpiel reports an arbitrary
  # 1000 and does not enforce it.)
  max_game_length = 920
  piece_symbols = {0: ".", 1: "o", 2: "O", 3: "x", 4: "X"}

  # -- What a game says about itself (see `base.Game`) -------------------------------------------
  side_names = ("red", "black")
  example_move = "c3d4"
  rules_text = """\
Checkers (English draughts, 8x8)
  Red starts on ranks 1-3 and moves first; black starts on ranks 6-8. Pieces stand on the
  dark squares (a1 is dark) and move diagonally.
  A man moves one square diagonally forward onto an empty square. A king (a man that reached
  the far rank; O or X as text, crowned on the web page) moves one square diagonally any way.
  Capturing is COMPULSORY: jump diagonally over an adjacent enemy piece onto the empty square
  beyond it, and remove it. If the same piece can jump again it must go on jumping; you may
  choose any capture, not necessarily the longest. A man that is crowned stops there.
  You win when your opponent has no legal move (no pieces, or all blocked). The game is
  drawn after 40 moves (hops count) in a row without a capture.
  Notation: c3d4 for a step; c3e5 for a jump. A double jump can be typed one hop at a time
  (c3e5, then e5g7) or as the whole path c3e5g7."""
  svg_style = base.SvgStyle("checkered", light="#eeeed2", dark="#769656",
                            pieces=("#c62828", "#212121"), outlines=("#5d0f0f", "#000000"))
  no_move_reason = "a capture is compulsory"

  def openspiel_game(self) -> tuple[str, dict]:
    return "checkers", {}  # The same square names and orientation; one action per hop.

  def alphabeta_evaluation(self, state: State) -> jax.Array:
    return checkers_knowledge.evaluation(state)

  def concepts(self) -> dict[str, base.Concept]:
    return checkers_knowledge.concepts(self)

  def move_path(self, text: str) -> list[str]:
    """A multi-jump typed whole, "c3e5g7", as its hops ["c3e5", "e5g7"]; else [text]."""
    try:
      squares = notation.parse_squares(text, ROWS, COLS, self.name)
    except ValueError:
      return [text]  # Not squares: `move_to_action` says why.
    names = [notation.square_name(s, COLS) for s in squares]
    if len(names) <= 2:
      return [text]
    return [a + b for a, b in zip(names, names[1:])]

  def __init__(self, history: int = 1):
    """`history`: positions the network sees, this one and the `history - 1` before it (the
    checkers source project fed its network 5); 1 (the default) gives OpenSpiel's input."""
    self.option("history").check(self.name, history)
    self.history = int(history)
    self.observation_shape = (ROWS, COLS, 6 + 4 * (self.history - 1))
    self._start = jax.tree.map(np.asarray, self._state(_START, 0, -1, 0))

  def options(self) -> dict:
    return {"history": self.history}

  def describe(self) -> str:
    if self.history == 1:
      return super().describe()
    return f"{super().describe()} ({self.history} positions of history)"

  # -- Pure array functions --------------------------------------------------------------------
  def _state(self, board, player, jump_square, no_capture_count) -> State:
    """A fresh state (no last move, zero rewards) whose mask and flags follow from the inputs."""
    board = jnp.asarray(board, jnp.int8)
    jump_square = jnp.asarray(jump_square, jnp.int32)
    no_capture_count = jnp.asarray(no_capture_count, jnp.int32)
    own, opp, kings = _pack(board)
    mask = _mask(_legal_sets(own, opp, kings, _movers(own, jump_square)))
    terminated = (no_capture_count >= MAX_ACTIONS_WITHOUT_CAPTURE) | ~mask.any()
    return State(
        current_player=jnp.asarray(player, jnp.int32),
        legal_action_mask=mask & ~terminated,
        terminated=terminated,
        rewards=jnp.zeros(2, jnp.float32),
        step_count=jnp.int32(0),
        last_move=jnp.full(2, -1, jnp.int32),
        board=board,
        jump_square=jump_square,
        no_capture_count=no_capture_count,
        previous=jnp.zeros((self.history - 1, NUM_SQUARES), jnp.int8),
    )

  def init(self, key: jax.Array) -> State:
    del key  # The start position is fixed.
    # Constants, so that a reset inside a jitted loop costs nothing but the copy.
    return jax.tree.map(jnp.asarray, self._start)

  def _step(self, state: State, action: jax.Array) -> State:
    """Plays one action (a step or one hop). See the module docstring for the encoding.

    Legality is decided by the rules from the board and `jump_square` (which is what
    `legal_action_mask` holds for every live state), on bitboards; see `_sources`.
    """
    action = jnp.asarray(action, jnp.int32)
    player = state.current_player
    own, opp, kings = _pack(state.board)
    frm, direction = action >> 2, action & 3
    # The square offset of one step (7, 9, -9, -7): +-8 for the row, +-1 for the column.
    delta = 8 - 16 * (direction >> 1) + 2 * (direction & 1) - 1
    dark = (0 <= frm) & (frm < NUM_SQUARES) & (((frm >> 3) ^ frm) & 1 == 0)
    from_bit = jnp.where(dark, _U32(1) << (frm >> 1).astype(jnp.uint32), _U32(0))
    legal_sets = _legal_sets(own, opp, kings, _movers(own, state.jump_square))
    legal_set = jnp.select([direction == d for d in range(3)], legal_sets[:3], legal_sets[3])
    legal = (legal_set & from_bit) != 0
    # A legal action is a jump exactly when it passes over an opponent's piece.
    mid = frm + delta
    mid_bit = _U32(1) << (mid >> 1).astype(jnp.uint32)
    jumped = legal & ((opp & mid_bit) != 0)
    to = jnp.where(jumped, mid + delta, mid)
    to_bit = jnp.where(legal, _U32(1) << (to >> 1).astype(jnp.uint32), _U32(0))
    captured = jnp.where(jumped, mid_bit, _U32(0))
    was_king = (kings & from_bit) != 0
    crowned = legal & ~was_king & (to >= NUM_SQUARES - COLS)
    # Move the piece (an illegal action has from_bit = to_bit = captured = 0: nothing moves).
    from_bit = jnp.where(legal, from_bit, _U32(0))
    own = (own & ~from_bit) | to_bit
    opp = opp & ~captured
    kings = (kings & ~(from_bit | captured)) | jnp.where(was_king | crowned, to_bit, _U32(0))
    # The same piece goes on jumping if it can (a man just crowned cannot).
    continuing = _jump_sets(opp, ~(own | opp), to_bit, to_bit & kings)
    again = jumped & ~crowned & ((continuing[0] | continuing[1] | continuing[2]
                                  | continuing[3]) != 0)
    # Otherwise the turn passes: the next mover sees the board rotated, with the sides swapped.
    own, opp = (jnp.where(again, own, _reverse_bits(opp)),
                jnp.where(again, opp, _reverse_bits(own)))
    kings = jnp.where(again, kings, _reverse_bits(kings))
    turned_sets = _legal_sets(own, opp, kings, own)
    next_sets = [jnp.where(again, c, t) for c, t in zip(continuing, turned_sets)]
    has_move = (next_sets[0] | next_sets[1] | next_sets[2] | next_sets[3]) != 0
    count = jnp.where(jumped, 0, state.no_capture_count + 1)
    draw = count >= MAX_ACTIONS_WITHOUT_CAPTURE
    terminated = ~legal | draw | ~has_move
    # The mover's reward: -1 for an illegal action, 0 for a draw, +1 if the opponent is stuck.
    mover_reward = jnp.where(legal, jnp.where(draw, 0.0, 1.0), -1.0)
    rewards = jnp.where(terminated, base.zero_sum_rewards(player, mover_reward),
                        jnp.zeros(2, jnp.float32))
    last_move = jnp.stack([frm, to])
    last_move = jnp.where(player == 1, NUM_SQUARES - 1 - last_move, last_move)
    return State(
        current_player=jnp.where(again, player, 1 - player),
        legal_action_mask=_mask(next_sets) & ~terminated,
        terminated=terminated,
        rewards=rewards,
        step_count=state.step_count + 1,
        last_move=jnp.where(legal, last_move, -1),
        board=_unpack(own, opp, kings),
        jump_square=jnp.where(again, to, -1),
        no_capture_count=count,
        previous=_remember(state),
    )

  # -- Python side ---------------------------------------------------------------------------------
  def board_array(self, state: State) -> np.ndarray:
    """`[8, 8]` int, row 0 = rank 1: 0 empty, 1 / 2 player 0's man / king, 3 / 4 player 1's."""
    board = np.asarray(state.board, dtype=np.int64)
    if int(state.current_player) == 1:
      board = -board[::-1]  # Back to player 0's frame.
    board = board.reshape(ROWS, COLS)
    return np.select([board == MAN, board == KING, board == -MAN, board == -KING], [1, 2, 3, 4], 0)

  def _captures_available(self, state: State) -> bool:
    """Whether the legal actions of `state` are jumps (a pending multi-jump, or any capture)."""
    return bool(_has_capture(jnp.asarray(state.board, jnp.int8),
                             jnp.asarray(state.jump_square, jnp.int32)))

  def _target(self, state: State, action: int) -> tuple[int, int]:
    """Mover-frame (from, to) squares of `action`; raises ValueError if it leaves the board."""
    action = int(action)
    if not 0 <= action < NUM_ACTIONS:
      raise ValueError(f"checkers: action {action} is out of range [0, {NUM_ACTIONS})")
    frm, direction = divmod(action, NUM_DIRECTIONS)
    hops = 2 if self._captures_available(state) else 1
    row, col = divmod(frm, COLS)
    row_to = row + hops * ROW_STEPS[direction]
    col_to = col + hops * COL_STEPS[direction]
    if not (0 <= row_to < ROWS and 0 <= col_to < COLS):
      raise ValueError(f"checkers: action {action} leaves the board")
    return frm, row_to * COLS + col_to

  def action_to_move(self, state: State, action: int) -> str:
    """"c3d4" for a move, "c3e5" for a hop: absolute squares as seen by player 0."""
    player = int(state.current_player)
    squares = (notation.to_absolute_square(s, player, NUM_SQUARES)
               for s in self._target(state, action))
    return "".join(notation.square_name(s, COLS) for s in squares)

  def _parse_move(self, state: State, move: str) -> int:
    squares = notation.parse_squares(move, ROWS, COLS, self.name)
    if len(squares) != 2:
      raise ValueError(
          f"checkers: malformed move {move!r}: name exactly two squares, like 'c3d4' or the hop "
          f"'c3e5' (play a multi-jump one hop at a time, or use path_to_actions)")
    player = int(state.current_player)
    frm, to = (notation.to_absolute_square(s, player, NUM_SQUARES) for s in squares)
    (row, col), (row_to, col_to) = divmod(frm, COLS), divmod(to, COLS)
    rows, cols = row_to - row, col_to - col
    if abs(rows) != abs(cols) or abs(rows) not in (1, 2):
      raise ValueError(f"checkers: {move!r} is not a diagonal step or jump")
    jump = abs(rows) == 2
    # An action id means a jump exactly when captures are available; a step and a jump with the
    # same direction share it, so the kind must match the position.
    if jump != self._captures_available(state):
      why = ("a capture is mandatory" if not jump else "there is no capture to make")
      raise ValueError(f"checkers: illegal move {move!r}: {why}")
    direction = (0 if rows > 0 else 2) + (1 if cols > 0 else 0)
    return frm * NUM_DIRECTIONS + direction

  def path_to_actions(self, state: State, path: str, *, complete: bool = True) -> list[int]:
    """Actions of a whole turn written as a path of squares, e.g. "c3e5g7" (two hops).

    Each consecutive pair of squares is one action (a step or a hop); see `base.Game`'s
    `path_to_actions` for `complete` and the errors. A path names at least two squares.
    """
    if len(notation.parse_squares(path, ROWS, COLS, self.name)) < 2:
      raise ValueError(f"checkers: path {path!r} must name at least two squares, like 'c3e5g7'")
    return super().path_to_actions(state, path, complete=complete)

  def from_ascii(self, text: str, to_move: int = 0, jump_square: int | str | None = None,
                 no_capture_count: int = 0) -> State:
    """Builds a position from a drawing, rank 8 at the top down to rank 1.

    Each rank is a line of `o` / `O` (player 0's men / kings), `x` / `X` (player 1's) and `.`
    (empty); spaces, `|`, rank numbers at either end of a line and a line of file letters are
    ignored:

        8 . . . . . . . .
        7 . . . . . . . .
        6 . . . . . . . .
        5 . . . . . . . .
        4 . . . x . . . .
        3 . . o . . . . .
        2 . . . . . . . .
        1 . . . . . . . .
          a b c d e f g h

    Args:
      text: the drawing.
      to_move: the player to move, 0 or 1.
      jump_square: the square (a name like "e5", or an absolute index) of `to_move`'s piece that
        must continue a multi-jump, or None.
      no_capture_count: consecutive actions without a capture so far (40 or more is a draw).
    Returns:
      The state, with `step_count` 0, no last move and zero rewards. A position whose mover has
      no legal move, or with `no_capture_count >= 40`, comes back terminated with no legal
      action (the transition that decided it is not part of this state).
    Raises:
      ValueError: for a malformed drawing, a piece on a light square, a man on its crowning
        rank, or a `jump_square` that is not a piece of `to_move` able to jump.
    """
    if to_move not in (0, 1):
      raise ValueError(f"checkers: to_move must be 0 or 1, got {to_move!r}")
    if int(no_capture_count) < 0:
      raise ValueError(f"checkers: no_capture_count must be >= 0, got {no_capture_count!r}")
    codes = {".": 0, "o": MAN, "O": KING, "x": -MAN, "X": -KING}
    board = notation.parse_drawing(text, "checkers", codes, ROWS, COLS, case_sensitive=True,
                                   symbols="'o', 'O', 'x', 'X' and '.'")
    rows, cols = np.nonzero(board)
    for row, col in zip(rows, cols):
      name = notation.square_name(row * COLS + col, COLS)
      if (row + col) % 2:
        raise ValueError(f"checkers: piece on the light square {name}")
      if (board[row, col] == MAN and row == ROWS - 1) or (board[row, col] == -MAN and row == 0):
        raise ValueError(f"checkers: a man on {name} stands on its crowning rank")
    board = board.reshape(-1)
    if to_move == 1:
      board = -board[::-1]
    jump = -1
    if jump_square is not None:
      if isinstance(jump_square, str):
        squares = notation.parse_squares(jump_square, ROWS, COLS, self.name)
        absolute = squares[0] if len(squares) == 1 else -1
      else:
        absolute = int(jump_square)
      if not 0 <= absolute < NUM_SQUARES:
        raise ValueError(f"checkers: jump_square {jump_square!r} is not one square of the board")
      jump = notation.to_absolute_square(absolute, to_move, NUM_SQUARES)
      if board[jump] <= 0 or not bool(_has_capture(jnp.asarray(board), jnp.int32(jump))):
        raise ValueError(
            f"checkers: jump_square {jump_square!r} is not a piece of player {to_move} that "
            f"can jump")
    return self._state(board, to_move, jump, int(no_capture_count))
