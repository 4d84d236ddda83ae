"""Targets read from the positions that followed a row in its game: KataGo's auxiliary policy
target, the opponent's reply (`reply_weight`: the replay buffer finds each row's successor, the
networks add a second policy output only in training, the loss weighs it in), and TD(lambda)
value targets (`value_lambda`)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tiny

from azjax import nets, replay, train

A = 8  # Actions of the hand-built buffers: row `i`'s policy is one-hot at `i`.


def _add(buf, ids, player, episode, full=True, root_value=None):
  """Writes rows whose observation is their id and whose policy is one-hot at it."""
  ids = jnp.asarray(ids)
  return replay.add(buf, ids.astype(jnp.float32).reshape(-1, 1, 1, 1),
                    jax.nn.one_hot(ids, A), jnp.ones((ids.size, A), bool),
                    jnp.full(ids.size, player), jnp.asarray(episode), full_search=full,
                    root_value=None if root_value is None else jnp.asarray([root_value]))


def _replies(buf) -> dict[int, int | None]:
  """`{row id: the id of its reply, or None}` over many samples."""
  batch = replay.sample(buf, jax.random.key(0), 2000, replies=True)
  ids = np.asarray(batch.observation).reshape(-1).astype(int)
  reply = np.argmax(np.asarray(batch.reply_policy), axis=-1)
  has = np.asarray(batch.has_reply)
  seen = {}
  for i, r, h in zip(ids, reply, has):
    seen.setdefault(int(i), set()).add(int(r) if h else None)
  assert all(len(v) == 1 for v in seen.values()), seen  # The same answer for every draw.
  return {i: v.pop() for i, v in seen.items()}


@pytest.mark.slow
def test_the_reply_is_the_next_row_of_the_same_game():
  """Two slots, three moves. Slot 0 plays one game (rows 0, 2, 4), ending on the third move; slot
  1's first game ends at once (row 1), its second (rows 3, 5) ends on the third move, and row 5
  came from a cheap search, so it is no policy target."""
  buf = replay.init(8, 2, (1, 1, 1), A)  # 4 blocks of 2 slots
  buf = _add(buf, [0, 1], 0, [0, 0])
  buf = replay.assign_outcomes(buf, jnp.array([False, True]), jnp.array([0, 0]),
                               jnp.array([[0.0, 0.0], [1.0, -1.0]]))
  buf = _add(buf, [2, 3], 1, [0, 1])
  buf = _add(buf, [4, 5], 0, [0, 1], full=jnp.array([True, False]))
  buf = replay.assign_outcomes(buf, jnp.array([True, True]), jnp.array([0, 1]),
                               jnp.array([[1.0, -1.0], [1.0, -1.0]]))
  # Rows 4 and 5 are the newest: their next block is the oldest (the pointer's).
  assert _replies(buf) == {0: 2, 2: 4, 4: None, 1: None, 3: None, 5: None}


def test_the_newest_row_has_no_reply_after_the_ring_wraps():
  """One slot, a game of 5 moves in 4 blocks: move 4 overwrote block 0, so block 3's reply is in
  block 0, and block 0's next block (the oldest, move 1) is no reply of it."""
  buf = replay.init(4, 1, (1, 1, 1), A)
  for move in range(5):
    buf = _add(buf, [move], move % 2, [0])
  buf = replay.assign_outcomes(buf, jnp.array([True]), jnp.array([0]),
                               jnp.array([[1.0, -1.0]]))
  assert _replies(buf) == {1: 2, 2: 3, 3: 4, 4: None}
  assert replay.sample(buf, jax.random.key(1), 4).reply_policy is None  # Only when asked.


def _without_reply(tree):
  """A parameter tree without the reply head's layers."""
  if not isinstance(tree, dict):
    return tree
  return {k: _without_reply(v) for k, v in tree.items()
          if k not in ("reply_logits", "reply_pass_logit")}


def _one_game_buffer():
  """One slot: a game of 4 moves by players 0, 1, 1 (a second move in a row, as after a checkers
  jump), 0, with root values 0.1, 0.2, -0.4, 0.8, won by player 0; then a next game's first row
  (no outcome yet)."""
  buf = replay.init(8, 1, (1, 1, 1), A)
  for move, (player, q) in enumerate(zip((0, 1, 1, 0), (0.1, 0.2, -0.4, 0.8))):
    buf = _add(buf, [move], player, [0], root_value=q)
  buf = replay.assign_outcomes(buf, jnp.array([True]), jnp.array([0]),
                               jnp.array([[1.0, -1.0]]))
  return _add(buf, [4], 1, [1], root_value=0.5)


@pytest.mark.slow
@pytest.mark.parametrize("lam,moves,expected", [
    # G_3 = 1 (the outcome, mover 0); G_2 = 0.5 * -0.8 + 0.5 * -1 = -0.9 (mover 1 sees player 0's
    # values negated); G_1 = 0.5 * -0.4 + 0.5 * -0.9 = -0.65 (the same mover: -0.4 kept);
    # G_0 = 0.5 * -0.2 + 0.5 * 0.65 = 0.225.
    (0.5, 8, [0.225, -0.65, -0.9, 1.0]),
    # One move read: G_t = 0.5 * q_{t+1} + 0.5 * outcome.
    (0.5, 1, [0.5 * -0.2 + 0.5, 0.5 * -0.4 - 0.5, 0.5 * -0.8 - 0.5, 1.0]),
    (1.0, 8, [1.0, -1.0, -1.0, 1.0]),  # The outcome.
    (0.0, 8, [-0.2, -0.4, -0.8, 1.0]),  # One-step TD on the search's values.
])
def test_lambda_return_by_hand(lam, moves, expected):
  buf = _one_game_buffer()
  rows = jnp.arange(4)
  got = replay.lambda_return(buf, rows, jnp.zeros(4, jnp.int32), lam, moves)
  np.testing.assert_allclose(got, expected, atol=1e-6)
  if lam < 1:  # Sampling gives each row its return (only rows 0-3 have outcomes).
    batch = replay.sample(buf, jax.random.key(0), 200, value_lambda=lam, lambda_moves=moves)
    ids = np.asarray(batch.observation).reshape(-1).astype(int)
    np.testing.assert_allclose(batch.value, np.asarray(expected)[ids], atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("game,net", [
    ((4, 4, 48), nets.NetConfig(kind="mlp", hidden=16, blocks=1)),
    ((4, 4, 48), nets.NetConfig(kind="resnet", channels=8, blocks=1, policy_head="conv")),
    ((6, 7, 7), nets.NetConfig(kind="cnn", channels=8, blocks=1, policy_head="conv")),
    ((5, 5, 76), nets.NetConfig(kind="se_resnet", channels=8, blocks=1, policy_head="conv")),
    ((3, 3, 9), nets.NetConfig(kind="resnet", channels=8, blocks=1)),
])
def test_reply_head_is_a_training_only_second_output(game, net):
  """The reply logits `[B, A]` come only with `train=True`; the policy and value are those of
  the same network without the head (the head adds parameters and nothing else)."""
  rows, cols, num_actions = game  # Breakthrough 4x4, Connect Four, a pass move, tic-tac-toe.
  obs = jax.random.uniform(jax.random.key(0), (3, rows, cols, 2))
  with_head = nets.make(dataclasses.replace(net, reply_head=True), num_actions)
  plain = nets.make(net, num_actions)
  variables = nets.init_variables(with_head, jax.random.key(1), obs.shape[1:])
  _, updates = with_head.apply(variables, obs, train=True, mutable=["reply", "batch_stats"])
  assert nets.reply_logits(updates).shape == (3, num_actions)
  outputs, updates = with_head.apply(variables, obs, train=False, mutable=["reply"])
  assert "reply" not in updates
  params = _without_reply(variables["params"])
  assert jax.tree.leaves(params) and len(jax.tree.leaves(params)) < len(
      jax.tree.leaves(variables["params"]))
  same = plain.apply({**variables, "params": params}, obs, train=False)
  jax.tree.map(np.testing.assert_array_equal, outputs, same)
  assert jax.tree.structure(params) == jax.tree.structure(
      nets.init_variables(plain, jax.random.key(1), obs.shape[1:])["params"])


TINY = dataclasses.replace(tiny.TINY, augment=True, reply_weight=0.5, value_lambda=0.9,
                           value_lambda_moves=4)


@pytest.fixture(scope="module")
def trainer():
  return train.Trainer.create(TINY)


@pytest.mark.slow
def test_loss_adds_the_weighted_reply_term_over_rows_with_a_reply(trainer):
  state = trainer.init()
  env = trainer.game
  key = jax.random.key(2)
  obs = jax.random.uniform(key, (4,) + env.observation_shape)
  mask = jnp.ones((4, env.num_actions), bool)
  policy = jnp.full((4, env.num_actions), 1.0 / env.num_actions)
  reply = jax.nn.one_hot(jnp.array([0, 1, 2, 3]), env.num_actions)
  reply_mask = mask.at[:, 8].set(False)
  has_reply = jnp.array([True, False, True, False])
  outcome, root = jnp.array([1.0, -1.0, 1.0, 0.0]), jnp.zeros(4)
  batch = replay.Batch(obs, policy, mask, outcome, root, jnp.ones(4, bool), reply, reply_mask,
                       has_reply)
  total, (_, metrics) = trainer.loss(state.params, state.batch_stats, batch)
  _, updates = trainer.model.apply({"params": state.params}, obs, train=True,
                                   mutable=["reply"])
  log_probs = jax.nn.log_softmax(
      jnp.where(reply_mask, nets.reply_logits(updates), -jnp.inf), axis=-1)
  expected = -(log_probs[0, 0] + log_probs[2, 2]) / 2  # Rows 0 and 2 have a reply.
  np.testing.assert_allclose(metrics["reply_loss"], expected, rtol=1e-5)
  np.testing.assert_allclose(
      total, metrics["policy_loss"] + metrics["value_loss"] + 0.5 * expected, rtol=1e-5)


@pytest.mark.slow
def test_iterations_train_the_reply_head(trainer):
  """With augmentation (tic-tac-toe's 8 symmetries) and TD(lambda) value targets, the fused
  iteration trains on replies."""
  state = trainer.init()
  before = state.params["reply_logits"]["kernel"]
  step = jax.jit(trainer.iteration)
  for _ in range(TINY.iterations):
    state, metrics = step(state)
  assert bool(metrics["trained"]) and np.isfinite(float(metrics["reply_loss"]))
  assert float(metrics["reply_loss"]) > 0
  assert not np.allclose(before, state.params["reply_logits"]["kernel"])
  # Self-play and evaluation read the same two outputs as a network without the head.
  logits, value = trainer.eval_fn(trainer.variables(state),
                                 jnp.zeros((2,) + trainer.game.observation_shape))
  assert logits.shape == (2, 9) and value.shape == (2,)
