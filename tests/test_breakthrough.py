"""Breakthrough rules: perft, scripted positions, notation, observations, and a differential
test against OpenSpiel's `breakthrough` on 8x8, 6x6 and 5x5 boards."""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games
from azjax.games import base, breakthrough, notation, perft
from azjax.games.breakthrough import Breakthrough

ENV8 = Breakthrough()
ENV6 = Breakthrough(rows=6, cols=6)
ENV5 = Breakthrough(rows=5, cols=5)


@functools.lru_cache(maxsize=None)
def _jitted_step(env):
  return jax.jit(env.step)


def step(env, state, action):
  return _jitted_step(env)(state, jnp.int32(action))


def play(env, state, moves: str):
  """Plays space-separated moves ("c3d4 f6f5") through the notation."""
  for move in moves.split():
    state = step(env, state, env.move_to_action(state, move))
  return state


def start(env):
  return env.init(jax.random.key(0))


def drawing(env, state) -> str:
  """The absolute board as ranks from the top, like `from_ascii` reads it."""
  symbols = np.array([".", "w", "b"])[env.board_array(state)]
  return "\n".join("".join(rank) for rank in symbols[::-1])


def assert_states_equal(a, b):
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# -- Construction ----------------------------------------------------------------------------------


def test_registry_and_attributes():
  env = games.make("breakthrough", rows=6, cols=6)
  assert isinstance(env, Breakthrough)
  assert (env.name, env.rows, env.cols) == ("breakthrough", 6, 6)
  assert (env.num_actions, env.action_planes, env.observation_shape) == (108, 3, (6, 6, 2))
  assert games.make("breakthrough").num_actions == 192
  assert Breakthrough(observation="thesis").observation_shape == (8, 8, 3)
  assert ENV8.piece_symbols == {0: ".", 1: "w", 2: "b"}
  # Each action advances one piece one row: 8 * (7 + 6) per side on 8x8, 6 * (5 + 4) on 6x6,
  # 5 * 4 on 5x5.
  assert (ENV8.max_game_length, ENV6.max_game_length, ENV5.max_game_length) == (208, 108, 40)


@pytest.mark.parametrize("kwargs, problem", [
    ({"rows": 1}, "rows must be in 2..26"),
    ({"cols": 1}, "cols must be in 2..26"),
    ({"cols": 27}, "cols must be in 2..26"),
    ({"rows": 6.0}, "rows must be an int"),
    ({"observation": "planes"}, "observation must be one of mover, thesis"),
])
def test_bad_arguments(kwargs, problem):
  with pytest.raises(ValueError, match=problem):
    Breakthrough(**kwargs)
  with pytest.raises(ValueError, match=problem):
    games.make("breakthrough", **kwargs)


def test_start_positions():
  assert drawing(ENV8, start(ENV8)) == "\n".join(["b" * 8] * 2 + ["." * 8] * 4 + ["w" * 8] * 2)
  assert drawing(ENV6, start(ENV6)) == "\n".join(["b" * 6] * 2 + ["." * 6] * 2 + ["w" * 6] * 2)
  # Fewer than 6 rows: one home rank each (as OpenSpiel).
  assert drawing(ENV5, start(ENV5)) == "\n".join(["b" * 5] + ["." * 5] * 3 + ["w" * 5])
  state = start(ENV5)
  assert ENV5.legal_moves(state) == [
      "a1a2", "a1b2", "b1a2", "b1b2", "b1c2", "c1b2", "c1c2", "c1d2", "d1c2", "d1d2", "d1e2",
      "e1d2", "e1e2"]
  np.testing.assert_array_equal(state.last_move, [-1, -1])
  assert int(state.step_count) == 0 and not bool(state.terminated)


# -- Perft -----------------------------------------------------------------------------------------


def test_perft_8x8():
  assert perft.perft(ENV8, 4) == [22, 484, 11132, 256036]


def test_perft_6x6():
  assert perft.perft(ENV6, 4) == [16, 256, 4308, 71478]


@pytest.mark.deep
def test_perft_8x8_depth_5():
  assert perft.perft(ENV8, 5) == [22, 484, 11132, 256036, 6182818]


@pytest.mark.deep
def test_perft_6x6_depth_5():
  assert perft.perft(ENV6, 5) == [16, 256, 4308, 71478, 1248290]


# -- Scripted positions ----------------------------------------------------------------------------

# Rank labels, file labels, spaces and "|" are all ignored by `from_ascii`.
BLOCKED = """
  5 | b . . . b
  4 | . . b . .
  3 | . . w . .
  2 | . . . w .
  1 | . . . . .
      a b c d e
"""


def test_from_ascii_reads_the_drawing():
  state = ENV5.from_ascii(BLOCKED)
  assert drawing(ENV5, state) == "b...b\n..b..\n..w..\n...w.\n....."
  assert int(state.current_player) == 0 and not bool(state.terminated)
  # The same board with black to move, drawn without labels.
  black = ENV5.from_ascii("b...b\n..b..\n..w..\n...w.\n.....", to_move=1)
  assert drawing(ENV5, black) == drawing(ENV5, state)
  assert int(black.current_player) == 1
  # Black's actions are ordered in its own (rotated) frame: e5 is its first square.
  assert ENV5.legal_moves(black) == ["e5e4", "e5d4", "a5b4", "a5a4", "c4d3", "c4b3"]


def test_straight_move_blocked_and_diagonals():
  state = ENV5.from_ascii(BLOCKED)
  # c3: straight is blocked by the black piece on c4, and a piece never captures straight;
  # both diagonals are empty. d2: d3 is empty, but c3 is white's own piece.
  assert ENV5.legal_moves(state) == ["d2d3", "d2e3", "c3b4", "c3d4"]
  with pytest.raises(ValueError, match="illegal move 'c3c4'"):
    ENV5.move_to_action(state, "c3c4")
  with pytest.raises(ValueError, match="illegal move 'd2c3'"):
    ENV5.move_to_action(state, "d2c3")


def test_diagonal_move_to_empty_square():
  state = play(ENV5, ENV5.from_ascii(BLOCKED), "c3d4")
  assert drawing(ENV5, state) == "b...b\n..bw.\n.....\n...w.\n....."
  assert int(state.current_player) == 1 and not bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
  np.testing.assert_array_equal(state.last_move, [12, 18])  # c3 -> d4, absolute squares
  assert int(state.step_count) == 1


def test_diagonal_capture_both_players():
  state = ENV5.from_ascii(BLOCKED)
  state = play(ENV5, state, "d2d3")
  assert "c4d3" in ENV5.legal_moves(state)  # black captures diagonally (down and right)
  state = play(ENV5, state, "c4d3")
  assert drawing(ENV5, state) == "b...b\n.....\n..wb.\n.....\n....."
  np.testing.assert_array_equal(state.last_move, [17, 13])  # c4 -> d3
  assert not bool(state.terminated)
  assert "c3d4" in ENV5.legal_moves(state) and "c3c4" in ENV5.legal_moves(state)
  # Captures are not mandatory: white may also walk away.
  state = play(ENV5, state, "c3b4")
  assert drawing(ENV5, state) == "b...b\n.w...\n...b.\n.....\n....."


@pytest.mark.parametrize("to_move, move, winner", [(0, "b4a5", 0), (1, "d2e1", 1)])
def test_win_by_reaching_the_last_rank(to_move, move, winner):
  board = """
    b . . . .
    . w . . .
    . . . . .
    . . . b .
    w . . . .
  """
  state = ENV5.from_ascii(board, to_move=to_move)
  assert not bool(state.terminated)
  state = play(ENV5, state, move)
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards[winner], 1.0)
  np.testing.assert_array_equal(state.rewards[1 - winner], -1.0)
  assert not bool(state.legal_action_mask.any())


@pytest.mark.parametrize("to_move, move, winner", [(0, "c3d4", 0), (1, "d4c3", 1)])
def test_win_by_capturing_the_last_piece(to_move, move, winner):
  board = """
    . . . . . .
    . . . . . .
    . . . b . .
    . . w . . .
    . . . . . .
    . . . . . .
  """
  state = ENV6.from_ascii(board, to_move=to_move)
  state = play(ENV6, state, move)
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards[winner], 1.0)
  np.testing.assert_array_equal(state.rewards[1 - winner], -1.0)
  assert (ENV6.board_array(state) == 1 + winner).sum() == 1
  assert not (ENV6.board_array(state) == 2 - winner).any()


def test_last_rank_win_ends_game_even_with_pieces_left():
  state = play(ENV5, ENV5.from_ascii("b.b.b\n.w...\n.....\n...b.\nw...w"), "b4a5")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, [1.0, -1.0])


def test_decided_positions_are_terminated():
  for board, to_move in [("..w..\n.....\n.....\n..b..\n.....", 1),  # white on rank 5
                         (".....\n..w..\n.....\n.....\n..b..", 0),  # black on rank 1
                         (".....\n..w..\n.....\n.....\n.....", 1)]:  # no black piece
    state = ENV5.from_ascii(board, to_move=to_move)
    assert bool(state.terminated)
    assert not bool(state.legal_action_mask.any())
    np.testing.assert_array_equal(state.rewards, [0.0, 0.0])


@pytest.mark.parametrize("text, problem", [
    ("b...b\n.....\n.....\n.....", "drawing has 4 ranks, not 5"),
    ("b...b\n.....\n..x..\n.....\nw...w", "bad rank"),
    ("b...b\n......\n.....\n.....\nw...w", "has 6 squares, not 5"),
])
def test_from_ascii_rejects_bad_drawings(text, problem):
  with pytest.raises(ValueError, match=problem):
    ENV5.from_ascii(text)
  with pytest.raises(ValueError, match="to_move must be 0 or 1"):
    ENV5.from_ascii(BLOCKED, to_move=2)


# -- Observations ----------------------------------------------------------------------------------

CORNERS = """
  6 b . . . . .
  5 . . . . . .
  4 . . . w . .
  3 . . . . . .
  2 . . . . . b
  1 w . . . . .
    a b c d e f
"""


def test_mover_observation_orientation():
  white = ENV6.from_ascii(CORNERS, to_move=0)
  obs = np.asarray(white.observation)
  assert obs.shape == (6, 6, 2) and obs.dtype == np.float32
  # White to move: row 0 = rank 1, column 0 = file a; plane 0 = the mover's pieces.
  assert np.argwhere(obs[..., 0]).tolist() == [[0, 0], [3, 3]]  # a1, d4
  assert np.argwhere(obs[..., 1]).tolist() == [[1, 5], [5, 0]]  # f2, a6
  black = ENV6.from_ascii(CORNERS, to_move=1)
  obs = np.asarray(black.observation)
  # Black to move: the board rotated by 180 degrees, so row 0 = rank 6 and column 0 = file f.
  assert np.argwhere(obs[..., 0]).tolist() == [[0, 5], [4, 0]]  # a6, f2
  assert np.argwhere(obs[..., 1]).tolist() == [[2, 2], [5, 5]]  # d4, a1
  np.testing.assert_array_equal(ENV6.observe(black), black.observation)


def test_thesis_observation_is_absolute():
  env = Breakthrough(rows=6, cols=6, observation="thesis")
  for to_move in (0, 1):
    state = env.from_ascii(CORNERS, to_move=to_move)
    obs = np.asarray(state.observation)
    assert obs.shape == (6, 6, 3) and obs.dtype == np.float32
    assert np.argwhere(obs[..., 0]).tolist() == [[0, 0], [3, 3]]  # white: a1, d4
    assert np.argwhere(obs[..., 1]).tolist() == [[1, 5], [5, 0]]  # black: f2, a6
    np.testing.assert_array_equal(obs[..., 2], 1.0 if to_move == 0 else 0.0)
  # After a move the encoding follows the side to move.
  state = play(env, env.from_ascii(CORNERS), "d4d5")
  obs = np.asarray(state.observation)
  assert np.argwhere(obs[..., 0]).tolist() == [[0, 0], [4, 3]]
  np.testing.assert_array_equal(obs[..., 2], 0.0)


ATTACKS = """
  6 . . b . . .
  5 . b . b . .
  4 . . w . . .
  3 . w . w . .
  2 . . . . . b
  1 w . . . . .
    a b c d e f
"""


@pytest.mark.parametrize("to_move", [0, 1])
def test_attacks_observation_counts_attackers(to_move):
  """White's c4 is attacked by b5 and d5 and defended by b3 and d3; black's f2 is attacked by
  nothing (e1 is empty) and attacks e1 only (it moves down)."""
  env = Breakthrough(rows=6, cols=6, observation="attacks")
  state = env.from_ascii(ATTACKS, to_move=to_move)
  obs = np.asarray(state.observation)
  assert obs.shape == (6, 6, 6) and obs.dtype == np.float32
  mover = ENV6.from_ascii(ATTACKS, to_move=to_move).observation
  np.testing.assert_array_equal(obs[..., :2], mover)  # The "mover" planes first.

  def squares(plane):
    """The absolute names of the squares set in a plane of the mover's frame."""
    cells = np.argwhere(plane)
    if to_move == 1:
      cells = 5 - cells
    return sorted(notation.FILES[c] + str(r + 1) for r, c in cells)

  white = ["b2", "a4", "c4", "e4", "b5", "d5"]  # from a1, b3, d3, c4
  white_twice = ["c4"]  # b3 and d3
  black = ["a4", "c4", "e4", "b5", "d5", "e1"]  # from b5, d5, c6, f2
  black_twice = ["c4"]  # b5 and d5
  mine, theirs = (white, black) if to_move == 0 else (black, white)
  mine_twice, theirs_twice = (white_twice, black_twice) if to_move == 0 else (black_twice,
                                                                              white_twice)
  assert squares(obs[..., 2]) == sorted(mine)
  assert squares(obs[..., 3]) == mine_twice
  assert squares(obs[..., 4]) == sorted(theirs)
  assert squares(obs[..., 5]) == theirs_twice


def test_observation_of_a_batch():
  states = base.stack_states([ENV6.from_ascii(CORNERS, to_move=p) for p in (0, 1)])
  obs = states.observation
  assert obs.shape == (2, 6, 6, 2)
  np.testing.assert_array_equal(obs[1], ENV6.from_ascii(CORNERS, to_move=1).observation)
  thesis = Breakthrough(rows=6, cols=6, observation="thesis")
  states = base.stack_states([thesis.from_ascii(CORNERS, to_move=p) for p in (0, 1)])
  np.testing.assert_array_equal(states.observation[..., :2][0], states.observation[..., :2][1])
  np.testing.assert_array_equal(states.observation[..., 2].mean((1, 2)), [1.0, 0.0])


# -- Illegal actions and finished games ------------------------------------------------------------


@pytest.mark.parametrize("to_move", [0, 1])
def test_illegal_action_is_a_loss_with_board_unchanged(to_move):
  state = ENV5.from_ascii(BLOCKED, to_move=to_move)
  illegal = np.flatnonzero(~np.asarray(state.legal_action_mask))
  for action in [illegal[0], illegal[-1], -1, ENV5.num_actions, 10**6]:
    lost = step(ENV5, state, action)
    assert bool(lost.terminated)
    np.testing.assert_array_equal(lost.rewards[to_move], -1.0)
    np.testing.assert_array_equal(lost.rewards[1 - to_move], 1.0)
    np.testing.assert_array_equal(ENV5.board_array(lost), ENV5.board_array(state))
    assert not bool(lost.legal_action_mask.any())
    np.testing.assert_array_equal(lost.last_move, [-1, -1])


def test_stepping_a_terminated_state_is_a_noop():
  won = play(ENV5, ENV5.from_ascii(BLOCKED), "c3d4 a5a4 d4e5")
  assert bool(won.terminated)
  np.testing.assert_array_equal(won.rewards, [1.0, -1.0])
  for action in [0, 1, 50, -3]:
    again = step(ENV5, won, action)
    np.testing.assert_array_equal(again.rewards, [0.0, 0.0])
    assert_states_equal(again.replace(rewards=won.rewards), won)


def test_illegal_action_in_a_batch_leaves_other_games_alone():
  states = [ENV5.from_ascii(BLOCKED, to_move=p) for p in (0, 1, 0)] + [start(ENV5)]
  moves = ["c3d4", "c4b3", None, "c1c2"]
  actions = [ENV5.move_to_action(s, m) if m else 3 * 24 for s, m in zip(states, moves)]
  stepped = jax.jit(jax.vmap(ENV5.step))(base.stack_states(states), jnp.array(actions))
  for i, (state, action) in enumerate(zip(states, actions)):
    assert_states_equal(base.unstack_state(stepped, i), step(ENV5, state, action))
  np.testing.assert_array_equal(stepped.terminated, [False, False, True, False])
  np.testing.assert_array_equal(stepped.rewards[2], [-1.0, 1.0])


def _random_states(env, key, batch, steps):
  """States visited by `batch` random games, flattened to one batch of `batch * steps`."""

  def body(states, key):
    keys = jax.random.split(key, batch)
    actions = jax.vmap(base.uniform_legal_action)(keys, states.legal_action_mask)
    return jax.vmap(env.step)(states, actions), states

  init_key, play_key = jax.random.split(key)
  states = jax.vmap(env.init)(jax.random.split(init_key, batch))
  _, visited = jax.lax.scan(body, states, jax.random.split(play_key, steps))
  return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), visited)


random_states = jax.jit(_random_states, static_argnums=(0, 2, 3))


def test_cpu_and_accelerator_move_paths_agree():
  """`step` applies moves by scatter on CPU and by one-hot `where` elsewhere: same results."""
  env = ENV6
  states = random_states(env, jax.random.key(3), 64, 40)
  count = states.terminated.shape[0]
  legal = jax.vmap(base.uniform_legal_action)(jax.random.split(jax.random.key(4), count),
                                              states.legal_action_mask)
  anything = jax.random.randint(jax.random.key(5), (count,), -2, env.num_actions + 2)
  for actions in (legal, anything):
    results = [
        jax.jit(jax.vmap(functools.partial(play_fn, cols=env.cols)))(
            states.legal_action_mask, states.board, actions)
        for play_fn in (breakthrough._play_indexed, breakthrough._play_onehot)]
    for a, b in zip(*results):
      np.testing.assert_array_equal(a, b)
  assert bool(np.asarray(results[0][0]).any()) and not bool(np.asarray(results[0][0]).all())


# -- Notation --------------------------------------------------------------------------------------


def test_notation_round_trip_both_players():
  key = jax.random.key(7)
  positions = [start(ENV8), start(ENV5), ENV5.from_ascii(BLOCKED, 1), ENV6.from_ascii(CORNERS, 1)]
  for env in (ENV8, ENV6):
    states = random_states(env, key, 2, 30)
    positions += [base.unstack_state(states, i) for i in range(0, 60, 7)]
  players = set()
  for state in positions:
    env = {64: ENV8, 36: ENV6, 25: ENV5}[state.board.shape[0]]
    if bool(state.terminated):
      continue
    players.add(int(state.current_player))
    for action in env.legal_actions(state):
      move = env.action_to_move(state, action)
      assert re.fullmatch(r"[a-h][1-8][a-h][1-8]", move)
      assert env.move_to_action(state, move) == action
      assert env.move_to_action(state, move.upper()) == action
  assert players == {0, 1}


def test_notation_is_absolute():
  state = start(ENV8)
  assert ENV8.action_to_move(state, ENV8.move_to_action(state, "b2c3")) == "b2c3"
  state = play(ENV8, state, "b2c3")
  # Black moves down the board; its action ids live in its own (rotated) frame.
  action = ENV8.move_to_action(state, "g7f6")
  assert action == (63 - 54) * 3 + 2  # from g7 (absolute 54): forward-right in black's frame
  state = play(ENV8, state, "g7f6")
  np.testing.assert_array_equal(state.last_move, [54, 45])


@pytest.mark.parametrize("move, problem", [
    ("c3-d4", "malformed move"),
    ("", "malformed move"),
    ("c3", "name two squares"),
    ("c3d4e5", "name two squares"),
    ("f3f4", "square f3 is off the 5x5 board"),
    ("c3c6", "square c6 is off the 5x5 board"),
    ("c3c5", "not a one-step forward move for white"),
    ("c3c2", "not a one-step forward move for white"),
    ("c3e4", "not a one-step forward move for white"),
    ("c3c3", "not a one-step forward move for white"),
    ("c3c4", "illegal move"),
    ("a1a2", "illegal move"),
])
def test_bad_moves_name_the_problem_and_list_legal_moves(move, problem):
  state = ENV5.from_ascii(BLOCKED)
  with pytest.raises(ValueError, match=problem) as err:
    ENV5.move_to_action(state, move)
  assert "legal moves: d2d3 d2e3 c3b4 c3d4" in str(err.value)


def test_bad_moves_for_black_and_finished_games():
  state = ENV5.from_ascii(BLOCKED, to_move=1)
  with pytest.raises(ValueError, match="not a one-step forward move for black"):
    ENV5.move_to_action(state, "c4c5")
  won = play(ENV5, ENV5.from_ascii(BLOCKED), "c3d4 a5a4 d4e5")
  with pytest.raises(ValueError, match="game is over"):
    ENV5.move_to_action(won, "a4a3")
  with pytest.raises(ValueError, match="out of range"):
    ENV5.action_to_move(state, ENV5.num_actions)
  with pytest.raises(ValueError, match="leaves the 5x5 board"):
    ENV5.action_to_move(state, 0)  # forward-left from the first file


# -- Differential test against OpenSpiel -----------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _trajectories(env, batch, seed):
  """`batch` random games played to the end, batched: per-ply masks, actions and outcomes.

  Returns numpy arrays: `mask [L, B, A]`, `action [L, B]`, `player [L, B]`, `live [L, B]` (the
  game had not ended before ply `l`), `board [L, B, N]` in the mover's frame, and the summed
  `rewards [B, 2]`, with `L = env.max_game_length`.
  """

  def body(states, key):
    keys = jax.random.split(key, batch)
    actions = jax.vmap(base.uniform_legal_action)(keys, states.legal_action_mask)
    stepped = jax.vmap(env.step)(states, actions)
    record = (states.legal_action_mask, actions, states.current_player, ~states.terminated,
              states.board, stepped.rewards)
    return stepped, record

  @jax.jit
  def run(key):
    init_key, play_key = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(init_key, batch))
    final, record = jax.lax.scan(body, states, jax.random.split(play_key, env.max_game_length))
    return final.terminated, record

  terminated, (mask, action, player, live, board, rewards) = run(jax.random.key(seed))
  assert bool(terminated.all()), "a game outlasted max_game_length"
  return (np.asarray(mask), np.asarray(action), np.asarray(player), np.asarray(live),
          np.asarray(board), np.asarray(rewards).sum(0))


def _move_tables(env):
  """`[2, A, 2]` absolute (from, to) squares of every action for each player."""
  actions = np.arange(env.num_actions)
  frm = actions // 3
  to = frm + env.cols + actions % 3 - 1
  squares = np.stack([frm, to], -1)
  return np.stack([squares, env.num_squares - 1 - squares])


def _openspiel_squares(env, move: str) -> tuple[int, int]:
  """OpenSpiel move ("a8b7*") -> azjax absolute (from, to): ranks flip, files stay."""
  f1, r1, f2, r2 = re.fullmatch(r"([a-z])(\d)([a-z])(\d)\*?", move).groups()
  return tuple((env.rows - int(r)) * env.cols + "abcdefghijklmnopqrstuvwxyz".index(f)
               for f, r in ((f1, r1), (f2, r2)))


def _openspiel_board(env, ospiel_state) -> np.ndarray:
  """OpenSpiel's board as azjax absolute codes (OpenSpiel's 'b' starts at the top = white)."""
  ranks = str(ospiel_state).splitlines()[:env.rows]  # "8bbbbbbbb", top rank first
  codes = {".": 0, "b": 1, "w": 2}  # OpenSpiel's first player ('b', top) is azjax's player 0
  board = np.array([[codes[c] for c in rank[1:]] for rank in ranks])
  return board  # OpenSpiel's top rank is azjax's rank 1 after flipping ranks


@pytest.mark.parametrize("env, batch", [(ENV8, 100), (ENV6, 100), (ENV5, 20)],
                         ids=["8x8", "6x6", "5x5"])
def test_random_games_match_openspiel(env, batch):
  pyspiel = pytest.importorskip("pyspiel")
  game = pyspiel.load_game("breakthrough", {"rows": env.rows, "columns": env.cols})
  mask, action, player, live, board, rewards = _trajectories(env, batch, 0)
  tables = _move_tables(env)
  names = {}  # OpenSpiel action id -> azjax (from, to); its strings depend on the id only
  for b in range(batch):
    state = game.new_initial_state()
    for ply in range(env.max_game_length):
      if not live[ply, b]:
        break
      assert not state.is_terminal()
      assert state.current_player() == player[ply, b]
      mover_board = board[ply, b] if player[ply, b] == 0 else -board[ply, b][::-1]
      absolute = np.select([mover_board == 1, mover_board == -1], [1, 2], 0)
      np.testing.assert_array_equal(absolute.reshape(env.rows, env.cols),
                                    _openspiel_board(env, state))
      ours = {tuple(tables[player[ply, b], a]): a for a in np.flatnonzero(mask[ply, b])}
      theirs = {}
      for a in state.legal_actions():
        if a not in names:
          names[a] = _openspiel_squares(env, state.action_to_string(a))
        theirs[names[a]] = a
      assert set(ours) == set(theirs), f"game {b}, ply {ply}"
      state.apply_action(theirs[tuple(tables[player[ply, b], action[ply, b]])])
    assert state.is_terminal(), f"game {b}"
    np.testing.assert_array_equal(state.returns(), rewards[b])
