"""Learning curves against perfect play: each snapshot scored on solver-labelled positions."""

import dataclasses
import json

import jax
import numpy as np
import pytest
import tiny

from azjax import files
from azjax.cli import efficiency
from azjax.evaluate import curves
from azjax.evaluate.evaluators import SolverEvaluator
from azjax.runs import checkpoint
from azjax.runs.driver import train_and_evaluate
from azjax.solver import benchmark as solver_benchmark
from azjax.train import Trainer

# The tests' tiny configuration (tests/tiny.py), with a snapshot every 2 iterations.
TINY = dataclasses.replace(tiny.TINY, checkpoint_every=2, augment=True, value_target_mix=0.5)


@pytest.mark.slow
def test_solver_curve_of_every_snapshot(tmp_path):
  run = tmp_path / "run"
  train_and_evaluate(TINY, run, progress=False)
  positions = solver_benchmark.Positions.load(solver_benchmark.DEFAULT_PATHS["tic_tac_toe"])
  small = positions.subset(np.arange(0, len(positions), 15))
  path = small.save(tmp_path / "ttt.npz")
  out = tmp_path / "curves"
  # Two runs (the same one twice, under two names): each gets its curve.
  efficiency.main([f"tiny={run}", f"again={run}", "--out", str(out), "--positions", str(path),
                   "--simulations", "0,4"])
  rows = files.read_jsonl(out / "tiny.jsonl")
  assert files.read_jsonl(out / "again.jsonl") == rows
  metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
  assert [r["iteration"] for r in rows] == [2, 4]
  # Each row carries its snapshot's training time from the run's own metrics.
  seconds = {m["iteration"]: m["seconds"] for m in metrics}
  assert [r["minutes"] for r in rows] == [round(seconds[i] / 60, 2) for i in (2, 4)]
  for r in rows:
    for player in ("policy", "search4"):
      assert 0 <= r[f"{player}/mistake_rate"] <= 1 and 0 <= r[f"{player}/optimal_rate"] <= 1
  # The library call gives the same rows (every k-th snapshot keeps the first and the last).
  assert curves.solver_curve(run, small, simulations=(0, 4), every=5) == rows
  assert (out / "mistakes.png").stat().st_size > 0 and "| 4 |" in (out / "curves.md").read_text()
  # --replot redraws from the JSONL alone.
  (out / "mistakes.png").unlink()
  efficiency.main(["--out", str(out), "--replot"])
  assert (out / "mistakes.png").exists()


@pytest.mark.slow
def test_solver_every_scores_training(tmp_path):
  """With solver_every, the run logs its mistakes against perfect play at iteration 0, every
  solver_every iterations and at the end, and plots them. With ema_decay (one run tests both,
  for the compile time) the run's network is the average: it is what is scored as "solver/"
  and kept in model/, and the parameters SGD left are scored beside it as "solver_trained/"."""
  config = dataclasses.replace(TINY, iterations=3, solver_every=2, eval_simulations=4,
                               ema_decay=0.9)
  summary = train_and_evaluate(config, tmp_path / "run", progress=False)
  metrics = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
  rows = [json.loads(line) for line in metrics]
  scored = [r["iteration"] for r in rows if "solver/policy/mistake_rate" in r]
  assert scored == [0, 2, 3]
  assert all(0 <= r[f"{prefix}/search4/mistake_rate"] <= 1 for r in rows
             if r["iteration"] in scored for prefix in ("solver", "solver_trained"))
  assert (tmp_path / "run" / "mistakes.png").exists()
  assert "policy mistakes vs perfect play" in summary.final_eval
  trainer = Trainer.create(config)
  state, _ = checkpoint.restore(checkpoint.manager(tmp_path / "run"), trainer.init())
  model = checkpoint.load_model(tmp_path / "run", Trainer.variables(state))
  jax.tree.map(np.testing.assert_array_equal, model["params"], state.ema_params)


def test_solver_every_needs_a_benchmark(tmp_path):
  config = dataclasses.replace(TINY, game="checkers", net="mlp", solver_every=2)
  with pytest.raises(ValueError, match="checkers has no solver benchmark"):
    train_and_evaluate(config, tmp_path / "run", progress=False)
  assert not (tmp_path / "run").exists()  # Refused before anything was written.


def test_solver_positions_names_the_set_solver_every_scores(tmp_path):
  """solver_positions picks a packaged set by name; a name the game lacks is refused before
  anything is written, naming the sets it has."""
  config = dataclasses.replace(TINY, solver_every=2, solver_positions="strong")
  with pytest.raises(ValueError, match="tic_tac_toe has no solver benchmark set 'strong'"):
    train_and_evaluate(config, tmp_path / "run", progress=False)
  assert not (tmp_path / "run").exists()
  trainer = Trainer.create(dataclasses.replace(
      TINY, game="connect_four", net="mlp", solver_every=2, solver_positions="strong"))
  strong = SolverEvaluator(trainer).bench.positions
  assert strong.sources[0].startswith("solver: best score") and len(strong.scores) == 1000
  default = SolverEvaluator(Trainer.create(dataclasses.replace(
      trainer.config, solver_positions=""))).bench.positions
  assert default.sources != strong.sources
