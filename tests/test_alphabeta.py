"""Tests of the fixed-depth search agent ("alphabeta")."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, alphabeta, arena, games
from azjax.games import base, perft

import positions

BATCH = 4  # Every act call uses this batch size, so each agent compiles once.


@functools.lru_cache(maxsize=None)
def _env(name):
  return games.make(name)


@functools.lru_cache(maxsize=None)
def _agent(name, depth):
  return agents.make("alphabeta", _env(name), depth=depth)


def _mirror(text, swap):
  """The drawing rotated by 180 degrees with the colours swapped (the same position for the
  other player)."""
  table = str.maketrans(swap)
  ranks = [line.split(maxsplit=1)[1].replace(" ", "") for line in text.strip("\n").splitlines()]
  ranks = [rank[::-1].translate(table) for rank in reversed(ranks)]
  return "\n".join(" ".join(rank) for rank in ranks)


def _mirror_move(move):
  """"e1d2" -> "d8e7": a move's squares rotated by 180 degrees on an 8x8 board."""
  out = ""
  for i in range(0, len(move), 2):
    out += "abcdefgh"[7 - "abcdefgh".index(move[i])] + str(9 - int(move[i + 1]))
  return out


def _moves(env, states, actions):
  return [env.action_to_move(base.unstack_state(states, i), int(a))
          for i, a in enumerate(np.asarray(actions))]


def _both_colours(env, text, swap):
  """BATCH states alternating the position for player 0 and its mirror for player 1."""
  white = env.from_ascii(text, to_move=0)
  black = env.from_ascii(_mirror(text, swap), to_move=1)
  return base.stack_states([white, black] * (BATCH // 2))


def _values(env, states, **options):
  """`alphabeta.search_values`, jitted: one compilation instead of op-by-op dispatch of the
  vmapped tree (several times faster on a CPU)."""
  return np.asarray(jax.jit(functools.partial(alphabeta.search_values, env, **options))(states))


# Deep: Connect Four and Breakthrough are drawn and stepped like tic-tac-toe (one mover a turn);
# tic-tac-toe and checkers (multi-jumps, the same mover again) cover the agent's paths.
@pytest.mark.slow
@pytest.mark.parametrize("name,depth", [
    ("tic_tac_toe", 3), pytest.param("connect_four", 3, marks=pytest.mark.deep),
    pytest.param("breakthrough", 2, marks=pytest.mark.deep), ("checkers", 2)])
def test_legal_on_random_positions(name, depth):
  env, agent = _env(name), _agent(name, depth)
  step = jax.jit(jax.vmap(functools.partial(base.step_autoreset, env)))
  key = jax.random.key(0)
  states = jax.vmap(env.init)(jax.random.split(key, BATCH))
  for round_ in range(4):
    for _ in range(3 + round_):
      key, k1, k2 = jax.random.split(key, 3)
      actions = base.uniform_legal_actions(k1, states.legal_action_mask)
      states = step(states, actions, jax.random.split(k2, BATCH))
    key, k = jax.random.split(key)
    actions = np.asarray(agent.act(states, k))
    assert actions.dtype == np.int32 and actions.shape == (BATCH,)
    mask = np.asarray(states.legal_action_mask)
    live = ~np.asarray(states.terminated)
    assert mask[np.arange(BATCH), actions][live].all()


BREAKTHROUGH_WIN = """
8 . . . . b b b b
7 w . . . . . b .
6 . . . . . . . .
5 . . . . . . . .
4 . . . w . . . .
3 . . . . . . . .
2 w w . . . . . .
1 w w . . . . . .
"""

# Black's d2 threatens to reach rank 1 next move; only e1xd2 saves white. a4xb5 also captures
# (equal material), so a depth-1 search need not find the save.
BREAKTHROUGH_DEFEND = """
8 . . b b b b . .
7 . . . . . . . .
6 . . . . . . . .
5 . b . . . . . .
4 w . . . . . . .
3 . . . . . . . .
2 . . . b . . . .
1 . . . . w . . .
"""

# Two captures: a1xb2 must continue c3xd4 (same player moves again) and takes black's last
# piece; e3xd4 leaves b2. Only a correct sign for the same-player hop finds the win at depth 2.
CHECKERS_DOUBLE_JUMP = """
8 . . . . . . . .
7 . . . . . . . .
6 . . . . . . . .
5 . . . . . . . .
4 . . . x . . . .
3 . . . . o . . .
2 . x . . . . . .
1 o . . . . . . .
"""


def test_breakthrough_wins_in_one():
  env = _env("breakthrough")
  states = _both_colours(env, BREAKTHROUGH_WIN, {"w": "b", "b": "w"})
  for depth in (1, 2):
    moves = _moves(env, states, _agent("breakthrough", depth).act(states, jax.random.key(depth)))
    for i, move in enumerate(moves):
      wins = {"a7a8", "a7b8"}
      assert move in (wins if i % 2 == 0 else {_mirror_move(m) for m in wins}), moves


def test_breakthrough_stops_loss_in_one():
  env = _env("breakthrough")
  states = _both_colours(env, BREAKTHROUGH_DEFEND, {"w": "b", "b": "w"})
  values = np.asarray(jax.jit(functools.partial(alphabeta.search_values, env, depth=2))(states))
  moves = _moves(env, states, _agent("breakthrough", 2).act(states, jax.random.key(3)))
  assert moves == ["e1d2", _mirror_move("e1d2")] * (BATCH // 2)
  # Every other move loses at ply 2.
  for i in range(BATCH):
    legal = np.asarray(states.legal_action_mask[i])
    best = int(np.argmax(values[i]))
    others = np.delete(values[i], best)[np.delete(legal, best)]
    assert np.all(others == -(alphabeta.WIN_SCORE - 2))
    assert abs(values[i, best]) < 100


def test_checkers_captures_last_piece_through_multi_jump():
  env = _env("checkers")
  states = _both_colours(env, CHECKERS_DOUBLE_JUMP, {"o": "x", "x": "o", "O": "X", "X": "O"})
  moves = _moves(env, states, _agent("checkers", 2).act(states, jax.random.key(4)))
  assert moves == ["a1c3", _mirror_move("a1c3")] * (BATCH // 2)


def test_breakthrough_evaluation_by_hand():
  env = games.make("breakthrough", rows=5, cols=5)
  text = """
  5 b . . . .
  4 . . w . .
  3 . . . w .
  2 . b . . .
  1 w . . . w
  """
  # White: pieces on rows 3, 2, 0, 0; black: rows 4 and 1, i.e. 0 and 3 rows advanced.
  # Material 4 - 2 = 2; advancement (3 + 2) - (0 + 3) = 2; 2 + 0.1 * 2 = 2.2.
  white = env.from_ascii(text, to_move=0)
  black = env.from_ascii(text, to_move=1)
  assert float(env.alphabeta_evaluation(white)) == pytest.approx(2.2)
  assert float(env.alphabeta_evaluation(black)) == pytest.approx(-2.2)


def test_checkers_evaluation_by_hand():
  env = _env("checkers")
  text = """
  8 . x . . . . . .
  7 . . . . . . . .
  6 . . . . . . . .
  5 . . . . . . . .
  4 . . . X . . . .
  3 . . o . . . . .
  2 . . . . . . . .
  1 o . O . . . . .
  """
  # Men 2 - 1 = 1; kings 1 - 1 = 0; guards (a1, c1) 2 - (b8) 1 = 1;
  # advancement: own men rows 2 + 0, opponent man b8 0 rows advanced: 2.
  # 1 + 1.5 * 0 + 0.2 * 1 + 0.05 * 2 = 1.3.
  own = env.from_ascii(text, to_move=0)
  opp = env.from_ascii(text, to_move=1)
  assert float(env.alphabeta_evaluation(own)) == pytest.approx(1.3)
  assert float(env.alphabeta_evaluation(opp)) == pytest.approx(-1.3)


# Depth 4 sees a tic-tac-toe fork coming (its move, the fork, its block, the win), so it should
# not lose to random play; depth 3 loses a few percent of its games as the second player.
# Deep: Connect Four's match checks the same agent against the same opponent as tic-tac-toe's.
@pytest.mark.slow
@pytest.mark.parametrize("name,depth,num_games", [
    ("tic_tac_toe", 4, 20), pytest.param("connect_four", 3, 10, marks=pytest.mark.deep)])
def test_beats_random(name, depth, num_games):
  env = _env(name)
  result = arena.play(env, _agent(name, depth), agents.make("random", env), num_games,
                      jax.random.key(5))
  assert result.illegal_a == 0
  assert result.wins >= 0.7 * num_games and result.losses <= 0.1 * num_games, result


def test_bad_options():
  env = _env("tic_tac_toe")
  for depth in (0, alphabeta.MAX_DEPTH + 1, 2.5):
    with pytest.raises(ValueError, match=f"depth must be in 1..{alphabeta.MAX_DEPTH}"):
      agents.make("alphabeta", env, depth=depth)
  # The full-width selective search is bounded by its tree size instead.
  with pytest.raises(ValueError, match="depth must be in 1..3 with 256 actions"):
    alphabeta.alphabeta_policy(_env("checkers"), depth=4)
  with pytest.raises(ValueError, match="evaluation"):
    agents.make("alphabeta", env, evaluation="nope")


# -- Selective search and the learned evaluation ---------------------------------------------------


def _random_positions(env, batch, plies, seed):
  """`batch` live positions after `plies` uniformly random actions (restarting finished games)."""
  step = jax.jit(jax.vmap(functools.partial(base.step_autoreset, env)))
  key = jax.random.key(seed)
  states = jax.vmap(env.init)(jax.random.split(key, batch))
  for _ in range(plies):
    key, k1, k2 = jax.random.split(key, 3)
    states = step(states, base.uniform_legal_actions(k1, states.legal_action_mask),
                  jax.random.split(k2, batch))
  return states


def _index_prior(state):
  """A fixed ranking: lower action indices first."""
  return -jax.numpy.arange(state.legal_action_mask.shape[-1], dtype=jax.numpy.float32)


@pytest.mark.slow
def test_selective_search_wide_enough_equals_full_width():
  # Breakthrough 5x5 has at most 3 * 10 = 30 legal actions: width 30 drops none of them.
  env = games.make("breakthrough", rows=5, cols=5)
  states = _random_positions(env, BATCH, 5, seed=6)
  full = _values(env, states, depth=2)
  wide = _values(env, states, depth=2, prior=_index_prior, width=30)
  np.testing.assert_array_equal(full, wide)


@pytest.mark.slow
def test_selective_search_expands_only_the_priors_best_actions():
  env = _env("connect_four")
  states = _random_positions(env, BATCH, 4, seed=7)
  values = _values(env, states, depth=2, prior=_index_prior, width=2)
  mask = np.asarray(states.legal_action_mask)
  for row, legal in zip(values, mask):
    searched = np.flatnonzero(legal)[:2]  # the two lowest legal columns
    assert np.isfinite(row[searched]).all()
    assert np.isneginf(np.delete(row, searched)).all()


def test_selective_search_finds_a_win_only_when_the_prior_keeps_it():
  env = _env("breakthrough")
  states = _both_colours(env, BREAKTHROUGH_WIN, {"w": "b", "b": "w"})
  wins = ({"a7a8", "a7b8"}, {_mirror_move("a7a8"), _mirror_move("a7b8")})  # white's, black's
  win_actions = jax.numpy.array([
      [env.move_to_action(base.unstack_state(states, player), m) for m in sorted(wins[player])]
      for player in (0, 1)])  # [player, 2]

  def prior_for(favour_win):
    def prior(state):
      # The mover's two winning actions ranked above (or below) all the others, equal at 0.
      logits = jax.numpy.zeros(state.legal_action_mask.shape[-1])
      return logits.at[win_actions[state.current_player]].set(1.0 if favour_win else -1.0)
    return prior

  for favour_win in (True, False):
    agent = agents.make("alphabeta", env, depth=1, prior=prior_for(favour_win), width=1)
    moves = _moves(env, states, agent.act(states, jax.random.key(8)))
    found = [m in wins[i % 2] for i, m in enumerate(moves)]
    assert found == [favour_win] * BATCH, moves


@pytest.mark.slow
def test_network_alphabeta_uses_the_networks_value_and_policy():
  from azjax import nets
  from azjax.nets.base import NetConfig

  env = _env("tic_tac_toe")
  model = nets.make(NetConfig(kind="mlp", hidden=16, blocks=1, value_hidden=8), env.num_actions)
  variables = nets.init_variables(model, jax.random.key(9), env.observation_shape)
  states = _random_positions(env, BATCH, 2, seed=10)
  evaluation, prior = alphabeta.network_functions(model, variables)
  logits, value = model.apply(variables, states.observation, train=False)
  one = base.unstack_state(states, 1)
  np.testing.assert_allclose(np.asarray(evaluation(one)), np.asarray(value[1]), rtol=1e-5)
  np.testing.assert_allclose(np.asarray(prior(one)), np.asarray(logits[1]), rtol=1e-5)
  # Depth 1, full width: the agent plays the child whose value is best for the mover.
  agent = agents.make_network_alphabeta(env, model=model, variables=variables, depth=1,
                                           width=None)
  values = _values(env, states, depth=1, evaluation=evaluation)
  actions = np.asarray(agent.act(states, jax.random.key(11)))
  np.testing.assert_array_equal(values[np.arange(BATCH), actions], values.max(axis=1))
  # Selective: legal moves on random positions, and named after its depth and width.
  agent = agents.make_network_alphabeta(env, model=model, variables=variables, depth=3,
                                           width=2)
  assert agent.name == "alphabeta-d3w2"
  actions = np.asarray(agent.act(states, jax.random.key(12)))
  assert np.asarray(states.legal_action_mask)[np.arange(BATCH), actions].all()


def test_bad_selective_options():
  env = _env("tic_tac_toe")
  with pytest.raises(ValueError, match="both width and prior"):
    agents.make("alphabeta", env, width=3)
  with pytest.raises(ValueError, match="width must be at least 1"):
    agents.make("alphabeta", env, width=0, prior=_index_prior)
  with pytest.raises(ValueError, match="depth must be in 1..12 with 2 actions"):
    agents.make("alphabeta", env, depth=13, width=2, prior=_index_prior)
  agents.make("alphabeta", env, depth=12, width=2, prior=_index_prior)


@pytest.mark.slow
def test_root_search_is_what_the_agent_plays():
  """The play engine's `root_search` gives the agent's values and, with one best move, its move."""
  env = _env("tic_tac_toe")
  state = env.init(jax.random.key(0))
  for move in ("a1", "a2", "b1", "b2"):  # X to move; c1 wins at once.
    state = env.step(state, env.move_to_action(state, move))
  action, values = jax.jit(functools.partial(alphabeta.root_search, env, depth=2))(
      state, jax.random.key(1))
  states = base.stack_states([state] * BATCH)
  np.testing.assert_array_equal(values, _values(env, states, depth=2)[0])
  c1 = env.move_to_action(state, "c1")
  assert int(action) == c1
  np.testing.assert_array_equal(_agent("tic_tac_toe", 2).act(states, jax.random.key(2)), c1)
  assert float(values[c1]) == alphabeta.WIN_SCORE - 1


# -- The pruned search against the full-width one ------------------------------------------------


def _random_evaluation(env):
  """A deterministic evaluation with distinct values everywhere (a random linear function of
  the observation), so that equal values cannot hide a wrong backup."""
  weights = jax.random.normal(jax.random.key(7), env.observation_shape)
  return lambda state: 0.9 * jnp.tanh(jnp.sum(state.observation * weights))


# Deep: Breakthrough, checkers and Slider (the costliest full-width trees, 15-30 s each) run
# the same search as tic-tac-toe (terminal children) and Connect Four (4 plies of pruning);
# checkers' same-mover sign is checked on every tier by
# test_checkers_captures_last_piece_through_multi_jump.
@pytest.mark.slow
@pytest.mark.parametrize("name,depth,plies", [
    ("tic_tac_toe", 3, 1), ("connect_four", 4, 4),
    pytest.param("breakthrough", 2, 10, marks=pytest.mark.deep),
    pytest.param("checkers", 2, 12, marks=pytest.mark.deep),
    pytest.param("slider", 3, 6, marks=pytest.mark.deep)])
def test_search_matches_full_width(name, depth, plies):
  """Alpha-beta's root value is the full-width negamax value, its move is a best move, its
  principal variation replays from the root to its leaf, and the leaf gives back the value;
  and it visits fewer positions than the full-width tree has."""
  env = games.make(name)
  evaluation = _random_evaluation(env)
  states = _random_positions(env, BATCH, plies, seed=plies)
  full_width = functools.partial(alphabeta.search_values, env, depth=depth,
                                 evaluation=evaluation, max_leaves=1 << 16)
  # The full-width tree is run-bound (checkers: 4 x 256^2 leaves), so it is compiled with
  # XLA's full optimisation, which the suite otherwise turns off (conftest.py).
  full = np.asarray(jax.jit(full_width, compiler_options=perft.OPTIMISED)(states))
  found = jax.jit(functools.partial(alphabeta.search, env, depth=depth,
                                    evaluation=evaluation))(states, jax.random.key(1))
  np.testing.assert_allclose(found.value, full.max(axis=1), atol=1e-5)
  np.testing.assert_allclose(full[np.arange(BATCH), found.action], full.max(axis=1), atol=1e-5)
  leaf_values = np.asarray(jax.vmap(evaluation)(found.leaf))
  exact = np.asarray(found.leaf_exact)
  np.testing.assert_allclose(np.where(exact, found.value, found.leaf_sign * leaf_values),
                             found.value, atol=1e-5)
  step = jax.jit(env.step)
  for i in range(BATCH):
    state, line = base.unstack_state(states, i), np.asarray(found.pv[i])
    assert line[0] == found.action[i]
    for action in line[line >= 0]:
      assert bool(state.legal_action_mask[action])
      state = step(state, action)
    np.testing.assert_array_equal(state.observation, base.unstack_state(found.leaf, i).observation)
  tree = sum(env.num_actions ** k for k in range(1, depth + 1))
  assert np.all(np.asarray(found.nodes) < tree)


@pytest.mark.slow
def test_search_of_finished_and_decided_roots():
  """A finished root is left alone (no node stepped); a win in one is found at every depth and
  scored exactly, with the winning move as the whole principal variation."""
  env = _env("tic_tac_toe")
  over = positions.tic_tac_toe_position(env, ["a1", "a2", "b1", "b2", "c1"])  # X: a1 b1 c1
  win = positions.tic_tac_toe_position(env, ["a1", "a2", "b1", "b2"])  # X to move: c1 wins
  assert bool(over.terminated)
  for depth in (1, 3):
    found = jax.jit(functools.partial(alphabeta.search, env, depth=depth))(
        base.stack_states([over, win]), jax.random.key(0))
    assert int(found.nodes[0]) == 0 and bool(found.leaf_exact[0])
    assert env.action_to_move(win, int(found.action[1])) == "c1"
    assert float(found.value[1]) == alphabeta.WIN_SCORE - 1 and bool(found.leaf_exact[1])
    assert list(np.asarray(found.pv[1])) == [int(found.action[1])] + [-1] * (depth - 1)
