"""The training step (azjax.train): loss maths, the fused iteration, schedules, optimizers."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tiny

from azjax import replay, train

# The training tests' tiny configuration (tests/tiny.py): its programs compile once.
TINY = tiny.TRAINING


@pytest.fixture
def trainer(tiny_trainer):
  return tiny_trainer


@pytest.fixture
def iteration(tiny_iteration):
  return tiny_iteration


def test_loss_terms_hand_computed():
  logits = jnp.array([[0.0, math.log(3.0), 5.0]])  # The last action is illegal.
  mask = jnp.array([[True, True, False]])
  target = jnp.array([[0.5, 0.5, 0.0]])
  value, target_value = jnp.array([0.5]), jnp.array([-1.0])
  policy_loss, value_loss = train.loss_terms(logits, value, target, mask, target_value)
  # Masked softmax over the legal pair: p = (1/4, 3/4).
  expected = -(0.5 * math.log(0.25) + 0.5 * math.log(0.75))
  np.testing.assert_allclose(policy_loss, [expected], rtol=1e-6)
  np.testing.assert_allclose(value_loss, [2.25], rtol=1e-6)

def test_a_loop_under_vmap_gives_what_vmap_gives():
  """`train.loop_under_vmap` (a sweep's `--loop-configs`): under vmap the function runs once per
  row, with unbatched arguments passed whole, and the rows' pytree outputs come back stacked."""
  def fn(x, y):
    return {"sum": x + y.sum(), "rows": x * y}

  x, y = jnp.arange(3.0), jnp.array([1.0, 2.0])
  looped = jax.vmap(train.loop_under_vmap(fn), in_axes=(0, None))(x, y)
  assert np.array_equal(looped["sum"], [3.0, 4.0, 5.0])
  assert np.array_equal(looped["rows"], [[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]])


def test_ema_update_hand_computed():
  """d = min(decay, (1 + n) / (10 + n)): 0.1 after no updates, the decay itself later."""
  average, params = {"w": jnp.array([1.0, 3.0])}, {"w": jnp.array([0.0, 1.0])}
  first = train.ema_update(average, params, 0.999, 0)
  np.testing.assert_allclose(first["w"], [0.1, 0.1 * 3.0 + 0.9 * 1.0], rtol=1e-6)
  late = train.ema_update(average, params, 0.5, 90)  # (1 + 90) / (10 + 90) = 0.91 > 0.5
  np.testing.assert_allclose(late["w"], [0.5, 2.0], rtol=1e-6)


@pytest.mark.slow  # Compiles the iteration with the average.
def test_ema_averages_the_network_without_changing_training(trainer, iteration):
  """With ema_decay, SGD and self-play are the run's without it (the same trained parameters,
  up to the rounding of a program XLA fuses differently), and the run's network is the
  average, which lags the trained parameters."""
  averaged = train.Trainer.create(dataclasses.replace(TINY, ema_decay=0.9))
  step = jax.jit(averaged.iteration)
  plain_state, ema_state = trainer.init(), averaged.init()
  assert plain_state.ema_params == {}
  for _ in range(5):
    plain_state, _ = iteration(plain_state)
    ema_state, metrics = step(ema_state)
  assert bool(metrics["trained"])
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-8),
               ema_state.params, plain_state.params)
  network = train.Trainer.variables(ema_state)["params"]
  jax.tree.map(np.testing.assert_array_equal, network, ema_state.ema_params)
  jax.tree.map(np.testing.assert_array_equal,
               train.Trainer.trained_variables(ema_state)["params"], ema_state.params)
  gap = jax.tree.leaves(jax.tree.map(lambda a, p: float(jnp.abs(a - p).max()), network,
                                     ema_state.params))
  assert max(gap) > 0


def test_l2_penalty_counts_kernels_only():
  params = {"Dense_0": {"kernel": jnp.array([[1.0, 2.0]]), "bias": jnp.array([5.0])},
            "BatchNorm_0": {"scale": jnp.array([3.0])}}
  np.testing.assert_allclose(train.l2_penalty(params), 5.0)

def test_value_target_mixes_outcome_and_root_value():
  # (1 - 0.25) * 1 + 0.25 * 0.2 = 0.8; (1 - 0.25) * -1 + 0.25 * 0.6 = -0.6.
  target = train.value_target(jnp.array([1.0, -1.0]), jnp.array([0.2, 0.6]), 0.25)
  np.testing.assert_allclose(target, [0.8, -0.6], atol=1e-6)
  np.testing.assert_allclose(train.value_target(jnp.array([1.0]), jnp.array([0.2]), 0.0), [1.0])

def test_cheap_searches_train_no_policy():
  """Rows of playout cap randomisation's cheap searches add nothing to the policy loss; their
  value still counts, and value_target_mix reads the stored root value."""
  config = dataclasses.replace(TINY, value_target_mix=0.5)
  trainer = train.Trainer.create(config)
  state = trainer.init()
  env = trainer.game
  obs = jax.random.uniform(jax.random.key(0), (4,) + env.observation_shape)
  mask = jnp.ones((4, env.num_actions), bool)
  good = jnp.full((4, env.num_actions), 1.0 / env.num_actions)
  bad = jnp.zeros((4, env.num_actions)).at[:, 0].set(1.0)
  full = jnp.array([True, True, False, False])
  policy = jnp.where(full[:, None], good, bad)
  outcome, root = jnp.array([1.0, -1.0, 1.0, 0.0]), jnp.array([0.0, 0.5, -1.0, 1.0])
  batch = replay.Batch(obs, policy, mask, outcome, root, full)
  _, (_, metrics) = trainer.loss(state.params, state.batch_stats, batch)
  logits, value = trainer.eval_fn(trainer.variables(state), obs)
  ce, _ = train.loss_terms(logits, value, good, mask, outcome)
  np.testing.assert_allclose(metrics["policy_loss"], ce[:2].mean(), rtol=1e-5)
  expected_value_loss = jnp.mean(jnp.square(value - (outcome + root) / 2))
  np.testing.assert_allclose(metrics["value_loss"], expected_value_loss, rtol=1e-5)

@pytest.mark.slow
def test_iteration_trains_once_buffer_is_ready(trainer, iteration):
  state = trainer.init()
  state, metrics = iteration(state)
  assert int(state.positions) == TINY.selfplay_batch * TINY.selfplay_steps
  # 64 positions, few games finished yet: no SGD until min_buffer targets exist.
  for _ in range(3):
    state, metrics = iteration(state)
  assert bool(metrics["trained"])
  assert np.isfinite(float(metrics["loss"]))
  assert int(state.sgd_steps) > 0

@pytest.mark.slow  # Compiles a second, overlapped iteration.
@pytest.mark.parametrize("overlap", [False, True])
def test_sgd_samples_the_buffer_after_the_chunk_or_with_overlap_before_it(trainer, iteration,
                                                                          overlap):
  """An iteration's SGD is `train_on` the buffer its self-play has just written to, or with
  `overlap_sgd` the buffer as the iteration found it (so that the two share no data)."""
  state = trainer.init()
  for _ in range(4):
    state, _ = iteration(state)
  # Without overlap: the module's trainer and its compiled iteration.
  overlapped = (train.Trainer.create(dataclasses.replace(TINY, overlap_sgd=True)) if overlap
                else trainer)
  after, metrics = (jax.jit(overlapped.iteration) if overlap else iteration)(state)
  assert bool(metrics["trained"])
  keys = train.iteration_keys(state.key)
  train_on = jax.jit(overlapped.train_on)
  for buffer, used in ((state.selfplay.buffer, overlap), (after.selfplay.buffer, not overlap)):
    params = train_on(buffer, state, keys.sgd, keys.augment)[0]
    close = jax.tree.leaves(jax.tree.map(
        lambda a, b: np.allclose(a, b, rtol=1e-5, atol=1e-6), params, after.params))
    assert all(close) if used else not all(close)

def test_cosine_schedule_warms_up_then_decays_to_its_floor():
  # 10 iterations of 10 SGD steps: one warmup step from 0, then a cosine over the other 99.
  config = dataclasses.replace(TINY, iterations=10, sgd_steps=10, lr_schedule="cosine",
                               warmup_steps=0, lr_floor=0.1)
  unit = train._unit_schedule(config)
  # At step 34 the cosine has gone a third of the way: 0.1 + 0.9 * (1 + cos(pi / 3)) / 2.
  np.testing.assert_allclose([unit(0), unit(1), unit(34), unit(100), unit(500)],
                             [0.0, 1.0, 0.775, 0.1, 0.1], atol=1e-6)
  no_floor = train._unit_schedule(dataclasses.replace(config, lr_floor=0.0))
  np.testing.assert_allclose([no_floor(34), no_floor(100)], [0.75, 0.0], atol=1e-6)

@pytest.mark.slow
@pytest.mark.parametrize("optimizer, schedule", [("sgd", "cosine"), ("adam", "constant")])
def test_other_optimizers_take_a_finite_step(optimizer, schedule):
  config = dataclasses.replace(TINY, optimizer=optimizer, lr_schedule=schedule, warmup_steps=2,
                               weight_decay=1e-3)
  trainer = train.Trainer.create(config)
  state = trainer.init()
  env = trainer.game
  obs = jnp.zeros((8,) + env.observation_shape)
  mask = jnp.ones((8, env.num_actions), bool)
  batch = replay.Batch(obs, jnp.full((8, env.num_actions), 1.0 / env.num_actions), mask,
                       jnp.ones(8), jnp.zeros(8), jnp.ones(8, bool))
  step = jax.jit(trainer.sgd_step)
  params, _, opt_state, metrics = step(state.params, state.batch_stats, state.opt_state, batch)
  params, _, _, metrics = step(params, state.batch_stats, opt_state, batch)
  assert np.isfinite(float(metrics["loss"]))
  changed = jax.tree.map(lambda a, b: bool(jnp.any(a != b)), params, state.params)
  assert any(jax.tree.leaves(changed))
