"""The outer loop's files: per-checkpoint network snapshots and warm starts from another run."""

import dataclasses
import json

import chex
import pytest

from azjax import train
from azjax.config import Config
from azjax.runs import checkpoint
from azjax.runs.driver import train_and_evaluate

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
