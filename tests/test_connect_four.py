"""Connect Four rules: perft, scripted positions, notation, and a differential test vs OpenSpiel.

Positions are drawn top row (rank 6) first, "X" player 0, "O" player 1; `from_ascii` infers the
player to move from the disc counts.
"""

import itertools

import jax
import jax.numpy as jnp
import lockstep
import numpy as np
import pytest

from azjax import games
from azjax.games import base, perft
from azjax.games.connect_four import COLS, NUM_SQUARES, ROWS, ConnectFour, has_four

ENV = ConnectFour()
STEP = jax.jit(ENV.step)
BATCH_STEP = jax.jit(jax.vmap(ENV.step))


def play(state, moves: str):
  for move in moves.split():
    state = STEP(state, ENV.move_to_action(state, move))
  return state


def drawing(state) -> str:
  """The absolute board as a `from_ascii` drawing (top row first)."""
  board = ENV.board_array(state)
  return "\n".join("".join(ENV.piece_symbols[int(v)] for v in row) for row in board[::-1])


def normalize(text: str) -> str:
  return "\n".join(line.replace(" ", "") for line in text.strip().splitlines())


def assert_states_equal(a, b):
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# -- API and start position ----------------------------------------------------------------------


def test_registry_and_attributes():
  env = games.make("connect_four")
  assert isinstance(env, ConnectFour)
  assert (env.name, env.rows, env.cols) == ("connect_four", 6, 7)
  assert env.num_actions == 7 and env.action_planes == 1
  assert env.observation_shape == (6, 7, 2)
  assert env.max_game_length == 42


def test_init():
  state = ENV.init(jax.random.key(0))
  assert int(state.current_player) == 0
  assert not bool(state.terminated)
  np.testing.assert_array_equal(state.legal_action_mask, np.ones(7, bool))
  np.testing.assert_array_equal(state.rewards, np.zeros(2))
  np.testing.assert_array_equal(state.last_move, [-1, -1])
  assert state.board.dtype == jnp.int8 and state.board.shape == (42,)
  assert state.observation.shape == (6, 7, 2) and state.observation.dtype == jnp.float32
  assert not np.asarray(state.observation).any()


def test_init_and_step_jit_vmap_dtypes():
  states = jax.vmap(ENV.init)(jax.random.split(jax.random.key(0), 4))
  states = BATCH_STEP(states, jnp.array([0, 3, 6, 3], jnp.int32))
  assert states.board.dtype == jnp.int8
  assert states.current_player.dtype == jnp.int32
  assert states.rewards.dtype == jnp.float32
  assert states.legal_action_mask.dtype == jnp.bool_
  assert states.observation.shape == (4, 6, 7, 2)


# -- Perft -----------------------------------------------------------------------------------------

PERFT = [7, 49, 343, 2401, 16807, 117649, 823536, 5673234]


@pytest.mark.slow
def test_perft_depth_6():
  assert perft.perft(ENV, 6) == PERFT[:6]


@pytest.mark.deep
@pytest.mark.parametrize("depth", [7, 8])
def test_perft_deep(depth):
  assert perft.perft(ENV, depth) == PERFT[:depth]


# -- Gravity, frames and observation ---------------------------------------------------------------


def test_discs_fall_and_stack():
  state = play(ENV.init(jax.random.key(0)), "d d d e")
  assert normalize(drawing(state)) == normalize("""
      .......
      .......
      .......
      ...X...
      ...O...
      ...XO..
  """)
  # last_move is (-1, absolute landing square): e1 is square 4.
  np.testing.assert_array_equal(state.last_move, [-1, 4])
  state = play(state, "d")
  np.testing.assert_array_equal(state.last_move, [-1, 3 * COLS + 3])  # d4
  assert int(state.step_count) == 5


def test_board_and_observation_in_movers_frame():
  state = play(ENV.init(jax.random.key(0)), "a b")  # X a1, O b1; X to move
  obs = np.asarray(state.observation)
  assert obs[0, 0, 0] == 1 and obs[0, 1, 1] == 1 and obs.sum() == 2  # row 0 = bottom
  np.testing.assert_array_equal(np.asarray(state.board)[:2], [1, -1])
  state = play(state, "c")  # O to move: O's discs are now the first plane.
  obs = np.asarray(state.observation)
  assert obs[0, 1, 0] == 1 and obs[0, 0, 1] == 1 and obs[0, 2, 1] == 1 and obs.sum() == 3
  np.testing.assert_array_equal(np.asarray(state.board)[:3], [-1, 1, -1])
  np.testing.assert_array_equal(ENV.board_array(state)[0, :4], [1, 2, 1, 0])


def test_from_ascii_round_trip_and_errors():
  text = """
      .......
      .......
      .......
      ...O...
      ..XX...
      .OXOX..
  """
  state = ENV.from_ascii(text)
  assert int(state.current_player) == 1  # X 4, O 3
  assert int(state.step_count) == 7
  assert normalize(drawing(state)) == normalize(text)
  np.testing.assert_array_equal(state.legal_action_mask, np.ones(7, bool))
  assert int(ENV.from_ascii(text, to_move=0).current_player) == 0
  with pytest.raises(ValueError, match="floating"):
    ENV.from_ascii(".......\n.......\n.......\n.......\n...X...\n.......")
  with pytest.raises(ValueError, match="disc counts"):
    ENV.from_ascii(".......\n.......\n.......\n.......\n.......\nXX.....")
  with pytest.raises(ValueError, match="6 lines"):
    ENV.from_ascii(".......\n.......")
  with pytest.raises(ValueError, match="unknown cell"):
    ENV.from_ascii(".......\n.......\n.......\n.......\n.......\n..Z....")


# -- Wins, draw ------------------------------------------------------------------------------------

# (name, position, winning move, winner). The winner is the player to move in the position.
WINS = [
    ("horizontal X", """
        .......
        .......
        .......
        .......
        OOO....
        XXX....""", "d", 0),
    ("horizontal X into a gap", """
        .......
        .......
        .......
        .......
        OO.O...
        XX.X...""", "c", 0),
    ("horizontal O", """
        .......
        .......
        .......
        .......
        X.....X
        X.OOO.X""", "b", 1),
    ("vertical X", """
        .......
        .......
        .......
        X......
        XO.....
        XOO....""", "a", 0),
    ("vertical O", """
        .......
        .......
        .......
        .O.....
        XO.....
        XOXX...""", "b", 1),
    ("diagonal X", """
        .......
        .......
        .......
        ..XO...
        .XXO...
        XOOO..X""", "d", 0),
    ("diagonal O", """
        .......
        .......
        .......
        ..OX...
        .OOX..X
        OXXX..O""", "d", 1),
    ("anti-diagonal X", """
        .......
        .......
        .......
        ...OX..
        ...OXX.
        X..OOOX""", "d", 0),
    ("anti-diagonal O", """
        .......
        .......
        .......
        ...XO..
        X..XOO.
        O..XXXO""", "d", 1),
]


@pytest.mark.parametrize("name,text,move,winner", WINS, ids=[w[0] for w in WINS])
def test_wins(name, text, move, winner):
  state = ENV.from_ascii(text)
  assert int(state.current_player) == winner and not bool(state.terminated)
  state = STEP(state, ENV.move_to_action(state, move))
  assert bool(state.terminated), name
  expected = np.array([1.0, -1.0]) if winner == 0 else np.array([-1.0, 1.0])
  np.testing.assert_array_equal(state.rewards, expected)
  np.testing.assert_array_equal(state.legal_action_mask, np.zeros(7, bool))
  assert int(state.current_player) == 1 - winner


@pytest.mark.parametrize("name,text,move,winner", WINS, ids=[w[0] for w in WINS])
def test_other_move_does_not_win(name, text, move, winner):
  state = ENV.from_ascii(text)
  state = STEP(state, ENV.move_to_action(state, "g"))  # Completes no line in any case.
  assert not bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, np.zeros(2))


def test_no_win_across_the_edge():
  # X holds e1 f1 g1 and drops into a2: squares 4, 5, 6, 7 are consecutive in the flat
  # board but not a line.
  state = ENV.from_ascii("""
      .......
      .......
      .......
      .......
      .......
      O.OOXXX""")
  state = STEP(state, 0)
  np.testing.assert_array_equal(state.last_move, [-1, 7])
  assert not bool(state.terminated)


def brute_force_four(board: np.ndarray) -> bool:
  """Reference line check on a `[6, 7]` bool board."""
  for r, c in itertools.product(range(ROWS), range(COLS)):
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
      cells = [(r + k * dr, c + k * dc) for k in range(4)]
      if all(0 <= y < ROWS and 0 <= x < COLS and board[y, x] for y, x in cells):
        return True
  return False


def test_has_four_matches_brute_force_on_random_boards():
  rng = np.random.default_rng(0)
  boards = rng.random((2000, NUM_SQUARES)) < rng.uniform(0.15, 0.45, (2000, 1))
  got = np.asarray(jax.jit(jax.vmap(has_four))(jnp.asarray(boards)))
  expected = np.array([brute_force_four(b.reshape(ROWS, COLS)) for b in boards])
  assert 0.1 < expected.mean() < 0.9  # Both outcomes are well represented.
  np.testing.assert_array_equal(got, expected)


DRAW = """
    XOXXXO.
    OXOOOXO
    OXXXOOX
    XXOOXXO
    XOXOOOX
    OOXOXXX"""


def test_full_board_is_a_draw():
  state = ENV.from_ascii(DRAW)
  assert int(state.current_player) == 1 and int(state.step_count) == 41
  np.testing.assert_array_equal(state.legal_action_mask, [0, 0, 0, 0, 0, 0, 1])
  assert ENV.legal_moves(state) == ["g"]
  state = play(state, "g")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, np.zeros(2))
  np.testing.assert_array_equal(state.legal_action_mask, np.zeros(7, bool))
  np.testing.assert_array_equal(state.last_move, [-1, 41])
  assert (ENV.board_array(state) != 0).all()


def test_win_with_the_last_disc_is_a_win():
  # The 42nd disc (O on f6) fills the board and completes a four: a win, not a draw.
  state = ENV.from_ascii("""
      OOXXX.X
      OXOXOXO
      OXXOOXO
      XOOXXOX
      OXXXOXO
      OXOXOXO""")
  assert int(state.current_player) == 1 and not bool(state.terminated)
  state = play(state, "f")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, [-1.0, 1.0])


# -- Illegal actions and terminated states ---------------------------------------------------------

FULL_D = """
    ...O...
    ...X...
    ...O...
    ...X...
    ...O...
    ...X..."""


def test_full_column_is_illegal():
  state = ENV.from_ascii(FULL_D)
  assert int(state.current_player) == 0
  np.testing.assert_array_equal(state.legal_action_mask, [1, 1, 1, 0, 1, 1, 1])
  assert ENV.legal_moves(state) == ["a", "b", "c", "e", "f", "g"]
  with pytest.raises(ValueError, match="illegal move 'd'; legal moves: a b c e f g"):
    ENV.move_to_action(state, "d")


@pytest.mark.parametrize("action", [3, 7, -1, 100])
def test_illegal_action_loses_and_leaves_board(action):
  state = ENV.from_ascii(FULL_D)
  after = STEP(state, jnp.int32(action))
  assert bool(after.terminated)
  np.testing.assert_array_equal(after.rewards, [-1.0, 1.0])  # Player 0 played it.
  np.testing.assert_array_equal(ENV.board_array(after), ENV.board_array(state))
  np.testing.assert_array_equal(after.legal_action_mask, np.zeros(7, bool))
  np.testing.assert_array_equal(after.last_move, [-1, -1])  # Nothing landed.


def test_illegal_action_by_player_1():
  state = play(ENV.init(jax.random.key(0)), "d d d d d d")  # Column d full, X to move.
  state = play(state, "a")
  after = STEP(state, jnp.int32(3))
  np.testing.assert_array_equal(after.rewards, [1.0, -1.0])
  assert bool(after.terminated)


def test_terminated_step_is_noop():
  state = STEP(ENV.from_ascii(WINS[0][1]), 3)
  assert bool(state.terminated)
  for action in (0, 3, 6, 9):
    again = STEP(state, jnp.int32(action))
    assert_states_equal(again, state.replace(rewards=jnp.zeros(2, jnp.float32)))
  np.testing.assert_array_equal(STEP(STEP(state, 0), 0).rewards, np.zeros(2))


def test_batch_isolation_under_vmap():
  states = [
      ENV.init(jax.random.key(0)),  # a normal move
      ENV.from_ascii(WINS[2][1]),  # O wins with b
      ENV.from_ascii(FULL_D),  # illegal: full column
      STEP(ENV.from_ascii(WINS[0][1]), 3),  # already terminated
      ENV.from_ascii(DRAW),  # the drawing move
  ]
  actions = [2, 1, 3, 5, 6]
  batched = BATCH_STEP(base.stack_states(states), jnp.array(actions, jnp.int32))
  for i, (state, action) in enumerate(zip(states, actions)):
    assert_states_equal(base.unstack_state(batched, i), STEP(state, jnp.int32(action)))
  np.testing.assert_array_equal(batched.terminated, [False, True, True, True, True])
  np.testing.assert_array_equal(batched.rewards[:, 0], [0, -1, -1, 0, 0])


# -- Notation --------------------------------------------------------------------------------------


def test_notation_round_trip():
  state = ENV.init(jax.random.key(0))
  assert ENV.legal_moves(state) == list("abcdefg")
  for action in range(COLS):
    move = ENV.action_to_move(state, action)
    assert ENV.move_to_action(state, move) == action
    assert ENV.move_to_action(state, f" {move.upper()} ") == action


@pytest.mark.parametrize("move,message", [
    ("h", "column h is off the board \\(columns a-g\\)"),
    ("z", "column z is off the board"),
    ("dd", "malformed move 'dd': name a column, like 'd'"),
    ("d1", "malformed move 'd1'"),
    ("3", "malformed move '3'"),
    ("", "malformed move ''"),
])
def test_bad_notation(move, message):
  state = ENV.init(jax.random.key(0))
  with pytest.raises(ValueError, match=f"connect_four: {message}.*legal moves: a b c d e f g"):
    ENV.move_to_action(state, move)


def test_notation_errors():
  state = ENV.init(jax.random.key(0))
  with pytest.raises(ValueError, match="must be a string"):
    ENV.move_to_action(state, 3)
  with pytest.raises(ValueError, match="out of range"):
    ENV.action_to_move(state, 7)
  done = STEP(ENV.from_ascii(WINS[0][1]), 3)
  with pytest.raises(ValueError, match="game is over"):
    ENV.move_to_action(done, "a")


# -- Differential test against OpenSpiel -----------------------------------------------------------


def test_against_openspiel_random_games():
  """100 random games in lockstep with OpenSpiel: board, legal columns and outcome every ply.

  OpenSpiel's action is the column (0 = a, left), and its `str(state)` draws the top row first
  with "x" (player 0), "o" and ".", the same orientation as `from_ascii`.
  """
  pyspiel = pytest.importorskip("pyspiel")
  returns = lockstep.play_random_games(ENV, pyspiel.load_game("connect_four"), ROWS, COLS,
                                       to_spiel=lambda column: column, seed=1234)
  outcomes = {tuple(r) for r in returns}
  assert (1.0, -1.0) in outcomes and (-1.0, 1.0) in outcomes  # Both sides won some games.
