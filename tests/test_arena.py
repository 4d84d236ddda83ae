"""Arena: colour balance, known outcomes with scripted agents, interval maths, Elo fits."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, arena, games


def _first_legal(states, key):
  del key
  return jnp.argmax(states.legal_action_mask, axis=1).astype(jnp.int32)


def _last_legal(states, key):
  del key
  num_actions = states.legal_action_mask.shape[1]
  return (num_actions - 1 - jnp.argmax(states.legal_action_mask[:, ::-1], axis=1)).astype(
      jnp.int32)


def _always_zero(states, key):
  del key
  return jnp.zeros(states.legal_action_mask.shape[0], jnp.int32)


@pytest.fixture(scope="module")
def ttt():
  return games.make("tic_tac_toe")


@pytest.fixture(scope="module")
def random_agent(ttt):
  return agents.make("random", ttt)


def test_num_games_must_be_even(ttt, random_agent):
  for n in (7, 0, -2):
    with pytest.raises(ValueError, match="even"):
      arena.play(ttt, random_agent, random_agent, n, jax.random.key(0))


@pytest.fixture(scope="module")
def other_random_agent(ttt):
  return agents.make("random", ttt)


def test_colour_balance(ttt, random_agent, other_random_agent):
  other = other_random_agent
  result = arena.play(ttt, random_agent, other, 20, jax.random.key(1))
  assert sum(result.first) == sum(result.second) == 10
  assert result.num_games == 20
  assert (result.wins, result.draws, result.losses) == tuple(
      f + s for f, s in zip(result.first, result.second))
  assert result.truncated == result.illegal_a == result.illegal_b == 0
  assert 5 <= result.mean_length <= 9


def test_known_outcomes_of_scripted_agents(ttt):
  first_a = agents.Agent("first-a", _first_legal)
  first_b = agents.Agent("first-b", _first_legal)
  last = agents.Agent("last", _last_legal)
  # first vs first: X a1, O b1, X c1, O a2, X b2, O c2, X a3 wins on the c1-a3 diagonal at ply 7.
  result = arena.play(ttt, first_a, first_b, 8, jax.random.key(2))
  assert result.first == (4, 0, 0) and result.second == (0, 0, 4)
  assert result.score == 0.5 and result.mean_length == 7
  # first vs last: the first player always wins at ply 5 (X a1 c3 b1 b3 c1, or X c3 a1 b3 b1 a3).
  result = arena.play(ttt, first_a, last, 6, jax.random.key(3))
  assert result.first == (3, 0, 0) and result.second == (0, 0, 3)
  assert result.mean_length == 5
  # The traceable core inside a caller's own jit, then summarized: the same result.
  outcomes = jax.jit(lambda k: arena.match_outcomes(ttt, _first_legal, _last_legal, 6, 9, k))(
      jax.random.key(3))
  np.testing.assert_array_equal(outcomes["outcome"], [1, 1, 1, -1, -1, -1])
  assert arena.summarize(ttt, "first-a", "last", outcomes) == result


@pytest.mark.slow
def test_paired_openings_make_deterministic_games_differ(ttt):
  states = arena.paired_openings(ttt, jax.random.key(6), 8, plies=3)
  board = np.asarray(states.board)  # [8, 9]: 0 empty, +1 the mover's marks, -1 the other's.
  # Three random marks (O to move: one +1, two -1); game i and game i + 4 share an opening.
  np.testing.assert_array_equal((board == 1).sum(axis=1), [1] * 8)
  np.testing.assert_array_equal((board == -1).sum(axis=1), [2] * 8)
  np.testing.assert_array_equal(board[:4], board[4:])
  assert len({tuple(b) for b in board[:4]}) > 1 and not np.any(states.terminated)
  # From the initial position two deterministic agents replay one game a seating (above); from
  # the openings their games differ, and each opening is played with both seatings.
  first_a, first_b = agents.Agent("first-a", _first_legal), agents.Agent("first-b", _first_legal)
  outcomes = arena.match_outcomes(ttt, first_a.policy, first_b.policy, 40, 9,
                                  jax.random.key(7), openings=3)
  assert len(set(np.asarray(outcomes["length"]).tolist())) > 1
  assert np.all(np.asarray(outcomes["length"]) <= 6)  # The agents play after 3 random plies.
  result = arena.play(ttt, first_a, first_b, 40, jax.random.key(7), openings=3)
  assert result == arena.summarize(ttt, "first-a", "first-b", outcomes)
  with pytest.raises(ValueError, match="openings must be >= 0"):
    arena.play(ttt, first_a, first_b, 2, jax.random.key(0), openings=-1)


def test_illegal_moves_lose(ttt, random_agent):
  # "Always a1" is illegal by its second move (a1 is taken), before random X can win at ply 5.
  zero = agents.Agent("zero", _always_zero)
  result = arena.play(ttt, random_agent, zero, 10, jax.random.key(4))
  assert (result.wins, result.draws, result.losses) == (10, 0, 0)
  assert result.illegal_a == 0 and result.illegal_b == 10


def test_max_steps_truncates_as_draws(ttt, random_agent, other_random_agent):
  # Same agents and batch as test_colour_balance: `max_steps` is traced, so no new compilation.
  other = other_random_agent
  result = arena.play(ttt, random_agent, other, 20, jax.random.key(5), max_steps=3)
  assert result.truncated == 20 and result.draws == 20 and result.mean_length == 3


def test_wilson_interval_by_hand():
  # 6 wins, 2 draws, 2 losses: n = 10, score = 0.7. z = 1.959964, z^2 = 3.841459;
  # denominator 1 + z^2/n = 1.3841459; centre (0.7 + z^2/20) / 1.3841459 = 0.8920729 / 1.3841459
  # = 0.6444934; half-width z / 1.3841459 * sqrt(0.7 * 0.3 / 10 + z^2 / 400)
  # = 1.4160097 * sqrt(0.021 + 0.0096036) = 1.4160097 * 0.1749390 = 0.2477153.
  result = arena.MatchResult("a", "b", "g", wins=6, draws=2, losses=2, first=(3, 1, 1),
                             second=(3, 1, 1))
  assert result.num_games == 10 and result.score == pytest.approx(0.7)
  low, high = result.interval
  assert low == pytest.approx(0.6444934 - 0.2477153, abs=2e-6)
  assert high == pytest.approx(0.6444934 + 0.2477153, abs=2e-6)
  # A perfect score keeps a non-degenerate interval: n = 40, lower = 40 / (40 + z^2) = 0.91238.
  low, high = arena.wilson_interval(1.0, 40)
  assert low == pytest.approx(40 / (40 + 1.959964**2), abs=1e-6) and high == 1.0
  assert "| 6 | 2 | 2 | 3/1/1 | 3/1/1 | 0.700 |" in result.markdown_row()
  header = result.MARKDOWN_HEADER.splitlines()[0]
  assert header.count("|") == result.markdown_row().count("|")
  assert "W/D/L 6/2/2" in str(result)


def test_elo_from_score():
  assert arena.elo_from_score(0.5) == 0.0
  assert arena.elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.85
  assert arena.elo_from_score(0.25) == pytest.approx(-400 * math.log10(3))
  assert arena.elo_from_score(1.0) == pytest.approx(400 * math.log10(999))  # Clipped, finite.
  np.testing.assert_allclose(arena.elo_from_score(np.array([0.5, 0.75])), [0, 190.8485], atol=1e-3)


def test_fit_elo_two_agents_closed_form():
  # 30 wins, 20 draws, 10 losses: score 40/60 = 2/3, so Elo 400 log10(2) = 120.41, and the
  # observed information is n p (1 - p) = 60 * 2/9 = 13.33 per logit^2, so the standard error is
  # (400 / ln 10) / sqrt(13.33) = 47.57.
  fit = arena.fit_elo(["a", "b"], [(1, 0, 30, 20, 10)], prior_draws=0.0)
  np.testing.assert_allclose(fit.ratings, [0.0, 400 * math.log10(2)], atol=1e-6)
  np.testing.assert_allclose(fit.stderr, [0.0, 400 / math.log(10) / math.sqrt(60 * 2 / 9)],
                             rtol=1e-6)
  # A 100% score gets a finite rating from the prior's virtual draw.
  fit = arena.fit_elo(["a", "b"], [(0, 1, 10, 0, 0)])
  assert fit.ratings[0] == 0 and -1000 < fit.ratings[1] < -200


def test_fit_elo_recovers_ratings():
  true = np.array([0.0, 200.0, 400.0])
  rng = np.random.default_rng(0)
  draw_rate, games_per_pair = 0.1, 2000
  results = []
  for i in range(3):
    for j in range(i + 1, 3):
      p = 1 / (1 + 10 ** ((true[j] - true[i]) / 400))  # Expected score of i.
      probs = [p - draw_rate / 2, draw_rate, 1 - p - draw_rate / 2]  # Win, draw, loss of i.
      wins, draws, losses = rng.multinomial(games_per_pair, probs)
      results.append((i, j, wins, draws, losses))
  fit = arena.fit_elo(["r0", "r200", "r400"], results)
  np.testing.assert_allclose(fit.ratings, true, atol=30)
  assert fit.ratings[0] == 0 and fit.stderr[0] == 0
  assert np.all((fit.interval[:, 0] <= true) & (true <= fit.interval[:, 1]))
  centred = arena.fit_elo(["r0", "r200", "r400"], results, anchor=None)
  assert abs(centred.ratings.mean()) < 1e-6
  np.testing.assert_allclose(centred.ratings - centred.ratings[0], fit.ratings, atol=1e-4)
  assert "| r400 |" in fit.markdown().splitlines()[2]  # Best first.


def test_fit_elo_rejects_disconnected_pool():
  with pytest.raises(ValueError, match="not connected"):
    arena.fit_elo(["a", "b", "c", "d"], [(0, 1, 5, 0, 5), (2, 3, 5, 0, 5)])
  with pytest.raises(ValueError, match="bad result row"):
    arena.fit_elo(["a", "b"], [(0, 0, 1, 0, 0)])


def test_match_result_feeds_fit_elo(ttt, random_agent):
  first = agents.Agent("first", _first_legal)
  result = arena.play(ttt, first, random_agent, 20, jax.random.key(6))
  fit = arena.fit_elo([first.name, random_agent.name], [result.elo_row(0, 1)], anchor=1)
  assert fit.ratings[1] == 0
  assert np.sign(fit.ratings[0]) == np.sign(result.score - 0.5) or result.score == 0.5
