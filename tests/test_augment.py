"""Symmetry augmentation: each symmetry maps a position, its legal moves and its policy alike."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import augment, games

GAMES = [("connect_four", {}), ("tic_tac_toe", {}),
         ("breakthrough", dict(rows=5, cols=4)),
         ("breakthrough", dict(rows=6, cols=5, observation="thesis")),
         ("breakthrough", dict(rows=5, cols=5, observation="attacks"))]


def _play(env, actions):
  state = env.init(jax.random.key(0))
  for action in actions:
    state = env.step(state, action)
  return state


@pytest.mark.slow
@pytest.mark.parametrize("name,kwargs", GAMES)
def test_symmetries_map_positions_to_positions(name, kwargs):
  """Playing the image of every move gives the image of the position: the transformed
  observation and legal mask are exactly those of the mirrored game. The positions have either
  side to move, so one action table serves both frames, as the opponent's reply target
  (`replay.Batch.reply_policy`, transformed with the position's symmetry) needs."""
  env = games.make(name, **kwargs)
  cells, actions = augment.tables(env)
  assert len(cells) == 1 + len(env.symmetries()) > 1
  rng = np.random.default_rng(0)
  for index in range(1, len(cells)):
    # The new position's action a is the old one's actions[a]: the old action b is played
    # as the a with actions[a] == b.
    inverse = np.argsort(actions[index])
    for _ in range(3):
      state, moves = env.init(jax.random.key(0)), []
      for _ in range(int(rng.integers(1, 9))):
        if bool(state.terminated):
          break
        move = int(rng.choice(np.flatnonzero(np.asarray(state.legal_action_mask))))
        moves.append(move)
        state = env.step(state, move)
      image = _play(env, [int(inverse[m]) for m in moves])
      policy = jnp.asarray(rng.random(env.num_actions), jnp.float32)
      obs, pol, mask = augment.apply(jnp.int32(index), state.observation, policy,
                                     state.legal_action_mask, cells=cells, actions=actions)
      np.testing.assert_array_equal(obs, image.observation)
      np.testing.assert_array_equal(mask, image.legal_action_mask)
      # The policy moves with its actions: the image of action b carries b's probability.
      np.testing.assert_allclose(pol[inverse], policy)


@pytest.mark.slow
def test_identity_and_batched_shapes():
  env = games.make("connect_four")
  key = jax.random.key(1)
  obs = jax.random.uniform(key, (3, 5) + env.observation_shape)
  policy = jax.nn.softmax(jax.random.normal(key, (3, 5, env.num_actions)))
  mask = policy > 0.1
  tables = dict(zip(("cells", "actions"), augment.tables(env)))
  same = augment.apply(jnp.zeros((3, 5), jnp.int32), obs, policy, mask, **tables)
  for a, b in zip(same, (obs, policy, mask)):
    np.testing.assert_array_equal(a, b)
  mirrored = augment.apply(jnp.ones((3, 5), jnp.int32), obs, policy, mask, **tables)
  np.testing.assert_array_equal(mirrored[0], obs[..., ::-1, :])
  np.testing.assert_array_equal(mirrored[1], policy[..., ::-1])
  # random() draws both symmetries over a batch, one per sample for all its action arrays.
  reply = policy[..., ::-1] * 2.0
  out = augment.random(jax.random.key(2), env, obs, policy, mask, reply)
  flipped = np.all(np.asarray(out[1]) == np.asarray(policy[..., ::-1]), axis=-1)
  assert 0 < flipped.sum() < flipped.size
  reply_flipped = np.all(np.asarray(out[3]) == np.asarray(reply[..., ::-1]), axis=-1)
  np.testing.assert_array_equal(reply_flipped, flipped)


def test_checkers_has_no_symmetry():
  env = games.make("checkers")
  assert env.symmetries() == () and len(augment.tables(env)[0]) == 1
