"""Slider, the 2017 course game, on an `N x N` board (4 <= N <= 12, default 5).

Player 0 is H (horizontal): its N - 1 pieces start on file a, every rank but the first. Player 1
is V (vertical): its N - 1 pieces start on rank 1, every file but the first. a1 starts empty and
H moves first. On 5x5, with two blocks (`#`) as the course referee could place them:

    5 | H . . . .
    4 | H . . # .
    3 | H . . . .
    2 | H # . . .
    1 | . V V V V
        a b c d e

A move is one step of one piece to an empty square (no piece, no block): H right, up or down;
V up, left or right. H leaves the board by moving right from the last file, V by moving up
from the last rank; no other move leaves the board, and there are no captures. A player with
no move must pass (then the only legal action), and passing is illegal when a move exists. The
first player to move all its pieces off the board wins. Draws: two passes in a row; the same
position (pieces and side to move) for the third time; `4 * N * N` plies in a row without a
forward move (H right, V up, leaving included).

**Frames.** Everything is stored from the mover's side. H's frame is the absolute board; V's
frame is the absolute board *transposed* (files and ranks swapped), so V too starts on file a
and moves "right", and one network plays both sides. Squares are numbered row-major in the
mover's frame (`square = row * N + col`, row 0 = rank 1 for H, file a for V), and a mover
square `s` is absolute square `s` for H and `transpose(s) = (s % N) * N + s // N` for V (the
map is its own inverse). The board is `int8[N * N]`: +1 the mover's pieces, -1 the
opponent's, 2 a block, 0 empty; after every action it is sign-swapped (blocks kept) and
transposed for the next mover.

**Actions** are square-major in the mover's frame, `action = square * 3 + direction`, with the
directions taken in the mover's frame too: 0 = forward (col + 1: H right, V up), 1 = row + 1
(H up, V right), 2 = row - 1 (H down, V left). This is the mover-frame geometry rather than
"left/right of forward" because the transpose is a reflection: it would swap V's left and
right, while mover-frame directions mean the same to the network for both sides. The last
action, `3 * N * N`, is the pass, so `num_actions = 3 * N * N + 1` (a policy reads as a
`[N, N, 3]` tensor plus the pass). Forward from the last column leaves the board; up from the
last row or down from the first is never legal.

**Notation**: `a2b2` (from, to), `e3+` (the piece on e3 leaves the board), `-` for a pass (an
em dash is accepted too). Squares are absolute, as in every azjax game.

**Repetition.** A forward move is irreversible (the sum of H's files and V's ranks, a piece
off the board counting as N, only grows, and grows with every forward move), so a position
from before the last forward move can never recur: only positions since then count. The
state keeps `history[i]`, the key of the i-th position since the last forward move (i = 0 is
the position right after it); there are at most `4 * N * N` such positions before the
no-progress draw, so the history has that many rows. A key is *exact*, not a hash: between two
forward moves every H piece stays on its file and every V piece on its rank, so the number of
H pieces on each file and of V pieces on each rank are fixed, and given those the position is
fixed by the ranks of H's pieces listed in (file, rank) order and the files of V's pieces
listed in (rank, file) order (both in the mover's frame: the mover's pieces by (col, row),
recording rows; the opponent's by (row, col), recording cols). These `2 * (N - 1)` numbers are
packed `ceil(log2 N)` bits each into `uint32` words (1 word for N <= 6, 2 for N = 7..9, 3 for
N = 10..12). Positions i and k can be the same only if i and k have the same parity (every
action, a pass included, changes the side to move), so the side to move needs no bits.
Unused rows hold `0xFFFFFFFF`, which no key equals: a key's top bits are zero unless 4-bit
fields fill its word, and then its last field would be 15 > N - 1.

**Observation** `[N, N, 5]` float32 in the mover's frame: the mover's pieces, the opponent's
pieces, blocks, ones if the last action was a pass (a second pass would draw), and the
no-forward-move counter divided by `4 * N * N` (a plane of that value). The repetition
history is left out: it is bounded but large, and a network rarely needs it; the observation
is Markov except for threefold repetition.

**Game length.** Each H piece makes N forward moves (N - 1 steps to the last file, then off),
so H makes at most `N * (N - 1)` and the loser at most `N * (N - 1) - 1` forward moves: a game
has at most `F = 2 * N * (N - 1) - 1` of them. Before each forward move come at most
`4 * N * N - 1` other plies; a game ending with a win has at most `4 * N * N * F` plies, and one
ending by the 4N^2 rule at most `F - 1` forward moves followed by `4 * N * N` plies, the same
total. So `max_game_length = 4 * N * N * (2 * N * (N - 1) - 1)` (3900 on 5x5), a true bound.

**Symmetries**: none. Every reflection or rotation of the square either reverses a side's
forward direction or exchanges the two sides (the transpose, which is how V's view is made), so
none maps a position to one of equal value with the same player to move; blocks break even
the transpose in general.

Illegal actions (a pass when a move exists included) end the game as a loss for the mover with
the board unchanged; stepping a terminated state is a no-op that zeroes the rewards.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from azjax.games import base, notation

NUM_DIRECTIONS = 3  # forward (col + 1), row + 1, row - 1, in the mover's frame
MIN_SIZE, MAX_SIZE = 4, 12
BLOCK = 2  # board code of a block (in every frame)
EMPTY_KEY = np.uint32(0xFFFFFFFF)  # unused history rows; equals no position key
BLOCK_OPTIONS = ("random", "none")
PASS_MOVES = ("-", "\u2014", "\u2013")  # hyphen, em dash, en dash


@struct.dataclass
class State:
  """One Slider position (unbatched; `S = N * N` squares, `A = 3 * S + 1`, `L = 4 * N * N`,
  `W` key words: see the module docstring)."""

  current_player: jax.Array  # [] int32: 0 = H, 1 = V
  legal_action_mask: jax.Array  # [A] bool; the last entry is the pass
  terminated: jax.Array  # [] bool
  rewards: jax.Array  # [2] float32
  step_count: jax.Array  # [] int32
  last_move: jax.Array  # [2] int32: absolute (from, to); to = -1 when leaving; -1 for a pass
  board: jax.Array  # [S] int8, mover's frame: +1 mover, -1 opponent, 2 block, 0 empty
  passed: jax.Array  # [] bool: the last action was a pass
  quiet_plies: jax.Array  # [] int32: plies since the last forward move
  history: jax.Array  # [L, W] uint32: keys of the positions since the last forward move
  size: int = struct.field(pytree_node=False)  # N (static)

  @property
  def observation(self) -> jax.Array:
    """`[..., N, N, 5]` float32 in the mover's frame: mover's pieces, opponent's pieces,
    blocks, pass-just-happened, no-forward-move counter / (4 N^2). Batched states work too."""
    n = self.size
    grid = self.board.reshape(self.board.shape[:-1] + (n, n))
    ones = jnp.ones(grid.shape, jnp.float32)
    passed = jnp.asarray(self.passed, jnp.float32)[..., None, None] * ones
    quiet = (jnp.asarray(self.quiet_plies, jnp.float32) / (4 * n * n))[..., None, None] * ones
    pieces = [(grid == code).astype(jnp.float32) for code in (1, -1, BLOCK)]
    return jnp.stack(pieces + [passed, quiet], axis=-1)


# -- Pure helpers (N static) -----------------------------------------------------------------------


def transpose_squares(size: int) -> np.ndarray:
  """`[N * N]` int32: square `s` of one frame is square `out[s]` of the other (an involution)."""
  return np.arange(size * size).reshape(size, size).T.reshape(-1).astype(np.int32)


def _next_frame(board: jax.Array, size: int) -> jax.Array:
  """`[S]` board in the mover's frame -> the same position in the opponent's frame."""
  swapped = jnp.where(board == BLOCK, board, -board)
  return swapped.reshape(size, size).T.reshape(-1)


def key_layout(size: int) -> tuple[int, int, int]:
  """(bits per field, fields per word, words) of a position key on an `N x N` board."""
  bits = (size - 1).bit_length()
  per_word = 32 // bits
  return bits, per_word, math.ceil(2 * (size - 1) / per_word)


def _upper_triangle(n: int) -> np.ndarray:
  """`[n, n]` float32 ones on and above the diagonal: `x @ it` is the running sum of `x`."""
  return np.triu(np.ones((n, n), np.float32))


def position_key(board: jax.Array, size: int) -> jax.Array:
  """`[W]` uint32 exact key of a position among those since the last forward move.

  Field k < N - 1 is the row of the mover's k-th piece in (col, row) order; field N - 1 + k the
  col of the opponent's k-th piece in (row, col) order (see the module docstring). The fields
  are disjoint bit ranges, so a sum packs them.

  Args:
    board: `[S]` int8 board in the mover's frame.
  """
  bits, per_word, words = key_layout(size)
  cells = board.reshape(size, size)
  mine = (cells == 1).T.reshape(-1)  # col-major: index c * N + r, value r
  theirs = (cells == -1).reshape(-1)  # row-major: index r * N + c, value c
  present = jnp.stack([mine, theirs])  # [2, S]
  # Running counts as a product with an upper-triangular matrix rather than `cumsum`: XLA:CPU
  # lowers `cumsum` to a reduce-window that is several times slower under `vmap` (exact in
  # float32: counts are below 2**24).
  counts = jnp.dot(present.astype(jnp.float32), _upper_triangle(size * size),
                   precision=jax.lax.Precision.HIGHEST).astype(jnp.int32)
  field = (counts - 1 + np.array([[0], [size - 1]])).reshape(-1)
  present = present.reshape(-1)
  value = np.tile(np.arange(size, dtype=np.uint32), 2 * size)  # index % N, for both
  shift = ((field % per_word) * bits).astype(jnp.uint32)
  packed = jnp.where(present, value << shift, jnp.uint32(0))  # [2S]
  word = field // per_word
  return jnp.sum(jnp.where(word[None, :] == np.arange(words)[:, None], packed[None, :],
                           jnp.uint32(0)), axis=1, dtype=jnp.uint32)


def _move_indexed(board: jax.Array, frm: jax.Array, to: jax.Array) -> jax.Array:
  """`board` with square `frm` emptied and the mover's piece put on `to` (an index past the
  board is ignored), by a one-element scatter each: the CPU path. On XLA:CPU a one-hot `where`
  is fused into, and recomputed by, every consumer of the new board (the legal mask, the
  position key), which made `step` about 1.5x slower; a scatter materialises it once."""
  return board.at[frm].set(0, mode="drop").at[to].set(1, mode="drop")


def _move_onehot(board: jax.Array, frm: jax.Array, to: jax.Array) -> jax.Array:
  """Same as `_move_indexed` with one-hot `where`s (the accelerator path)."""
  squares = jnp.arange(board.shape[-1])
  return jnp.where(squares == frm, jnp.int8(0), jnp.where(squares == to, jnp.int8(1), board))


def legal_mask(board: jax.Array, size: int) -> jax.Array:
  """`[S]` int8 board in the mover's frame -> `[3 S + 1]` bool legal mask (the pass last).

  Each direction is one shifted slice of the flat "free square" plane: forward is `s + 1`
  (always legal from the last column: the piece leaves), row + 1 is `s + N`, row - 1 is
  `s - N`; the padding is False, so nothing steps off the top or bottom edge.
  """
  n = size * size
  free = board == 0
  mine = board == 1
  last_col = np.arange(n) % size == size - 1
  pad = jnp.zeros(size, jnp.bool_)
  forward = mine & (jnp.concatenate([free[1:], pad[:1]]) | last_col)
  up = mine & jnp.concatenate([free[size:], pad])
  down = mine & jnp.concatenate([pad, free[:-size]])
  moves = jnp.stack([forward, up, down], axis=-1).reshape(-1)
  return jnp.concatenate([moves, ~jnp.any(moves)[None]])


# -- Evaluation features (the source project's, board-size independent) ----------------------------

FEATURE_NAMES = ("pieces", "forward moves", "row+1 moves", "row-1 moves", "distance")


def features(board: jax.Array, size: int) -> jax.Array:
  """`[5]` float32 features of a mover-frame `[S]` board, each "mover minus opponent" and
  scaled so the same weights suit every board size (the source project's choice):

  0. pieces still on the board, / (N - 1);
  1-3. moves available in each mover-frame direction (forward: H right matched with V up;
     row + 1; row - 1), / (N - 1);
  4. the sum of the pieces' distances to leaving (N - col steps each, 0 once off), / (N (N-1)).

  The opponent's figures are read in its own frame (`_next_frame`), so both sides are measured
  the same way whoever moves.
  """
  n = size * size
  col = np.arange(n) % size

  def side(frame):
    mine = frame == 1
    moves = legal_mask(frame, size)[:-1].reshape(n, NUM_DIRECTIONS)
    return jnp.stack([jnp.sum(mine), *jnp.sum(moves, axis=0), jnp.sum(mine * (size - col))])

  diff = (side(board) - side(_next_frame(board, size))).astype(jnp.float32)
  return diff / np.array([size - 1] * 4 + [size * (size - 1)], np.float32)


def hand_evaluation(board: jax.Array, size: int) -> jax.Array:
  """`[]` float32 in (-1, 1): the hand-written baseline, from the mover's side. The race: the
  distance still to go (a step of distance is worth a move), plus a little for having more
  forward moves open (being blocked costs tempo)."""
  x = features(board, size)
  return jnp.tanh(-2.0 * x[4] + 0.25 * x[1])


# `init` and `from_ascii` build states with these; jitted once per board size (and shared by
# all games of that size) because run eagerly, as Python-side helpers do, their many small
# operations would each be compiled.


@functools.partial(jax.jit, static_argnames="size")
def draw_blocks(key: jax.Array, size: int) -> jax.Array:
  """`[S]` bool blocks drawn as the course referee did (see `Slider`)."""
  case_key, i_key, j_key, flip_key = jax.random.split(key, 4)
  case = jax.random.randint(case_key, (), 0, 3)  # 0, 1 or 2 blocks
  i = jax.random.randint(i_key, (), 1, size - 1)  # inside coordinates: 1..N-2
  j = jax.random.randint(j_key, (), 1, size - 1)
  crossed = jax.random.bernoulli(flip_key)  # (i, j), (j, i) rather than (i, i), (j, j)
  row, col = np.arange(size * size) // size, np.arange(size * size) % size
  at_ij = (row == i) & (col == j)
  at_ji = (row == j) & (col == i)
  diagonal = (row == col) & ((row == i) | (row == j))
  two = jnp.where(crossed, at_ij | at_ji, diagonal)
  return jnp.where(case == 1, at_ij, jnp.where(case == 2, two, False))


@functools.partial(jax.jit, static_argnames="size")
def fresh_state(board, player, quiet_plies, passed, terminated, size: int) -> State:
  """A state with no last move and zero rewards from a mover-frame `[S]` board; the history
  holds only this position, at row `quiet_plies` (the earlier rows are unknown: empty)."""
  board = jnp.asarray(board, jnp.int8)
  terminated = jnp.asarray(terminated, jnp.bool_)
  rows = jnp.arange(4 * size * size)[:, None] == quiet_plies
  history = jnp.where(rows, position_key(board, size)[None, :], EMPTY_KEY)
  return State(
      current_player=jnp.asarray(player, jnp.int32),
      legal_action_mask=legal_mask(board, size) & ~terminated,
      terminated=terminated,
      rewards=jnp.zeros(2, jnp.float32),
      step_count=jnp.int32(0),
      last_move=jnp.full(2, -1, jnp.int32),
      board=board,
      passed=jnp.asarray(passed, jnp.bool_),
      quiet_plies=jnp.asarray(quiet_plies, jnp.int32),
      history=history,
      size=size,
  )


class Slider(base.Game):
  """Slider (2017 course rules). See the module docstring for frames, actions and keys.

  Args:
    size: N, the board's side, in 4..12 (the history and the game-length bound grow as N^2
      and N^4).
    blocks: "random" (default; drawn in `init` from its key as the course referee did: with
      probability 1/3 each no block, one block on a random square strictly inside the border,
      or two blocks (i, i) and (j, j), or (i, j) and (j, i), for random inside coordinates i, j
      that may coincide), "none", or square names such as ["c3", "d4"] or "c3,d4" (on the
      board, not on a starting square).
  """

  name = "slider"
  # A config's `blocks` is also the network's depth: `--set game.blocks=none` names this one.
  options_spec = (
      base.Option("size", int, "the board's side", low=MIN_SIZE, high=MAX_SIZE),
      base.Option("blocks", str, "the blocks of a game's start: random, none, or squares such "
                  "as c3,d4", aliases=("obstacles",)))
  piece_symbols = {0: ".", 1: "H", 2: "V", 3: "#"}

  # -- What a game says about itself (see `base.Game`) -------------------------------------------
  side_names = ("H", "V")

  @property
  def rules_text(self) -> str:
    n = self.size
    return f"""\
Slider ({n}x{n})
  H (player 0) starts on file a and moves first, one step right, up or down; V starts on
  rank 1 and moves one step up, left or right. Pieces never enter a piece or a block (#).
  H leaves the board to the right of the last file, V over the top; there are no captures.
  With no move you must pass. The first to move all its pieces off wins; two passes in a
  row, a threefold repetition, or {4 * n * n} plies without a forward move is a draw.
  Notation: from-square then to-square, e.g. a2b2; e3+ for a piece leaving; - to pass."""

  @property
  def example_move(self) -> str:
    """"a5b5" on 5x5: H's top piece steps right, always legal at the start (blocks stand
    strictly inside the border, so never on the top rank)."""
    return f"a{self.size}b{self.size}"

  def describe(self) -> str:
    return f"{self.name} {self.size}x{self.size}"

  def options(self) -> dict:
    return {"size": self.size, "blocks": self.blocks_option}

  def legend(self) -> str:
    return "H, V = the two sides' pieces, # = a block"

  def piece_owner(self, code: int) -> int | None:
    """H's pieces (1) are player 0's, V's (2) player 1's; a block (3) is nobody's."""
    return None if int(code) == 3 else int(code) - 1

  def piece_is_king(self, code: int) -> bool:
    return False

  def alphabeta_evaluation(self, state: State) -> jax.Array:
    """The hand-written baseline (`hand_evaluation`): the race of distances, and mobility."""
    return hand_evaluation(state.board, self.size)

  def evaluation_features(self, state: State) -> jax.Array:
    """`[5]` float32 `features` of the position from the mover's side (`FEATURE_NAMES`)."""
    return features(state.board, self.size)

  def evaluation_planes(self, state: State) -> jax.Array:
    """`[N, N, 7]` float32: the observation, then the mover's pieces' steps to go (N - file
    index; the mover leaves to the right) and the opponent's (N - rank index; it leaves at the
    top of the mover's frame), 0 elsewhere. In steps, unscaled: a step is a tempo on any board."""
    obs, to_go = state.observation, self.size - np.arange(self.size, dtype=np.float32)
    race = [obs[..., 0] * to_go[None, :], obs[..., 1] * to_go[:, None]]
    return jnp.concatenate([obs, jnp.stack(race, axis=-1)], axis=-1)

  def move_order_scores(self, state: State) -> jax.Array:
    """Forward moves first (they are irreversible progress), leaving the board before them."""
    n = self.size
    forward = np.zeros((n * n, NUM_DIRECTIONS), np.float32)
    forward[:, 0] = 1.0
    forward[np.arange(n * n) % n == n - 1, 0] = 1.5
    return jnp.asarray(np.append(forward.reshape(-1), 0.0))

  def move_squares(self, move: str) -> tuple[str | None, list[str]]:
    """A step "a2b2" -> ("a2", ["b2"]); a piece leaving "e3+" -> ("e3", []); a pass -> (None,
    []): moves off the board and passes have no target square to click."""
    if move in PASS_MOVES:
      return None, []
    if move.endswith("+"):
      return move[:-1], []
    return super().move_squares(move)

  def __init__(self, size: int = 5, blocks: str | Sequence[str] = "random"):
    self.option("size").check(self.name, size)
    n = self.size = int(size)
    self.rows, self.cols, self.num_squares, self.action_planes = n, n, n * n, NUM_DIRECTIONS
    self.pass_action = NUM_DIRECTIONS * n * n
    self.num_actions, self.observation_shape = self.pass_action + 1, (n, n, 5)
    self.quiet_limit = 4 * n * n  # plies without a forward move that draw
    self.max_game_length = self.quiet_limit * (2 * n * (n - 1) - 1)
    self.key_words = key_layout(n)[2]
    start = np.zeros((n, n), np.int8)
    start[1:, 0], start[0, 1:] = 1, -1  # H on a2..aN, V on b1..N1
    self._start = start.reshape(-1)
    self._transpose = transpose_squares(n)
    self.blocks_option, self._fixed_blocks = self._parse_blocks(blocks)

  def _parse_blocks(self, blocks) -> tuple[str, np.ndarray]:
    """("random" | "none" | the squares in board order, `[S]` bool absolute block mask)."""
    mask = np.zeros(self.num_squares, bool)
    if isinstance(blocks, str) and any(ch.isdigit() for ch in blocks):
      blocks = [name.strip() for name in blocks.split(",") if name.strip()]  # "c3,d4"
    if isinstance(blocks, str):
      if blocks not in BLOCK_OPTIONS:
        raise ValueError(f"slider: blocks must be 'random', 'none' or a list of squares like "
                         f"['c3', 'd4'], got {blocks!r}")
      return blocks, mask
    try:
      names = list(blocks)
    except TypeError:
      raise ValueError(f"slider: blocks must be 'random', 'none' or a list of squares, "
                       f"got {blocks!r}") from None
    for name in names:
      if not isinstance(name, str):
        raise ValueError(f"slider: a block must be a square name like 'c3', got {name!r}")
      squares = notation.parse_squares(name, self.size, self.size, self.name)
      if len(squares) != 1:
        raise ValueError(f"slider: malformed block {name!r}: name one square, like 'c3'")
      square = squares[0]
      if self._start[square] != 0:
        raise ValueError(f"slider: block {name} is on a starting square")
      if mask[square]:
        raise ValueError(f"slider: block {name} is listed twice")
      mask[square] = True
    return tuple(notation.square_name(int(s), self.size) for s in np.flatnonzero(mask)), mask

  def symmetries(self) -> tuple[base.Symmetry, ...]:
    """None: every reflection or rotation of the board reverses a side's forward direction or
    exchanges the sides (the transpose), so no symmetry keeps positions' values."""
    return ()

  # -- Pure array functions --------------------------------------------------------------------
  def draw_blocks(self, key: jax.Array) -> jax.Array:
    """`[S]` bool blocks drawn as the course referee did (see the class docstring)."""
    return draw_blocks(key, size=self.size)

  def init(self, key: jax.Array) -> State:
    """The start position; with `blocks="random"` the blocks are drawn from `key`."""
    if self.blocks_option == "random":
      blocks = draw_blocks(key, size=self.size)
    else:
      blocks = jnp.asarray(self._fixed_blocks)
    board = jnp.where(blocks, jnp.int8(BLOCK), self._start)
    return fresh_state(board, 0, 0, False, False, size=self.size)

  def _step(self, state: State, action: jax.Array) -> State:
    """Plays `action` for the mover of a live state (see `base` for the conventions).

    An illegal action (a pass while a move exists, or an action outside `[0, A)`, included)
    ends the game as a loss for the mover: the board is left as it was (seen by the next
    player), and `last_move` is (-1, -1). (`base.Game.step` makes stepping a finished game a
    no-op apart from zeroing the rewards.)
    """
    n, size = self.num_squares, self.size
    action = jnp.asarray(action, jnp.int32)
    player, board = state.current_player, state.board
    legal = jnp.any(state.legal_action_mask & (jnp.arange(self.num_actions) == action))
    is_pass = action == self.pass_action
    moves = legal & ~is_pass
    frm = jax.lax.div(action, NUM_DIRECTIONS)
    direction = action - NUM_DIRECTIONS * frm
    to = frm + jnp.where(direction == 0, 1, jnp.where(direction == 1, size, -size))
    forward = moves & (direction == 0)
    leaves = forward & (frm % size == size - 1)
    # Nothing is taken or placed for a pass or an illegal action, nothing placed when leaving.
    frm = jnp.where(moves, frm, n)
    to = jnp.where(moves & ~leaves, to, n)
    moved = jax.lax.platform_dependent(board, frm, to, cpu=_move_indexed, default=_move_onehot)
    won = leaves & ~jnp.any(moved == 1)
    next_board = _next_frame(moved, size)
    # Repetition: the new position against those since the last forward move with the same
    # side to move (same parity), then recorded at row `quiet`.
    quiet = jnp.where(forward, 0, state.quiet_plies + 1)
    key = position_key(next_board, size)
    rows = jnp.arange(self.quiet_limit)
    same = (jnp.all(state.history == key[None, :], axis=1) & (rows < quiet)
            & ((quiet - rows) % 2 == 0))
    repeated = jnp.sum(same) >= 2  # this is the third time
    history = jnp.where((rows == quiet)[:, None], key[None, :], state.history)
    draw = legal & ((is_pass & state.passed) | repeated | (quiet >= self.quiet_limit))
    terminated = ~legal | won | draw
    mover_reward = jnp.where(legal, jnp.where(won, 1.0, 0.0), -1.0)
    # `last_move` in absolute squares: V's frame is the transpose.
    absolute = lambda s: jnp.where(player == 1, (s % size) * size + s // size, s)
    last_move = jnp.stack([jnp.where(frm < n, absolute(frm), -1),
                           jnp.where(to < n, absolute(to), -1)])
    return State(
        current_player=1 - player,
        legal_action_mask=legal_mask(next_board, size) & ~terminated,
        terminated=terminated,
        rewards=base.zero_sum_rewards(player, mover_reward),
        step_count=state.step_count + 1,
        last_move=last_move.astype(jnp.int32),
        board=next_board,
        passed=legal & is_pass,
        quiet_plies=quiet,
        history=history,
        size=size,
    )

  # -- Python side ---------------------------------------------------------------------------------
  def _to_mover(self, square: int, player: int) -> int:
    """Absolute square <-> the mover's frame (the transpose for V; an involution)."""
    return int(self._transpose[square]) if player == 1 else int(square)

  def board_array(self, state: State) -> np.ndarray:
    """`[N, N]` int: 0 empty, 1 H, 2 V, 3 block; row 0 = rank 1 (absolute)."""
    n = self.size
    board = np.asarray(state.board, np.int64).reshape(n, n)
    player = int(state.current_player)
    if player == 1:
      board = board.T  # Back to H's frame.
    mover, opponent = (1, 2) if player == 0 else (2, 1)
    return np.select([board == 1, board == -1, board == BLOCK], [mover, opponent, 3], 0)

  def action_to_move(self, state: State, action: int) -> str:
    action = int(action)
    if not 0 <= action < self.num_actions:
      raise ValueError(f"slider: action {action} is out of range [0, {self.num_actions})")
    if action == self.pass_action:
      return "-"
    n, player = self.size, int(state.current_player)
    frm, direction = divmod(action, NUM_DIRECTIONS)
    row, col = divmod(frm, n)
    name = notation.square_name(self._to_mover(frm, player), n)
    if direction == 0 and col == n - 1:
      return name + "+"
    row_to, col_to = row + (0, 1, -1)[direction], col + (direction == 0)
    if not 0 <= row_to < n:
      raise ValueError(f"slider: action {action} steps off the side of the {n}x{n} board")
    to = self._to_mover(row_to * n + col_to, player)
    return name + notation.square_name(to, n)

  def _parse_move(self, state: State, move: str) -> int:
    move = move.strip().lower()
    if move in PASS_MOVES:
      return self.pass_action
    n, player = self.size, int(state.current_player)
    side = self.side_names[player]
    leaving = move.endswith("+")
    squares = notation.parse_squares(move[:-1] if leaving else move, n, n, self.name)
    if len(squares) != (1 if leaving else 2):
      raise ValueError(f"slider: malformed move {move!r}: expected 'a2b2', 'e3+' or '-'")
    frm = self._to_mover(squares[0], player)
    row, col = divmod(frm, n)
    if leaving:
      if col != n - 1:
        edge = f"file {notation.FILES[n - 1]}" if player == 0 else f"rank {n}"
        raise ValueError(f"slider: {move!r}: {side} leaves the board only from {edge}")
      return frm * NUM_DIRECTIONS
    row_to, col_to = divmod(self._to_mover(squares[1], player), n)
    steps = {(0, 1): 0, (1, 0): 1, (-1, 0): 2}
    delta = (row_to - row, col_to - col)
    if delta not in steps:
      ways = "right, up or down" if player == 0 else "up, left or right"
      raise ValueError(f"slider: {move!r} is not a one-step move for {side} ({ways})")
    return frm * NUM_DIRECTIONS + steps[delta]

  def from_ascii(self, text: str, to_move: int = 0, *, quiet_plies: int = 0,
                 passed: bool = False) -> State:
    """Builds a position from a drawing, rank N first, for tests and examples.

    Each rank is a line of N cells: `H`, `V`, `#` (block) or `.`; spaces, `|`, rank numbers at
    either end of a line and a line of file letters are ignored, so `azjax.play.render.to_ascii`'s
    board reads back. The blocks come from the drawing (the game's `blocks` option is not
    used). A side without pieces has already won, and the position comes back terminated
    (zero rewards). `quiet_plies` plies are taken to have passed since the last forward move,
    with positions other than this one (so repetition counts start here), and `passed` says
    whether the last action was a pass. `step_count` is 0, `last_move` (-1, -1).

    Raises:
      ValueError: for a malformed drawing, too many pieces, or a bad `to_move`/`quiet_plies`.
    """
    n = self.size
    if to_move not in (0, 1):
      raise ValueError(f"slider: to_move must be 0 or 1, got {to_move!r}")
    if not 0 <= quiet_plies < self.quiet_limit:
      raise ValueError(f"slider: quiet_plies must be in 0..{self.quiet_limit - 1}, "
                       f"got {quiet_plies}")
    board = notation.parse_drawing(text, "slider", {"h": 1, "v": -1, "#": BLOCK, ".": 0}, n, n,
                                   symbols="'H', 'V', '#' and '.'", ignore=r"[\s|\[\]()]")
    for code, side in ((1, "H"), (-1, "V")):
      if (board == code).sum() > n - 1:
        raise ValueError(f"slider: {side} has more than {n - 1} pieces")
    decided = not (board == 1).any() or not (board == -1).any()
    if to_move == 1:
      board = np.where(board == BLOCK, board, -board).T
    return fresh_state(board.reshape(-1), to_move, quiet_plies, passed, decided, size=n)
