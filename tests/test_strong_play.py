"""The strong-play solver set: the generator's players and draws, its reproducibility, the
shipped set's legality, labels and counts, the tables' denominators, and Connect Four endgame
labels against a brute-force negamax."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, games, solver
from azjax.solver import benchmark as sb
from azjax.solver import positions as solver_positions
from azjax.solver import strong_play
from benchmarks import search_payoff

BITBULLY_REASON = f"the Connect Four solver needs bitbully: {solver.INSTALL_HINT}"
NAN = np.nan
SHIPPED_DECISIVE = 469  # The shipped set's counts (results/solver_benchmark/README.md).
SHIPPED_DECISIVE_0_10 = 147


def test_deviation_probability_is_higher_in_the_opening():
  np.testing.assert_array_equal(strong_play.deviation_probability(np.array([0, 11, 12, 40])),
                                [0.15, 0.15, 0.04, 0.04])
  assert strong_play.deviation_probability(3, opening_plies=2, epsilon=0.5) == 0.5


def test_deviating_move_plays_the_best_score_or_a_uniform_legal_move():
  scores = np.array([NAN, -3.0, 2.0, 5.0, 5.0, 0.0, NAN])  # Moves 3 and 4: the fastest wins.
  best = {strong_play.deviating_move(scores, 0, np.random.default_rng(s), opening_epsilon=0.0)
          for s in range(40)}
  assert best == {3, 4}  # Uniform among ties, never a slower win.
  asked = []

  def lazy():
    asked.append(1)
    return scores

  moves = [strong_play.deviating_move(lazy, 20, np.random.default_rng(s), epsilon=1.0)
           for s in range(400)]
  counts = np.bincount(moves, minlength=7)
  assert counts[0] == counts[6] == 0 and np.all(counts[1:6] > 50)  # Legal ones, about 80 each.
  assert len(asked) == 400  # The legal moves come from the scores, asked once a move.


def test_opening_policy_is_random_for_the_first_plies_then_the_policy():
  env = games.make("connect_four")
  states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 64))
  always_six = lambda states, key: jnp.full(states.step_count.shape, 6, jnp.int32)  # noqa: E731
  for ply, extra, random_expected in ((0, 0.0, True), (2, 0.0, True), (3, 0.0, False),
                                      (3, 1.0, True), (4, 1.0, False)):
    at_ply = states.replace(step_count=jnp.full(64, ply, jnp.int32))
    policy = strong_play.opening_policy(always_six, random_plies=3,
                                        extra_ply_probability=extra)
    actions = np.asarray(policy(at_ply, jax.random.key(ply)))
    assert (len(set(actions)) > 3) == random_expected, (ply, extra, actions)
    if not random_expected:
      assert np.all(actions == 6)


def test_sample_game_positions_draws_each_live_position_once():
  env = games.make("tic_tac_toe")
  # Three games (-1 after the end): two share their first two moves.
  moves = np.array([[0, 1, 3, 4, 6, -1, -1, -1, -1],
                    [0, 1, 2, 3, 4, 5, 6, -1, -1],
                    [4, 0, 8, -1, -1, -1, -1, -1, -1]], np.int8)
  lengths = np.array([5, 7, 3])
  # Live pairs: 5 + 7 + 3 = 15; the start position is common to all three games, plies 1-2 of
  # the first two are the same: 15 - 2 - 2 = 11 distinct positions.
  drawn, plies = strong_play.sample_game_positions(env, moves, lengths, 11,
                                                   np.random.default_rng(0), per_game=10)
  keys = solver_positions._position_keys(solver_positions.replay(
      env, jnp.asarray(drawn, jnp.int32), jnp.asarray(plies, jnp.int32)))
  assert len(set(keys)) == 11 and sorted(plies.tolist()).count(0) == 1
  for row, ply in zip(drawn, plies):
    assert np.all(row[ply:] == -1)
  with pytest.raises(ValueError, match="play more games"):
    strong_play.sample_game_positions(env, moves, lengths, 12, np.random.default_rng(0),
                                      per_game=10)
  # One a game: three positions at most.
  _, plies = strong_play.sample_game_positions(env, moves, lengths, 3, np.random.default_rng(1))
  assert len(plies) == 3
  with pytest.raises(ValueError):
    strong_play.sample_game_positions(env, moves, lengths, 4, np.random.default_rng(1))


def test_sample_game_positions_weighs_plies_as_the_games_hold_them():
  env = games.make("tic_tac_toe")
  # Nine games of 5 plies, each opening on its own square; one position drawn at a time.
  rng = np.random.default_rng(0)
  moves = np.full((9, 9), -1, np.int8)
  for g in range(9):
    moves[g, :5] = [g] + [s for s in range(9) if s != g][:4]
  lengths = np.full(9, 5)
  shares = np.zeros(5)
  for _ in range(200):
    _, plies = strong_play.sample_game_positions(env, moves, lengths, 1, rng)
    shares[plies[0]] += 1 / 200
  # Every (game, ply) pair is equally likely: each ply 1/5 (the start too, shared by all).
  np.testing.assert_allclose(shares, 0.2, atol=0.08)


@functools.lru_cache(maxsize=None)
def tiny_tic_tac_toe_set(seed):
  env = games.make("tic_tac_toe")
  return strong_play.build_strong_positions(
      env, network=agents.random_policy, network_name="random", solver_positions=12,
      solver_games=12, network_positions=12, network_games=12, seed=seed)


@pytest.mark.slow
def test_build_is_reproducible_from_a_seed_legal_and_labelled_by_the_solver():
  env = games.make("tic_tac_toe")
  a, b, c = tiny_tic_tac_toe_set(0), tiny_tic_tac_toe_set(0), tiny_tic_tac_toe_set(1)
  assert len(a) == 24 and a.sources[0].startswith("solver") and a.sources[1].startswith("network")
  np.testing.assert_array_equal(a.moves, b.moves)
  np.testing.assert_array_equal(a.scores, b.scores)
  assert not np.array_equal(a.moves, c.moves)
  states = a.states(env)
  assert not np.any(np.asarray(states.terminated))
  np.testing.assert_array_equal(np.asarray(states.legal_action_mask), a.legal)
  np.testing.assert_array_equal(np.asarray(states.step_count), a.num_moves)
  expected = solver.move_scores(env, states)
  np.testing.assert_array_equal(np.where(np.isnan(expected), sb.ILLEGAL, expected), a.scores)
  keys = solver_positions._position_keys(states)
  assert len(set(keys)) == len(keys)


def test_decisive_counts_and_denominators_are_what_the_tables_say():
  positions = tiny_tic_tac_toe_set(0)
  actions = np.zeros(len(positions), np.int64)  # Often illegal: counted as losing.
  metrics = sb.move_metrics(positions, actions, by_source=True)
  decisive, plies = positions.decisive, positions.num_moves
  assert metrics["all"]["decisive"] == int(decisive.sum())
  for first, last in sb.ply_ranges_of("tic_tac_toe"):
    mask = (plies >= first) & (plies <= last)
    assert metrics[f"{first}-{last}"]["decisive"] == int((mask & decisive).sum())
  for i in range(2):
    assert metrics[f"src{i}"]["decisive"] == int((decisive & (positions.source == i)).sum())
  table = sb.markdown_table({"zero": metrics}, positions.sources)
  assert sb.TABLE_NOTE in table and "| zero | src0 solver |" in table
  m = metrics["src1"]
  assert (f"| zero | src1 network | {m['positions']} | {m['decisive']} | {m['mistakes']} |"
          in table)
  cells = search_payoff.mistake_cells(positions, actions, ((0, 3), (4, 8)))
  assert cells["all"] == (metrics["all"]["mistakes"], metrics["all"]["decisive"])
  assert cells["solver/all"] == (metrics["src0"]["mistakes"], metrics["src0"]["decisive"])
  assert sum(cells[f"network/{b}"][1] for b in ("0-3", "4-8")) == metrics["src1"]["decisive"]
  rows = strong_play.composition(positions).splitlines()
  assert rows[-1].split("|")[-3].strip() == f"{len(positions)} ({int(decisive.sum())})"


def test_calibration_and_one_ply_tables_on_hand_made_values():
  positions = tiny_tic_tac_toe_set(0)
  values = positions.values
  rows = search_payoff.calibration(positions, values * 0.5, ((0, 8),))
  by_outcome = {r["outcome"]: r for r in rows}
  assert by_outcome["won"]["positions"] == int(np.sum(values == 1))
  assert by_outcome["won"]["mean"] == 0.5 and by_outcome["won"]["right_sign"] == 1.0
  if by_outcome["lost"]["positions"]:
    assert by_outcome["lost"]["mean"] == -0.5
  # The exact values as a one-ply player never err; the gap is at least 1 (a win over a draw).
  exact = np.where(positions.legal, positions.move_values, np.nan)
  (row,) = search_payoff.one_ply_cells(positions, exact, ((0, 8),))[:1]
  assert row["mistakes"] == 0 and row["decisive"] == int(positions.decisive.sum())
  assert row["gap"] >= 1.0
  first_legal = np.argmax(positions.legal, axis=-1)  # Often a mistake; the exact values fix all.
  (row,) = search_payoff.one_ply_cells(positions, exact, ((0, 8),), first_legal)[:1]
  raw = sb.move_metrics(positions, first_legal, ply_ranges=((0, 8),))["0-8"]["mistakes"]
  assert row["raw_mistakes"] == row["fixed"] == raw > 0
  assert search_payoff.parse_variant("gumbel:max_num_considered_actions=4,gumbel_scale=0.0") == (
      "gumbel", {"max_num_considered_actions": 4, "gumbel_scale": 0.0})


# -- Connect Four ----------------------------------------------------------------------------------


def _wins(board, square):
  """Whether the stone just put on `square` (`board` `[6, 7]`, +1 its owner) makes four."""
  row, col = divmod(square, 7)
  for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
    count = 1
    for sign in (1, -1):
      r, c = row + sign * dr, col + sign * dc
      while 0 <= r < 6 and 0 <= c < 7 and board[r, c] == 1:
        count += 1
        r, c = r + sign * dr, c + sign * dc
    if count >= 4:
      return True
  return False


def brute_force_scores(board):
  """Every column's exact score by full-width negamax (Pons' convention, `azjax.solver`), the
  board `[42]` from the mover's side, row 0 at the bottom; NaN for full columns."""
  board = np.asarray(board, np.int8).reshape(6, 7)

  def score(board, column):
    row = int(np.sum(board[:, column] != 0))
    stones = int(np.sum(board != 0))
    child = board.copy()
    child[row, column] = 1
    if _wins(child, 7 * row + column):
      return (43 - stones) // 2
    if stones + 1 == 42:
      return 0
    return -best(-child)

  def best(board):
    return max(score(board, c) for c in range(7) if board[5, c] == 0)

  return np.array([score(board, c) if board[5, c] == 0 else NAN for c in range(7)])


def test_connect_four_endgame_labels_match_brute_force_negamax():
  pytest.importorskip("bitbully", reason=BITBULLY_REASON)
  env = games.make("connect_four")
  positions = sb.Positions.load(sb.positions_path("connect_four", "strong"))
  late = positions.subset(positions.num_moves >= 34)
  assert len(late) >= 5
  late = late.subset(np.arange(5))
  boards = np.asarray(late.states(env).board)
  for board, stored in zip(boards, late.scores):
    expected = brute_force_scores(board)
    np.testing.assert_array_equal(np.where(np.isnan(expected), sb.ILLEGAL, expected), stored)
    np.testing.assert_array_equal(solver.for_game(env).board_scores(board), expected)


@pytest.mark.slow
def test_connect_four_deviating_solver_games_are_reproducible_and_labelled():
  pytest.importorskip("bitbully", reason=BITBULLY_REASON)
  env = games.make("connect_four")
  build = functools.partial(strong_play.build_strong_positions, env, network=None,
                            solver_positions=6, solver_games=3, per_game=2)
  a, b = build(seed=3), build(seed=3)
  np.testing.assert_array_equal(a.moves, b.moves)
  assert a.sources == (a.sources[0],) and np.all(a.source == 0)
  states = a.states(env)
  assert not np.any(np.asarray(states.terminated))
  expected = solver.move_scores(env, states)
  np.testing.assert_array_equal(np.where(np.isnan(expected), sb.ILLEGAL, expected), a.scores)


def test_the_shipped_strong_set_is_named_strong_and_labelled():
  pytest.importorskip("bitbully", reason=BITBULLY_REASON)
  env = games.make("connect_four")
  path = sb.positions_path("connect_four", "strong")
  assert path.endswith("azjax/data/solver_positions/connect_four_strong.npz")
  with pytest.raises(ValueError, match="no solver benchmark set 'nonesuch'.*default, strong"):
    sb.positions_path("connect_four", "nonesuch")
  positions = sb.Positions.load(path)
  assert len(positions) == 1000 and positions.game == "connect_four"
  assert [s.split(":")[0] for s in positions.sources] == ["solver", "network"]
  assert np.bincount(positions.source).tolist() == [500, 500]
  assert int(positions.decisive.sum()) == SHIPPED_DECISIVE
  assert int((positions.decisive & (positions.num_moves <= 10)).sum()) == SHIPPED_DECISIVE_0_10
  states = positions.states(env)
  assert not np.any(np.asarray(states.terminated))
  np.testing.assert_array_equal(np.asarray(states.legal_action_mask), positions.legal)
  keys = solver_positions._position_keys(states)
  assert len(set(keys)) == len(keys)
  sample = positions.subset(np.arange(0, 1000, 50))  # 20 labels checked again against BitBully.
  expected = solver.move_scores(env, sample.states(env))
  np.testing.assert_array_equal(np.where(np.isnan(expected), sb.ILLEGAL, expected),
                                sample.scores)
