"""Sweeps: grid checks, grouping, the memory check, and a vmapped sweep against runs alone."""

import csv
import dataclasses
import json

import chex
import jax
import numpy as np
import pytest
import tiny

from azjax import sweep, train
from azjax.config import Config
from azjax.runs import checkpoint, memory
from azjax.sweep import timing as sweep_time

TINY = dataclasses.replace(tiny.TINY, eval_games=4, eval_simulations=4, eval_mcts_simulations=8)


# -- Input checks (nothing compiles) ---------------------------------------------------------------


@pytest.mark.parametrize("specs, message", [
    (["learnin_rate=1e-3"], "unknown config key 'learnin_rate'; did you mean learning_rate"),
    (["game=chess,checkers"], "'game' cannot be swept"),
    (["iterations=10,20"], "'iterations' cannot be swept"),
    (["rows=5,6"], r"'rows' is an option of the game.*one sweep per value \(--set rows=...\)"),
    (["learning_rate"], "expected key=value1,value2"),
    (["learning_rate=1e-3", "learning_rate=1e-4"], "given twice"),
    (["training.learning_rate=1e-3", "learning_rate=1e-4"], "given twice"),
    (["search.learning_rate=1e-3"], "learning_rate is in section 'training'"),
])
def test_bad_grid_is_named(specs, message):
  with pytest.raises(ValueError, match=message):
    sweep.parse_grid(specs)


def test_grid_keys_may_be_dotted():
  assert sweep.parse_grid(["training.learning_rate=1e-3,3e-4"]) == {
      "learning_rate": ["1e-3", "3e-4"]}


def test_bad_values_are_named():
  with pytest.raises(ValueError, match="channels: expected int"):
    sweep.expand(TINY, {"channels": ["wide"]})
  with pytest.raises(ValueError, match="repeated value"):
    sweep.expand(TINY, {"learning_rate": ["1e-3", "0.001"]})
  with pytest.raises(ValueError, match="sweep run learning_rate=-1,seed=0: .*must be > 0"):
    sweep.expand(TINY, {"learning_rate": ["-1"]})
  with pytest.raises(ValueError, match="either with --seeds or in the grid"):
    sweep.expand(TINY, {"seed": [1, 2]}, seeds=[0])


def test_batched_keys_share_a_group_shape_keys_do_not():
  runs = sweep.expand(TINY, {"learning_rate": [1e-3, 3e-4], "dirichlet_fraction": [0.1, 0.3],
                             "temperature": [1.0, 0.5]}, seeds=[0, 1])
  assert len(runs) == 16 and len(sweep.group_runs(runs)) == 1
  assert runs[0].name == "learning_rate=0.001,dirichlet_fraction=0.1,temperature=1,seed=0"
  assert runs[0].setting == runs[1].setting != runs[2].setting
  runs = sweep.expand(TINY, {"hidden": [16, 32], "learning_rate": [1e-3, 3e-4]})
  groups = sweep.group_runs(runs)
  assert [len(g) for g in groups] == [2, 2]
  assert {r.config.hidden for r in groups[1].runs} == {32}
  assert [len(g) for g in sweep.group_runs(runs, max_vmap=1)] == [1, 1, 1, 1]
  # Clipping on or off is structure; its threshold is a number.
  runs = sweep.expand(TINY, {"max_grad_norm": [0.0, 0.5, 2.0]})
  assert [len(g) for g in sweep.group_runs(runs)] == [1, 2]
  assert set(sweep.BATCHED_KEYS) | set(sweep.GROUPED_KEYS) | set(sweep.FIXED_KEYS) == {
      f.name for f in dataclasses.fields(Config)}


def test_a_grid_too_big_for_memory_stops_before_compiling():
  grid = {"learning_rate": [1e-3, 3e-4, 1e-4]}
  estimate = memory.estimate_memory(train.Trainer.create(TINY))
  assert estimate.replay >= TINY.buffer_size * 9 * 4  # At least the observations.
  limit = int(estimate.per_device(1) * 2.5)  # Room for two runs (at 90%), not three.
  with pytest.raises(ValueError, match="3 runs vmapped.*more than 90%.*--max-vmap 2"):
    sweep.plan(TINY, grid, devices=jax.devices()[:1], memory_limit=limit)
  assert len(sweep.plan(TINY, grid, max_vmap=2, devices=jax.devices()[:1],
                        memory_limit=limit)) == 2


def test_cli_rejects_bad_input_before_compiling(capsys):
  from azjax.cli import sweep as cli
  with pytest.raises(SystemExit) as err:
    cli.main(["--game", "tic_tac_toe", "--grid", "game=connect_four", "--dry-run"])
  assert err.value.code == 2
  assert "'game' cannot be swept" in capsys.readouterr().err


def test_dry_run_prints_each_groups_time_and_the_total(tmp_path, capsys):
  from azjax.cli import sweep as cli
  cli.main(["--game", "tic_tac_toe", "--preset", "tiny", "--grid", "hidden=16,32",
            "--minutes", "2", "--dry-run", "--out", str(tmp_path)])
  out = capsys.readouterr().out
  assert "2 runs in 2 groups" in out
  assert out.count("  time: at most 2 min: the 2-minute budget, plus compiling") == 2, out
  assert ("time: at most 4 min in all (2 groups one after another; from minutes budgets, plus "
          "compiling; evaluations and checkpoints not counted)") in out
  assert not list(tmp_path.iterdir())  # A dry run writes nothing.


def test_time_estimate_from_a_recorded_sweep(tmp_path):
  """A group of the same structure, size and devices in an earlier sweep.json gives the time per
  iteration (whatever that sweep's length and evaluations); the minutes budget caps it."""
  runs = sweep.expand(TINY, {"learning_rate": ["1e-3", "3e-3"]})
  (group,) = sweep.group_runs(runs)
  recorded = tmp_path / "earlier"
  checkpoint.write_config(recorded / runs[0].name, runs[0].config)
  (recorded / "sweep.json").write_text(json.dumps({
      "groups": [[r.name for r in runs]],
      "timings": [{"runs": 2, "mesh": sweep.sharding.describe(None), "compile_seconds": 30.0,
                   "seconds_per_iteration": 0.5, "iterations": 10,
                   "stopped_by": "iterations"}]}))
  (tmp_path / "broken").mkdir()
  (tmp_path / "broken" / "sweep.json").write_text("{")  # Skipped.
  records = sweep_time.recorded_timings([tmp_path])
  assert len(records) == 1
  estimate = sweep_time.estimate_time(group, None, records)
  assert estimate.seconds == 30 + TINY.iterations * 0.5 and not estimate.at_most
  assert f"{TINY.iterations} iterations x 0.5 s + 30 s compiling, as recorded in " \
      f"{recorded}, group 1" in sweep_time.describe_time(estimate)
  # Longer, with other evaluations: the same time per iteration; a budget caps it.
  longer = dataclasses.replace(TINY, iterations=1000, eval_every=5, minutes=2.0)
  (group,) = sweep.group_runs(sweep.expand(longer, {"learning_rate": ["1e-3", "3e-3"]}))
  assert sweep_time.estimate_time(group, None, records).seconds == 30 + 120
  assert "the 2-minute budget + 30 s compiling" in sweep_time.describe_time(
      sweep_time.estimate_time(group, None, records))
  # Another structure, or another number of runs: nothing recorded.
  (group,) = sweep.group_runs(sweep.expand(TINY, {"learning_rate": ["1e-3"]}))
  unknown = sweep_time.estimate_time(group, None, records)
  assert unknown.seconds is None and "up to 4 iterations" in unknown.basis
  assert sweep_time.describe_total([estimate, unknown]).startswith(
      "time: unknown (2 groups one after another; no minutes budget and no recorded time for "
      "group 2; the others ~32 s)")


# -- A vmapped sweep, against each configuration trained alone -------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
  out = tmp_path_factory.mktemp("sweep")
  summary = sweep.run_sweep(TINY, {"learning_rate": ["1e-3", "3e-3"]}, out, seeds=[0],
                            devices=jax.devices()[:1], progress=False, command="test")
  return summary


@pytest.mark.slow
def test_vmapped_sweep_matches_each_run_alone(swept):
  """Each configuration of the vmapped program ends where the same config trained by itself
  (the single-run path, hyperparameters as constants) ends."""
  assert [len(t.__dict__) and t.runs for t in swept.timings] == [2]
  for result in swept.results:
    trainer = train.Trainer.create(result.run.config)
    step = jax.jit(trainer.iteration)
    alone = trainer.init()
    for _ in range(TINY.iterations):
      alone, metrics = step(alone)
    assert bool(metrics["trained"])
    swept_state, _ = checkpoint.restore(checkpoint.manager(result.run_dir), trainer.init())
    assert int(swept_state.positions) == int(alone.positions) == 4 * 16 * 4
    chex.assert_trees_all_equal(swept_state.selfplay.buffer.value, alone.selfplay.buffer.value)
    chex.assert_trees_all_close(swept_state.params, alone.params, atol=1e-5, rtol=1e-4)
  # The two learning rates really trained differently.
  a, b = (checkpoint.restore(checkpoint.manager(r.run_dir), trainer.init())[0].params
          for r in swept.results)
  assert any(jax.tree.leaves(jax.tree.map(lambda x, y: bool(np.any(x != y)), a, b)))


@pytest.mark.slow
def test_sweep_writes_per_run_and_summary_files(swept):
  root = swept.sweep_dir
  for name in ("summary.csv", "summary.md", "curves.png", "final.png", "sweep.json"):
    assert (root / name).exists(), name
  for result in swept.results:
    for name in ("config.json", "metrics.csv", "losses.png", "model", "final.json"):
      assert (result.run_dir / name).exists(), (result.run.name, name)
    assert checkpoint.read_config(result.run_dir) == result.run.config
  with open(root / "summary.csv") as f:
    rows = list(csv.DictReader(f))
  assert [r["run"] for r in rows] == ["learning_rate=0.001,seed=0", "learning_rate=0.003,seed=0"]
  assert {r["rank"] for r in rows} == {"1", "2"}
  for row in rows:
    score = float(row["random_score"])
    assert float(row["random_ci_low"]) <= score <= float(row["random_ci_high"])
    assert int(row["iterations"]) == TINY.iterations
  text = (root / "summary.md").read_text()
  assert "| 1 | learning_rate=" in text and "95% CI" in text
  # The summary can be rebuilt from the directory alone (each run's final.json).
  before = (root / "summary.csv").read_text()
  assert [p.name for p in sweep.summarize(root)] == ["summary.csv", "summary.md", "curves.png",
                                                     "final.png"]
  assert (root / "summary.csv").read_text() == before
  # A second sweep into the same directory is refused before it compiles.
  with pytest.raises(ValueError, match="already holds a run"):
    sweep.run_sweep(TINY, {"learning_rate": ["1e-3", "3e-3"]}, root, seeds=[0], progress=False)
