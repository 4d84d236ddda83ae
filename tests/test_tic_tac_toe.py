"""Tic-tac-toe rules: perft, game and state counts, lines, draw, and a differential test vs
OpenSpiel."""

import functools
import itertools

import jax
import jax.numpy as jnp
import lockstep
import numpy as np
import pytest

from azjax import games
from azjax.games import base, notation, perft
from azjax.games.tic_tac_toe import LINES, NUM_SQUARES, TicTacToe

ENV = TicTacToe()
STEP = jax.jit(ENV.step)
BATCH_STEP = jax.jit(jax.vmap(ENV.step))


def play(state, moves: str):
  for move in moves.split():
    state = STEP(state, ENV.move_to_action(state, move))
  return state


def start():
  return ENV.init(jax.random.key(0))


def assert_states_equal(a, b):
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_registry_and_attributes():
  env = games.make("tic_tac_toe")
  assert isinstance(env, TicTacToe)
  assert (env.name, env.rows, env.cols, env.num_actions) == ("tic_tac_toe", 3, 3, 9)
  assert env.observation_shape == (3, 3, 2) and env.action_planes == 1
  state = env.init(jax.random.key(0))
  assert state.observation.shape == (3, 3, 2) and state.observation.dtype == jnp.float32
  np.testing.assert_array_equal(state.legal_action_mask, np.ones(9, bool))
  np.testing.assert_array_equal(state.last_move, [-1, -1])


# -- Counting --------------------------------------------------------------------------------------


PERFT = [9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]


def test_perft():
  # The whole tree, from the levels the next test expands anyway (one expansion, not two), and
  # `perft.perft` itself on the first levels.
  assert [int(np.asarray(level.legal_action_mask).sum()) for level in all_levels()[:9]] == PERFT
  assert perft.perft(ENV, 4) == PERFT[:4]


@functools.lru_cache(maxsize=None)
def all_levels():
  """Every reachable state, level by level (ply 0..9), as batched numpy states (computed once;
  callers must not change them)."""
  levels = [jax.tree.map(lambda x: np.asarray(x)[None], start())]
  while np.asarray(levels[-1].legal_action_mask).any():
    levels.append(perft.expand(ENV, levels[-1]))
  return levels


def test_complete_games_and_reachable_states():
  levels = all_levels()
  # Every action path ends in exactly one terminal state: 255168 complete games.
  assert sum(int(np.asarray(level.terminated).sum()) for level in levels) == 255168
  # Game outcomes from the first player's side (known totals: 131184 / 77904 / 46080).
  finals = [jax.tree.map(lambda x, t=level.terminated: np.asarray(x)[np.asarray(t)], level)
            for level in levels]
  rewards = np.concatenate([np.asarray(f.rewards)[:, 0] for f in finals])
  assert (int((rewards == 1).sum()), int((rewards == -1).sum()), int((rewards == 0).sum())) == (
      131184, 77904, 46080)
  # Distinct positions (absolute board and player to move), start and terminal ones included.
  seen = set()
  for level in levels:
    boards = np.asarray(level.board, np.int64)
    players = np.asarray(level.current_player)
    absolute = boards * np.where(players == 0, 1, -1)[:, None]
    seen.update(zip(map(bytes, absolute.astype(np.int8)), players.tolist()))
  assert len(seen) == 5478


# -- Lines and draw --------------------------------------------------------------------------------


def _moves_completing(line, winner):
  """A move sequence in which `winner` completes `line` with its third mark and nobody wins
  before: the loser fills the first squares off the line that form no line themselves."""
  loser_needs = 3 if winner == 1 else 2
  others = [s for s in range(NUM_SQUARES) if s not in line]
  for loser in itertools.combinations(others, loser_needs):
    if not any(set(l) <= set(loser) for l in LINES.tolist()):
      break
  line, loser = list(line), list(loser) + [-1]
  order = []
  for i in range(3):
    order += [line[i], loser[i]] if winner == 0 else [loser[i], line[i]]
  order = order[:5] if winner == 0 else order
  return " ".join(notation.square_name(s, 3) for s in order)


LINE_NAMES = ["rank 1", "rank 2", "rank 3", "file a", "file b", "file c", "diagonal a1-c3",
              "diagonal c1-a3"]


@pytest.mark.parametrize("winner", [0, 1])
@pytest.mark.parametrize("index", range(8), ids=LINE_NAMES)
def test_every_line_wins(index, winner):
  moves = _moves_completing(LINES[index], winner).split()
  state = play(start(), " ".join(moves[:-1]))
  assert not bool(state.terminated)
  assert int(state.current_player) == winner
  state = play(state, moves[-1])
  assert bool(state.terminated), moves
  np.testing.assert_array_equal(state.rewards, [1, -1] if winner == 0 else [-1, 1])
  np.testing.assert_array_equal(state.legal_action_mask, np.zeros(9, bool))
  board = ENV.board_array(state).reshape(-1)
  assert (board[LINES[index]] == winner + 1).all()


def test_draw():
  state = play(start(), "b2 a1 a2 c2 b1 b3 a3 c1 c3")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, np.zeros(2))
  np.testing.assert_array_equal(ENV.board_array(state)[::-1], [[1, 2, 1], [1, 1, 2], [2, 1, 2]])
  np.testing.assert_array_equal(state.last_move, [-1, 8])


def test_win_on_the_ninth_mark_is_a_win():
  # X's ninth mark c3 completes the diagonal a1-b2-c3 on a full board.
  state = play(start(), "a1 a2 b2 a3 c2 b3 b1 c1")
  assert not bool(state.terminated)
  state = play(state, "c3")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, [1, -1])


def test_observation_and_board_frames():
  state = play(start(), "a1 b2")  # X to move
  obs = np.asarray(state.observation)
  assert obs[0, 0, 0] == 1 and obs[1, 1, 1] == 1 and obs.sum() == 2
  state = play(state, "c3")  # O to move: O's marks are the first plane.
  obs = np.asarray(state.observation)
  assert obs[1, 1, 0] == 1 and obs[0, 0, 1] == 1 and obs[2, 2, 1] == 1 and obs.sum() == 3
  np.testing.assert_array_equal(ENV.board_array(state)[::-1], [[0, 0, 1], [0, 2, 0], [1, 0, 0]])
  np.testing.assert_array_equal(state.last_move, [-1, 8])


# -- Illegal actions and terminated states ---------------------------------------------------------


@pytest.mark.parametrize("action", [4, 9, -1, 100])
def test_illegal_action_loses_and_leaves_board(action):
  # b2 is taken; 9, -1 and 100 are off the board (they used to act as a pass).
  state = play(start(), "b2 a1 c1")  # O to move
  after = STEP(state, jnp.int32(action))
  assert bool(after.terminated)
  np.testing.assert_array_equal(after.rewards, [1, -1])  # O played it and loses.
  np.testing.assert_array_equal(ENV.board_array(after), ENV.board_array(state))
  np.testing.assert_array_equal(after.legal_action_mask, np.zeros(9, bool))
  np.testing.assert_array_equal(after.last_move, [-1, -1])


def test_occupied_square_is_refused_by_notation():
  state = play(start(), "b2")
  with pytest.raises(ValueError, match="illegal move 'b2'; legal moves: a1 b1 c1 a2 c2 a3 b3 c3"):
    ENV.move_to_action(state, "b2")


def test_terminated_step_is_noop():
  state = play(start(), "a1 a2 b1 b2 c1")
  assert bool(state.terminated)
  for action in (0, 5, 8, 12):
    assert_states_equal(STEP(state, jnp.int32(action)),
                        state.replace(rewards=jnp.zeros(2, jnp.float32)))


def test_batch_isolation_under_vmap():
  states = [start(), play(start(), "a1 a2 b1 b2"), play(start(), "b2"),
            play(start(), "a1 a2 b1 b2 c1")]
  actions = [4, 2, 4, 8]  # normal, winning, illegal, after the end
  batched = BATCH_STEP(base.stack_states(states), jnp.array(actions, jnp.int32))
  for i, (state, action) in enumerate(zip(states, actions)):
    assert_states_equal(base.unstack_state(batched, i), STEP(state, jnp.int32(action)))
  np.testing.assert_array_equal(batched.terminated, [False, True, True, True])
  np.testing.assert_array_equal(batched.rewards[:, 0], [0, 1, 1, 0])


# -- Notation --------------------------------------------------------------------------------------


def test_notation_round_trip():
  state = start()
  assert ENV.legal_moves(state) == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
  for action in range(NUM_SQUARES):
    move = ENV.action_to_move(state, action)
    assert ENV.move_to_action(state, move) == action
    assert ENV.move_to_action(state, move.upper()) == action


@pytest.mark.parametrize("move,message", [
    ("d1", "square d1 is off the 3x3 board"),
    ("a4", "square a4 is off the 3x3 board"),
    ("b", "malformed move 'b'"),
    ("a1b2", "malformed move 'a1b2': name one square"),
    ("", "malformed move ''"),
])
def test_bad_notation(move, message):
  with pytest.raises(ValueError, match=f"tic_tac_toe: {message}.*legal moves: a1 b1"):
    ENV.move_to_action(start(), move)


# -- Differential test against OpenSpiel -----------------------------------------------------------


def to_openspiel(square: int) -> int:
  """Our square (row 0 = rank 1, the bottom) -> OpenSpiel's action (row 0 = the top row)."""
  row, col = divmod(square, 3)
  return (2 - row) * 3 + col


def test_against_openspiel_random_games():
  """100 random games in lockstep with OpenSpiel: board, legal squares and outcome every ply."""
  pyspiel = pytest.importorskip("pyspiel")
  returns = lockstep.play_random_games(ENV, pyspiel.load_game("tic_tac_toe"), 3, 3,
                                       to_spiel=to_openspiel, seed=7)
  assert len({tuple(r) for r in returns}) == 3  # wins, losses and draws all occurred
