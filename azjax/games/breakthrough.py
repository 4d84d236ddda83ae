"""Breakthrough on a `rows x cols` board, with the rules of OpenSpiel's `breakthrough`.

Player 0 ("white", `w`) starts on ranks 1-2 and moves up; player 1 ("black", `b`) starts on the
top two ranks and moves down; on boards with fewer than 6 rows each side has one rank. White
moves first. A piece moves one square straight or diagonally forward: straight only to an empty
square, diagonally to an empty square or capturing an enemy piece. Captures are not mandatory.
A player wins by reaching the opponent's home rank or by capturing every enemy piece. With at
least 2 columns the player to move always has a legal move (the most advanced piece can go
straight, or else diagonally), so there are no draws and no stalemates.

Squares are numbered row-major from the mover's home rank (the mover's frame). For white this
is the absolute board; for black it is the absolute board rotated by 180 degrees, so mover
square `i` is absolute square `rows * cols - 1 - i`. On the 5x5 board, as seen by white:

    5 | 20 21 22 23 24      black's square i is white's square 24 - i
    4 | 15 16 17 18 19
    3 | 10 11 12 13 14
    2 |  5  6  7  8  9
    1 |  0  1  2  3  4
         a  b  c  d  e

Actions are square-major in the mover's frame: `action = square * 3 + direction`, direction
0 = forward-left (column - 1), 1 = straight forward, 2 = forward-right (column + 1), forward
being row + 1. The target square is `square + cols + direction - 1`.

The board is stored from the mover's side (+1 the mover's pieces, -1 the opponent's, 0 empty),
reversed and negated after every move.

Speed notes (`_step` is the inner loop of self-play and of every benchmark):

* The legal mask is computed with whole-board shifted comparisons on the flat board (no loops,
  no indexing with traced values).
* The move itself is applied with one-hot `where`s on accelerators, and with a one-element
  gather and scatter on CPU (`jax.lax.platform_dependent`): XLA:CPU fuses a one-hot update into
  every element of the legal-mask computation that reads the new board and recomputes it
  there, which made `step` about 5x slower; a scatter materialises the new board once. Both
  paths give identical results (the tests check).
* Whether the game goes on is written as one reduction over the board, so XLA computes it once
  per game rather than once per element of the `[A]` mask.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from azjax.games import base, notation

NUM_DIRECTIONS = 3  # forward-left, forward, forward-right
PLANES = {"mover": 2, "thesis": 3, "attacks": 6}  # each observation encoding's planes
OBSERVATIONS = tuple(PLANES)


@struct.dataclass
class State:
  """One Breakthrough position (shapes unbatched; `N = rows * cols`, `A = 3 * N`)."""

  current_player: jax.Array  # [] int32
  legal_action_mask: jax.Array  # [A] bool
  terminated: jax.Array  # [] bool
  rewards: jax.Array  # [2] float32
  step_count: jax.Array  # [] int32
  last_move: jax.Array  # [2] int32: absolute (from, to) squares, -1 if none or illegal
  board: jax.Array  # [N] int8 in the mover's frame: +1 mover's piece, -1 opponent's, 0 empty
  # Static (not traced): the board's columns and the observation encoding, so the
  # `observation` property can be computed from the state alone.
  cols: int = struct.field(pytree_node=False)
  encoding: str = struct.field(pytree_node=False)

  @property
  def observation(self) -> jax.Array:
    """Float32 planes; works on batched states too (leading dims of `board`).

    "mover": `[rows, cols, 2]` (mover's pieces, opponent's pieces) in the mover's frame.
    "thesis": `[rows, cols, 3]` (white pieces, black pieces, ones if white is to move) in
    absolute orientation (row 0 = rank 1).
    "attacks": `[rows, cols, 6]`, the "mover" planes and then `_attack_planes`.
    """
    batch = self.board.shape[:-1]
    grid = self.board.reshape(batch + (-1, self.cols))
    if self.encoding == "mover":
      return jnp.stack([grid == 1, grid == -1], axis=-1).astype(jnp.float32)
    if self.encoding == "attacks":
      return _attack_planes(grid)
    # Back to white's frame: black's board is rotated by 180 degrees and negated.
    black = (jnp.asarray(self.current_player) == 1)[..., None, None]
    absolute = jnp.where(black, -grid[..., ::-1, ::-1], grid)
    white_to_move = jnp.broadcast_to(~black, absolute.shape)
    return jnp.stack([absolute == 1, absolute == -1, white_to_move], axis=-1).astype(jnp.float32)


def _attack_planes(grid: jax.Array) -> jax.Array:
  """`[..., rows, cols]` board in the mover's frame -> `[..., rows, cols, 6]` float32 planes.

  The mover's pieces, the opponent's, then the squares the mover attacks at least once and
  twice, and the squares the opponent attacks at least once and twice. A piece attacks the two
  squares diagonally ahead of it (row + 1 for the mover, row - 1 for the opponent). Each plane is
  a sum of shifted piece planes: an MLP could learn them, but only square by square from
  examples, and Breakthrough is decided by which pieces are attacked and defended (an exchange
  on a square goes to the side with more attackers).
  """
  mine = (grid == 1).astype(jnp.float32)
  theirs = (grid == -1).astype(jnp.float32)
  mine_attack = _attackers_moving_up(mine)
  their_attack = _attackers_moving_up(theirs[..., ::-1, :])[..., ::-1, :]  # they move down
  return jnp.stack([mine, theirs, mine_attack >= 1, mine_attack >= 2, their_attack >= 1,
                    their_attack >= 2], axis=-1).astype(jnp.float32)


def _attackers_moving_up(pieces: jax.Array) -> jax.Array:
  """`[..., rows, cols]` 0/1 pieces that move up (row + 1) -> how many attack each square: those
  on the row below, one column to either side."""
  pad = [(0, 0)] * (pieces.ndim - 2)
  below = jnp.pad(pieces, pad + [(1, 0), (1, 1)])[..., :-1, :]
  return below[..., :, :-2] + below[..., :, 2:]


def _legal_mask(board: jax.Array, cols: int, left_ok: np.ndarray,
                right_ok: np.ndarray) -> jax.Array:
  """`[N]` int8 board in the mover's frame -> `[N * 3]` bool legal mask (square-major).

  Works on the flat board: the target of direction `d` from square `i` is `i + cols + d - 1`,
  so each direction is one shifted slice of the board padded with `cols + 1` "own pieces" (which
  block every move off the far edge). `left_ok` / `right_ok` (`[N]` constants) rule out
  the diagonals that would wrap around a side edge and moves from the last row. Stacking the
  three `[N]` planes on a minor axis is the cheapest interleave XLA:CPU offers (broadcasting
  or padding versions measured 3-8x slower).
  """
  n = board.shape[-1]
  padded = jnp.concatenate([board, jnp.ones(cols + 1, jnp.int8)])
  mine = board == 1
  left = mine & (padded[cols - 1:cols - 1 + n] != 1) & left_ok
  straight = mine & (padded[cols:cols + n] == 0)  # the last row's targets are padding
  right = mine & (padded[cols + 1:cols + 1 + n] != 1) & right_ok
  return jnp.stack([left, straight, right], axis=-1).reshape(-1)


def _play_indexed(mask: jax.Array, board: jax.Array, action: jax.Array, cols: int):
  """Looks up and applies `action` with a one-element gather and scatters (the CPU path).

  Returns `(legal, moved)`: whether `action` is legal, and the board after it (`board` itself
  when it is not). On XLA:CPU a one-hot `where` gets fused into, and recomputed by, every
  element of the legal-mask computation that reads the new board (about 5x slower per step);
  a scatter materialises the new board once.
  """
  n, num_actions = board.shape[-1], mask.shape[-1]
  legal = mask[jnp.clip(action, 0, num_actions - 1)] & (action >= 0) & (action < num_actions)
  frm, to = _squares(action, cols)
  frm, to = jnp.where(legal, frm, n), jnp.where(legal, to, n)  # out of range: dropped
  moved = board.at[frm].set(0, mode="drop").at[to].set(1, mode="drop")
  return legal, moved


def _play_onehot(mask: jax.Array, board: jax.Array, action: jax.Array, cols: int):
  """Same as `_play_indexed` with one-hot comparisons and `where` (the accelerator path)."""
  n, num_actions = board.shape[-1], mask.shape[-1]
  legal = jnp.any(mask & (jnp.arange(num_actions) == action))
  frm, to = _squares(action, cols)
  squares = jnp.arange(n)
  moved = jnp.where(legal & (squares == frm), jnp.int8(0),
                    jnp.where(legal & (squares == to), jnp.int8(1), board))
  return legal, moved


def _squares(action: jax.Array, cols: int) -> tuple[jax.Array, jax.Array]:
  """(from, to) squares in the mover's frame named by `action` (meaningless if off-board).

  `lax.div` truncates; it differs from floor division only for negative (illegal) actions.
  """
  frm = jax.lax.div(action, NUM_DIRECTIONS)
  return frm, frm + cols - 1 + (action - NUM_DIRECTIONS * frm)


class Breakthrough(base.Game):
  """Breakthrough (OpenSpiel rules). See the module docstring for the frames and actions.

  Args:
    rows: board rows, >= 2 (OpenSpiel accepts rows > 1).
    cols: board columns, 2..26 (files a..z; one column would leave positions without moves).
    observation: "mover" (default, `[rows, cols, 2]` in the mover's frame), "thesis"
      (`[rows, cols, 3]` absolute: white, black, white-to-move) or "attacks" (`[rows, cols, 6]`
      in the mover's frame: the "mover" planes and the squares each side attacks once and
      twice).
  """

  name = "breakthrough"
  piece_symbols = {0: ".", 1: "w", 2: "b"}

  # -- What a game says about itself (see `base.Game`) -------------------------------------------
  side_names = ("white", "black")
  # A board size: files are the letters a..z, and one rank or file leaves no game.
  options_spec = (
      base.Option("rows", int, "the board's rows (ranks)", low=2, high=len(notation.FILES)),
      base.Option("cols", int, "the board's columns (files a, b, ...)", low=2,
                  high=len(notation.FILES)),
      base.Option("observation", str, "the network's input: mover (2 planes, the mover's "
                  "view), thesis (3 planes, absolute) or attacks (mover's and 4 planes of "
                  "attacked squares)", choices=OBSERVATIONS))
  encoding_options = ("observation",)

  @property
  def rules_text(self) -> str:
    return f"""\
Breakthrough ({self.rows}x{self.cols})
  White starts on the two bottom ranks and moves up; black starts on the two top ranks and
  moves down. White moves first.
  A piece moves ONE square forward: straight ahead onto an empty square, or diagonally forward
  onto an empty square or onto an enemy piece, which is captured. Pieces never capture straight
  ahead, and captures are not compulsory.
  You win by reaching the far rank with any piece, or by capturing all enemy pieces.
  There are no draws.
  Notation: from-square then to-square, e.g. a2a3 (straight) or b2c3 (diagonal)."""

  @property
  def example_move(self) -> str:
    """"a2a3": a straight step from white's front rank (rank 1 on boards of fewer than 6 rows)."""
    return f"a{self.home_ranks}a{self.home_ranks + 1}"

  def describe(self) -> str:
    return f"{self.name} {self.rows}x{self.cols}"

  def options(self) -> dict:
    return {"rows": self.rows, "cols": self.cols, "observation": self.observation_encoding}

  def encoded(self, state: State) -> State:
    """`state` (batched or not) observed in this object's encoding (`agents.reading_with`)."""
    return state.replace(encoding=self.observation_encoding)

  def openspiel_game(self) -> tuple[str, dict]:
    return "breakthrough", {"rows": self.rows, "columns": self.cols}

  def openspiel_key(self, state: State, action: int) -> str:
    """The move with its ranks mirrored (`rank -> rows + 1 - rank`, files unchanged):
    OpenSpiel's player 0 starts at the top, so azjax's "a2a3" is OpenSpiel's "a7a6"."""
    squares = notation.parse_squares(self.action_to_move(state, action), self.rows, self.cols,
                                     self.name)
    return "".join(f"{notation.FILES[s % self.cols]}{self.rows - s // self.cols}" for s in squares)

  def openspiel_action_key(self, text: str) -> str:
    return text.rstrip("*")  # OpenSpiel marks captures: "e4d5*".

  def alphabeta_evaluation(self, state: State) -> jax.Array:
    return evaluation(state)

  def concepts(self) -> dict[str, base.Concept]:
    return concepts(self.rows, self.cols)

  def __init__(self, rows: int = 8, cols: int = 8, observation: str = "mover"):
    for name, value in (("rows", rows), ("cols", cols), ("observation", observation)):
      self.option(name).check(self.name, value)
    self.rows, self.cols = int(rows), int(cols)
    self.observation_encoding = observation
    self.num_squares = self.rows * self.cols
    self.num_actions = self.num_squares * NUM_DIRECTIONS
    self.action_planes = NUM_DIRECTIONS
    self.observation_shape = (self.rows, self.cols, PLANES[observation])
    self.home_ranks = 2 if self.rows >= 6 else 1
    # Every action advances one piece by one row, and no piece goes further than the last row,
    # so the total distance of all pieces to the far rank bounds the game length.
    distance = sum(self.rows - 1 - r for r in range(self.home_ranks)) * self.cols
    self.max_game_length = 2 * distance
    start = np.zeros((self.rows, self.cols), np.int8)
    start[:self.home_ranks] = 1
    start[-self.home_ranks:] = -1
    self._start = start.reshape(-1)  # the same in both frames
    # Diagonals that stay on the board (and no move from the last row), per square.
    col = np.arange(self.num_squares) % self.cols
    below_last = np.arange(self.num_squares) < self.num_squares - self.cols
    self._left_ok = below_last & (col > 0)
    self._right_ok = below_last & (col < self.cols - 1)

  def symmetries(self) -> tuple[base.Symmetry, ...]:
    """The left-right mirror (in either frame, since a 180-degree turn commutes with it): the
    move from square (r, c) in direction d is the mirror of the one from (r, cols-1-c) in
    direction 2-d (forward-left <-> forward-right)."""
    cells = base.mirror_cells(self.rows, self.cols)
    directions = np.arange(NUM_DIRECTIONS)[::-1]
    actions = (cells[:, None] * NUM_DIRECTIONS + directions[None, :]).reshape(-1)
    return (base.Symmetry(cells=cells, actions=actions.astype(np.int32)),)

  # -- Pure array functions --------------------------------------------------------------------
  def _state(self, board: np.ndarray | jax.Array, player, terminated) -> State:
    """A fresh state (no last move, zero rewards) with its legal mask computed from `board`."""
    board = jnp.asarray(board, jnp.int8)
    terminated = jnp.asarray(terminated, jnp.bool_)
    mask = self._legal_mask(board) & ~terminated
    return State(
        current_player=jnp.asarray(player, jnp.int32),
        legal_action_mask=mask,
        terminated=terminated,
        rewards=jnp.zeros(2, jnp.float32),
        step_count=jnp.int32(0),
        last_move=jnp.full(2, -1, jnp.int32),
        board=board,
        cols=self.cols,
        encoding=self.observation_encoding,
    )

  def init(self, key: jax.Array) -> State:
    del key  # The start position is fixed.
    return self._state(self._start, 0, False)

  def _legal_mask(self, board: jax.Array) -> jax.Array:
    return _legal_mask(board, self.cols, self._left_ok, self._right_ok)

  def _step(self, state: State, action: jax.Array) -> State:
    """Plays `action` for the mover of a live state (see `base` for the conventions).

    An illegal action (including one outside `[0, A)`) ends the game as a loss for the mover:
    the board is left as it was, the turn passes as usual, and `last_move` is (-1, -1).
    """
    n, cols = self.num_squares, self.cols
    action = jnp.asarray(action, jnp.int32)
    player = state.current_player
    legal, moved = jax.lax.platform_dependent(
        state.legal_action_mask, state.board, action,
        cpu=functools.partial(_play_indexed, cols=cols),
        default=functools.partial(_play_onehot, cols=cols))
    frm, to = _squares(action, cols)
    # The game goes on after a legal move that neither reaches the far row nor takes the
    # opponent's last piece; an illegal action ends it. One reduction, so XLA computes it once
    # per game.
    terminated = ~jnp.any((moved == -1) & (legal & (to < n - cols)))
    mover_reward = jnp.where(legal, 1.0, -1.0)
    rewards = jnp.where(terminated, base.zero_sum_rewards(player, mover_reward), 0.0)
    # The next mover sees the board rotated by 180 degrees and negated.
    board = -moved[::-1]
    move = jnp.stack([frm, to])
    return State(
        current_player=1 - player,
        legal_action_mask=self._legal_mask(board) & ~terminated,
        terminated=terminated,
        rewards=rewards,
        step_count=state.step_count + 1,
        last_move=jnp.where(legal, jnp.where(player == 1, n - 1 - move, move), -1),
        board=board,
        cols=cols,
        encoding=state.encoding,
    )

  # -- Python side ---------------------------------------------------------------------------------
  def board_array(self, state: State) -> np.ndarray:
    """`[rows, cols]` int: 0 empty, 1 white (player 0), 2 black (player 1); row 0 = rank 1."""
    board = np.asarray(state.board, dtype=np.int64)
    if int(state.current_player) == 1:
      board = -board[::-1]  # Back to white's frame.
    board = board.reshape(self.rows, self.cols)
    return np.select([board == 1, board == -1], [1, 2], 0)

  def action_to_move(self, state: State, action: int) -> str:
    action = int(action)
    if not 0 <= action < self.num_actions:
      raise ValueError(f"breakthrough: action {action} is out of range [0, {self.num_actions})")
    frm, direction = divmod(action, NUM_DIRECTIONS)
    row, col = divmod(frm, self.cols)
    col_to = col + direction - 1
    if row + 1 >= self.rows or not 0 <= col_to < self.cols:
      raise ValueError(f"breakthrough: action {action} leaves the {self.rows}x{self.cols} board")
    to = (row + 1) * self.cols + col_to
    player = int(state.current_player)
    squares = (notation.to_absolute_square(s, player, self.num_squares) for s in (frm, to))
    return "".join(notation.square_name(s, self.cols) for s in squares)

  def _parse_move(self, state: State, move: str) -> int:
    squares = notation.parse_squares(move, self.rows, self.cols, self.name)
    if len(squares) != 2:
      raise ValueError(f"breakthrough: malformed move {move!r}: name two squares, like 'a2a3'")
    player = int(state.current_player)
    frm, to = (notation.to_absolute_square(s, player, self.num_squares) for s in squares)
    (row, col), (row_to, col_to) = divmod(frm, self.cols), divmod(to, self.cols)
    if row_to != row + 1 or abs(col_to - col) > 1:
      side = "white (up)" if player == 0 else "black (down)"
      raise ValueError(
          f"breakthrough: {move!r} is not a one-step forward move for {side}")
    return frm * NUM_DIRECTIONS + (col_to - col + 1)

  def from_ascii(self, text: str, to_move: int = 0) -> State:
    """Builds a position from a drawing, ranks from the top (rank `rows`) down to rank 1.

    Each rank is a line of `w` (white, player 0), `b` (black, player 1) and `.` (empty);
    spaces, `|`, rank numbers at either end of a line, and a line of file letters are ignored:

        5 b b b . b
        4 . . . . .
        3 . . w . .
        2 . . . . .
        1 w w . w w
          a b c d e

    A position that is already decided (a white piece on the last rank, a black piece on rank
    1, or a side without pieces) is returned terminated, with no legal moves and zero rewards
    (the winning transition is not part of this state). Otherwise the legal mask is that of
    `to_move`. `step_count` is 0 and `last_move` is (-1, -1).

    Raises:
      ValueError: for a malformed drawing or a `to_move` other than 0 or 1.
    """
    if to_move not in (0, 1):
      raise ValueError(f"breakthrough: to_move must be 0 or 1, got {to_move!r}")
    board = notation.parse_drawing(text, "breakthrough", {"w": 1, "b": -1, ".": 0}, self.rows,
                                   self.cols, symbols="'w', 'b' and '.'")
    decided = ((board[-1] == 1).any() or (board[0] == -1).any() or not (board == 1).any()
               or not (board == -1).any())
    board = board.reshape(-1)
    if to_move == 1:
      board = -board[::-1]
    return self._state(board, to_move, decided)


# -- Evaluation (alpha-beta) and concepts (probing) -----------------------------------------------

ADVANCE_WEIGHT = 0.1  # Alpha-beta's evaluation: a piece counts 1, a row of advance this much.


def evaluation(state: State) -> jax.Array:
  """Alpha-beta's evaluation from the mover's side: `material + ADVANCE_WEIGHT * advancement`.

  `material` is own pieces minus opponent pieces, `advancement` the sum of the rows (mover's
  frame, row 0 = the mover's home rank) of the own pieces minus the sum of `rows - 1 - row` over
  the opponent's pieces (how far they have come toward row 0). Works batched.
  """
  board = state.board
  num_rows = board.shape[-1] // state.cols
  row = (jnp.arange(board.shape[-1]) // state.cols).astype(jnp.float32)
  own = (board == 1).astype(jnp.float32)
  opp = (board == -1).astype(jnp.float32)
  material = own.sum(-1) - opp.sum(-1)
  advancement = (own * row).sum(-1) - (opp * (num_rows - 1 - row)).sum(-1)
  return material + ADVANCE_WEIGHT * advancement


def moves(grid: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
  """The +1 side's moves on `grid` `[R, C]` (moving towards higher rows), for concepts.

  Returns `(left, straight, right, captures)`, each `[R, C]` bool over the origin squares:
  whether the piece there can move forward-left / straight / forward-right, and whether one
  of its diagonal moves takes a piece. Squares beyond the board count as own pieces (blocked).
  """
  mine = grid == 1
  ahead_left = base.shift_grid(grid, 1, -1, 1)
  ahead = base.shift_grid(grid, 1, 0, 1)
  ahead_right = base.shift_grid(grid, 1, 1, 1)
  left = mine & (ahead_left != 1)
  straight = mine & (ahead == 0)
  right = mine & (ahead_right != 1)
  captures = (left & (ahead_left == -1)) | (right & (ahead_right == -1))
  return left, straight, right, captures


def _win_in_one(grid: jax.Array) -> jax.Array:
  """Whether the +1 side, to move on `grid`, can win at once."""
  left, straight, right, captures = moves(grid)
  any_move = left | straight | right
  reaches_last_rank = jnp.any(any_move[-2])  # a move from the next-to-last rank
  takes_last_piece = (jnp.sum(grid == -1) == 1) & jnp.any(captures)
  return reaches_last_rank | takes_last_piece


def _mobility(grid: jax.Array) -> jax.Array:
  left, straight, right, _ = moves(grid)
  return jnp.sum(left) + jnp.sum(straight) + jnp.sum(right)


@functools.lru_cache(maxsize=None)
def _cones(rows: int, cols: int) -> np.ndarray:
  """`[R * C, R * C]` float32: `[s, t]` = 1 when square t lies in square s's forward cone."""
  row, col = np.divmod(np.arange(rows * cols), cols)
  ahead = row[None, :] - row[:, None]
  return ((ahead > 0) & (np.abs(col[None, :] - col[:, None]) <= ahead)).astype(np.float32)


def concepts(rows: int, cols: int) -> dict[str, base.Concept]:
  """The Breakthrough concepts on a `rows x cols` board, from the mover's side (+1 mover,
  -1 opponent), for probing:

      material             own pieces - opponent pieces                                 (count)
      material_advantage   material > 0: the thesis' concept                           (binary)
      mobility             own legal moves - the opponent's legal moves (its turn)      (count)
      capture_available    a diagonal move of the mover takes a piece                  (binary)
      win_in_one           a legal move reaches the last rank or takes the last piece  (binary)
      must_defend          the opponent would win in one if it were to move            (binary)
      advancement          sum of own rows - sum of the opponent's rows, each counted from its
                           own home rank (the alpha-beta evaluation's term)            (count)
      home_guards          own pieces on the mover's home rank                          (count)
      free_runner          an own piece with no opponent piece in its forward cone (squares
                           `(r', c')` with `r' > r` and `|c' - c| <= r' - r`): no opponent
                           piece can ever capture or block it                          (binary)
  """
  height = np.arange(rows, dtype=np.float32)[:, None]
  cones = _cones(rows, cols)

  def grid(state):
    return jnp.asarray(state.board, jnp.int32).reshape(rows, cols)

  def material(state):
    g = grid(state)
    return jnp.sum(g == 1) - jnp.sum(g == -1)

  def advancement(state):
    g = grid(state)
    return jnp.sum((g == 1) * height) - jnp.sum((g == -1) * (rows - 1 - height))

  def free_runner(state):
    g = grid(state)
    opponents_in_cone = cones @ (g == -1).reshape(-1).astype(jnp.float32)  # [R * C]
    return jnp.any((g.reshape(-1) == 1) & (opponents_in_cone == 0))

  flip = base.flip_grid
  items = [
      ("material", material, False, "own pieces - opponent pieces"),
      ("material_advantage", lambda s: material(s) > 0, True, "material > 0 (the thesis)"),
      ("mobility", lambda s: _mobility(grid(s)) - _mobility(flip(grid(s))), False,
       "own legal moves - opponent legal moves"),
      ("capture_available", lambda s: jnp.any(moves(grid(s))[3]), True,
       "a move of the mover captures"),
      ("win_in_one", lambda s: _win_in_one(grid(s)), True, "the mover can win at once"),
      ("must_defend", lambda s: _win_in_one(flip(grid(s))), True,
       "the opponent threatens to win at once"),
      ("advancement", advancement, False, "sum of own rows - sum of opponent rows"),
      ("home_guards", lambda s: jnp.sum(grid(s)[0] == 1), False,
       "own pieces on the home rank"),
      ("free_runner", free_runner, True, "an own piece no opponent piece can stop"),
  ]
  return {name: base.Concept.of(name, fn, binary, doc) for name, fn, binary, doc in items}
