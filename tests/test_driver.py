"""The outer loop's files: per-checkpoint network snapshots and warm starts from another run."""

import dataclasses
import json

import chex
import pytest

from azjax import checkpoint, train
from azjax.config import Config
from azjax.driver import train_and_evaluate

TINY = Config(game="tic_tac_toe", net="mlp", hidden=32, blocks=1, value_hidden=16,
              simulations=8, selfplay_batch=16, selfplay_steps=4, buffer_size=512,
              min_buffer=32, train_batch=32, sgd_steps=2, iterations=5, eval_every=0,
              eval_games=0, checkpoint_every=2)


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


def test_gated_run_logs_every_gating_match(tmp_path):
  """Gating runs as its own step after the iteration (azjax.gating): each trained iteration's
  row has the match's score and whether the trained network replaced the best one."""
  from azjax.driver import read_metrics
  config = dataclasses.replace(TINY, iterations=3, gating=True, gating_games=2)
  train_and_evaluate(config, tmp_path, progress=False)
  rows = read_metrics(tmp_path)
  assert [r["iteration"] for r in rows] == [1, 2, 3]
  trained = [r for r in rows if r["sgd_steps"] > 0]
  assert trained and all(0 <= r["gating_score"] <= 1 and r["gating_accepted"] in (0.0, 1.0)
                         for r in trained)
  state, _ = checkpoint.restore(checkpoint.manager(tmp_path), train.Trainer.create(config).init())
  assert state.best_params  # The best network is checkpointed with the run.
