"""Exact game-theoretic values for the solved games, and a perfect-play `solver` agent.

>>> env = azjax.games.make("connect_four")
>>> move_values(env, env.init(key))     # [7]: -1 -1 0 1 0 -1 -1 (only the centre wins)
>>> agent = azjax.agents.make("solver", env)
>>> arena.play(env, agent, other, 20, key)

Two solvers, one per solved game, behind one interface (`Solver.board_scores`); a game names
its own (`Game.exact_solver`), and `SOLVED_GAMES` are the registered games that do:

* **Tic-tac-toe**: plain negamax over its 5478 reachable positions, memoized; pure Python.
* **Connect Four**: BitBully (`pip install -e ".[solver]"`), a bitboard alpha-beta solver with
  a 12-ply opening book; most positions take milliseconds, the empty board 0.05 s.

**Scores** follow Pascal Pons' Connect Four convention in both games, from the side of the
player to move, for each move: 0 if the move leads to a draw under perfect play, positive if it
wins, negative if it loses, and the magnitude counts the winner's stones left when the game
ends, the winning stone included:

    score = (num_squares + 1 - n) // 2     n = stones on the board before the winning stone

so a faster win scores higher and a slower loss scores higher (less negative). The **value**
of a move is the score's sign: +1 win, 0 draw, -1 loss. Illegal moves are NaN.

The solvers work on the board as the states store it, **from the mover's side** (+1 the mover's
stones, -1 the opponent's, both games' `state.board`). Which player is to move follows from the
stone counts (player 0 has as many stones as player 1, player 1 one fewer), so the board alone
is the position.

The player is host-side Python, called from inside JAX through `jax.pure_callback`, so
`make_solver_policy` is an ordinary batched policy and the "solver" agent built on it
(`azjax.agents.make_solver`) plays in jitted arena matches, evaluate's opponent lists, the
terminal and the web page like every other agent.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from azjax import console, games
from azjax.games import base

INSTALL_HINT = 'pip install -e ".[solver]"'


class SolverUnavailable(console.MissingExtra):
  """The game's solver needs an optional package that is not installed (the "solver" extra);
  a command ends on it in one line (`azjax.console.command`)."""


class Solver(Protocol):
  """The exact scores of the moves of one position."""

  num_actions: int

  def board_scores(self, board: np.ndarray) -> np.ndarray:
    """Scores of every move of a live position.

    Args:
      board: `[S]` int, the position from the mover's side (+1 mover, -1 opponent, 0 empty);
        the game must not be over.
    Returns:
      `[A]` float64 scores (see the module docstring), NaN for illegal moves.
    """
    ...


# -- Tic-tac-toe: memoized negamax -----------------------------------------------------------------

_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
              (2, 4, 6))


def _ttt_line(board: tuple[int, ...], square: int) -> bool:
  """Whether the mover (+1), having just taken `square`, holds a line through it."""
  return any(all(board[s] == 1 for s in line) for line in _TTT_LINES if square in line)


@functools.lru_cache(maxsize=None)
def _ttt_move_scores(board: tuple[int, ...]) -> tuple[float, ...]:
  """`[9]` scores of the mover's moves (NaN where occupied); `board` from the mover's side."""
  stones = sum(1 for x in board if x)
  scores = []
  for square in range(9):
    if board[square]:
      scores.append(np.nan)
      continue
    child = board[:square] + (1,) + board[square + 1:]
    if _ttt_line(child, square):
      scores.append(float((10 - stones) // 2))
    elif stones + 1 == 9:
      scores.append(0.0)
    else:
      # The opponent's best reply, negated: the child seen from the opponent's side.
      scores.append(-np.nanmax(_ttt_move_scores(tuple(-x for x in child))))
  return tuple(scores)


class TicTacToeSolver:
  """Negamax over tic-tac-toe's positions, each solved once (a few thousand entries)."""

  num_actions = 9

  def board_scores(self, board: np.ndarray) -> np.ndarray:
    return np.array(_ttt_move_scores(tuple(int(x) for x in np.asarray(board).reshape(-1))))


# -- Connect Four: BitBully ------------------------------------------------------------------------


class ConnectFourSolver:
  """BitBully's `score_all_moves` on the position, with a memo of the positions it has seen.

  azjax's Connect Four board is `[42]`, row-major from the bottom-left (square = 7 row + column,
  row 0 at the bottom), and the action is the column, as in BitBully. BitBully's array layout
  used here is column-major `[7][6]` with row 0 at the bottom, 1 for the first player's stones
  and 2 for the second's.
  """

  num_actions = 7
  _MEMO_LIMIT = 1 << 20  # positions kept before the memo is cleared (about 100 MB)

  def __init__(self):
    try:
      from bitbully import BitBully, Board  # noqa: PLC0415  (optional dependency)
    except ImportError:
      raise SolverUnavailable("solver", "the Connect Four solver") from None
    self._board_cls = Board
    self._engine = BitBully()  # Loads the 12-ply opening book (win/loss and distance).
    self._memo: dict[bytes, np.ndarray] = {}

  def bitbully_board(self, board: np.ndarray):
    """The `bitbully.Board` of a position given from the mover's side (`[42]` int)."""
    board = np.asarray(board, dtype=np.int8).reshape(6, 7)
    mine, theirs = int(np.sum(board == 1)), int(np.sum(board == -1))
    if mine == theirs:  # The mover is the first player.
      first, second = board == 1, board == -1
    elif mine + 1 == theirs:
      first, second = board == -1, board == 1
    else:
      raise ValueError(f"connect_four: impossible stone counts {mine} (mover) and {theirs}")
    codes = np.where(first, 1, np.where(second, 2, 0))
    return self._board_cls.from_array(codes.T.tolist())

  def board_scores(self, board: np.ndarray) -> np.ndarray:
    board = np.asarray(board, dtype=np.int8).reshape(-1)
    memo_key = board.tobytes()
    scores = self._memo.get(memo_key)
    if scores is None:
      scores = np.full(7, np.nan)
      # Full columns are left out of BitBully's answer.
      for column, score in self._engine.score_all_moves(self.bitbully_board(board)).items():
        scores[column] = score
      if len(self._memo) >= self._MEMO_LIMIT:
        self._memo.clear()
      self._memo[memo_key] = scores
    return scores.copy()


# -- One interface ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _solver_of(solver_class: Callable[[], Solver]) -> Solver:
  """One solver per class, shared: BitBully loads its opening book once, the memos fill once."""
  return solver_class()


def for_game(env: base.Game) -> Solver:
  """The (shared) solver of `env`'s game, the one its `exact_solver` hook names.

  Raises:
    ValueError: the game has no solver (is not one of `SOLVED_GAMES`).
    SolverUnavailable: the solver's optional package is missing (the message says how to
      install it).
  """
  solver_class = env.exact_solver()
  if solver_class is None:
    raise ValueError(f"no solver for {env.name!r}; solved games: {', '.join(SOLVED_GAMES)}")
  return _solver_of(solver_class)


def scores_to_values(scores: np.ndarray) -> np.ndarray:
  """Game-theoretic values (+1 win, 0 draw, -1 loss, NaN illegal) of scores, any shape."""
  return np.sign(scores)


def _host_states(states: Any) -> tuple[np.ndarray, np.ndarray]:
  """`(boards [..., S], legal masks [..., A])` of a state or batch of states, on the host."""
  return (np.asarray(jax.device_get(states.board)),
          np.asarray(jax.device_get(states.legal_action_mask)))


def _scores(solver: Solver, boards: np.ndarray, masks: np.ndarray) -> np.ndarray:
  """`[..., A]` scores of boards `[..., S]`; all NaN where no move is legal (game over)."""
  flat_boards = boards.reshape(-1, boards.shape[-1])
  flat_masks = masks.reshape(-1, masks.shape[-1])
  out = np.full(flat_masks.shape, np.nan)
  for i in np.flatnonzero(flat_masks.any(axis=-1)):
    out[i] = solver.board_scores(flat_boards[i])
  return out.reshape(masks.shape)


def move_scores(env: base.Game, state: Any) -> np.ndarray:
  """`[A]` float64 exact scores of one state's moves, mover's side (NaN: illegal, or the game
  is over). Works on a batch too: states `[B]` -> `[B, A]`."""
  return _scores(for_game(env), *_host_states(state))


def move_values(env: base.Game, state: Any) -> np.ndarray:
  """`[A]` float64 exact values of one state's moves from the mover's side: +1 win, 0 draw,
  -1 loss, NaN illegal (all NaN once the game is over). A batch `[B]` gives `[B, A]`."""
  return scores_to_values(move_scores(env, state))


batch_move_scores = move_scores  # The same function: leading dimensions are kept.
batch_move_values = move_values


def position_value(values: np.ndarray) -> np.ndarray:
  """The position's value (`[...]`), the best of its moves' values or scores (`[..., A]`);
  NaN where no move is legal."""
  values = np.asarray(values, dtype=np.float64)
  legal = ~np.isnan(values)
  best = np.max(np.where(legal, values, -np.inf), axis=-1)
  return np.where(legal.any(axis=-1), best, np.nan)


# -- Choosing a move -------------------------------------------------------------------------------


def choose_move(scores: np.ndarray, rng: np.random.Generator, *, keep_result_only: bool) -> int:
  """A perfect move among `scores` (`[A]`, NaN illegal), uniform at random among the candidates.

  The candidates are the moves with the best score (the fastest win, the slowest loss, any
  draw), or with `keep_result_only` every move that keeps the position's value (any win of a
  won position, any draw of a drawn one, any move of a lost one).
  """
  legal = ~np.isnan(scores)
  if not legal.any():
    return 0
  key = scores_to_values(scores) if keep_result_only else scores
  best = np.max(key[legal])
  candidates = np.flatnonzero(legal & (key == best))
  return int(rng.choice(candidates))


def solver_move(scores: np.ndarray, board: np.ndarray, seed: int, *,
                random_opening_moves: int = 2, randomize: bool = False) -> int:
  """The solver agent's move in one position: `choose_move` with its opening rule.

  The mover's own stones on `board` (`[S]`, mover's side) say which of its moves this is: its
  first `random_opening_moves` moves, and every move with `randomize`, keep only the result;
  the others play the best score. `seed` seeds the choice among equals.
  """
  own_moves = int(np.sum(np.asarray(board) == 1))
  keep_result_only = randomize or own_moves < random_opening_moves
  return choose_move(scores, np.random.default_rng(seed), keep_result_only=keep_result_only)


def make_solver_policy(env: base.Game, *, random_opening_moves: int = 2,
                       randomize: bool = False) -> Callable[[Any, jax.Array], jax.Array]:
  """The solver as a batched policy `(states [B], key) -> [B]` int32, jittable.

  The moves are chosen on the host (`jax.pure_callback`), one state at a time, by
  `solver_move`; a finished game's action is 0.
  """
  solver = for_game(env)  # Fails here, not inside a jitted match, when the solver is missing.

  def host_choose(boards, masks, seeds):
    boards, masks, seeds = np.asarray(boards), np.asarray(masks), np.asarray(seeds)
    scores = _scores(solver, boards, masks).reshape(-1, masks.shape[-1])
    flat_boards = boards.reshape(scores.shape[0], -1)
    actions = np.array([
        solver_move(scores[i], flat_boards[i], int(seed),
                    random_opening_moves=random_opening_moves, randomize=randomize)
        for i, seed in enumerate(seeds.reshape(-1))], dtype=np.int32)
    return actions.reshape(masks.shape[:-1])

  def policy(states: Any, key: jax.Array) -> jax.Array:
    masks = states.legal_action_mask
    seeds = jax.random.bits(key, masks.shape[:-1], jnp.uint32)
    return jax.pure_callback(
        host_choose, jax.ShapeDtypeStruct(masks.shape[:-1], jnp.int32),
        states.board, masks, seeds, vmap_method="broadcast_all")

  return policy


# The registered games whose `exact_solver` hook names a solver. Computed last: the hooks import
# this module, which by now defines the solvers (and no solver is built: the hooks return classes).
SOLVED_GAMES = tuple(name for name in games.GAMES
                     if games.game_class(name).exact_solver() is not None)

__all__ = [
    "ConnectFourSolver", "INSTALL_HINT", "SOLVED_GAMES", "Solver", "SolverUnavailable",
    "TicTacToeSolver", "batch_move_scores", "batch_move_values", "choose_move", "for_game",
    "make_solver_policy", "move_scores", "move_values", "position_value",
    "scores_to_values", "solver_move",
]
