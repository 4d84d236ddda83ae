"""Search on hand-checkable positions: sign conventions, forced moves, known best moves."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games, search
from azjax.games import base

TTT = games.make("tic_tac_toe")


def uniform_eval(variables, observation):
  """A 'network' with no knowledge: zero logits and zero value."""
  del variables
  batch = observation.shape[0]
  return jnp.zeros((batch, TTT.num_actions)), jnp.zeros(batch)


# Jitted once: stepping op by op costs more than compiling the step.
_TTT_STEP = jax.jit(TTT.step)


def ttt_position(moves):
  state = TTT.init(jax.random.key(0))
  for move in moves:
    state = _TTT_STEP(state, TTT.move_to_action(state, move))
  return state


@functools.partial(jax.jit, static_argnums=(0,))
def _run_search(config, states, key):
  return search.search(TTT, uniform_eval, config, None, states, key)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_search_takes_the_win_in_one(algorithm):
  # X to move: X has a1, b1; O has a2, b2. c1 wins at once; else O wins with c2.
  state = ttt_position(["a1", "a2", "b1", "b2"])
  config = search.SearchConfig(algorithm=algorithm, simulations=64, gumbel_scale=0.0,
                               dirichlet_fraction=0.0)
  out = _run_search(config, base.stack_states([state]), jax.random.key(1))
  assert TTT.action_to_move(state, int(out.action[0])) == "c1"
  # The improved policy puts most of its weight on the win; nothing on occupied squares.
  weights = np.asarray(out.action_weights[0])
  assert weights.argmax() == TTT.move_to_action(state, "c1")
  np.testing.assert_allclose(weights[~np.asarray(state.legal_action_mask)], 0.0)
  np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-5)
  assert float(out.root_value[0]) > 0.0  # A mean over visited lines, the win among them.


def test_search_blocks_the_loss_in_one():
  # X to move: O threatens c2 (a2, b2); X has a1 and c3, no win in one. Only c2 saves X.
  state = ttt_position(["a1", "a2", "c3", "b2"])
  config = search.SearchConfig(simulations=128, gumbel_scale=0.0)
  out = _run_search(config, base.stack_states([state]), jax.random.key(2))
  assert TTT.action_to_move(state, int(out.action[0])) == "c2"


def test_recurrent_fn_signs():
  """Reward goes to the mover; discount -1 when the turn passes, 0 at the end."""
  recurrent_fn = jax.jit(search.make_recurrent_fn(TTT, uniform_eval))
  state = ttt_position(["a1", "a2", "b1", "b2"])
  states = base.stack_states([state, state])
  win, other = TTT.move_to_action(state, "c1"), TTT.move_to_action(state, "c3")
  out, children = recurrent_fn(None, jax.random.key(0), jnp.array([win, other]), states)
  np.testing.assert_allclose(out.reward, [1.0, 0.0])
  np.testing.assert_allclose(out.discount, [0.0, -1.0])
  np.testing.assert_allclose(out.value, [0.0, 0.0])
  assert bool(children.terminated[0]) and not bool(children.terminated[1])
  # Masked priors: occupied squares get the masked logit, never NaN.
  assert np.all(np.isfinite(np.asarray(out.prior_logits)))


@pytest.mark.slow
def test_recurrent_fn_same_player_discount_checkers():
  """A checkers multi-jump keeps the mover: discount +1 on the first hop."""
  checkers = games.make("checkers")
  # o on c3 can jump d4 to e5, then f6 to g7.
  state = checkers.from_ascii("""
      . . . . . . . .
      x . . . . . . .
      . . . . . x . .
      . . . . . . . .
      . . . x . . . .
      . . o . . . . .
      . . . . . . . .
      . . . . . . . .
  """)

  def eval_fn(variables, observation):
    del variables
    return jnp.zeros((observation.shape[0], checkers.num_actions)), jnp.zeros(
        observation.shape[0])

  recurrent_fn = jax.jit(search.make_recurrent_fn(checkers, eval_fn))  # Both hops: one program.
  hop = checkers.move_to_action(state, "c3e5")
  out, children = recurrent_fn(None, jax.random.key(0), jnp.array([hop]),
                               base.stack_states([state]))
  assert int(children.current_player[0]) == 0  # Same player continues the jump.
  np.testing.assert_allclose(out.discount, [1.0])
  second = checkers.move_to_action(base.unstack_state(children, 0), "e5g7")
  out2, children2 = recurrent_fn(None, jax.random.key(0), jnp.array([second]), children)
  assert int(children2.current_player[0]) == 1
  np.testing.assert_allclose(out2.discount, [-1.0])


def test_forced_move_skips_search():
  """A single legal action is played with a one-hot target, whatever the network says."""
  # Tic-tac-toe with one empty square left (c3), no line yet.
  state = ttt_position(["a1", "b1", "c1", "a2", "b2", "c2", "b3", "a3"])
  assert int(state.legal_action_mask.sum()) == 1
  config = search.SearchConfig(simulations=8)
  out = _run_search(config, base.stack_states([state, state]), jax.random.key(3))
  c3 = TTT.move_to_action(state, "c3")
  np.testing.assert_array_equal(out.action, [c3, c3])
  np.testing.assert_allclose(out.action_weights[:, c3], 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_action_value_is_the_q_value_of_the_move_played(algorithm):
  """`action_value` is the tree's Q-value of the action played: 1 for an immediate win (its
  reward; a terminal child's value is 0), forced moves included, where `qvalues` is zeroed."""
  win = ttt_position(["a1", "a2", "b1", "b2"])  # X to move: c1 wins.
  # X to move with one square left, a3, which completes the diagonal a3-b2-c1.
  forced = ttt_position(["c2", "a2", "b2", "b1", "c1", "c3", "a1", "b3"])
  config = search.SearchConfig(algorithm=algorithm, simulations=64, gumbel_scale=0.0,
                               dirichlet_fraction=0.0)
  out = _run_search(config, base.stack_states([win, forced]), jax.random.key(1))
  assert [TTT.action_to_move(s, int(a)) for s, a in zip((win, forced), out.action)] == [
      "c1", "a3"]
  np.testing.assert_allclose(out.action_value, [1.0, 1.0])
  np.testing.assert_allclose(out.qvalues[1], 0.0)
  # The root's value averages in the simulations spent on the other moves: not a sure win.
  assert float(out.root_value[0]) < 1.0


def test_action_value_without_a_search_is_the_network_value():
  """Where no state of the batch needs a search, `action_value` is the network's value."""

  def constant_eval(variables, observation):
    del variables
    batch = observation.shape[0]
    return jnp.zeros((batch, TTT.num_actions)), jnp.full(batch, 0.25)

  forced = ttt_position(["c2", "a2", "b2", "b1", "c1", "c3", "a1", "b3"])
  out = jax.jit(functools.partial(search.search, TTT, constant_eval,
                                  search.SearchConfig(simulations=8), None))(
      base.stack_states([forced]), jax.random.key(0))
  np.testing.assert_allclose(out.action_value, [0.25])
  np.testing.assert_allclose(out.root_value, [0.25])


def test_visit_temperature_action():
  probs = jnp.array([[0.0, 0.7, 0.3], [0.0, 0.7, 0.3]])
  step_count = jnp.array([0, 5])
  greedy = search.visit_temperature_action(jax.random.key(0), probs, step_count, temperature=1.0,
                                           temperature_moves=0)
  np.testing.assert_array_equal(greedy, [1, 1])
  # Early moves sample in proportion to visits: never the unvisited action, both others seen.
  keys = jax.random.split(jax.random.key(1), 400)
  sampled = jax.jit(jax.vmap(lambda k: search.visit_temperature_action(
      k, probs, step_count, temperature=1.0, temperature_moves=3)))(keys)
  first = np.asarray(sampled[:, 0])
  assert set(first.tolist()) == {1, 2}
  assert 0.6 < np.mean(first == 1) < 0.8
  np.testing.assert_array_equal(sampled[:, 1], 1)  # Past temperature_moves: greedy.


def test_noiseless_gumbel_action():
  """The most visited action wins; the improved policy only breaks ties among those."""
  visits = jnp.array([[1, 3, 3, 1, 0], [0, 2, 1, 1, 0]])
  weights = jnp.array([[0.5, 0.1, 0.2, 0.15, 0.05], [0.1, 0.2, 0.6, 0.1, 0.0]])
  np.testing.assert_array_equal(search.noiseless_gumbel_action(visits, weights), [2, 1])


@pytest.mark.slow
def test_gumbel_moves():
  """Before `gumbel_moves` actions the noise picks the move; from then on the search's best."""
  state = ttt_position(["a1", "a2", "b1", "b2"])  # 4 actions played
  states = base.stack_states([state, state])
  noisy_config = search.SearchConfig(simulations=8, max_num_considered_actions=4,
                                     gumbel_scale=3.0, gumbel_moves=5)
  late_config = dataclasses.replace(noisy_config, gumbel_moves=4)
  differs = False
  for seed in range(12):
    key = jax.random.key(seed)
    noisy, late = _run_search(noisy_config, states, key), _run_search(late_config, states, key)
    best = search.noiseless_gumbel_action(late.visit_counts, late.action_weights)
    np.testing.assert_array_equal(late.action, best)
    np.testing.assert_array_equal(noisy.visit_counts, late.visit_counts)  # The same search.
    differs |= bool(np.any(noisy.action != best))
  assert differs  # The noise's pick is not always the best one.


def test_bad_search_config():
  with pytest.raises(ValueError, match="algorithm"):
    search.SearchConfig(algorithm="alphabeta").validate()
  with pytest.raises(ValueError, match="simulations"):
    search.SearchConfig(simulations=0).validate()


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", sorted(search.ALGORITHMS))
def test_root_statistics(algorithm):
  """Visit counts, Q-values and the prior are the root's; zero where nothing was searched."""
  live = ttt_position(["a1", "a2", "b1", "b2"])  # X to move, c1 wins
  forced = ttt_position(["a1", "b1", "c1", "a2", "b2", "c2", "b3", "a3"])  # c3 only
  config = search.SearchConfig(algorithm=algorithm, simulations=32, gumbel_scale=0.0,
                               dirichlet_fraction=0.0)
  out = _run_search(config, base.stack_states([live, forced]), jax.random.key(4))
  visits, q = np.asarray(out.visit_counts), np.asarray(out.qvalues)
  legal = np.asarray(live.legal_action_mask)
  assert visits.dtype == np.int32 and visits[0].sum() == 32 and np.all(visits[0][~legal] == 0)
  assert np.all(visits[1] == 0) and np.all(q[1] == 0.0)  # The forced move was not searched.
  c1 = TTT.move_to_action(live, "c1")
  assert q[0, c1] == 1.0 and visits[0].argmax() == c1  # The win, from X's side.
  np.testing.assert_allclose(q[0][visits[0] == 0], 0.0)
  np.testing.assert_allclose(out.prior[0], legal / legal.sum(), rtol=1e-6)  # Uniform network.
  if algorithm == "puct":  # PUCT's policy target is the visit distribution itself.
    np.testing.assert_allclose(out.action_weights[0], visits[0] / visits[0].sum(), rtol=1e-6)


def test_algorithms_are_a_registry():
  assert set(search.ALGORITHMS) == {"gumbel", "puct"}
  with pytest.raises(ValueError, match=r"use one of \('gumbel', 'puct'\)"):
    search.SearchConfig(algorithm="uct").validate()


def _hashed_eval(num_actions):
  """A 'network' with arbitrary but fixed opinions: logits and values from the observation."""

  def eval_fn(variables, observation):
    del variables
    flat = observation.reshape(observation.shape[0], -1).astype(jnp.float32)
    mix = jnp.sin(jnp.arange(flat.shape[1] * num_actions, dtype=jnp.float32) * 0.37)
    logits = flat @ mix.reshape(flat.shape[1], num_actions)
    return logits, jnp.tanh(jnp.sum(flat * jnp.cos(jnp.arange(flat.shape[1]) * 1.3), -1))

  return eval_fn


def _random_positions(game, count, plies, seed):
  """`count` states after up to `plies` uniformly random moves (finished games stop)."""
  @jax.jit  # One program for every ply (40 plies of checkers op by op took seconds).
  def advance(states, key, ply):
    stepped = jax.vmap(game.step)(states, base.uniform_legal_actions(key, states.legal_action_mask))
    live = ~states.terminated & (jnp.arange(count) % plies >= ply)  # staggered depths
    return jax.vmap(base.tree_select)(live, stepped, states)

  states = jax.vmap(game.init)(jax.random.split(jax.random.key(seed), count))
  for ply, key in enumerate(jax.random.split(jax.random.key(seed + 1), plies)):
    states = advance(states, key, ply)
  return states


def _recording(loop, name, traced):
  """`loop`, appending `name` to `traced` each time it is traced."""

  def recorded(*args, **kwargs):
    traced.append(name)
    return loop(*args, **kwargs)

  return recorded


# Deep: tic-tac-toe with Gumbel; its terminal children are covered by tic-tac-toe with PUCT,
# Gumbel's descent by checkers.
@pytest.mark.slow
@pytest.mark.parametrize("game_name,algorithm", [
    pytest.param("tic_tac_toe", "gumbel", marks=pytest.mark.deep), ("tic_tac_toe", "puct"),
    ("checkers", "gumbel")])
def test_batched_loops_build_mctx_tree(game_name, algorithm, monkeypatch):
  """The batched descent and backward pass give the very tree mctx's own give: terminal children
  (tic-tac-toe), a mover who moves again (checkers' multi-jumps, discount +1), both algorithms."""
  traced = []  # which loops each policy traced: the comparison must not be batched vs batched
  for name in ("batched_simulate", "batched_backward"):
    monkeypatch.setattr(search, name, _recording(getattr(search, name), name, traced))
  game = games.make(game_name)
  eval_fn = _hashed_eval(game.num_actions)
  states = _random_positions(game, 24, 8 if game_name == "tic_tac_toe" else 40, seed=3)
  states = jax.tree.map(lambda x: x[~np.asarray(states.terminated)], states)
  root = search.root_output(eval_fn, None, states)
  config = search.SearchConfig(algorithm=algorithm, simulations=24,
                               max_num_considered_actions=4)

  def run(batched):
    def tree(key):
      return search.policy(game, eval_fn, config, None, states, root, key,
                           batched_loops=batched)[1].search_tree
    # Bit for bit: both compiled with XLA's fusion emitters (its default; conftest turns them
    # off, and the older emitters round the two programs' backups differently, by an ulp).
    return jax.jit(tree, compiler_options={"xla_cpu_use_fusion_emitters": True})(
        jax.random.key(7))

  ours = run(True)
  assert sorted(set(traced)) == ["batched_backward", "batched_simulate"]
  traced.clear()
  theirs = run(False)
  assert not traced
  assert int(np.max(np.asarray(theirs.node_visits[:, 0]))) == config.simulations + 1
  discounts = np.asarray(theirs.children_discounts)[np.asarray(theirs.children_index) >= 0]
  if game_name == "checkers":
    assert np.any(discounts == 1.0)  # a jump that goes on
  else:
    assert np.any(discounts == 0.0)  # a game that ends
  for field in ("node_values", "node_visits", "children_values", "children_visits",
                "children_index", "parents"):
    np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field), err_msg=field)
  # mctx's own loops are back after tracing.
  assert search.mctx_search.backward is not search.batched_backward
  assert search.mctx_search.simulate is not search.batched_simulate
