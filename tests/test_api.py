"""One conformance test, run on every registered game (cf. pgx's api_test)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games
from azjax.games import base

BATCH = 32
# (name, make kwargs): every game, plus a small Breakthrough board and its thesis encoding.
CASES = [
    ("tic_tac_toe", {}),
    ("connect_four", {}),
    ("breakthrough", {}),
    ("breakthrough", {"rows": 5, "cols": 5, "observation": "thesis"}),
    ("checkers", {}),
    ("slider", {}),
]


def _id(case):
  name, kwargs = case
  return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.fixture(scope="module", params=CASES, ids=_id)
def case(request):
  return request.param


@pytest.fixture(scope="module")
def env(case):
  name, kwargs = case
  return games.make(name, **kwargs)


def _random_play(env, num_steps):
  """Batched random play with automatic reset inside one `lax.scan`.

  Returns per-step (terminated, rewards, legal mask, current player, observation) and the number
  of traces of the step function.
  """
  traces = {"step": 0}

  def step(state, action):
    traces["step"] += 1  # Counts Python executions, i.e. traces.
    return env.step(state, action)

  def body(carry, key):
    states, = carry
    act_key, reset_key = jax.random.split(key)
    actions = jax.vmap(base.uniform_legal_action)(jax.random.split(act_key, BATCH),
                                                   states.legal_action_mask)
    stepped = jax.vmap(step)(states, actions)
    fresh = jax.vmap(env.init)(jax.random.split(reset_key, BATCH))
    next_states = jax.tree.map(
        lambda f, s: jnp.where(
            states.terminated.reshape((-1,) + (1,) * (f.ndim - 1)), f, s), fresh, stepped)
    out = (stepped.terminated, stepped.rewards, stepped.legal_action_mask,
           stepped.current_player, stepped.observation, actions, states.legal_action_mask)
    return (next_states,), out

  @jax.jit
  def run(key):
    init_key, scan_key = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(init_key, BATCH))
    return jax.lax.scan(body, (states,), jax.random.split(scan_key, num_steps))[1]

  return run(jax.random.key(0)), traces


def test_attributes(env):
  assert env.num_players == 2
  assert env.num_actions > 0 and isinstance(env.num_actions, int)
  assert len(env.observation_shape) == 3
  assert env.observation_shape[:2] == (env.rows, env.cols)
  assert env.max_game_length > 0
  if env.name != "connect_four":  # Connect Four's action is a column.
    passes = int(env.name == "slider")  # Slider's pass is one more action, after the squares.
    assert env.num_actions == env.rows * env.cols * env.action_planes + passes


def test_init_dtypes_and_shapes(env):
  state = jax.jit(env.init)(jax.random.key(0))
  assert state.current_player.dtype == jnp.int32 and state.current_player.shape == ()
  assert state.legal_action_mask.dtype == jnp.bool_
  assert state.legal_action_mask.shape == (env.num_actions,)
  assert state.terminated.dtype == jnp.bool_ and state.terminated.shape == ()
  assert state.rewards.dtype == jnp.float32 and state.rewards.shape == (2,)
  assert state.step_count.dtype == jnp.int32
  assert state.last_move.shape == (2,) and state.last_move.dtype == jnp.int32
  assert state.observation.dtype == jnp.float32
  assert state.observation.shape == env.observation_shape
  assert int(state.current_player) == 0
  assert not bool(state.terminated)
  assert bool(state.legal_action_mask.any())
  np.testing.assert_array_equal(state.rewards, 0.0)
  np.testing.assert_array_equal(env.observe(state), state.observation)


def test_step_is_traced_once():
  env = games.make("tic_tac_toe")
  step = jax.jit(chex.assert_max_traces(env.step, n=1))
  state = env.init(jax.random.key(0))
  state = step(state, jnp.int32(4))
  state = step(state, jnp.int32(0))  # Same shapes and dtypes: no retrace.
  assert int(state.step_count) == 2


def test_no_retrace_in_batched_play(env):
  num_steps = 8
  _, traces = _random_play(env, num_steps)
  assert traces["step"] == 1


def test_random_batched_play_to_the_end(env):
  """Random play with automatic reset: games end, rewards are zero-sum and only at the end."""
  steps = {"tic_tac_toe": 40, "connect_four": 90, "breakthrough": 300, "checkers": 300,
           "slider": 300}[env.name]
  outputs, _ = _random_play(env, steps)
  terminated, rewards, mask, player, obs, actions, mask_before = map(np.asarray, outputs)
  assert terminated.any(), "no game ended"
  # Every sampled action was legal in the live state it was played in.
  live = mask_before.any(-1)
  assert np.take_along_axis(mask_before, actions[..., None], axis=-1)[..., 0][live].all()
  # Rewards are zero-sum and non-zero only on the terminating transition.
  np.testing.assert_allclose(rewards.sum(-1), 0.0)
  assert not np.any(rewards[~terminated] != 0)
  assert np.all(np.isin(rewards, [-1.0, 0.0, 1.0]))
  # The legal mask is all False once terminated, and non-empty otherwise.
  assert not mask[terminated].any()
  assert mask[~terminated].any(-1).all()
  assert np.all((player == 0) | (player == 1))
  assert np.isfinite(obs).all()


def _after_one_move(env):
  """A live position after at least one move, where some action is illegal.

  Plays the first legal action until one is illegal (Connect Four: until column a is full).
  """
  state = env.init(jax.random.key(0))
  while True:
    state = env.step(state, jnp.int32(env.legal_actions(state)[0]))
    if not bool(np.asarray(state.legal_action_mask).all()):
      break
  assert not bool(state.terminated)
  return state


def test_terminated_step_is_noop_and_illegal_is_loss(env):
  state = _after_one_move(env)
  illegal = np.flatnonzero(~np.asarray(state.legal_action_mask))
  mover = int(state.current_player)
  lost = jax.jit(env.step)(state, jnp.int32(illegal[0]))
  assert bool(lost.terminated)
  np.testing.assert_array_equal(lost.rewards[mover], -1.0)
  np.testing.assert_array_equal(lost.rewards[1 - mover], 1.0)
  assert not bool(lost.legal_action_mask.any())
  np.testing.assert_array_equal(env.board_array(lost), env.board_array(state))
  again = jax.jit(env.step)(lost, jnp.int32(0))
  np.testing.assert_array_equal(again.rewards, [0.0, 0.0])
  chex.assert_trees_all_equal(again.replace(rewards=lost.rewards), lost)


def test_illegal_action_does_not_touch_other_games(env):
  state = _after_one_move(env)
  states = base.stack_states([state] * 4)
  legal = np.flatnonzero(np.asarray(state.legal_action_mask))[0]
  illegal = np.flatnonzero(~np.asarray(state.legal_action_mask))
  actions = jnp.array([legal, illegal[0], legal, legal], dtype=jnp.int32)
  stepped = jax.jit(jax.vmap(env.step))(states, actions)
  single = env.step(state, jnp.int32(legal))
  for i in (0, 2, 3):
    chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], stepped), single)
  assert bool(stepped.terminated[1])


def test_notation_round_trip_at_start(env):
  state = env.init(jax.random.key(0))
  for action in env.legal_actions(state):
    move = env.action_to_move(state, action)
    assert env.move_to_action(state, move) == action
  with pytest.raises(ValueError, match="legal moves"):
    env.move_to_action(state, "??")


def test_make_rejects_unknown():
  with pytest.raises(ValueError, match="unknown game"):
    games.make("chess")
  with pytest.raises(ValueError, match="bad option"):
    games.make("tic_tac_toe", rows=4)


def test_uniform_legal_action_is_uniform_over_legal_actions():
  mask = jnp.zeros(192, bool).at[jnp.array([0, 5, 64, 100, 191])].set(True)
  masks = jnp.broadcast_to(mask, (50000, 192))
  actions = np.asarray(jax.jit(base.uniform_legal_actions)(jax.random.key(0), masks))
  counts = np.bincount(actions, minlength=192)
  assert counts.sum() == counts[[0, 5, 64, 100, 191]].sum()  # Only legal actions.
  expected = 50000 / 5
  chi2 = np.sum((counts[[0, 5, 64, 100, 191]] - expected) ** 2 / expected)
  assert chi2 < 18.5  # 99.9% quantile of chi-square with 4 degrees of freedom.
  # A single legal action is always chosen; no legal action gives 0.
  one = jnp.zeros((4, 7), bool).at[:, 3].set(True)
  np.testing.assert_array_equal(base.uniform_legal_actions(jax.random.key(1), one), 3)
  assert int(base.uniform_legal_action(jax.random.key(2), jnp.zeros(7, bool))) == 0
