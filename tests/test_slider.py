"""Slider rules: scripted positions for every rule, notation, observations, random blocks, perft
and a differential test against a plain-Python implementation of the rules written here.

Positions are drawn rank N first: `H`, `V`, `#` (block), `.` (empty). Every jitted function is
built once per board size and shared by all tests (compilation dominates the run time).
"""

from __future__ import annotations

import functools
import random
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, games
from azjax.games import base, slider
from azjax.games.slider import Slider
from azjax.play import render

FILES = "abcdefghijkl"


@functools.lru_cache(maxsize=None)
def env_of(size: int) -> Slider:
  """The shared `blocks="none"` game of each size (states of any `blocks` option step alike)."""
  return Slider(size=size, blocks="none")


@functools.lru_cache(maxsize=None)
def _jitted_step(size: int):
  return jax.jit(env_of(size).step)


def step(state, action):
  return _jitted_step(state.size)(state, jnp.int32(action))


def play(state, moves: str):
  """Plays space-separated moves ("a2b2 e1e2 -") through the notation."""
  env = env_of(state.size)
  for move in moves.split():
    state = step(state, env.move_to_action(state, move))
  return state


def position(text: str, to_move: int = 0, **kwargs):
  size = len([line for line in text.strip().splitlines() if line.strip()])
  return env_of(size).from_ascii(text, to_move, **kwargs)


def drawing(state) -> str:
  env = env_of(state.size)
  symbols = np.array([".", "H", "V", "#"])[env.board_array(state)]
  return "\n".join("".join(rank) for rank in symbols[::-1])


def normalize(text: str) -> str:
  return "\n".join(line.replace(" ", "") for line in text.strip().splitlines())


def assert_states_equal(a, b):
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# -- A plain-Python reference, written apart from the module ---------------------------------------


def _square(name: str) -> tuple[int, int]:
  return FILES.index(name[0]), int(name[1:]) - 1


def _name(f: int, r: int) -> str:
  return f"{FILES[f]}{r + 1}"


class Reference:
  """Slider with sets of (file, rank) squares (0-based, absolute) and a list of positions.

  `seen` lists the positions (H set, V set, side to move) since the last forward move;
  `rewards` is the reward of the last transition to (H, V); `outcome` names how the game ended.
  """

  def __init__(self, n, h, v, blocks=(), turn=0, quiet=0, passed=False):
    self.n, self.h, self.v, self.blocks = n, set(h), set(v), frozenset(blocks)
    self.turn, self.quiet, self.passed = turn, quiet, passed
    self.seen = [self.position()]
    self.done = not self.h or not self.v
    self.rewards = (0.0, 0.0)
    self.outcome = None

  @classmethod
  def start(cls, n, blocks=()):
    return cls(n, {(0, r) for r in range(1, n)}, {(f, 0) for f in range(1, n)}, blocks)

  @classmethod
  def from_board(cls, board, turn, **kwargs):
    """From an absolute `[N, N]` code board (0 empty, 1 H, 2 V, 3 block; row = rank)."""
    squares = lambda code: {(f, r) for r, f in zip(*np.nonzero(board == code))}
    return cls(board.shape[0], squares(1), squares(2), squares(3), turn, **kwargs)

  def clone(self):
    other = object.__new__(Reference)
    other.__dict__.update(self.__dict__, h=set(self.h), v=set(self.v), seen=list(self.seen))
    return other

  def position(self):
    return frozenset(self.h), frozenset(self.v), self.turn

  def board(self):
    board = np.zeros((self.n, self.n), int)
    for code, squares in ((1, self.h), (2, self.v), (3, self.blocks)):
      for f, r in squares:
        board[r, f] = code
    return board

  def free(self, f, r):
    return (0 <= f < self.n and 0 <= r < self.n and (f, r) not in self.h
            and (f, r) not in self.v and (f, r) not in self.blocks)

  def moves(self) -> list[str]:
    if self.done:
      return []
    out = []
    if self.turn == 0:  # H: right (leaving from the last file), up, down
      for f, r in sorted(self.h):
        for df, dr in ((1, 0), (0, 1), (0, -1)):
          if df and f == self.n - 1:
            out.append(_name(f, r) + "+")
          elif self.free(f + df, r + dr):
            out.append(_name(f, r) + _name(f + df, r + dr))
    else:  # V: up (leaving from the last rank), left, right
      for f, r in sorted(self.v):
        for df, dr in ((0, 1), (-1, 0), (1, 0)):
          if dr and r == self.n - 1:
            out.append(_name(f, r) + "+")
          elif self.free(f + df, r + dr):
            out.append(_name(f, r) + _name(f + df, r + dr))
    return out or ["-"]

  def is_forward(self, move: str) -> bool:
    if move == "-":
      return False
    if move.endswith("+"):
      return True
    (f, r), (f2, r2) = map(_square, re.findall(r"[a-z]\d+", move))
    return f2 > f if self.turn == 0 else r2 > r

  def play(self, move: str):
    assert move in self.moves(), (move, self.moves())
    forward = self.is_forward(move)
    pieces = self.h if self.turn == 0 else self.v
    if move != "-":
      squares = [_square(s) for s in re.findall(r"[a-z]\d+", move)]
      pieces.remove(squares[0])
      if len(squares) == 2:
        pieces.add(squares[1])
    mover, self.turn = self.turn, 1 - self.turn
    self.quiet = 0 if forward else self.quiet + 1
    self.seen = [self.position()] if forward else self.seen + [self.position()]
    if not pieces:
      self.outcome = "win"
    elif move == "-" and self.passed:
      self.outcome = "passes"
    elif self.seen.count(self.position()) >= 3:
      self.outcome = "repetition"
    elif self.quiet >= 4 * self.n * self.n:
      self.outcome = "limit"
    self.passed = move == "-"
    self.done = self.outcome is not None
    won = 1.0 if self.outcome == "win" else 0.0
    self.rewards = (won, -won) if mover == 0 else (-won, won)


# -- Construction ----------------------------------------------------------------------------------


def test_registry_and_attributes():
  env = games.make("slider")
  assert isinstance(env, Slider)
  assert (env.name, env.rows, env.cols, env.size) == ("slider", 5, 5, 5)
  assert env.blocks_option == "random"
  assert (env.num_actions, env.action_planes, env.pass_action) == (76, 3, 75)
  assert env.observation_shape == (5, 5, 5)
  assert env.side_names == ("H", "V") and env.example_move == "a5b5"
  assert "pass" in env.rules_text and env.symmetries() == ()
  assert env.piece_symbols == {0: ".", 1: "H", 2: "V", 3: "#"}
  # 4 N^2 plies before each of at most 2 N (N - 1) - 1 forward moves (see the module docstring).
  assert env.max_game_length == 100 * 39 == 3900
  assert games.make("slider", size=4).max_game_length == 64 * 23
  assert games.make("slider", size=12, blocks=["f6"]).num_actions == 3 * 144 + 1
  # Exact position keys: 2 (N - 1) fields of ceil(log2 N) bits in uint32 words.
  assert [slider.key_layout(n)[2] for n in range(4, 13)] == [1, 1, 1, 2, 2, 2, 3, 3, 3]


@pytest.mark.parametrize("kwargs, problem", [
    ({"size": 3}, "size must be in 4..12"),
    ({"size": 13}, "size must be in 4..12"),
    ({"size": 5.0}, "size must be an int"),
    ({"size": True}, "size must be an int"),
    ({"blocks": "some"}, "blocks must be 'random', 'none' or a list"),
    ({"blocks": 3}, "blocks must be 'random', 'none' or a list"),
    ({"blocks": [3]}, "a block must be a square name"),
    ({"blocks": ["a2"]}, "block a2 is on a starting square"),
    ({"blocks": ["c1"]}, "block c1 is on a starting square"),
    ({"blocks": ["f3"]}, "square f3 is off the 5x5 board"),
    ({"blocks": ["c3", "C3"]}, "block C3 is listed twice"),
    ({"blocks": ["c3d4"]}, "malformed"),
])
def test_bad_arguments(kwargs, problem):
  with pytest.raises(ValueError, match=problem):
    Slider(**kwargs)
  with pytest.raises(ValueError, match=problem):
    games.make("slider", **kwargs)


def test_start_position_and_listed_blocks():
  state = env_of(5).init(jax.random.key(0))
  assert normalize(drawing(state)) == normalize("""
      H....
      H....
      H....
      H....
      .VVVV
  """)
  assert sorted(env_of(5).legal_moves(state)) == ["a2a1", "a2b2", "a3b3", "a4b4", "a5b5"]
  assert not bool(state.legal_action_mask[-1])  # no pass while a move exists
  env = Slider(size=4, blocks=["b3", "a1", "c2"])  # a1 is empty at the start: allowed
  state = env.init(jax.random.key(0))
  assert normalize(drawing(state)) == normalize("""
      H...
      H#..
      H.#.
      #VVV
  """)
  assert sorted(env.legal_moves(state)) == ["a2b2", "a4b4"]
  assert int(state.step_count) == 0 and int(state.quiet_plies) == 0
  np.testing.assert_array_equal(state.last_move, [-1, -1])


def test_render_and_from_ascii_read_back():
  state = play(Slider(size=4, blocks=["c3"]).init(jax.random.key(0)), "a2b2 d1d2")
  text = render.to_ascii(env_of(4), state)
  assert "to move" in text.splitlines()[-1]
  assert "[V]" in text and "(.)" in text  # d2 came from d1
  back = env_of(4).from_ascii("\n".join(text.splitlines()[:-1]))
  assert drawing(back) == drawing(state)
  np.testing.assert_array_equal(back.legal_action_mask, state.legal_action_mask)


@pytest.mark.parametrize("text, problem", [
    ("H...\nH...\n....", "3 ranks, not 4"),
    ("H...\nH...\nH.x.\n.VVV", "bad rank"),
    ("H...\nH...\nH...\n.VV", "3 squares, not 4"),
    ("HH..\nH...\nH...\n.VVV", "H has more than 3 pieces"),
])
def test_from_ascii_rejects_bad_drawings(text, problem):
  with pytest.raises(ValueError, match=problem):
    env_of(4).from_ascii(text)


# -- Moves -----------------------------------------------------------------------------------------


def test_h_moves_right_up_and_down():
  state = position("""
      ....
      .H..
      ....
      ..V.
  """)
  assert sorted(env_of(4).legal_moves(state)) == ["b3b2", "b3b4", "b3c3"]
  for move, square, expected in [("b3c3", "c3", "....\n..H.\n....\n..V."),
                                 ("b3b4", "b4", ".H..\n....\n....\n..V."),
                                 ("b3b2", "b2", "....\n....\n.H..\n..V.")]:
    after = play(state, move)
    assert drawing(after) == expected
    assert int(after.current_player) == 1 and not bool(after.terminated)
    np.testing.assert_array_equal(after.last_move, [9, _square(square)[1] * 4 + _square(square)[0]])
    assert int(after.quiet_plies) == (0 if move == "b3c3" else 1)  # only right is forward


def test_v_moves_up_left_and_right():
  state = position("""
      ....
      ..V.
      ....
      H...
  """, to_move=1)
  assert sorted(env_of(4).legal_moves(state)) == ["c3b3", "c3c4", "c3d3"]
  for move, expected in [("c3c4", "..V.\n....\n....\nH..."), ("c3b3", "....\n.V..\n....\nH..."),
                         ("c3d3", "....\n...V\n....\nH...")]:
    after = play(state, move)
    assert drawing(after) == expected
    assert int(after.current_player) == 0
    assert int(after.quiet_plies) == (0 if move == "c3c4" else 1)
    np.testing.assert_array_equal(after.last_move[0], 2 * 4 + 2)  # absolute c3


def test_pieces_and_blocks_stop_moves_and_edges_hold():
  state = position("""
      H#..
      HV..
      #...
      H...
  """)
  # a4: right b4 is a block, down a3 is H, up off the board; a3: right b3 is V; a1: up a2 is a
  # block, right b1 free, down off the board.
  assert sorted(env_of(4).legal_moves(state)) == ["a1b1"]
  state = position("""
      .#V#
      ....
      ...H
      ...V
  """, to_move=1)
  # c4 leaves over the top (b4 and d4 are blocks); d1: up d2 is H, left c1 free, no right.
  assert sorted(env_of(4).legal_moves(state)) == ["c4+", "d1c1"]


@pytest.mark.parametrize("to_move, move, text, after", [
    (0, "d3+", "....\n...H\n....\nV.H.", "....\n....\n....\nV.H."),
    (1, "b4+", ".V..\n...V\n....\nH...", "....\n...V\n....\nH..."),
])
def test_leaving_the_board(to_move, move, text, after):
  state = position(text, to_move=to_move, quiet_plies=5)
  assert move in env_of(4).legal_moves(state)
  stepped = play(state, move)
  assert drawing(stepped) == after
  assert not bool(stepped.terminated)  # the mover has a piece left
  assert int(stepped.quiet_plies) == 0  # leaving is a forward move
  f, r = _square(move[:2])
  np.testing.assert_array_equal(stepped.last_move, [r * 4 + f, -1])


@pytest.mark.parametrize("to_move, text", [
    (0, "....\n...H\n....\nV..."),
    (1, ".V..\n....\n....\nH..."),
])
def test_moving_the_last_piece_off_wins(to_move, text):
  state = position(text, to_move=to_move)
  move = "d3+" if to_move == 0 else "b4+"
  won = play(state, move)
  assert bool(won.terminated) and not bool(won.legal_action_mask.any())
  expected = [1.0, -1.0] if to_move == 0 else [-1.0, 1.0]
  np.testing.assert_array_equal(won.rewards, expected)


# -- Passes and draws ------------------------------------------------------------------------------


def test_forced_pass_and_illegal_pass():
  stuck = position("""
      ....
      ..V.
      #...
      HV..
  """)
  # H's only piece: right b1 is V, up a2 is a block. Passing is the only legal action.
  assert env_of(4).legal_moves(stuck) == ["-"]
  assert env_of(4).move_to_action(stuck, "\u2014") == env_of(4).pass_action  # em dash
  passed = play(stuck, "-")
  assert not bool(passed.terminated) and bool(passed.passed)
  assert int(passed.current_player) == 1 and int(passed.quiet_plies) == 1
  np.testing.assert_array_equal(passed.last_move, [-1, -1])
  obs = np.asarray(passed.observation)
  assert obs[..., 3].all() and not np.asarray(stuck.observation)[..., 3].any()
  assert drawing(passed) == drawing(stuck)
  # V can move, so V may not pass: the notation refuses, and the action loses.
  with pytest.raises(ValueError, match="illegal move '-'"):
    env_of(4).move_to_action(passed, "-")
  lost = step(passed, env_of(4).pass_action)
  assert bool(lost.terminated)
  np.testing.assert_array_equal(lost.rewards, [1.0, -1.0])
  # After V moves, H (still stuck) passes again: passes not in a row do not draw.
  again = play(passed, "c3c4 -")
  assert not bool(again.terminated)


def test_two_passes_in_a_row_draw():
  text = """
      ....
      ....
      ##..
      HV#.
  """
  state = position(text)
  # H a1: b1 is V, a2 a block. V b1: b2 a block, a1 is H, c1 a block.
  once = play(state, "-")
  assert not bool(once.terminated)
  assert env_of(4).legal_moves(once) == ["-"]
  twice = play(once, "-")
  assert bool(twice.terminated)
  np.testing.assert_array_equal(twice.rewards, [0.0, 0.0])
  # A position set up just after a pass (the observation says so) draws with one more.
  after_pass = position(text, passed=True)
  assert np.asarray(after_pass.observation)[..., 3].all()
  assert bool(play(after_pass, "-").terminated)


def test_threefold_repetition_draws():
  state = position("""
      ....
      ....
      .H..
      ..V.
  """)
  cycle = "b2b3 c1d1 b3b2 d1c1"
  twice = play(state, cycle)  # the start position for the second time
  assert not bool(twice.terminated)
  almost = play(twice, "b2b3 c1d1 b3b2")
  assert not bool(almost.terminated)
  drawn = play(almost, "d1c1")  # the third time
  assert bool(drawn.terminated)
  np.testing.assert_array_equal(drawn.rewards, [0.0, 0.0])
  # A forward move starts the count afresh: positions before it cannot recur.
  reset = play(twice, "b2c2")
  assert int(reset.quiet_plies) == 0


def test_repetition_counts_the_side_to_move():
  # H is stuck (passes); V shuffles d3 <-> c3. The pieces repeat every 2 plies, but the same
  # pieces with the same side to move only every 4: the third time is ply 8, not ply 4.
  state = position("""
      ....
      ...V
      #...
      HV..
  """)
  moves = "- d3c3 - c3d3 - d3c3 - c3d3".split()
  for ply, move in enumerate(moves, 1):
    state = play(state, move)
    assert bool(state.terminated) == (ply == 8), ply
  np.testing.assert_array_equal(state.rewards, [0.0, 0.0])


def test_no_forward_move_limit_draws():
  text = """
      ....
      ....
      .H..
      ..V.
  """
  limit = 4 * 4 * 4
  state = position(text, quiet_plies=limit - 1)
  assert np.asarray(state.observation)[0, 0, 4] == pytest.approx((limit - 1) / limit)
  drawn = play(state, "b2b3")  # the 64th ply without a forward move
  assert bool(drawn.terminated) and int(drawn.quiet_plies) == limit
  np.testing.assert_array_equal(drawn.rewards, [0.0, 0.0])
  assert not bool(play(state, "b2c2").terminated)  # a forward move resets the count
  assert not bool(play(position(text, quiet_plies=limit - 2), "b2b3").terminated)
  with pytest.raises(ValueError, match="quiet_plies"):
    position(text, quiet_plies=limit)


# -- Illegal actions and terminated states ---------------------------------------------------------


def test_illegal_actions_lose_with_the_board_unchanged():
  env = env_of(4)
  state = position("""
      H...
      H#..
      H...
      .VVV
  """)
  a3_up = (2 * 4 + 0) * 3 + 1  # onto H
  a4_up = (3 * 4 + 0) * 3 + 1  # off the top edge
  a3_right = (2 * 4 + 0) * 3 + 0  # onto the block
  empty = (1 * 4 + 2) * 3 + 0  # no piece on c2
  for action in (a3_up, a4_up, a3_right, empty, env.pass_action, -1, env.num_actions, 10**6):
    lost = step(state, action)
    assert bool(lost.terminated), action
    np.testing.assert_array_equal(lost.rewards, [-1.0, 1.0])
    assert drawing(lost) == drawing(state)
    np.testing.assert_array_equal(lost.last_move, [-1, -1])
    again = step(lost, 0)  # a finished game: a no-op with zero rewards
    np.testing.assert_array_equal(again.rewards, [0.0, 0.0])
    assert_states_equal(again.replace(rewards=lost.rewards), lost)


# -- Observation -----------------------------------------------------------------------------------


def test_v_sees_the_board_transposed():
  env = Slider(size=5, blocks=["b3", "d4"])
  h_view = env.init(jax.random.key(0))
  v_view = env.from_ascii(drawing(h_view), to_move=1)
  h_obs, v_obs = np.asarray(h_view.observation), np.asarray(v_view.observation)
  # The start is the same for both sides once transposed: pieces plane for plane.
  np.testing.assert_array_equal(h_obs[..., :2], v_obs[..., :2])
  # Blocks: b3 (row 2, col 1) for H is (row 1, col 2) for V; d4 (3, 3) -> (3, 3).
  assert set(zip(*np.nonzero(h_obs[..., 2]))) == {(2, 1), (3, 3)}
  assert set(zip(*np.nonzero(v_obs[..., 2]))) == {(1, 2), (3, 3)}
  # After H's a2b2, V (to move) sees its own pieces on file a and H's piece at (row 1, col 1).
  after = play(h_view, "a2b2")
  obs = np.asarray(after.observation)
  assert set(zip(*np.nonzero(obs[..., 0]))) == {(1, 0), (2, 0), (3, 0), (4, 0)}
  assert set(zip(*np.nonzero(obs[..., 1]))) == {(1, 1), (0, 2), (0, 3), (0, 4)}
  assert not obs[..., 3].any() and not obs[..., 4].any()  # no pass; a forward move
  # V's "forward" action (direction 0) from its mover square (row 2, col 0) = absolute c1 -> c2.
  assert env.action_to_move(after, (2 * 5 + 0) * 3) == "c1c2"
  assert env.action_to_move(after, (2 * 5 + 0) * 3 + 1) == "c1d1"  # row + 1 = V's right
  assert env.action_to_move(after, (4 * 5 + 0) * 3 + 2) == "e1d1"  # row - 1 = V's left


# -- Random blocks ---------------------------------------------------------------------------------


def test_random_blocks_follow_the_referee():
  size, count, env = 5, 4000, Slider(size=5)
  states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(7), count))
  assert states.observation.shape == (count, 5, 5, 5)
  assert states.board.dtype == jnp.int8 and states.history.dtype == jnp.uint32
  boards = np.asarray(states.board).reshape(count, size, size)
  blocks = boards == 2
  inside = np.zeros((size, size), bool)
  inside[1:-1, 1:-1] = True
  assert not blocks[:, ~inside].any()  # never on the border (so never on a piece)
  np.testing.assert_array_equal(np.abs(boards[:, ~inside]).sum(1), 2 * (size - 1))
  per_state = blocks.sum((1, 2))
  # Cases none / one / two with probability 1/3 each; two may coincide (probability 1/3 for
  # 3 inside coordinates), which reads as one block.
  share = np.bincount(per_state, minlength=3) / count
  np.testing.assert_allclose(share, [1 / 3, 1 / 3 + 1 / 9, 2 / 9], atol=0.04)
  # Two blocks are (i, i), (j, j) or (i, j), (j, i): the set is symmetric under the transpose.
  two = blocks[per_state == 2]
  np.testing.assert_array_equal(two, two.transpose(0, 2, 1))
  diagonal = two[:, np.eye(size, dtype=bool)].sum(1) == 2
  np.testing.assert_allclose([diagonal.mean(), 1 - diagonal.mean()], [0.5, 0.5], atol=0.08)
  # One block lands on every inside square.
  assert (blocks[per_state == 1].sum(0) > 0).sum() == (size - 2) ** 2
  # The blocks are a function of the key: unbatched `init` draws the same.
  again = env.init(jax.random.split(jax.random.key(7), count)[3])
  np.testing.assert_array_equal(again.board, states.board[3])


# -- Notation --------------------------------------------------------------------------------------


def _random_positions(size, blocks, num_games, seed):
  """Positions of random games (all of their plies), for notation tests."""
  env = Slider(size=size, blocks=blocks)
  rng = random.Random(seed)
  out = []
  for game in range(num_games):
    state = env.init(jax.random.key(seed * 1000 + game))
    while not bool(state.terminated):
      out.append(state)
      state = step(state, rng.choice(env.legal_actions(state)))
  return out


@pytest.mark.parametrize("size, blocks", [(4, "random"), (5, ["c3", "b4"])])
def test_notation_round_trip_every_legal_move(size, blocks):
  env = env_of(size)
  states = _random_positions(size, blocks, num_games=4, seed=size)
  assert {int(s.current_player) for s in states} == {0, 1}
  for state in states:
    for action in env.legal_actions(state):
      move = env.action_to_move(state, action)
      assert env.move_to_action(state, move) == action
      assert env.move_to_action(state, " " + move.upper() + " ") == action
    # Every action has a name or says why not; the names are distinct.
    names = set()
    for action in range(env.num_actions):
      try:
        names.add(env.action_to_move(state, action))
      except ValueError as err:
        assert "steps off the side" in str(err)
    assert len(names) == env.num_actions - 2 * size  # up from the top row, down from the bottom


@pytest.mark.parametrize("move, problem", [
    ("??", "malformed move"),
    ("", "malformed move"),
    ("a2", "malformed move"),
    ("a2b2c2", "malformed move"),
    ("a2+b2", "malformed move"),
    ("f2g2", "off the 5x5 board"),
    ("a2c2", "not a one-step move for H"),
    ("a2b3", "not a one-step move for H"),
    ("b2a2", "not a one-step move for H"),
    ("a2+", "H leaves the board only from file e"),
    ("a3a2", "illegal move"),  # onto H
    ("c3c4", "illegal move"),  # no piece
])
def test_bad_moves_name_the_problem_and_list_legal_moves(move, problem):
  env = env_of(5)
  state = env.init(jax.random.key(0))
  before = jax.tree.map(np.array, state)
  with pytest.raises(ValueError, match=problem) as err:
    env.move_to_action(state, move)
  assert "legal moves: a2b2 a2a1 a3b3 a4b4 a5b5" in str(err.value)
  assert_states_equal(state, before)  # a malformed move never changes a position


def test_bad_moves_for_v_and_finished_games():
  env = env_of(5)
  state = play(env.init(jax.random.key(0)), "a2b2")
  with pytest.raises(ValueError, match=r"not a one-step move for V \(up, left or right\)"):
    env.move_to_action(state, "c1b2")
  with pytest.raises(ValueError, match="V leaves the board only from rank 5"):
    env.move_to_action(state, "c1+")
  with pytest.raises(ValueError, match="not a one-step move for V"):
    env.move_to_action(state, "c2c1")  # V never moves down
  lost = step(state, 0)
  with pytest.raises(ValueError, match="game is over"):
    env.move_to_action(lost, "c1c2")
  with pytest.raises(ValueError, match="out of range"):
    env.action_to_move(state, env.num_actions)
  assert env.action_to_move(state, env.pass_action) == "-"


# -- Perft -----------------------------------------------------------------------------------------

PERFT = {4: [4, 14, 79, 438, 2358, 12372], 5: [5, 23, 163, 1146, 8398, 60654],
         6: [6, 34, 285, 2376, 21326, 189623]}


def _perft_jax(state, depth):
  counts = [0] * depth

  def visit(state, level):
    actions = np.flatnonzero(np.asarray(state.legal_action_mask))
    counts[level] += len(actions)
    if level + 1 < depth:
      for action in actions:
        visit(step(state, action), level + 1)

  visit(state, 0)
  return counts


def _perft_reference(node, depth):
  counts = [0] * depth

  def visit(node, level):
    moves = node.moves()
    counts[level] += len(moves)
    if level + 1 < depth:
      for move in moves:
        child = node.clone()
        child.play(move)
        visit(child, level + 1)

  visit(node, 0)
  return counts


@pytest.mark.parametrize("size", [4, 5, 6])
def test_perft_from_the_start(size):
  depth = 5
  expected = _perft_reference(Reference.start(size), depth)
  assert expected == PERFT[size][:depth]
  assert _perft_jax(env_of(size).init(jax.random.key(0)), depth) == expected


@pytest.mark.deep
@pytest.mark.parametrize("size", [4, 5, 6])
def test_perft_depth_6_batched(size):
  from azjax.games import perft
  assert perft.perft(env_of(size), 6) == PERFT[size]
  assert _perft_reference(Reference.start(size), 6) == PERFT[size]


# -- Differential test against the reference -------------------------------------------------------

# A start where both sides soon run out of moves: H's a1 and V's b1 are walled in for good, so
# once the other pieces have left (or are stuck) the players pass, and two passes draw.
JAMMED = """
    ....
    H...
    ##..
    HV#V
"""


def _differential(starts, seed, max_plies=300):
  """Plays random games in the JAX game and the reference side by side; returns outcomes.

  Half of the games prefer moves that are not forward (85%), which makes repetitions common.
  """
  rng = random.Random(seed)
  outcomes = []
  for index, state in enumerate(starts):
    env = env_of(state.size)
    ref = Reference.from_board(env.board_array(state), int(state.current_player))
    lazy = index % 2 == 1
    for _ in range(max_plies):
      host = jax.device_get(state)
      assert bool(host.terminated) == ref.done
      np.testing.assert_array_equal(host.rewards, ref.rewards)
      np.testing.assert_array_equal(env.board_array(host), ref.board())
      if ref.done:
        outcomes.append(ref.outcome)
        break
      assert int(host.current_player) == ref.turn
      assert sorted(env.legal_moves(host)) == sorted(ref.moves())
      moves = ref.moves()
      quiet = [m for m in moves if not ref.is_forward(m)]
      if lazy and quiet and rng.random() < 0.85:
        moves = quiet
      move = rng.choice(moves)
      ref.play(move)
      state = step(state, env.move_to_action(host, move))
  return outcomes


@pytest.mark.slow
def test_random_games_match_the_reference():
  starts = []
  # 7x7 packs keys in two words, 9x9 in 4-bit fields (6x6 is covered by perft).
  for size, blocks, games_per in [(4, "none", 10), (5, "random", 12), (5, ["c3", "d4"], 8),
                                  (7, "random", 4), (9, ["e5", "c7"], 1)]:
    env = Slider(size=size, blocks=blocks)
    starts += [env.init(jax.random.key(100 * size + g)) for g in range(games_per)]
  starts += [env_of(4).from_ascii(JAMMED)] * 8
  outcomes = _differential(starts, seed=0)
  counts = {kind: outcomes.count(kind) for kind in ("win", "passes", "repetition", "limit")}
  assert counts["win"] > 0 and counts["passes"] > 0 and counts["repetition"] > 0, counts


def test_cpu_and_accelerator_move_paths_agree():
  """`step` applies moves by scatter on CPU and by one-hot `where` elsewhere: same boards."""
  rng = np.random.default_rng(0)
  boards = jnp.asarray(rng.choice(np.array([-1, 0, 0, 1, 2], np.int8), (64, 25)))
  frm = rng.integers(0, 26, 64)  # 25: nothing taken
  to = jnp.asarray(np.where(frm == 25, 25, (frm + rng.integers(1, 26, 64)) % 26))  # != frm
  frm = jnp.asarray(frm)
  indexed = jax.vmap(slider._move_indexed)(boards, frm, to)
  onehot = jax.vmap(slider._move_onehot)(boards, frm, to)
  np.testing.assert_array_equal(indexed, onehot)


FEATURES_POSITION = """
.....
....H
..#..
H....
..V.V
"""


def test_features_and_hand_evaluation_by_hand():
  """H: e4 and a2, each with all three moves (e4 leaves); V: c1 (up, right, left) and e1 (up,
  left; it cannot step right off the board). Distances: H 1 + 5, V 5 + 5."""
  h = position(FEATURES_POSITION, 0)
  # pieces 2-2, forward 2-2, row+1 (H up, V right) 2-1, row-1 (H down, V left) 2-2, distance 6-10.
  expected = np.array([0, 0, 1 / 4, 0, -4 / 20], np.float32)
  np.testing.assert_allclose(env_of(5).evaluation_features(h), expected, atol=1e-6)
  v = position(FEATURES_POSITION, 1)
  np.testing.assert_allclose(env_of(5).evaluation_features(v), -expected, atol=1e-6)
  assert float(env_of(5).alphabeta_evaluation(h)) == pytest.approx(np.tanh(0.4))
  assert float(env_of(5).alphabeta_evaluation(v)) == pytest.approx(-np.tanh(0.4))


def test_evaluation_planes_count_each_pieces_steps_to_go():
  """The observation, then the mover's and the opponent's steps to go on their squares (mover's
  frame: rows are ranks, H leaves right, V leaves at the top). H: e4 1 step, a2 5; V: c1, e1 5."""
  h = position(FEATURES_POSITION, 0)
  planes = np.asarray(env_of(5).evaluation_planes(h))
  assert planes.shape == (5, 5, 7)
  np.testing.assert_array_equal(planes[..., :5], np.asarray(h.observation))
  mine, theirs = np.zeros((5, 5)), np.zeros((5, 5))
  mine[3, 4], mine[1, 0] = 1, 5
  theirs[0, 2], theirs[0, 4] = 5, 5
  np.testing.assert_array_equal(planes[..., 5], mine)
  np.testing.assert_array_equal(planes[..., 6], theirs)
  # From V's side the roles swap (the frame is transposed), and the race is the features' one.
  v = np.asarray(env_of(5).evaluation_planes(position(FEATURES_POSITION, 1)))
  assert v[..., 5].sum() == 10 and v[..., 6].sum() == 6
  distance = (planes[..., 5].sum() - planes[..., 6].sum()) / 20
  assert distance == pytest.approx(float(env_of(5).evaluation_features(h)[4]))


@pytest.mark.slow
def test_alphabeta_takes_the_last_piece_off():
  """H's last piece on e4 leaves and wins; a real alpha-beta at depth 6 plays it."""
  state = position(".....\n....H\n.....\n.....\n.VVVV", 0)
  player = agents.make("alphabeta", env_of(5), depth=6)
  action = player.act(base.stack_states([state]), jax.random.key(0))
  assert env_of(5).action_to_move(state, int(action[0])) == "e4+"
