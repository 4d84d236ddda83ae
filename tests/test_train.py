"""Training pipeline: loss maths, replay targets, config checks, resume, a tiny end-to-end run."""

import dataclasses
import functools
import math
from typing import Any

import chex
import flax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import config as config_lib
from azjax import games, replay, selfplay, train
from azjax.config import Config
from azjax.games import base
from azjax.search import SearchConfig

# A tiny tic-tac-toe config shared by the tests below (compiled functions are reused).
TINY = Config(game="tic_tac_toe", net="mlp", hidden=32, blocks=1, value_hidden=16,
              simulations=8, selfplay_batch=16, selfplay_steps=4, buffer_size=512,
              min_buffer=32, train_batch=32, sgd_steps=2, iterations=6, eval_every=0,
              eval_games=8, eval_simulations=8, eval_mcts_simulations=16, checkpoint_every=2)


# -- Loss --------------------------------------------------------------------------------------


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


def test_l2_penalty_counts_kernels_only():
  params = {"Dense_0": {"kernel": jnp.array([[1.0, 2.0]]), "bias": jnp.array([5.0])},
            "BatchNorm_0": {"scale": jnp.array([3.0])}}
  np.testing.assert_allclose(train.l2_penalty(params), 5.0)


# -- Replay ------------------------------------------------------------------------------------


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


@pytest.mark.parametrize("prob", [1e-9, 1.0])
def test_playout_cap_randomisation_marks_policy_targets(prob):
  env = games.make("tic_tac_toe")

  def eval_fn(variables, observation):
    return jnp.zeros((observation.shape[0], env.num_actions)), jnp.zeros(observation.shape[0])

  state = selfplay.init(env, 4, 64, jax.random.key(0))
  state, _ = selfplay.play_chunk(env, eval_fn, SearchConfig(simulations=8), None, state,
                                 jax.random.key(1), 3, cheap_config=SearchConfig(simulations=2),
                                 full_search_prob=prob)
  written = np.asarray(state.buffer.episode) >= 0
  assert written.sum() == 12
  assert bool(np.all(np.asarray(state.buffer.full_search)[written] == (prob == 1.0)))


def test_random_openings_are_short_legal_and_never_finished():
  """`opening_moves=k`: each fresh game is `init` after 0..k random legal moves, never ended."""
  env = games.make("tic_tac_toe")
  start = jax.random.key(5)
  chex.assert_trees_all_equal(selfplay.random_opening(env, start, 0), env.init(start))
  states = jax.jit(selfplay.fresh_games, static_argnums=(0, 2, 3))(env, start, 512, 8)
  counts = np.asarray(states.step_count)
  assert not np.asarray(states.terminated).any()
  # Every count from 0 to 8 occurs (a game ending on a random move stops its opening early).
  assert counts.min() == 0 and counts.max() <= 8 and len(set(counts.tolist())) == 9
  # Positions of real games (boards from the mover's side): the opponent has made as many moves
  # as the mover, or one more when it is O's turn.
  board = np.asarray(states.board)
  mine, theirs = (board == 1).sum(1), (board == -1).sum(1)
  np.testing.assert_array_equal(mine + theirs, counts)
  np.testing.assert_array_equal(theirs - mine, counts % 2)


def test_uniform_legal_action_draws_every_legal_action_alike():
  mask = jnp.zeros(9, bool).at[jnp.array([1, 4, 8])].set(True)
  draws = jax.jit(jax.vmap(base.uniform_legal_action, (0, None)))(
      jax.random.split(jax.random.key(0), 3000), mask)
  counts = np.bincount(np.asarray(draws), minlength=9)
  assert counts[[0, 2, 3, 5, 6, 7]].sum() == 0
  np.testing.assert_allclose(counts[[1, 4, 8]] / 3000, 1 / 3, atol=0.04)  # ~4.5 sigma


def test_restart_ended_fills_only_ended_slots_from_a_pool_of_fresh_games():
  """With openings, 16 slots draw on a pool of 2 fresh games: the ended slots get them in turn
  (the third ended slot shares the first's), the others keep their games."""
  env = games.make("tic_tac_toe")
  assert selfplay.fresh_pool_size(16, 8) == 2 and selfplay.fresh_pool_size(16, 0) == 16
  playing = selfplay.fresh_games(env, jax.random.key(0), 16, 0)
  ended_slots = np.array([1, 6, 9])
  after = playing.replace(terminated=playing.terminated.at[ended_slots].set(True))
  key = jax.random.key(3)
  out = jax.jit(selfplay.restart_ended, static_argnums=(0, 3))(env, after, key, 8)
  pool = selfplay.fresh_games(env, key, 2, 8)
  assert not np.array_equal(pool.board[0], pool.board[1])  # so the order below is checked
  boards = np.asarray(out.board)
  for slot, index in zip(ended_slots, [0, 1, 0]):
    np.testing.assert_array_equal(boards[slot], np.asarray(pool.board)[index])
  kept = np.setdiff1d(np.arange(16), ended_slots)
  np.testing.assert_array_equal(boards[kept], np.asarray(playing.board)[kept])
  assert not np.asarray(out.terminated).any()


def _ttt_after(env, actions):
  state = env.init(jax.random.key(0))
  for action in actions:
    state = env.step(state, action)
  return state


def test_archive_writes_slots_in_turn_and_overwrites_its_oldest_rows():
  env = games.make("tic_tac_toe")
  games4 = base.stack_states([_ttt_after(env, [cell]) for cell in range(4)])  # X on cell k
  archive = selfplay.init(env, 4, 8, jax.random.key(0), archive_size=3).archive
  assert int(archive.count) == 0 and archive.states.board.shape == (3, 9)
  for _ in range(2):
    archive = selfplay.archive_games(archive, games4, 2)
  # Slots 0, 1, 2, 3 went to rows 0, 1, 2, 0: slot 3 overwrote slot 0.
  assert int(archive.count) == 4
  np.testing.assert_array_equal(archive.states.board, np.asarray(games4.board)[[3, 1, 2]])


def test_from_archive_draws_written_rows_with_its_probability():
  env = games.make("tic_tac_toe")
  fresh = selfplay.fresh_games(env, jax.random.key(0), 64)
  archive = selfplay.init(env, 4, 8, jax.random.key(0), archive_size=8).archive
  key = jax.random.key(1)
  # Empty: nothing to draw, even with probability 1.
  chex.assert_trees_all_equal(selfplay.from_archive(archive, fresh, key, 1.0), fresh)
  marked = base.stack_states([_ttt_after(env, [cell]) for cell in (4, 5)])
  archive = selfplay.archive_games(archive, marked, 2)  # rows 0, 1 written; 2..7 never
  drawn = np.asarray(selfplay.from_archive(archive, fresh, key, 1.0).board)
  assert {tuple(b) for b in drawn} == {tuple(b) for b in np.asarray(marked.board)}
  chex.assert_trees_all_equal(selfplay.from_archive(archive, fresh, key, 0.0), fresh)
  half = np.asarray(selfplay.from_archive(archive, fresh, key, 0.5).step_count)
  assert 16 < (half == 1).sum() < 48  # 64 coins of 1/2: about 32 from the archive


def test_go_exploit_restarts_games_from_archived_positions():
  """With `archive_start=1` every restarted game descends from an archived position: here
  (tic-tac-toe, an archive filled with one position of four marks) nearly all restarts hold
  those four marks, since self-play overwrites only 12 of the 256 rows in 12 moves."""
  env = games.make("tic_tac_toe")

  def eval_fn(variables, observation):
    return jnp.zeros((observation.shape[0], env.num_actions)), jnp.zeros(observation.shape[0])

  marks = _ttt_after(env, [0, 4, 8, 2])
  state = selfplay.init(env, 8, 128, jax.random.key(0), archive_size=256)
  state = state.replace(archive=selfplay.Archive(
      states=jax.tree.map(lambda x: jnp.broadcast_to(x, (256,) + x.shape), marks),
      count=jnp.int32(256)))
  play = jax.jit(functools.partial(selfplay.play_chunk, env, eval_fn, SearchConfig(simulations=4),
                                   None, num_steps=12, archive_start=1.0))
  out, stats = play(state, jax.random.key(1))
  assert int(out.archive.count) == 256 + 12 * selfplay.an_eighth(8)
  restarted = np.asarray(out.episode) > 0
  assert int(stats.games_finished) >= 8 and restarted.sum() >= 4
  occupied = np.asarray(out.games.board)[restarted] != 0
  descends = occupied[:, [0, 2, 4, 8]].all(axis=1)
  assert descends.mean() >= 0.75, descends


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


def test_selfplay_value_targets_match_game_outcomes():
  """Every stored position of a finished game gets that game's outcome from its mover's side."""
  env = games.make("tic_tac_toe")

  def eval_fn(variables, observation):
    return jnp.zeros((observation.shape[0], env.num_actions)), jnp.zeros(observation.shape[0])

  state = selfplay.init(env, 4, 64, jax.random.key(0))
  state, stats = jax.jit(selfplay.play_chunk, static_argnums=(0, 1, 2, 6))(
      env, eval_fn, SearchConfig(simulations=4), None, state, jax.random.key(1), 12)
  buf = jax.device_get(state.buffer)
  assert int(stats.moves) == 48 and int(stats.games_finished) >= 4
  for slot in range(4):
    for episode in range(int(state.episode[slot]) + 1):
      rows = (np.arange(4) == slot) & (buf.episode == episode)  # column `slot`, [T, B]
      finished = episode < int(state.episode[slot])
      # A game that began on the chunk's last move has no rows yet.
      assert not rows.any() or bool(buf.has_target[rows].all()) == finished
      if finished and rows.any():
        players, values = buf.player[rows], buf.value[rows]
        # Players alternate from player 0; values are zero-sum between the two sides.
        np.testing.assert_array_equal(players, np.arange(rows.sum()) % 2)
        for p in (0, 1):
          assert len(set(values[players == p].tolist())) <= 1
        if (players == 1).any():
          assert values[players == 0][0] == -values[players == 1][0]


# -- Config -------------------------------------------------------------------------------------


@pytest.mark.parametrize("pairs, message", [
    ([("learning_rat", "0.1")], "unknown key 'learning_rat'; did you mean learning_rate"),
    ([("channels", "wide")], "channels: expected int"),
    ([("buffer_size", "100")], "buffer_size=100: must be a multiple of selfplay_batch"),
    ([("buffer_size", "32"), ("train_batch", "64"), ("selfplay_batch", "16"),
      ("min_buffer", "0")], "buffer_size=32: must hold at least one training batch"),
    ([("eval_games", "3")], "eval_games=3: must be even"),
    ([("game", "chess")], "game='chess': unknown game"),
    ([("net", "transformer")], "kind"),
    ([("search", "alphabeta")], "algorithm"),
])
def test_bad_config_names_the_key(pairs, message):
  with pytest.raises(ValueError, match=message):
    config_lib.override(Config(), pairs).validate()


def test_batch_not_divisible_by_devices():
  with pytest.raises(ValueError, match="selfplay_batch=64: must be divisible by the number"):
    Config().validate(num_devices=3)


def test_presets_are_valid():
  for name, preset in config_lib.PRESETS.items():
    preset.validate()
  assert config_lib.preset("auto", game="breakthrough").game == "breakthrough"


# -- The fused iteration, resume, NaN, end to end -------------------------------------------------


@pytest.fixture(scope="module")
def trainer():
  return train.Trainer.create(TINY)


@pytest.fixture(scope="module")
def iteration(trainer):
  return jax.jit(trainer.iteration)


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


def test_resume_gives_the_same_parameters(tmp_path):
  from azjax.runs.driver import train_and_evaluate
  config = dataclasses.replace(TINY, iterations=4, eval_games=0)
  straight = train_and_evaluate(config, tmp_path / "straight", progress=False)
  train_and_evaluate(config, tmp_path / "split", progress=False, max_iterations=2)
  resumed = train_and_evaluate(config, tmp_path / "split", resume=True, progress=False)
  assert straight.iterations == resumed.iterations == 4
  from azjax.runs import checkpoint
  trainer = train.Trainer.create(config)
  fresh = trainer.init()
  a, _ = checkpoint.restore(checkpoint.manager(tmp_path / "straight"), fresh)
  b, _ = checkpoint.restore(checkpoint.manager(tmp_path / "split"), fresh)
  chex.assert_trees_all_close(a.params, b.params)
  chex.assert_trees_all_equal(a.selfplay.buffer.value, b.selfplay.buffer.value)
  assert int(a.positions) == int(b.positions)


def test_resume_refuses_a_different_config(tmp_path):
  from azjax.runs.driver import train_and_evaluate
  config = dataclasses.replace(TINY, iterations=1, eval_games=0)
  train_and_evaluate(config, tmp_path, progress=False)
  with pytest.raises(ValueError, match="learning_rate"):
    train_and_evaluate(dataclasses.replace(config, learning_rate=0.5), tmp_path, resume=True,
                       progress=False)
  with pytest.raises(ValueError, match="--resume"):
    train_and_evaluate(config, tmp_path, progress=False)


@chex.dataclass(frozen=True)
class StateBeforeGating:
  """The training state as runs saved it before gating: no best_params / best_batch_stats."""
  params: Any
  batch_stats: Any
  opt_state: Any
  selfplay: Any
  key: Any
  iteration: Any
  sgd_steps: Any
  positions: Any
  games_finished: Any


def test_restores_a_checkpoint_written_before_the_gating_fields(trainer, tmp_path):
  from azjax.runs import checkpoint
  state = trainer.init()
  assert state.best_params == {}  # no gating in TINY
  old = StateBeforeGating(**{f.name: getattr(state, f.name)
                              for f in dataclasses.fields(StateBeforeGating)})
  checkpoint.save(checkpoint.manager(tmp_path), 1, old)
  restored, _ = checkpoint.restore(checkpoint.manager(tmp_path), trainer.init())
  assert isinstance(restored, train.TrainState)
  assert restored.best_params == {} and restored.best_batch_stats == {}
  chex.assert_trees_all_equal(restored.params, state.params)
  # With gating on, the missing network cannot be made up: the mismatch stays an error.
  gated = train.Trainer.create(dataclasses.replace(TINY, gating=True)).init()
  with pytest.raises(ValueError):
    checkpoint.restore(checkpoint.manager(tmp_path), gated)


@pytest.mark.parametrize("flat,root_values", [(True, True), (True, False), (False, False)])
def test_restores_a_checkpoint_with_an_older_replay_buffer(trainer, iteration, tmp_path, flat,
                                                           root_values):
  """Before the `[T, B]` layout the buffer was one ring of `N` rows with a `game` column; before
  value-target mixing and playout cap randomisation it had no root values or full-search flags
  (restored as the outcome and True)."""
  from azjax.runs import checkpoint
  state, _ = iteration(trainer.init())
  state, _ = iteration(state)
  buf = state.selfplay.buffer
  batch = buf.value.shape[1]
  assert 0 < int(buf.num_targets) and int(buf.pointer) == 8  # 2 x 4 moves: a partly full ring
  old = dict(buf.items())
  if flat:
    old = {name: x.reshape((-1,) + x.shape[2:]) for name, x in old.items() if name != "pointer"}
    old["game"] = jnp.where(old["episode"] >= 0, jnp.arange(old["value"].size) % batch, -1)
    old["pointer"] = buf.pointer * batch
  if not root_values:
    del old["root_value"], old["full_search"]
    state = state.replace(selfplay=state.selfplay.replace(buffer=buf.replace(
        root_value=buf.value, full_search=jnp.ones_like(buf.full_search))))
  checkpoint.save(checkpoint.manager(tmp_path), 2,
                  state.replace(selfplay=state.selfplay.replace(buffer=old)))
  restored, _ = checkpoint.restore(checkpoint.manager(tmp_path), trainer.init())
  chex.assert_trees_all_equal(restored, state)


def test_go_exploit_run_keeps_its_archive_through_a_checkpoint(tmp_path):
  """`archive_start`: the run's state carries the archive, self-play fills it (two of the 16
  slots a move), and a checkpoint saves and restores it."""
  from azjax.runs import checkpoint
  config = dataclasses.replace(TINY, archive_start=0.5, archive_size=64)
  trainer = train.Trainer.create(config)
  state, _ = jax.jit(trainer.iteration)(trainer.init())
  assert int(state.selfplay.archive.count) == config.selfplay_steps * 2
  assert train.Trainer.create(TINY).init().selfplay.archive is None
  checkpoint.save(checkpoint.manager(tmp_path), 1, state)
  restored, _ = checkpoint.restore(checkpoint.manager(tmp_path), trainer.init())
  chex.assert_trees_all_equal(restored, state)


@flax.struct.dataclass
class StateWithGames:
  params: Any
  batch_stats: Any
  games: Any


def test_checkpoint_keeps_zero_size_arrays(tmp_path):
  """Checkers with history=1 keeps an empty `[0, 64]` array of earlier positions per game,
  which orbax will not write: a checkpoint holding one saves and restores whole."""
  from azjax.runs import checkpoint
  env = games.make("checkers", history=1)
  state = StateWithGames(params={"w": jnp.arange(3.0)}, batch_stats={},
                         games=jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2)))
  assert state.games.previous.shape == (2, 0, 64)
  checkpoint.save(checkpoint.manager(tmp_path), 5, state)
  restored, _ = checkpoint.restore(checkpoint.manager(tmp_path), state)
  chex.assert_trees_all_equal(restored, state)


def test_nan_loss_stops_and_keeps_last_checkpoint(tmp_path, monkeypatch):
  from azjax.runs import checkpoint
  from azjax.runs.driver import NaNLossError, train_and_evaluate
  config = dataclasses.replace(TINY, iterations=8, eval_games=0, checkpoint_every=1)
  train_and_evaluate(config, tmp_path, progress=False, max_iterations=3)
  original = train.Trainer.loss

  def poisoned(self, params, batch_stats, batch):
    total, aux = original(self, params, batch_stats, batch)
    return total * jnp.nan, aux

  monkeypatch.setattr(train.Trainer, "loss", poisoned)
  with pytest.raises(NaNLossError, match="last good checkpoint"):
    train_and_evaluate(config, tmp_path, resume=True, progress=False)
  mngr = checkpoint.manager(tmp_path)
  assert mngr.latest_step() == 3
  state, _ = checkpoint.restore(mngr, train.Trainer.create(config).init())
  assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(state.params))


def test_end_to_end_tic_tac_toe_learns(tmp_path):
  """A short run: the network's raw policy goes from random-like to clearly better than random,
  and the agent with search (the run's own evaluation) beats random."""
  from azjax import agents, arena
  from azjax.runs.driver import read_metrics, train_and_evaluate
  config = dataclasses.replace(
      config_lib.PRESETS["tic_tac_toe"], iterations=36, eval_every=36, eval_games=100,
      simulations=16, eval_simulations=8, eval_mcts_simulations=16, selfplay_batch=64,
      buffer_size=8192, checkpoint_every=0)
  trainer = train.Trainer.create(config)
  env = trainer.game
  opponent = agents.make("random", env)

  def raw_policy_score(variables):
    agent = agents.make_raw_policy(env, model=trainer.model, variables=variables)
    return arena.play(env, agent, opponent, 200, jax.random.key(5)).score

  before = raw_policy_score(trainer.variables(trainer.init()))
  summary = train_and_evaluate(config, tmp_path, progress=False)
  assert summary.iterations == 36 and summary.games > 1000
  assert read_metrics(tmp_path)[-1]["eval/random/score"] >= 0.75
  for name in ("metrics.csv", "metrics.jsonl", "losses.png", "winrate.png", "config.json"):
    assert (tmp_path / name).exists(), name
  # The trained network loads back through the agent interface.
  env, agent = agents.load(str(tmp_path), raw_policy=True)
  after = arena.play(env, agent, opponent, 200, jax.random.key(5))
  assert after.illegal_a == 0
  print(f"raw policy vs random: {before:.3f} before, {after.score:.3f} after")
  assert after.score >= 0.8 and after.score > before + 0.15, (before, after.score)


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


def test_ctrl_c_checkpoints_and_stops(tmp_path):
  """SIGINT finishes the iteration in flight, saves a checkpoint, and the run can resume."""
  import os
  import signal
  import threading
  import time

  from azjax.runs import checkpoint
  from azjax.runs.driver import train_and_evaluate
  config = dataclasses.replace(TINY, iterations=10_000, eval_games=0, checkpoint_every=1000)

  def interrupt_after_two_rows():
    log = tmp_path / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
      if log.exists() and len(log.read_text().splitlines()) >= 2:
        os.kill(os.getpid(), signal.SIGINT)
        return
      time.sleep(0.05)

  thread = threading.Thread(target=interrupt_after_two_rows, daemon=True)
  thread.start()
  summary = train_and_evaluate(config, tmp_path, progress=False)
  thread.join()
  assert summary.stopped_by == "interrupt"
  assert 2 <= summary.iterations < 10_000
  assert checkpoint.manager(tmp_path).latest_step() == summary.iterations
  resumed = train_and_evaluate(config, tmp_path, resume=True, progress=False, max_iterations=1)
  assert resumed.iterations == summary.iterations + 1


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


@pytest.mark.parametrize("replaced", [False, True])
def test_gating_keeps_or_replaces_the_best_network(replaced, monkeypatch):
  """A score of 1 (no score can exceed the threshold of 1) keeps the initial network for
  self-play; a match won outright (score forced to 1 against a 0.55 threshold) replaces it."""
  from azjax.runs import gating
  config = dataclasses.replace(TINY, gating=True, gating_games=4,
                               gating_threshold=0.55 if replaced else 1.0)
  trainer = train.Trainer.create(config)
  if replaced:
    real = gating.score
    def won(trainer, candidate, best, key):
      return real(trainer, candidate, best, key) * 0.0 + 1.0
    monkeypatch.setattr(gating, "score", won)
  state = trainer.init()
  initial = jax.tree.map(np.asarray, state.params)
  iteration = trainer.jit_iteration(gating.gated(trainer))
  for _ in range(4):
    state, metrics = iteration(state)
  assert bool(metrics["trained"])
  assert 0.0 <= float(metrics["gating_score"]) <= 1.0
  assert bool(metrics["gating_accepted"]) == replaced
  chex.assert_trees_all_close(state.best_params, state.params if replaced else initial)
  moved = jax.tree.map(lambda a, b: bool(np.any(np.asarray(a) != b)), state.params, initial)
  assert any(jax.tree.leaves(moved))  # Training went on either way.
