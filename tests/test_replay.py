"""The replay buffer (azjax.replay): targets when a game ends, wrap-around, sampling."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games, replay


@pytest.mark.slow
def test_replay_targets_arrive_when_the_game_ends():
  buf = replay.init(8, 2, (1, 1, 1), 2)  # 4 blocks of 2 slots
  obs = jnp.zeros((2, 1, 1, 1))
  pol = jnp.full((2, 2), 0.5)
  mask = jnp.ones((2, 2), bool)
  episode = jnp.array([0, 0])
  # Two moves in two slots: players 0 then 1.
  buf = replay.add(buf, obs, pol, mask, jnp.array([0, 0]), episode)
  buf = replay.add(buf, obs, pol, mask, jnp.array([1, 1]), episode)
  assert int(buf.num_targets) == 0
  # Slot 1's game ends, won by player 1; slot 0 goes on.
  buf = replay.assign_outcomes(buf, jnp.array([False, True]), episode,
                               jnp.array([[0.0, 0.0], [-1.0, 1.0]]))
  np.testing.assert_array_equal(buf.has_target[:2], [[False, True], [False, True]])
  np.testing.assert_allclose(buf.value[:2], [[0.0, -1.0], [0.0, 1.0]])
  # A new game in slot 1 (episode 1) does not touch the finished rows when it ends.
  buf = replay.add(buf, obs, pol, mask, jnp.array([0, 0]), jnp.array([0, 1]))
  buf = replay.assign_outcomes(buf, jnp.array([True, True]), jnp.array([0, 1]),
                               jnp.array([[1.0, -1.0], [1.0, -1.0]]))
  np.testing.assert_allclose(buf.value[:3], [[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])
  assert bool(buf.has_target[:3].all()) and not buf.has_target[3:].any()
  # Sampling only returns rows with targets.
  buf = replay.add(buf, obs, pol, mask, jnp.array([0, 0]), jnp.array([1, 2]))
  values = replay.sample(buf, jax.random.key(0), 256).value
  assert set(np.asarray(values).tolist()) <= {1.0, -1.0}

def test_replay_wraps_around():
  buf = replay.init(4, 2, (1, 1, 1), 1)
  for step in range(3):
    buf = replay.add(buf, jnp.full((2, 1, 1, 1), step, jnp.float32), jnp.ones((2, 1)),
                     jnp.ones((2, 1), bool), jnp.zeros(2, jnp.int32), jnp.zeros(2, jnp.int32))
  np.testing.assert_allclose(buf.observation[..., 0, 0, 0], [[2, 2], [1, 1]])
  assert int(buf.pointer) == 1

def test_replay_samples_whole_rows_uniformly():
  buf = replay.init(8, 2, (1, 1, 1), 2)
  mask = jnp.ones((2, 2), bool)
  for block in range(4):
    row = jnp.array([2 * block, 2 * block + 1], jnp.float32)  # the flat row numbers
    buf = replay.add(buf, row.reshape(2, 1, 1, 1), jnp.stack([row, -row], axis=1), mask,
                     jnp.zeros(2, jnp.int32), jnp.full(2, block))
    if block < 3:  # the last block's games go on: no targets there
      buf = replay.assign_outcomes(buf, jnp.array([True, True]), jnp.full(2, block),
                                   jnp.array([[1.0, -1.0], [1.0, -1.0]]))
  obs, pol, _, value = replay.sample(buf, jax.random.key(3), (4, 1000))[:4]
  assert obs.shape == (4, 1000, 1, 1, 1) and value.shape == (4, 1000)
  rows = np.asarray(obs).reshape(-1)
  # Every field of a sample comes from the same row.
  np.testing.assert_array_equal(np.asarray(pol).reshape(-1, 2), np.stack([rows, -rows], 1))
  np.testing.assert_array_equal(np.asarray(value).reshape(-1), 1.0)
  # Rows 0..5 have targets: each drawn about 4000 / 6 times (binomial sd ~24); 6, 7 never.
  counts = np.bincount(rows.astype(int), minlength=8)
  assert counts[6:].sum() == 0 and (np.abs(counts[:6] - 4000 / 6) < 120).all(), counts

def test_value_targets_follow_the_mover_through_a_checkers_multi_jump():
  """x (player 1) moves, then o (player 0) jumps twice in a row and takes the last x pieces:
  both of o's positions get o's win, x's position gets the loss."""
  env = games.make("checkers")
  state = env.from_ascii("""
      . . . . . . . .
      . . . . . . x .
      . . . . . . . .
      . . . . . . . .
      . . . x . . . .
      . . o . . . . .
      . o . . . . . .
      . . . . . . . .
  """, to_move=1)
  buf = replay.init(4, 1, env.observation_shape, env.num_actions)  # 4 blocks of 1 slot
  players = []
  for move in ("g7f6", "c3e5", "e5g7"):
    assert not bool(state.terminated)
    players.append(int(state.current_player))
    buf = replay.add(buf, state.observation[None],
                     state.legal_action_mask[None].astype(jnp.float32),
                     state.legal_action_mask[None], state.current_player[None],
                     jnp.zeros(1, jnp.int32))
    state = env.step(state, env.move_to_action(state, move))
  assert players == [1, 0, 0]  # The same player moves twice: a multi-jump.
  assert bool(state.terminated)
  buf = replay.assign_outcomes(buf, jnp.array([True]), jnp.zeros(1, jnp.int32),
                               state.rewards[None])
  np.testing.assert_allclose(buf.value[:3, 0], [-1.0, 1.0, 1.0])
  assert bool(buf.has_target[:3].all()) and not bool(buf.has_target[3, 0])
