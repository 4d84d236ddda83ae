"""TD-Leaf(lambda): lambda-returns by hand, the recorded leaves, and a tiny run end to end."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import runs, tdleaf

TINY = tdleaf.Config(game="slider", game_options={"size": 4, "blocks": "none"}, depth=2, batch=4,
                     max_plies=40, sgd_steps=2, eval_every=2, eval_games=2, checkpoint_every=1)


@functools.lru_cache(maxsize=None)
def _learner():
  return tdleaf.Learner(TINY)


def _returns(u, result, last, stop, td_lambda):
  """One game's returns: its `result` is the reward of its `last` move."""
  reward = np.where(last, result, 0.0).astype(np.float32)
  return np.asarray(tdleaf.lambda_returns(jnp.array(u, jnp.float32), jnp.array(reward),
                                          jnp.array(last), jnp.array(stop), td_lambda))


def test_lambda_returns_by_hand():
  u, last, none = [0.2, 0.4, -0.1], [False, False, True], [False] * 3
  # G2 = z = 1; G1 = 0.5 * u2 + 0.5 * G2 = 0.45; G0 = 0.5 * u1 + 0.5 * G1 = 0.425.
  np.testing.assert_allclose(_returns(u, 1.0, last, none, 0.5), [0.425, 0.45, 1.0], atol=1e-6)
  # lambda = 1 is the game's result everywhere (Monte Carlo), lambda = 0 the next value (TD(0)).
  np.testing.assert_allclose(_returns(u, -1.0, last, none, 1.0), [-1, -1, -1], atol=1e-6)
  np.testing.assert_allclose(_returns(u, -1.0, last, none, 0.0), [0.4, -0.1, -1], atol=1e-6)
  # A random move from position 1: its target is its own value, and position 0 looks no further.
  np.testing.assert_allclose(_returns(u, 1.0, last, [False, True, False], 0.5), [0.4, 0.4, 1.0],
                             atol=1e-6)
  # A draw (z = 0), with a ply after the game's end that must not leak into it:
  # G2 = 0; G1 = 0.5 * -0.1 + 0 = -0.05; G0 = 0.5 * 0.4 + 0.5 * -0.05 = 0.175.
  np.testing.assert_allclose(_returns(u + [0.9], 0.0, last + [False], none + [False], 0.5)[:3],
                             [0.175, -0.05, 0.0], atol=1e-6)


def test_lambda_returns_of_games_one_after_another_in_a_slot():
  """A slot restarts its game when one ends: the second game's values and result do not reach
  the first's returns, and the second, cut off, bootstraps from its last value."""
  u = jnp.array([0.2, 0.4, -0.1, 0.6, 0.8], jnp.float32)
  reward = jnp.array([0.0, 0.0, -1.0, 0.0, 0.0], jnp.float32)
  last = jnp.array([False, False, True, False, False])
  stop = jnp.array([False, False, False, False, True])  # cut off after ply 4
  g = np.asarray(tdleaf.lambda_returns(u, reward, last, stop, 0.5))
  # First game: G2 = -1; G1 = 0.5 * -0.1 + 0.5 * -1 = -0.55; G0 = 0.5 * 0.4 + 0.5 * -0.55.
  # Second: G4 = u4 = 0.8 (cut off); G3 = 0.5 * 0.8 + 0.5 * 0.8 = 0.8.
  np.testing.assert_allclose(g, [-0.075, -0.55, -1.0, 0.8, 0.8], atol=1e-6)


@pytest.mark.slow
def test_recorded_leaves_give_back_the_root_values():
  learner = _learner()
  state = learner.init(jax.random.key(0))
  records = jax.jit(learner.play)(state.params, jax.random.key(1))
  live = np.asarray(records.live)
  # Every slot plays every ply: a finished game is replaced at once by a fresh one, where the
  # first player (H) moves.
  ended = np.asarray(records.ended)
  assert live.all() and ended[:-1].any()
  assert (np.asarray(records.mover)[1:][ended[:-1]] == 0).all()
  flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), records.inputs)
  evaluated = np.asarray(jax.jit(jax.vmap(lambda x: learner.evaluator.value(state.params, x)))(
      flat))
  evaluated = evaluated.reshape(live.shape)
  exact = np.asarray(records.exact)
  value = np.asarray(records.value)
  rebuilt = np.where(exact, value, np.asarray(records.leaf_sign) * evaluated)
  np.testing.assert_allclose(rebuilt[live], value[live], atol=1e-5)
  # Player 0's side: values flip with the mover, exact ones are the sign of the result.
  u = np.asarray(jax.jit(functools.partial(tdleaf.position_values, learner.evaluator))(
      state.params, records))
  mover = np.asarray(records.mover)
  np.testing.assert_allclose(np.where(mover == 0, u, -u)[live & ~exact],
                             value[live & ~exact], atol=1e-5)


@pytest.mark.slow
def test_loss_has_no_gradient_from_exact_leaves_or_finished_plies():
  learner = _learner()
  state = learner.init(jax.random.key(0))
  records = jax.jit(learner.play)(state.params, jax.random.key(2))
  hidden = records._replace(exact=jnp.ones_like(records.exact))
  loss_fn = functools.partial(tdleaf.td_loss, learner.evaluator, 0.7)
  grads = jax.jit(jax.grad(loss_fn))(state.params, hidden)  # Jitted: op by op is slower.
  assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree.leaves(grads))
  loss = jax.jit(loss_fn)(state.params, records)
  assert np.isfinite(float(loss)) and float(loss) >= 0


@pytest.mark.slow
def test_replay_fits_every_kept_game_and_empty_slots_weigh_nothing():
  learner = _learner()
  params = learner.init(jax.random.key(0)).params
  play = jax.jit(learner.play)
  first, second = play(params, jax.random.key(3)), play(params, jax.random.key(4))
  # Jitted (the replayed batches share one shape: one program), not op by op.
  loss = jax.jit(functools.partial(tdleaf.td_loss, learner.evaluator, 0.7, params))
  keep = jax.jit(tdleaf.keep)
  empty = jax.tree.map(lambda x: jnp.zeros((3,) + x.shape, x.dtype), first)
  kept = keep(empty, first, 1)
  np.testing.assert_allclose(float(loss(tdleaf.replayed(kept))), float(loss(first)), rtol=1e-6)
  # Two games' worth: the mean over every evaluated leaf of both, weighted by their counts.
  kept = keep(kept, second, 2)
  def count(t):
    return float(jnp.sum(t.live & ~t.exact))
  both = (loss(first) * count(first) + loss(second) * count(second)) / (
      count(first) + count(second))
  np.testing.assert_allclose(float(loss(tdleaf.replayed(kept))), float(both), rtol=1e-5)
  columns = tdleaf.replayed(kept).live.shape[1]
  assert columns == 3 * TINY.batch
  # A slot is overwritten in turn: writing `second` over slot 1 leaves no trace of `first`.
  np.testing.assert_allclose(float(loss(tdleaf.replayed(keep(kept, second, 1)))),
                             float(loss(second)), rtol=1e-5)


@pytest.mark.slow
def test_tiny_run_resumes_and_loads_as_a_player(tmp_path):
  run = tmp_path / "run"
  # replay=2: the kept games are not checkpointed, so resuming refills them.
  row = tdleaf.train(dataclasses.replace(TINY, iterations=2, replay=2), run, progress=False,
                     log=lambda *_: None).row
  assert row["iteration"] == 2 and "eval/hand/score" in row
  with pytest.raises(ValueError, match="holds a run"):
    tdleaf.train(TINY, run, log=lambda *_: None)
  row = tdleaf.train(dataclasses.replace(TINY, iterations=3, replay=2), run, resume=True,
                     progress=False, log=lambda *_: None).row
  assert row["iteration"] == 3
  lines = (run / "metrics.jsonl").read_text().splitlines()
  assert len(lines) == 4  # iteration 0's score, then one row an iteration
  env, player = runs.load(run)
  assert player.name.startswith("tdleaf-d2")
  states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
  actions = np.asarray(player.act(states, jax.random.key(1)))
  assert np.asarray(states.legal_action_mask)[np.arange(2), actions].all()
  bigger, _ = runs.load(run, game_options={"size": 6})  # the features fit any size
  assert bigger.size == 6
  with pytest.raises(ValueError, match="evaluation_features"):
    tdleaf.Learner(tdleaf.Config(game="connect_four", evaluation="features"))


@pytest.mark.slow
def test_a_convolutional_evaluation_plays_every_board_size():
  """`head="conv"` pools the value over the board: the parameters made for 4x4 evaluate 6x6."""
  from azjax import games

  config = tdleaf.Config(game="slider", game_options={"size": 4}, evaluation="cnn",
                         channels=4, blocks=1, head="conv")
  small = tdleaf.make_evaluator(config, games.make("slider", size=4))
  params = small.init(jax.random.key(0))
  big_env = games.make("slider", size=6)
  big = tdleaf.make_evaluator(config, big_env)
  state = big_env.init(jax.random.key(1))
  value = big.value(params, big.inputs(state))
  assert value.shape == () and -1.0 < float(value) < 1.0
  with pytest.raises(ValueError, match="head='pooled': must be one of"):
    dataclasses.replace(config, head="pooled").validate()
  with pytest.raises(ValueError, match="opening_moves=-1: must be >= 0"):
    dataclasses.replace(config, opening_moves=-1).validate()


@pytest.mark.slow
def test_local_sum_adds_a_term_per_piece_scaled_by_the_board_width():
  """`LocalSum` by hand: with the convolutions' weights zeroed, every square's term is the last
  convolution's bias c, so the value is tanh(c * pieces / width + b) on any board size; empty
  squares (and blocks) add nothing. One set of parameters serves 4x4 to 7x7."""
  from azjax import games

  config = tdleaf.Config(game="slider", game_options={"size": 4}, evaluation="local",
                         channels=4, blocks=2)
  params = tdleaf.make_evaluator(config, games.make("slider", size=4)).init(jax.random.key(0))
  params = jax.tree.map(jnp.zeros_like, params)
  params["params"]["Conv_2"]["bias"] = jnp.array([0.3])
  params["params"]["bias"] = jnp.array(-0.2)
  for size in (4, 5, 7):
    env = games.make("slider", size=size, blocks="none")
    evaluator = tdleaf.make_evaluator(config, env)
    value = evaluator.value(params, evaluator.inputs(env.init(jax.random.key(1))))
    pieces = 2 * (size - 1)
    assert float(value) == pytest.approx(np.tanh(0.3 * pieces / size - 0.2), abs=1e-6)
  with pytest.raises(ValueError, match="evaluation_planes"):
    tdleaf.Learner(tdleaf.Config(game="tic_tac_toe", evaluation="local"))


@pytest.mark.slow
def test_random_openings_start_self_play_games_apart():
  """With `opening_moves` the batch starts from different positions (none finished); without,
  from the start position (as before the option existed)."""
  config = tdleaf.Config(game="tic_tac_toe", evaluation="mlp", hidden=4, blocks=1, depth=1,
                         batch=16, max_plies=9, opening_moves=4)
  learner = tdleaf.Learner(config)
  first = jax.jit(learner.play)(learner.init(jax.random.key(0)).params, jax.random.key(2))
  boards = np.asarray(first.inputs[0]).reshape(config.batch, -1)  # Observations at ply 0.
  assert len({row.tobytes() for row in boards}) > 3
  assert bool(np.all(first.live[0]))


@pytest.mark.slow
def test_solver_scores_of_a_full_depth_search_are_perfect(tmp_path):
  """Alpha-beta to the end of tic-tac-toe never needs its evaluation: whatever the weights, it
  makes no mistake and knows every position's value (the scorer's bookkeeping is then checked
  against perfect play); a run logs the scores, and a game without a benchmark stops the run
  before it writes anything."""
  config = tdleaf.Config(game="tic_tac_toe", evaluation="mlp", hidden=4, blocks=1, depth=9,
                         batch=4, max_plies=9, eval_every=0, solver_every=1, iterations=1)
  from azjax.solver import benchmark as solver_benchmark

  learner = tdleaf.Learner(config)
  positions = solver_benchmark.Positions.load(solver_benchmark.positions_path("tic_tac_toe"))
  late = positions.subset(np.flatnonzero(positions.num_moves >= 5))  # Small trees: fast.
  row = solver_benchmark.overall(
      tdleaf.solver_scorer(learner, late)(learner.init(jax.random.key(0)).params), "solver/")
  assert row["solver/alphabeta9/mistake_rate"] == 0.0
  assert row["solver/alphabeta9/optimal_rate"] == 1.0
  assert row["solver/alphabeta9/value_accuracy"] == 1.0
  shallow = dataclasses.replace(config, depth=1)
  last = tdleaf.train(shallow, tmp_path / "ttt", progress=False, log=lambda *_: None).row
  assert 0.0 <= last["solver/alphabeta1/mistake_rate"] <= 1.0
  rows = (tmp_path / "ttt" / "metrics.jsonl").read_text().splitlines()
  assert len(rows) == 2 and "solver/alphabeta1/mistake_rate" in rows[0]
  with pytest.raises(ValueError, match="no solver benchmark"):
    tdleaf.train(dataclasses.replace(TINY, solver_every=5), tmp_path / "slider",
                 log=lambda *_: None)
  assert not (tmp_path / "slider").exists()


@pytest.mark.slow
def test_games_against_the_hand_evaluation():
  """With `versus_hand` the first slots play alpha-beta with the hand-written evaluation, its
  colour drawn per game and kept to the game's end; the learner's exploration never replaces
  the hand's moves. A learner that plays almost at random loses nearly every such game, and
  the logged score says so."""
  config = dataclasses.replace(TINY, batch=8, max_plies=64, epsilon=0.95, versus_hand=0.5)
  learner = tdleaf.Learner(config)
  state = learner.init(jax.random.key(0))
  records = jax.jit(learner.play)(state.params, jax.random.key(1))
  hand, mover = np.asarray(records.hand), np.asarray(records.mover)
  assert set(np.unique(hand[:, :4])) <= {0, 1} and np.all(hand[:, 4:] == -1)
  assert not np.any(np.asarray(records.explored) & (mover == hand))
  assert np.any(np.asarray(records.explored))  # The learner's own moves do explore.
  ended = np.asarray(records.ended)
  changed = hand[1:] != hand[:-1]
  assert not np.any(changed & ~ended[:-1])  # A colour changes only when a game has ended.
  finished = ended[:, :4]
  reward = np.asarray(records.reward)[:, :4]
  learner_score = (1 + np.where(hand[:, :4] == 0, -reward, reward)) / 2
  assert finished.sum() >= 8 and learner_score[finished].mean() < 0.2
  _, _, metrics = learner.iteration(state, None)
  assert 0.0 <= float(metrics["training_vs_hand"]) < 0.5
  with pytest.raises(ValueError, match="versus_hand=1.5: must be in"):
    dataclasses.replace(config, versus_hand=1.5).validate()
