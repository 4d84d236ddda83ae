"""Contracts shared by every game: the state fields, the `Game` interface, batched helpers.

Every game module defines a frozen `State` pytree (a `flax.struct.dataclass`) holding at least
the fields of `StateLike` below, and a `Game` subclass whose `init` and `_step` are pure
functions of one unbatched state (the public `step` wraps `_step` once, here). Batching happens
outside, with `jax.vmap`, at a few named places (self-play, the arena, benchmarks).

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
  `rewards` is zeroed (so summing rewards over a trajectory never double counts). `Game.step`
  applies this rule for every game, so a game's `_step` only handles live states.
* Playing an illegal action in a live state is a **loss for the mover**: the game ends with
  reward -1 for the mover and +1 for the opponent, and the board is left as it was. This is
  pgx's convention; it keeps every game in a batch well defined and makes an agent bug show up
  in its results instead of silently changing the rules.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Protocol, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax.games.notation import parse_squares, square_name
from azjax.games.options import Option  # noqa: F401 (`base.Option`, as the games name it)

Array = jax.Array
PRNGKey = jax.Array


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


@dataclasses.dataclass(frozen=True)
class SvgStyle:
  """How `azjax.play.render.to_svg` draws a game's board (the `Game.svg_style` hook)."""

  kind: str  # "checkered", "frame" (a panel with holes, Connect Four) or "grid" (tic-tac-toe)
  light: str  # colours, as SVG accepts them ("#f0d9b5")
  dark: str
  pieces: tuple[str, str]  # fill of player 0's and player 1's pieces
  outlines: tuple[str, str]
  background: str = "#ffffff"
  last_move: str = "#f6d743"
  highlight: str = "#2f9e44"


CHECKERED_STYLE = SvgStyle("checkered", light="#f0d9b5", dark="#b58863",
                           pieces=("#f8f6f0", "#262626"), outlines=("#333333", "#000000"))


@dataclasses.dataclass(frozen=True)
class Concept:
  """A human concept for probing (the `Game.concepts` hook): `fn(state) -> [] float32`, a pure
  jnp function of one unbatched state from the side of its player to move."""

  name: str
  fn: Callable[[Any], Array]
  binary: bool  # 0/1 labels (classifiers) rather than a count (regression)
  description: str

  @classmethod
  def of(cls, name: str, fn: Callable[[Any], Any], binary: bool, description: str) -> "Concept":
    """A concept whose `fn` may return a bool or an int: its value is cast to float32."""
    return cls(name, lambda state: jnp.asarray(fn(state), jnp.float32), binary, description)


class Game:
  """Interface of a two-player, zero-sum, perfect-information game.

  **What every game defines** (the base raises NotImplementedError): the attributes below
  (`name` ... `piece_symbols`) and the methods `init`, `_step`, `board_array`, `action_to_move`
  and `_parse_move`. `init` and `_step` must be pure, unbatched, jit- and vmap-able, with no
  Python control flow on traced values. A game writes `_step` for live states only; the public
  `step` (here) adds the no-op on terminated states, once for every game.

  **What a game says about itself** (optional hooks, grouped in the class body under that
  title). Everything specific to one game lives on its class and the other modules ask the
  game, never its name, so a new game is one module plus one line in the registry
  (`azjax/games/__init__.py`). Each default suits a game without the feature:

  * `side_names: tuple[str, str]`: what people call player 0 and player 1 ("white",
    "black"); play and the web page. Default ("first player", "second player").
  * `rules_text: str`: a short tutorial of the rules and the move notation (`play.rules`, the
    page's rules box). Default: "<name>: no tutorial written."
  * `example_move: str`: a move in the notation, legal in the start position, for prompts.
    Default: the first legal move of the start position.
  * `legend() -> str | None`: what the ASCII board's letters mean ("w = white, b = black").
    Default: from `piece_symbols` and `side_names`; None when the letters are the names.
  * `describe() -> str`: the game and its variant for people ("breakthrough 6x6"). Default:
    `name`.
  * `svg_style: SvgStyle`: how `render.to_svg` draws the board. Default `CHECKERED_STYLE`.
  * `alphabeta_evaluation(state) -> [] float32`: the alpha-beta agent's default evaluation of
    a live state, from the mover's side, far below `alphabeta.WIN_SCORE`. Default 0 (pure
    search).
  * `move_order_scores(state) -> [A] float32`: how promising each action of a live state looks
    before searching it, of order 1 (higher first), for alpha-beta's move ordering
    (`azjax.alphabeta.search`). Default 0 (the history heuristic alone orders).
  * `evaluation_features(state) -> [F] float32 | None`: hand-made features of a live state
    from the mover's side, the input of a small learned evaluation (`azjax.tdleaf`'s feature
    MLP). Default None (learn from the observation with a network instead).
  * `evaluation_planes(state) -> [R, C, P] float32 | None`: the observation with planes that
    give the pieces' geometry (Slider: each piece's steps still to go), the input of
    `azjax.tdleaf`'s local-sum evaluation, which sums a value over the squares marked by the
    last two planes (non-zero on the mover's and the opponent's pieces). Default None.
  * `concepts() -> dict[str, Concept]`: the concepts `azjax.probe` labels positions with.
    Default {} (probing refuses the game).
  * `openspiel_game() -> (name, params) | None`: the OpenSpiel game with the same rules, for
    `azjax.evaluate.openspiel_bridge`. Default None (no counterpart). Moves are matched through a
    common key: `openspiel_key(state, action)` of an azjax action (default: its notation) and
    `openspiel_action_key(text)` of OpenSpiel's action string (default: the string).
  * `move_path(text) -> list[str]`: a typed move split into one move per action (checkers'
    "c3e5g7" -> ["c3e5", "e5g7"]); `path_to_actions` plays such a path. Default [text].
  * `move_squares(move) -> (from_square, target_squares)`: the squares a click interface
    highlights for a legal move. Default: the squares of the notation ("a2a3" -> ("a2",
    ["a3"]), "b2" -> (None, ["b2"])).
  * `one_click_move(square) -> str | None`: the move a click on `square` plays at once on the
    web page (tic-tac-toe: the square; Connect Four: its column), or None where a click first
    selects a piece. Default None.
  * `no_move_reason: str`: why an own piece may have no legal move though a square next to it
    is free, said when one is clicked (checkers: "a capture is compulsory"). Default "".
  * `options_spec: tuple[Option, ...]`: the constructor options a run's config may set
    (`Config.game_options`; Breakthrough: rows, cols, observation), each with its type, range
    or values and help; the constructor checks its arguments with them (`Option.check`), and
    `games.check_options` checks a config's before anything is built. Default () (none).
  * `encoding_options`: options changing only the network's input (`agents.reading_with`);
    `encoded(state)` is `state` observed in this object's encoding. Default () and `state`.
  * `options() -> dict`: this object's constructor options by argument name, so that
    `type(game)(**game.options())` is the same variant; `variant_key()`, a hashable key of the
    game and all of them, keys caches of compiled functions (play's engines). Default {}.
  * `piece_owner(code)`, `piece_is_king(code)`: who owns a piece code of `board_array`, and
    whether it is a king. Default: the convention in `azjax.play.render`'s docstring.
  * `exact_solver() -> Callable[[], Solver] | None`, a classmethod (the registry asks the
    class, without building a game): the class of the game's exact solver
    (`azjax.solver.Solver`; `solver.for_game` builds it once), for the solver agent and the
    labelled positions of `azjax.solver.benchmark`. `solver.SOLVED_GAMES` are the games with
    one. Default None (not solved).
  * `benchmark_ply_ranges: tuple[tuple[int, int], ...]`: the inclusive ply ranges (plies
    played before the position) that `azjax.solver.benchmark` reports mistakes by, e.g.
    ((0, 2), (3, 5), (6, 8)). Default () (four equal ranges over the positions' plies).

  Dependencies point one way: a game module imports jax, numpy and this module, never
  `render`, `alphabeta`, `probe`, the solver or the OpenSpiel bridge at import time. So the
  hooks return plain data and pure functions: the style and concept types are defined here
  (`SvgStyle`, `Concept`), an evaluation or concept function lives in its game's module, and
  the OpenSpiel game is named, not loaded (the bridge loads it). The one exception is
  `exact_solver`, which imports `azjax.solver` when called: the solvers live there, beside
  the interface and the code that uses them.
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
  # Glyphs used by `azjax.play.render` for the absolute board codes of `board_array`.
  piece_symbols: dict[int, str]

  # -- Pure array functions --------------------------------------------------------------------
  def init(self, key: PRNGKey) -> Any:
    """Returns the start position. `key` is accepted for API uniformity (rules are fixed)."""
    raise NotImplementedError

  def step(self, state: Any, action: Array) -> Any:
    """Plays `action` (int32 scalar) for `state.current_player`. See module docstring.

    A terminated state comes back unchanged with zero rewards; any other goes to `_step`.
    Both are computed and one is selected with `where`: under `vmap` (self-play, search) a
    `lax.cond` on a batched predicate runs both branches anyway.
    """
    finished = state.replace(rewards=jnp.zeros(2, jnp.float32))
    return tree_select(state.terminated, finished, self._step(state, action))

  def _step(self, state: Any, action: Array) -> Any:
    """`step` for a live state: the game's own rules (legal moves, illegal-move loss, end)."""
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

  def path_to_actions(self, state: Any, path: str, *, complete: bool = True) -> list[int]:
    """Actions of a move typed as a path (`move_path`), e.g. checkers' "c3e5g7" (two hops).

    Each move of the path is checked against the position it is played in; the turn must not
    pass before the path ends.

    Args:
      state: the position before the path.
      path: the typed move.
      complete: also require the turn to be over at the end of the path (the same player not
        to move again).
    Returns:
      The action ids, in order.
    Raises:
      ValueError: for a malformed or illegal move of the path, a move after the turn has
        passed, or (if `complete`) a path after which the same player must move again.
    """
    # Jitted once per game object: a path is typed by people, one step at a time.
    step = self.__dict__.get("_path_step")
    if step is None:
      step = self.__dict__["_path_step"] = jax.jit(self.step)
    player = int(state.current_player)
    actions = []
    for i, move in enumerate(self.move_path(path)):
      if i > 0 and (bool(state.terminated) or int(state.current_player) != player):
        raise ValueError(f"{self.name}: path {path!r} goes on after the turn ended, at {move!r}")
      try:
        action = self.move_to_action(state, move)
      except ValueError as err:
        reason = str(err).removeprefix(f"{self.name}: ")
        raise ValueError(f"{self.name}: path {path!r}: {reason}") from None
      actions.append(action)
      state = step(state, jnp.int32(action))
    if complete and not bool(state.terminated) and int(state.current_player) == player:
      raise ValueError(
          f"{self.name}: path {path!r} is incomplete: the same player moves again "
          f"({' '.join(self.legal_moves(state))})")
    return actions

  def __repr__(self) -> str:
    return f"{type(self).__name__}(name={self.name!r}, rows={self.rows}, cols={self.cols})"

  # -- What a game says about itself (hooks with defaults; see the class docstring) ------------
  side_names: tuple[str, str] = ("first player", "second player")
  svg_style: SvgStyle = CHECKERED_STYLE
  no_move_reason: str = ""
  options_spec: tuple[Option, ...] = ()
  encoding_options: tuple[str, ...] = ()
  benchmark_ply_ranges: tuple[tuple[int, int], ...] = ()

  @property
  def rules_text(self) -> str:
    return f"{self.name}: no tutorial written."

  @property
  def example_move(self) -> str:
    return self.legal_moves(self.init(jax.random.key(0)))[0]

  def describe(self) -> str:
    return self.name

  def options(self) -> dict[str, Any]:
    return {}

  @classmethod
  def option(cls, name: str) -> Option:
    """The declared option `name` (one of `options_spec`)."""
    return next(option for option in cls.options_spec if option.name == name)

  def variant_key(self) -> tuple:
    """`(name, (option, value), ...)`: equal for two objects that play and encode alike."""
    return (self.name, *sorted(self.options().items()))

  def encoded(self, state: Any) -> Any:
    return state

  def piece_owner(self, code: int) -> int | None:
    """The player (0 or 1) owning piece `code` (non-zero): with `n` non-empty codes, codes
    `1..n/2` are player 0's and the others player 1's. A game with neutral pieces (Slider's
    blocks) returns None for them."""
    codes = sorted(c for c in self.piece_symbols if c != 0)
    return int(codes.index(int(code)) >= len(codes) // 2)

  def piece_is_king(self, code: int) -> bool:
    """Whether `code` is a player's second code (a checkers king)."""
    codes = sorted(c for c in self.piece_symbols if c != 0)
    per_player = max(len(codes) // 2, 1)
    return per_player > 1 and codes.index(int(code)) % per_player == per_player - 1

  def legend(self) -> str | None:
    parts = []
    for code, symbol in sorted(self.piece_symbols.items()):
      if code == 0:
        continue
      side = self.side_names[self.piece_owner(code)]
      if symbol == side:
        return None  # tic-tac-toe: the marks are the names
      parts.append(f"{symbol} = {side}" + (" king" if self.piece_is_king(code) else ""))
    return ", ".join(parts)

  def alphabeta_evaluation(self, state: Any) -> Array:
    return zero_evaluation(state)

  def move_order_scores(self, state: Any) -> Array:
    return jnp.zeros(state.legal_action_mask.shape, jnp.float32)

  def evaluation_features(self, state: Any) -> Array | None:
    return None

  def evaluation_planes(self, state: Any) -> Array | None:
    return None

  def concepts(self) -> dict[str, Concept]:
    return {}

  def openspiel_game(self) -> tuple[str, dict[str, Any]] | None:
    return None

  def openspiel_key(self, state: Any, action: int) -> str:
    return self.action_to_move(state, action)

  def openspiel_action_key(self, text: str) -> str:
    return text

  def move_path(self, text: str) -> list[str]:
    return [text]

  def move_squares(self, move: str) -> tuple[str | None, list[str]]:
    squares = [square_name(s, self.cols) for s in parse_squares(move, self.rows, self.cols,
                                                                  self.name)]
    if len(squares) == 1:
      return None, squares
    return squares[0], squares[1:]

  def one_click_move(self, square: str) -> str | None:
    del square  # A click selects a piece; a second click on a target square moves it.
    return None

  @classmethod
  def exact_solver(cls) -> Callable[[], Any] | None:
    return None


def zero_evaluation(state: Any) -> Array:
  """0 for every state: pure search, where only won and lost positions get a value. Works
  batched (`[B]` zeros for a batch)."""
  return jnp.zeros(jnp.shape(state.current_player), jnp.float32)


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


# -- Grids in the mover's frame (for evaluations and concepts) ------------------------------------


def flip_grid(grid: Array) -> Array:
  """`[R, C]` board in the mover's frame -> the same board seen by the opponent (rotated by 180
  degrees and negated), which turns a mover's concept into the opponent's."""
  return -grid[::-1, ::-1]


def shift_grid(x: Array, rows: int, cols: int, fill) -> Array:
  """`out[r, c] = x[r + rows, c + cols]`, `fill` where that falls off the board. `x` `[R, C]`."""
  height, width = x.shape
  pad = max(abs(rows), abs(cols))
  padded = jnp.pad(x, pad, constant_values=fill)
  return jax.lax.dynamic_slice(padded, (pad + rows, pad + cols), (height, width))


# -- Batched helpers used by self-play, the arena, tests and benchmarks ----------------------------


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
  """Stacks unbatched states into one batched state `[B, ...]`; any pytrees of one structure
  likewise (a sweep's `K` runs, `azjax.runs.loop`)."""
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def unstack_state(states: Any, index: int) -> Any:
  """Takes game `index` out of a batched state (row `index` of any stacked pytree)."""
  return jax.tree.map(lambda x: x[index], states)
