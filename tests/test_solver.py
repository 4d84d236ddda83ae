"""Solvers against known values and brute-force minimax written here; the solver agent never
lowers a position's value."""

import functools
import sys

import jax
import numpy as np
import pytest

from azjax import agents, arena, games, solver
from azjax.solver import benchmark as sb
from azjax.solver import positions as solver_positions

BITBULLY_REASON = f'the Connect Four solver needs bitbully: {solver.INSTALL_HINT}'


def needs_bitbully():
  return pytest.importorskip("bitbully", reason=BITBULLY_REASON)


@functools.lru_cache(maxsize=None)
def jitted_step(env):
  return jax.jit(env.step)


def play(env, moves):
  state = env.init(jax.random.key(0))
  for action in moves:
    state = jitted_step(env)(state, action)
  return state


def random_games(env, num, seed):
  """Move lists of `num` uniformly random complete games."""
  moves, lengths = jax.device_get(solver_positions._play_games_jit(
      env, agents.random_policy, num, jax.random.key(seed)))
  return [list(m[:n]) for m, n in zip(moves, lengths)]


# -- Brute force: plain negamax with Pons' scores, on absolute boards ------------------------------


def negamax_scores(board, mover, wins, legal_moves, place, num_squares):
  """`{move: score}` for `mover` (1 or 2) on an absolute board, by exhaustive search.

  A win scores `(num_squares + 1 - n) // 2` with `n` stones on the board before the winning
  stone, a draw 0, a loss the negated score of the opponent's win.
  """
  stones = sum(1 for x in board if x)
  scores = {}
  for move in legal_moves(board):
    child = place(board, move, mover)
    if wins(child, mover):
      scores[move] = (num_squares + 1 - stones) // 2
    elif stones + 1 == num_squares:
      scores[move] = 0
    else:
      replies = negamax_scores(child, 3 - mover, wins, legal_moves, place, num_squares)
      scores[move] = -max(replies.values())
  return scores


TTT_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
             (2, 4, 6)]


def ttt_brute_force(board, mover):
  return negamax_scores(
      tuple(board), mover,
      wins=lambda b, p: any(all(b[s] == p for s in line) for line in TTT_LINES),
      legal_moves=lambda b: [s for s in range(9) if not b[s]],
      place=lambda b, s, p: b[:s] + (p,) + b[s + 1:], num_squares=9)


def c4_wins(board, player):
  grid = np.array(board).reshape(6, 7) == player
  for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
    for r in range(6):
      for c in range(7):
        if all(0 <= r + k * dr < 6 and 0 <= c + k * dc < 7 and grid[r + k * dr, c + k * dc]
               for k in range(4)):
          return True
  return False


def c4_place(board, column, player):
  for row in range(6):
    if not board[7 * row + column]:
      return board[:7 * row + column] + (player,) + board[7 * row + column + 1:]
  raise AssertionError("full column")


def c4_brute_force(board, mover):
  """`board`: `[42]` absolute codes (1 first player, 2 second), row 0 at the bottom."""
  return negamax_scores(
      tuple(board), mover, wins=c4_wins,
      legal_moves=lambda b: [c for c in range(7) if not b[35 + c]],
      place=c4_place, num_squares=42)


def as_array(scores, num_actions):
  out = np.full(num_actions, np.nan)
  for move, score in scores.items():
    out[move] = score
  return out


def absolute_board(env, state):
  return env.board_array(state).reshape(-1)


# -- Tic-tac-toe -----------------------------------------------------------------------------------


def test_tic_tac_toe_empty_board_every_move_draws():
  env = games.make("tic_tac_toe")
  state = env.init(jax.random.key(0))
  np.testing.assert_array_equal(solver.move_values(env, state), np.zeros(9))


def test_tic_tac_toe_known_positions():
  env = games.make("tic_tac_toe")
  # X: a1 b1; O: a2 b2; X to move. c1 wins now (4 stones before it: score (10 - 4) // 2 = 3);
  # every other move lets O win with c2 (score -(10 - 5) // 2 = -2), except c2 itself, which
  # blocks and then loses to nothing: it draws or better.
  state = play(env, [0, 3, 1, 4])
  scores = solver.move_scores(env, state)
  assert scores[2] == 3
  assert np.isnan(scores[[0, 1, 3, 4]]).all()
  assert all(scores[a] == -2 for a in (6, 7, 8))
  assert solver.move_values(env, state)[5] >= 0
  # A finished game has no moves.
  assert np.isnan(solver.move_values(env, jitted_step(env)(state, 2))).all()


def test_tic_tac_toe_against_brute_force():
  env = games.make("tic_tac_toe")
  rng = np.random.default_rng(0)
  for moves in random_games(env, 12, seed=1):
    cut = int(rng.integers(1, len(moves)))  # At least one move played: small trees.
    state = play(env, moves[:cut])
    mover = 1 + int(state.current_player)
    expected = as_array(ttt_brute_force(absolute_board(env, state), mover), 9)
    np.testing.assert_array_equal(solver.move_scores(env, state), expected)


def test_batched_values_keep_the_batch_shape():
  env = games.make("tic_tac_toe")
  states = sb.replay(env, jax.numpy.array([[4, 0, -1, -1, -1, -1, -1, -1, -1]] * 3),
                     jax.numpy.array([0, 1, 2]))
  values = solver.batch_move_values(env, states)
  assert values.shape == (3, 9)
  np.testing.assert_array_equal(values[0], np.zeros(9))
  np.testing.assert_array_equal(values[1], solver.move_values(env, play(env, [4])))


# -- Connect Four ----------------------------------------------------------------------------------


def test_connect_four_empty_board_only_the_centre_wins():
  needs_bitbully()
  env = games.make("connect_four")
  state = env.init(jax.random.key(0))
  np.testing.assert_array_equal(solver.move_values(env, state), [-1, -1, 0, 1, 0, -1, -1])
  np.testing.assert_array_equal(solver.move_scores(env, state), [-2, -1, 0, 1, 0, -1, -2])


def test_connect_four_board_conversion_matches_the_move_sequence():
  bitbully = needs_bitbully()
  env = games.make("connect_four")
  c4 = solver.for_game(env)
  for moves in random_games(env, 6, seed=2):
    for cut in (len(moves) // 2, len(moves) - 1):  # Either player to move.
      state = play(env, moves[:cut])
      board = c4.bitbully_board(np.asarray(state.board))
      assert board == bitbully.Board.from_moves([int(m) for m in moves[:cut]])
      assert board.current_player() == 1 + int(state.current_player)


def test_connect_four_full_column_and_immediate_win():
  needs_bitbully()
  env = games.make("connect_four")
  # X d d d d d d fills column d; then X a, O b, X a, O b, X a, O b: X wins at a now.
  state = play(env, [3] * 6 + [0, 1, 0, 1, 0, 1])
  scores = solver.move_scores(env, state)
  assert np.isnan(scores[3])
  assert scores[0] == (43 - 12) // 2
  # Everything but a (and the full d) lets O win at b at once: 13 stones before O's win.
  assert all(scores[c] == -((43 - 13) // 2) for c in (2, 4, 5, 6))


def test_connect_four_endgames_against_brute_force():
  """Positions with 7 to 9 empty squares, from random play that avoids wins, in both
  orientations (a position and its mirror image), against plain negamax."""
  needs_bitbully()
  env = games.make("connect_four")
  rng = np.random.default_rng(3)
  checked = 0
  while checked < 6:
    board, moves, mover = (0,) * 42, [], 1
    target = 42 - int(rng.integers(7, 10))
    while len(moves) < target:
      open_columns = [c for c in range(7) if not board[35 + c]
                      and not c4_wins(c4_place(board, c, mover), mover)]
      if not open_columns:
        break
      column = int(rng.choice(open_columns))
      board, mover = c4_place(board, column, mover), 3 - mover
      moves.append(column)
    if len(moves) < target:
      continue
    for sequence in (moves, [6 - m for m in moves]):
      state = play(env, sequence)
      expected = as_array(c4_brute_force(absolute_board(env, state), mover), 7)
      np.testing.assert_array_equal(solver.move_scores(env, state), expected)
    checked += 1


# -- The solver agent ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("game", ["tic_tac_toe", "connect_four"])
def test_solver_agent_never_lowers_the_value(game):
  if game == "connect_four":
    needs_bitbully()
  env = games.make(game)
  positions = sb.build_positions(env, [("random", agents.random_policy, 40, 200)], seed=4)
  for kwargs, optimal in (({}, None), ({"random_opening_moves": 0}, 1.0),
                          ({"randomize": True}, None)):
    agent = agents.make("solver", env, **kwargs)
    metrics = sb.evaluate_policy(env, agent, positions, jax.random.key(5))["all"]
    assert metrics["mistakes"] == 0, kwargs
    if optimal is not None:
      assert metrics["optimal_rate"] == optimal


def test_solver_agent_in_jitted_matches():
  env = games.make("tic_tac_toe")
  perfect = agents.make("solver", env)
  assert perfect.name == "solver"
  result = arena.play(env, perfect, perfect, 20, jax.random.key(0))
  assert (result.wins, result.draws, result.losses) == (0, 20, 0)
  result = arena.play(env, perfect, agents.make("random", env), 40, jax.random.key(1))
  assert result.losses == 0 and result.illegal_a == 0 and result.wins > 20


def test_solver_agent_random_openings_vary():
  env = games.make("tic_tac_toe")
  start = jax.tree.map(lambda x: np.stack([x] * 64), env.init(jax.random.key(0)))
  varied = agents.make("solver", env).act(start, jax.random.key(0))
  assert len(set(np.asarray(varied).tolist())) > 3  # Every first move draws.
  fixed = agents.make("solver", env, random_opening_moves=0, randomize=False)
  assert fixed.name == "solver-r0"


def test_unsolved_game_and_missing_package(monkeypatch):
  with pytest.raises(ValueError, match="no solver for 'breakthrough'"):
    agents.make("solver", games.make("breakthrough", rows=5, cols=5))
  with pytest.raises(ValueError, match="random_opening_moves"):
    agents.make("solver", games.make("tic_tac_toe"), random_opening_moves=-1)
  monkeypatch.setitem(sys.modules, "bitbully", None)  # "import bitbully" now fails.
  monkeypatch.setattr(solver, "_solver_of", functools.lru_cache(solver._solver_of.__wrapped__))
  with pytest.raises(solver.SolverUnavailable, match=r'pip install -e "\.\[solver\]"'):
    agents.make("solver", games.make("connect_four"))


def test_play_engine_and_web_list():
  from azjax import play
  from azjax.play import web

  assert "solver" in web.OPPONENTS
  setup = play.resolve_setup("tic_tac_toe", opponent="solver", color="black")
  session = setup.session(play.EngineFactory())
  analysis = session.agent_move()
  assert analysis.value == 0.0 and analysis.value_kind == "value"  # Every first move draws.
  assert all(stat.value == 0.0 for stat in analysis.top)
  with pytest.raises(ValueError, match="no solver for 'checkers'"):
    play.resolve_setup("checkers", opponent="solver").session(play.EngineFactory())
  with pytest.raises(ValueError, match="bad player"):
    play.parse_spec("solver:x")
