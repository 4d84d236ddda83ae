"""Human concepts as functions of a position, from the side of the player to move.

Each concept is a pure jnp function of one unbatched game state returning a float32 scalar;
`labels` vmaps and jits them over a batch. Boards are stored in the mover's frame (row 0 is
the mover's home rank and the mover moves towards higher rows; the opponent's pieces are
negative), so "the mover's side" needs no case on the player. `flip` gives the opponent's
view of the same board, which turns a mover's concept into the opponent's (must defend =
the opponent's win in one).

Breakthrough (`R x C` grid, +1 mover, -1 opponent):

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

Checkers (`8 x 8`, +1 / +2 own man / king, -1 / -2 the opponent's):

    material             own pieces - opponent pieces (kings count 1)                 (count)
    material_advantage   material > 0                                                (binary)
    king_difference      own kings - opponent kings                                   (count)
    forced_jump          the mover must capture (a jump is available or pending)     (binary)
    multi_jump_available a legal jump after which the same piece must jump again     (binary)
    pieces_en_prise      own pieces the opponent could capture if it were to move     (count)
    back_rank_guards     own pieces on the mover's home rank (they stop crowning)     (count)
    promotion_threat     a legal move of the mover crowns a man                      (binary)
    centre_control       own - opponent pieces on the 8 dark squares of the central 4x4 (count)

Binary concepts are probed with classifiers (balanced accuracy), counts with Ridge (R^2).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax.games.base import Game

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class Concept:
  """A named function of one unbatched state: `fn(state) -> [] float32`."""

  name: str
  fn: Callable[[Any], Array]
  binary: bool  # 0/1 labels (classifiers) rather than a count (regression)
  description: str


def flip(grid: Array) -> Array:
  """`[R, C]` board in the mover's frame -> the same board seen by the opponent."""
  return -grid[::-1, ::-1]


def _shift(x: Array, rows: int, cols: int, fill) -> Array:
  """`out[r, c] = x[r + rows, c + cols]`, `fill` where that falls off the board. `x` `[R, C]`."""
  height, width = x.shape
  pad = max(abs(rows), abs(cols))
  padded = jnp.pad(x, pad, constant_values=fill)
  return jax.lax.dynamic_slice(padded, (pad + rows, pad + cols), (height, width))


# -- Breakthrough ---------------------------------------------------------------------------------


def breakthrough_moves(grid: Array) -> tuple[Array, Array, Array, Array]:
  """The +1 side's moves on `grid` `[R, C]` (moving towards higher rows).

  Returns `(left, straight, right, captures)`, each `[R, C]` bool over the origin squares:
  whether the piece there can move forward-left / straight / forward-right, and whether one
  of its diagonal moves takes a piece. Squares beyond the board count as own pieces (blocked).
  """
  mine = grid == 1
  ahead_left = _shift(grid, 1, -1, 1)
  ahead = _shift(grid, 1, 0, 1)
  ahead_right = _shift(grid, 1, 1, 1)
  left = mine & (ahead_left != 1)
  straight = mine & (ahead == 0)
  right = mine & (ahead_right != 1)
  captures = (left & (ahead_left == -1)) | (right & (ahead_right == -1))
  return left, straight, right, captures


def _bt_win_in_one(grid: Array) -> Array:
  """Whether the +1 side, to move on `grid`, can win at once."""
  left, straight, right, captures = breakthrough_moves(grid)
  any_move = left | straight | right
  reaches_last_rank = jnp.any(any_move[-2])  # a move from the next-to-last rank
  takes_last_piece = (jnp.sum(grid == -1) == 1) & jnp.any(captures)
  return reaches_last_rank | takes_last_piece


def _bt_mobility(grid: Array) -> Array:
  left, straight, right, _ = breakthrough_moves(grid)
  return jnp.sum(left) + jnp.sum(straight) + jnp.sum(right)


@functools.lru_cache(maxsize=None)
def _cones(rows: int, cols: int) -> np.ndarray:
  """`[R * C, R * C]` float32: `[s, t]` = 1 when square t lies in square s's forward cone."""
  row, col = np.divmod(np.arange(rows * cols), cols)
  ahead = row[None, :] - row[:, None]
  return ((ahead > 0) & (np.abs(col[None, :] - col[:, None]) <= ahead)).astype(np.float32)


def breakthrough_concepts(rows: int, cols: int) -> dict[str, Concept]:
  """The Breakthrough concepts (see the module docstring) for an `rows x cols` board."""
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

  items = [
      ("material", material, False, "own pieces - opponent pieces"),
      ("material_advantage", lambda s: material(s) > 0, True, "material > 0 (the thesis)"),
      ("mobility", lambda s: _bt_mobility(grid(s)) - _bt_mobility(flip(grid(s))), False,
       "own legal moves - opponent legal moves"),
      ("capture_available", lambda s: jnp.any(breakthrough_moves(grid(s))[3]), True,
       "a move of the mover captures"),
      ("win_in_one", lambda s: _bt_win_in_one(grid(s)), True, "the mover can win at once"),
      ("must_defend", lambda s: _bt_win_in_one(flip(grid(s))), True,
       "the opponent threatens to win at once"),
      ("advancement", advancement, False, "sum of own rows - sum of opponent rows"),
      ("home_guards", lambda s: jnp.sum(grid(s)[0] == 1), False,
       "own pieces on the home rank"),
      ("free_runner", free_runner, True, "an own piece no opponent piece can stop"),
  ]
  return {name: Concept(name, _float(fn), binary, doc) for name, fn, binary, doc in items}


# -- Checkers -------------------------------------------------------------------------------------

_DIAGONALS = ((1, -1), (1, 1), (-1, -1), (-1, 1))  # (row, column) steps; rows + 1 = forward


def checkers_victims(grid: Array, side: int) -> Array:
  """`[8, 8]` bool: the pieces of `-side` that a piece of `side` could jump right now.

  `grid` is in the mover's frame; `side` +1 is the mover (men move towards higher rows), -1
  the opponent (men move towards lower rows); kings jump in all four diagonals. The landing
  square must be empty and on the board. Whose turn it is, and a pending multi-jump, are not
  considered.
  """
  attackers = grid * side > 0
  kings = grid * side == 2
  victims = grid * side < 0
  empty = grid == 0
  found = jnp.zeros(grid.shape, jnp.bool_)
  for dr, dc in _DIAGONALS:
    may_move = attackers & (kings | (dr == side))
    attacker_behind = _shift(may_move, -dr, -dc, False)
    landing_free = _shift(empty, dr, dc, False)
    found = found | (victims & attacker_behind & landing_free)
  return found


_CENTRE = np.zeros((8, 8), np.bool_)
_CENTRE[2:6, 2:6] = True


def _children(env: Game, state):
  """The state after each of the `A` actions (vmapped `step`); only legal ones are meaningful."""
  actions = jnp.arange(env.num_actions, dtype=jnp.int32)
  return jax.vmap(env.step, in_axes=(None, 0))(state, actions)


def checkers_concepts(env: Game) -> dict[str, Concept]:
  """The checkers concepts (see the module docstring). `env` steps the children of a state."""

  def grid(state):
    return jnp.asarray(state.board, jnp.int32).reshape(8, 8)

  def material(state):
    g = grid(state)
    return jnp.sum(g > 0) - jnp.sum(g < 0)

  def multi_jump(state):
    children = _children(env, state)
    again = (children.current_player == state.current_player) & ~children.terminated
    return jnp.any(state.legal_action_mask & again)

  def promotion(state):
    # Crowning ends the turn, so a crowned man is a king of the side that just moved: -2 in
    # the child's board (the opponent's frame).
    children = _children(env, state)
    kings_after = jnp.sum(children.board == -2, axis=-1)
    return jnp.any(state.legal_action_mask & (children.current_player != state.current_player)
                   & (kings_after > jnp.sum(state.board == 2)))

  def centre(state):
    g = grid(state)
    return jnp.sum((g > 0) & _CENTRE) - jnp.sum((g < 0) & _CENTRE)

  items = [
      ("material", material, False, "own pieces - opponent pieces"),
      ("material_advantage", lambda s: material(s) > 0, True, "material > 0"),
      ("king_difference", lambda s: jnp.sum(grid(s) == 2) - jnp.sum(grid(s) == -2), False,
       "own kings - opponent kings"),
      ("forced_jump", lambda s: jnp.any(checkers_victims(grid(s), 1)) | (s.jump_square >= 0),
       True, "the mover must capture"),
      ("multi_jump_available", multi_jump, True, "a jump that must continue"),
      ("pieces_en_prise", lambda s: jnp.sum(checkers_victims(grid(s), -1)), False,
       "own pieces the opponent could take"),
      ("back_rank_guards", lambda s: jnp.sum(grid(s)[0] > 0), False,
       "own pieces on the home rank"),
      ("promotion_threat", promotion, True, "a legal move crowns a man"),
      ("centre_control", centre, False, "own - opponent pieces in the centre"),
  ]
  return {name: Concept(name, _float(fn), binary, doc) for name, fn, binary, doc in items}


def _float(fn: Callable[[Any], Array]) -> Callable[[Any], Array]:
  return lambda state: jnp.asarray(fn(state), jnp.float32)


# -- Registry -------------------------------------------------------------------------------------


def concepts_for(env: Game) -> dict[str, Concept]:
  """The concepts of `env`'s game, by name, in a fixed order.

  Raises:
    ValueError: for a game without concepts (only Breakthrough and checkers have them).
  """
  if env.name == "breakthrough":
    return breakthrough_concepts(env.rows, env.cols)
  if env.name == "checkers":
    return checkers_concepts(env)
  raise ValueError(f"probe: no concepts for {env.name!r}; concepts exist for breakthrough "
                   "and checkers")


@functools.lru_cache(maxsize=None)
def _label_fn(env: Game, names: tuple[str, ...]) -> Callable[[Any], dict[str, Array]]:
  chosen = [concepts_for(env)[name] for name in names]
  return jax.jit(jax.vmap(lambda state: {c.name: c.fn(state) for c in chosen}))


def labels(env: Game, states: Any, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
  """Concept labels of a batch of states: `{name: [B] float32}` in the concepts' order.

  Args:
    env: the game (its concepts are `concepts_for(env)`).
    states: a batched state (leading dimension `B`).
    names: the concepts to compute (default: all); unknown names raise ValueError.
  """
  known = concepts_for(env)
  names = tuple(known) if names is None else tuple(names)
  unknown = [n for n in names if n not in known]
  if unknown:
    raise ValueError(f"probe: unknown concepts {unknown} for {env.name}; known: {list(known)}")
  out = _label_fn(env, names)(states)
  return {name: np.asarray(out[name]) for name in names}
