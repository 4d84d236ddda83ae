"""Tic-tac-toe on a 3x3 board. Player 0 (X) moves first; a full board without a line is a draw.

Squares are numbered row-major from the bottom-left, as seen by player 0:

    3 | 6 7 8      c3 is square 8
    2 | 3 4 5
    1 | 0 1 2
        a b c

The board is stored from the mover's side (+1 the mover's marks, -1 the opponent's) and negated
after every move; there is no forward direction, so squares are the same in both frames and the
action is the square (`K = 1`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from azjax.games import base, notation

ROWS = COLS = 3
NUM_SQUARES = ROWS * COLS
# The eight lines, as square indices.
LINES = np.array(
    [[0, 1, 2], [3, 4, 5], [6, 7, 8],  # rows
     [0, 3, 6], [1, 4, 7], [2, 5, 8],  # columns
     [0, 4, 8], [2, 4, 6]],  # diagonals
    dtype=np.int32)


@struct.dataclass
class State:
  current_player: jax.Array  # [] int32
  legal_action_mask: jax.Array  # [9] bool
  terminated: jax.Array  # [] bool
  rewards: jax.Array  # [2] float32
  step_count: jax.Array  # [] int32
  last_move: jax.Array  # [2] int32 (from, to); from is always -1
  board: jax.Array  # [9] int8: +1 the mover's marks, -1 the opponent's, 0 empty

  @property
  def observation(self) -> jax.Array:
    """`[..., 3, 3, 2]` float32: planes (mover's marks, opponent's marks); works batched."""
    return base.piece_planes(self.board, ROWS, COLS)


class TicTacToe(base.Game):
  name = "tic_tac_toe"
  rows = ROWS
  cols = COLS
  num_actions = NUM_SQUARES
  action_planes = 1
  observation_shape = (ROWS, COLS, 2)
  max_game_length = NUM_SQUARES
  piece_symbols = {0: ".", 1: "X", 2: "O"}

  # -- What a game says about itself (see `base.Game`) -------------------------------------------
  side_names = ("X", "O")
  example_move = "b2"
  rules_text = """\
Tic-tac-toe (3x3)
  X moves first; players take turns marking an empty square. Three marks in a row (across,
  up and down, or diagonally) win. A full board without three in a row is a draw.
  Notation: the square, files a-c from the left and ranks 1-3 from the bottom, e.g. b2."""
  svg_style = base.SvgStyle("grid", light="#ffffff", dark="#333333",
                            pieces=("#1c7ed6", "#e8590c"), outlines=("#1c7ed6", "#e8590c"))

  # Three plies per range: the opening, the middle, the last moves (a full board is ply 9).
  benchmark_ply_ranges = ((0, 2), (3, 5), (6, 8))

  @classmethod
  def exact_solver(cls) -> type:
    """Memoized negamax (`azjax.solver.TicTacToeSolver`)."""
    from azjax import solver  # noqa: PLC0415  (solver imports the games: loaded on first use)

    return solver.TicTacToeSolver

  def openspiel_game(self) -> tuple[str, dict]:
    return "tic_tac_toe", {}

  def openspiel_key(self, state: State, action: int) -> str:
    """OpenSpiel's "x(r,c)" without the mark: its row 0 is the top, azjax's rank 1 the bottom."""
    return f"({ROWS - 1 - action // COLS},{action % COLS})"

  def openspiel_action_key(self, text: str) -> str:
    return text[1:]  # Drop the mover's mark, "x" or "o".

  def one_click_move(self, square: str) -> str:
    return square  # The move is the square.

  def symmetries(self) -> tuple[base.Symmetry, ...]:
    """The 7 non-trivial symmetries of the square (rotations and reflections); the action is
    the square, so actions permute like cells."""
    grid = np.arange(NUM_SQUARES).reshape(ROWS, COLS)
    images = [np.rot90(grid, k) for k in range(4)]
    images += [image.T for image in images]
    return tuple(base.Symmetry(cells=image.reshape(-1).astype(np.int32),
                               actions=image.reshape(-1).astype(np.int32))
                 for image in images[1:])

  def init(self, key: jax.Array) -> State:
    del key  # The start position is fixed.
    return State(**base.start_fields(jnp.ones(NUM_SQUARES, dtype=jnp.bool_)),
                 board=jnp.zeros(NUM_SQUARES, dtype=jnp.int8))

  def _step(self, state: State, action: jax.Array) -> State:
    action = jnp.asarray(action, dtype=jnp.int32)
    one_hot = jnp.arange(NUM_SQUARES) == action
    # An action outside [0, 9) matches no square, so it is illegal too. (Indexing the mask with
    # it would clamp or wrap it onto a real square and let the mover pass.)
    legal = jnp.any(one_hot & state.legal_action_mask)
    board = jnp.where(one_hot, jnp.int8(1), state.board)
    won = jnp.any(jnp.all(board[LINES] == 1, axis=1))
    full = jnp.all(board != 0)
    terminated = won | full | ~legal
    # The mover's reward: +1 for a line, -1 for an illegal action, 0 for a draw.
    mover_reward = jnp.where(legal, jnp.where(won, 1.0, 0.0), -1.0)
    rewards = base.zero_sum_rewards(state.current_player, mover_reward)
    board = jnp.where(legal, board, state.board)  # An illegal action leaves the board alone.
    return State(
        current_player=1 - state.current_player,
        legal_action_mask=(board == 0) & ~terminated,
        terminated=terminated,
        rewards=rewards,
        step_count=state.step_count + 1,
        last_move=jnp.stack([jnp.int32(-1), jnp.where(legal, action, -1)]),  # -1: no mark placed
        board=-board,  # The next mover's side.
    )

  # -- Python side ---------------------------------------------------------------------------------
  def board_array(self, state: State) -> np.ndarray:
    """`[3, 3]` int: 0 empty, 1 X (player 0), 2 O (player 1); row 0 = rank 1."""
    board = np.asarray(state.board, dtype=np.int64).reshape(ROWS, COLS)
    if int(state.current_player) == 1:
      board = -board  # Back to player 0's side.
    return np.select([board == 1, board == -1], [1, 2], 0)

  def action_to_move(self, state: State, action: int) -> str:
    if not 0 <= int(action) < NUM_SQUARES:
      raise ValueError(f"tic_tac_toe: action {action} is out of range [0, {NUM_SQUARES})")
    return notation.square_name(int(action), COLS)

  def _parse_move(self, state: State, move: str) -> int:
    squares = notation.parse_squares(move, ROWS, COLS, self.name)
    if len(squares) != 1:
      raise ValueError(f"tic_tac_toe: malformed move {move!r}: name one square, like 'b2'")
    return squares[0]
