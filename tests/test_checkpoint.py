"""Checkpoints (azjax.runs.checkpoint): resume, and restoring older states."""

import dataclasses
from typing import Any

import chex
import flax
import jax
import jax.numpy as jnp
import pytest
import tiny

from azjax import games, train

# The training tests' tiny configuration (tests/tiny.py): its programs compile once.
TINY = tiny.TRAINING


@pytest.fixture
def trainer(tiny_trainer):
  return tiny_trainer


@pytest.fixture
def iteration(tiny_iteration):
  return tiny_iteration


@pytest.mark.slow
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

@pytest.mark.slow
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

@pytest.mark.slow
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

@pytest.mark.slow
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

@pytest.mark.slow
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
