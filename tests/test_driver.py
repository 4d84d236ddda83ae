"""The outer loop (azjax.runs.driver): per-checkpoint network snapshots, warm starts from another
run, NaN and Ctrl-C stops, and a tiny run end to end."""

import dataclasses
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tiny

from azjax import config as config_lib
from azjax import train
from azjax.config import Config
from azjax.runs import checkpoint
from azjax.runs.driver import train_and_evaluate

TINY = dataclasses.replace(tiny.TINY, iterations=5, checkpoint_every=2)
# The training-pipeline tests' variant (the NaN, Ctrl-C and end-to-end tests below).
TRAINING = tiny.TRAINING


@pytest.mark.slow
def test_snapshots_every_checkpoint_and_warm_start(tmp_path):
  summary = train_and_evaluate(TINY, tmp_path / "a", progress=False)
  # Checkpoints at 2 and 4, and the last iteration (5): all snapshots kept.
  assert [step for step, _ in checkpoint.list_models(tmp_path / "a")] == [2, 4, 5]
  trainer = train.Trainer.create(TINY)
  abstract = train.Trainer.variables(trainer.init())
  final = checkpoint.load_model(tmp_path / "a", abstract)
  chex.assert_trees_all_close(checkpoint.load_model(tmp_path / "a", abstract, step=5), final)
  with pytest.raises(FileNotFoundError, match="no model snapshot for iteration 3"):
    checkpoint.load_model(tmp_path / "a", abstract, step=3)
  assert summary.iterations == 5

  # A warm start begins from those parameters: one iteration whose buffer is not ready yet
  # (no SGD) must end with exactly the source's network.
  config = dataclasses.replace(TINY, iterations=1, min_buffer=TINY.buffer_size)
  train_and_evaluate(config, tmp_path / "b", progress=False, init_from=tmp_path / "a")
  chex.assert_trees_all_close(checkpoint.load_model(tmp_path / "b", abstract), final)


@pytest.mark.slow
def test_warm_start_refuses_another_network(tmp_path):
  train_and_evaluate(dataclasses.replace(TINY, iterations=1), tmp_path / "a", progress=False)
  other = dataclasses.replace(TINY, hidden=16, iterations=1)
  with pytest.raises(ValueError, match="--init-from"):
    train_and_evaluate(other, tmp_path / "b", progress=False, init_from=tmp_path / "a")
  assert not (tmp_path / "b").exists()  # Refused before anything was written.


def test_cli_resume_starts_from_the_saved_config(tmp_path, capsys):
  from azjax.cli import train as _cli

  run_dir = tmp_path / "run"
  run_dir.mkdir()
  # Not any preset's values: resuming must not fall back on the preset's.
  (run_dir / "config.json").write_text(TINY.to_json())
  _cli.main("tic_tac_toe", ["--resume", "--run-dir", str(run_dir), "--minutes", "2",
                            "--print-config"])
  resumed = Config.from_dict(json.loads(capsys.readouterr().out))
  assert resumed == dataclasses.replace(TINY, minutes=2.0)

  with pytest.raises(SystemExit):  # A preset would silently replace the saved config.
    _cli.main("tic_tac_toe", ["--resume", "--preset", "tic_tac_toe", "--run-dir", str(run_dir)])
  assert "drop --preset" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    _cli.main("connect_four", ["--resume", "--run-dir", str(run_dir)])
  assert "is for tic_tac_toe, not connect_four" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    _cli.main("tic_tac_toe", ["--resume", "--run-dir", str(tmp_path / "missing")])
  assert "does not exist" in capsys.readouterr().err


def test_bare_resume_says_it_gives_the_saved_budget_again(tmp_path, capsys, monkeypatch):
  """`--resume` without `--minutes` trains up to the run's saved minutes more, and says so."""
  from azjax.cli import train as _cli
  from azjax.runs import driver

  run_dir = tmp_path / "run"
  run_dir.mkdir()
  (run_dir / "config.json").write_text(dataclasses.replace(TINY, minutes=7.0).to_json())

  def no_training(*args, **kwargs):  # the message comes before any training
    raise ValueError("stub: this test trains nothing")

  monkeypatch.setattr(driver, "train_and_evaluate", no_training)
  with pytest.raises(SystemExit):
    _cli.main("tic_tac_toe", ["--resume", "--run-dir", str(run_dir)])
  out = capsys.readouterr().out
  assert "--resume: up to 7 more training minutes (the run's saved budget" in out
  with pytest.raises(SystemExit):
    _cli.main("tic_tac_toe", ["--resume", "--run-dir", str(run_dir), "--minutes", "3"])
  assert "more training minutes" not in capsys.readouterr().out


@pytest.mark.slow
def test_gated_run_logs_every_gating_match(tmp_path):
  """Gating runs as its own step after the iteration (azjax.runs.gating): each trained iteration's
  row has the match's score and whether the trained network replaced the best one."""
  from azjax.runs.driver import read_metrics
  config = dataclasses.replace(TINY, iterations=3, gating=True, gating_games=2)
  train_and_evaluate(config, tmp_path, progress=False)
  rows = read_metrics(tmp_path)
  assert [r["iteration"] for r in rows] == [1, 2, 3]
  trained = [r for r in rows if r["sgd_steps"] > 0]
  assert trained and all(0 <= r["gating_score"] <= 1 and r["gating_accepted"] in (0.0, 1.0)
                         for r in trained)
  state, _ = checkpoint.restore(checkpoint.manager(tmp_path), train.Trainer.create(config).init())
  assert state.best_params  # The best network is checkpointed with the run.


@pytest.mark.slow
def test_late_simulations_switch_the_search_at_their_iteration(tmp_path):
  """`late_simulations`: the iterations from `late_from * iterations` on run a second program
  whose search has more simulations (each row says which); a sweep group gets the same parts."""
  from azjax import sweep

  config = dataclasses.replace(TINY, late_simulations=12, late_from=0.6, checkpoint_every=0)
  assert [(start, c.simulations) for start, c in config.phases()] == [(0, 8), (3, 12)]
  assert TINY.phases() == [(0, TINY)]
  with pytest.raises(ValueError, match="late_simulations=4: must be above cheap_simulations=4"):
    dataclasses.replace(TINY, cheap_simulations=4, late_simulations=4).validate()
  train_and_evaluate(config, tmp_path / "a", progress=False)
  rows = [json.loads(line) for line in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
  assert [(r["iteration"], r["simulations"]) for r in rows] == [
      (1, 8), (2, 8), (3, 8), (4, 12), (5, 12)]
  group = sweep.group_runs(sweep.expand(config, {"learning_rate": [1e-3, 3e-4]}))[0]
  phases = sweep._phases(group, sweep.group_program(group), None, False)
  assert phases.starts == (0, 3) and phases.columns == ({"simulations": 8}, {"simulations": 12})
  assert phases.index(2) == 0 and phases.index(3) == 1 and len(phases.remaining(4)) == 1


# -- Stops and a whole run -------------------------------------------------------------------------


@pytest.mark.slow
def test_nan_loss_stops_and_keeps_last_checkpoint(tmp_path, monkeypatch):
  from azjax.runs import checkpoint
  from azjax.runs.driver import NaNLossError, train_and_evaluate
  config = dataclasses.replace(TRAINING, iterations=8, eval_games=0, checkpoint_every=1)
  train_and_evaluate(config, tmp_path, progress=False, max_iterations=3)
  original = train.Trainer.loss

  def poisoned(self, *args, **kwargs):
    total, aux = original(self, *args, **kwargs)
    return total * jnp.nan, aux

  monkeypatch.setattr(train.Trainer, "loss", poisoned)
  with pytest.raises(NaNLossError, match="last good checkpoint"):
    train_and_evaluate(config, tmp_path, resume=True, progress=False)
  mngr = checkpoint.manager(tmp_path)
  assert mngr.latest_step() == 3
  state, _ = checkpoint.restore(mngr, train.Trainer.create(config).init())
  assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(state.params))

@pytest.mark.slow
def test_end_to_end_tic_tac_toe_learns(tmp_path):
  """A short run: the network's raw policy goes from random-like to clearly better than random,
  and the agent with search (the run's own evaluation) beats random."""
  from azjax import agents, arena, runs
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
  # The trained network loads back as a player (`azjax.runs.load`).
  env, agent = runs.load(tmp_path, raw_policy=True)
  after = arena.play(env, agent, opponent, 200, jax.random.key(5))
  assert after.illegal_a == 0
  print(f"raw policy vs random: {before:.3f} before, {after.score:.3f} after")
  assert after.score >= 0.8 and after.score > before + 0.15, (before, after.score)

@pytest.mark.slow
def test_ctrl_c_checkpoints_and_stops(tmp_path):
  """SIGINT finishes the iteration in flight, saves a checkpoint, and the run can resume."""
  import os
  import signal
  import threading
  import time

  from azjax.runs import checkpoint
  from azjax.runs.driver import train_and_evaluate
  config = dataclasses.replace(TRAINING, iterations=10_000, eval_games=0, checkpoint_every=1000)

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
