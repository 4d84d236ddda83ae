"""A run never loses or overwrites data: fresh run directories, refusals that write nothing,
resuming past a corrupt checkpoint, metrics without repeated iterations, and validation."""

import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import tiny

from azjax import config as config_lib
from azjax import train
from azjax.cli import train as _cli
from azjax.config import Config
from azjax.runs import checkpoint, driver, layout

# One config for every training below (`max_iterations` stops early), so that they share one
# compiled iteration (see `shared_compilation`) with the other tests (tests/tiny.py).
TINY = dataclasses.replace(tiny.TINY, checkpoint_every=1)


@pytest.fixture
def finished_run(trained_run, tmp_path):
  """A copy of a trained run as results/ keeps one: its config, metrics, plots, final network
  and an `eval.md`, without checkpoints or snapshots."""
  run = tmp_path / "results" / "tic_tac_toe"
  shutil.copytree(trained_run("tic_tac_toe"), run,
                  ignore=shutil.ignore_patterns("checkpoints", "models", "metrics.csv"))
  (run / "eval.md").write_text("| a match |\n")
  return run


@pytest.fixture(scope="module")
def shared_compilation():
  """Trainers of one config are built once and their iteration jitted once: each training
  below would otherwise compile the same program again (seconds each on a CPU)."""
  trainers, jitted = {}, {}
  create, jit_iteration = train.Trainer.create, train.Trainer.jit_iteration

  def cached_create(config, mesh=None):
    if mesh is not None:
      return create(config, mesh=mesh)
    if config not in trainers:
      trainers[config] = create(config)
    return trainers[config]

  def cached_jit(self):
    if id(self) not in jitted:
      jitted[id(self)] = jit_iteration(self)
    return jitted[id(self)]

  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(train.Trainer, "create", staticmethod(cached_create))
    patch.setattr(train.Trainer, "jit_iteration", cached_jit)
    yield


def tree_digest(root: Path) -> dict[str, str]:
  """Every file under `root` (relative path) -> its SHA-256."""
  return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
          for p in sorted(root.rglob("*")) if p.is_file()}


def cli_error(capsys, game: str, argv: list[str]) -> str:
  with pytest.raises(SystemExit) as exit_info:
    _cli.main(game, ["--no-progress", *argv])
  assert exit_info.value.code != 0
  return capsys.readouterr().err


def metric_iterations(run_dir: Path) -> list[int]:
  return [r["iteration"] for r in driver.read_metrics(run_dir)]


# -- Run directories -------------------------------------------------------------------------------


@pytest.mark.slow
def test_commands_leave_a_committed_result_byte_identical(finished_run, tmp_path, capsys,
                                                          monkeypatch):
  run = finished_run
  before = tree_digest(run)
  assert "config.json" in before and "metrics.jsonl" in before
  # A new run, with or without other settings, and a resume with other settings.
  for argv in (["--run-dir", str(run), "--iterations", "1"],
               ["--run-dir", str(run), "--set", "simulations=4", "--set", "hidden=8"],
               ["--run-dir", str(run), "--resume", "--set", "simulations=4"],
               ["--run-dir", str(run), "--resume"],  # a network but no checkpoint
               ["--run-dir", str(run), "--set", "game=breakthrough"],
               ["--run-dir", str(run), "--set", "learning_rate=inf"]):
    err = cli_error(capsys, "tic_tac_toe", argv)
    assert "error:" in err, argv
    assert tree_digest(run) == before, argv
  err = cli_error(capsys, "tic_tac_toe", ["--run-dir", str(run), "--set", "hidden=8"])
  assert "already holds a run (config.json, metrics.jsonl, model)" in err
  assert "--resume" in err and "--overwrite" in err
  err = cli_error(capsys, "tic_tac_toe", ["--run-dir", str(run), "--resume"])
  assert "holds a trained network (model) but no checkpoint" in err and "--init-from" in err
  # Evaluation writes to a committed run (here in ./results) only when --out names it.
  from azjax.cli import evaluate
  monkeypatch.chdir(tmp_path)
  args = evaluate.build_parser().parse_args(["--checkpoint", str(run)])
  assert evaluate.output_dir(args, args.checkpoint) is None
  assert evaluate.output_dir(args, tmp_path) == tmp_path
  args.out = str(tmp_path / "eval")
  evaluate.append_eval(evaluate.output_dir(args, args.checkpoint), "cmd", ["| a |"])
  assert (tmp_path / "eval" / "eval.md").read_text().endswith("| a |\n")


def test_default_run_directory_is_new_each_time(tmp_path, monkeypatch, capsys):
  monkeypatch.chdir(tmp_path)
  seen = []

  def fake_train(config, run_dir, **kwargs):
    seen.append(Path(run_dir))
    Path(run_dir).mkdir(parents=True)  # What a real run would do first.
    return "summary"

  monkeypatch.setattr(driver, "train_and_evaluate", fake_train)
  for _ in range(2):
    _cli.main("tic_tac_toe", ["--preset", "tic_tac_toe", "--no-progress"])
  assert len(set(seen)) == 2
  for run_dir in seen:
    assert run_dir.parent == Path("runs") and run_dir.name.startswith("tic_tac_toe-")
  assert f"run directory {seen[0]}" in capsys.readouterr().out
  assert not (tmp_path / "results").exists()
  assert _cli.new_run_dir("x", tmp_path, now=0.0) != _cli.new_run_dir("x", tmp_path, now=1.0)
  (tmp_path / _cli.new_run_dir("x", tmp_path, now=0.0)).mkdir()
  assert _cli.new_run_dir("x", tmp_path, now=0.0).name.endswith("-2")


# -- Resuming --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_resume_recovers_a_lost_or_corrupt_state(tmp_path, capsys, shared_compilation):
  run = tmp_path / "run"
  # Killed before its first checkpoint: a config, a metrics row, no checkpoint.
  run.mkdir()
  checkpoint.write_config(run, TINY)
  (run / "metrics.jsonl").write_text(json.dumps({"iteration": 1, "positions": 64}) + "\n")
  driver.train_and_evaluate(TINY, run, resume=True, progress=False, max_iterations=3)
  assert "holds config.json but no checkpoint" in capsys.readouterr().err
  assert metric_iterations(run) == [1, 2, 3]

  # Then killed again: checkpoint 3 was cut short (its largest file truncated) and a metrics
  # row is torn in the middle of being written.
  files = [p for p in (run / "checkpoints" / "3").rglob("*") if p.is_file()]
  largest = max(files, key=lambda p: p.stat().st_size)
  os.truncate(largest, largest.stat().st_size // 2)
  with open(run / "metrics.jsonl", "a") as f:
    f.write('{"iteration": 4, "posi')
  summary = driver.train_and_evaluate(TINY, run, resume=True, progress=False)
  err = capsys.readouterr().err
  assert "checkpoint 3 in" in err and "resuming from checkpoint 2" in err
  assert (run / "checkpoints" / "3.unreadable").is_dir()
  assert summary.iterations == 4
  assert checkpoint.manager(run).latest_step() == 4
  # Iterations 3 (redone) and 4 appear once; the CSV says the same.
  assert metric_iterations(run) == [1, 2, 3, 4]
  csv_rows = (run / "metrics.csv").read_text().splitlines()
  assert [int(line.split(",")[0]) for line in csv_rows[1:]] == [1, 2, 3, 4]


@pytest.mark.slow
def test_nan_stop_says_when_no_checkpoint_exists(tmp_path, monkeypatch, shared_compilation):
  jit_iteration = train.Trainer.jit_iteration

  def poisoned(self):
    """The iteration, reporting a NaN loss from the first one on (before any checkpoint)."""
    step = jit_iteration(self)

    def iteration(state):
      state, metrics = step(state)
      return state, {**metrics, "loss": float("nan"), "trained": True}

    return iteration

  monkeypatch.setattr(train.Trainer, "jit_iteration", poisoned)
  with pytest.raises(driver.NaNLossError, match="iteration 1: .* No checkpoint was saved yet"):
    driver.train_and_evaluate(TINY, tmp_path, progress=False)


@pytest.mark.slow
def test_resume_needs_a_run_and_overwrite_replaces_one(finished_run, tmp_path, capsys):
  err = cli_error(capsys, "tic_tac_toe", ["--resume"])
  assert "--resume continues the run in --run-dir" in err
  err = cli_error(capsys, "tic_tac_toe", ["--resume", "--run-dir", str(tmp_path / "none")])
  assert "config.json does not exist" in err
  run = finished_run
  (run / "checkpoints" / "7").mkdir(parents=True)
  (run / "checkpoints" / "7" / "x").write_text("x")
  removed = layout.clear_run(run)
  assert set(removed) == {"config.json", "metrics.jsonl", "model", "checkpoints", "losses.png"}
  assert layout.run_files(run) == [] and (run / "eval.md").exists()


# -- Validation ------------------------------------------------------------------------------------


FLOAT_KEYS = [f.name for f in dataclasses.fields(Config) if isinstance(f.default, float)]


@pytest.mark.parametrize("key", FLOAT_KEYS)
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_every_float_setting_must_be_finite(key, value):
  config = config_lib.override(TINY, [(key, value)])
  with pytest.raises(ValueError, match=f"config {key}=.*must be a finite number"):
    config.validate()


@pytest.mark.parametrize("key,value", [
    ("learning_rate", "0"), ("learning_rate", "-1e-3"), ("value_weight", "-1"),
    ("temperature", "0"), ("gumbel_scale", "-0.5"), ("dirichlet_alpha", "0"),
    ("pb_c_init", "-1"), ("weight_decay", "-1e-4"), ("max_grad_norm", "-1"), ("minutes", "-1"),
    ("momentum", "1"), ("dirichlet_fraction", "1.5"), ("gating_threshold", "-0.1")])
def test_impossible_signs_are_refused(key, value):
  with pytest.raises(ValueError, match=f"config {key}="):
    config_lib.override(TINY, [(key, value)]).validate()


def test_board_sizes_and_the_game_of_a_command():
  board = dataclasses.replace(TINY, game="breakthrough")
  for key, value in (("rows", 1), ("cols", 27), ("rows", -1)):
    with pytest.raises(ValueError, match=f"breakthrough: {key} must be in 2..26, got {value}"):
      dataclasses.replace(board, game_options={key: value}).validate()
  dataclasses.replace(board, game_options={"rows": 26, "cols": 5}).validate()
  with pytest.raises(ValueError, match="tic_tac_toe has no option 'rows'; it takes none"):
    dataclasses.replace(TINY, game_options={"rows": 5}).validate()
  with pytest.raises(ValueError, match="config game='breakthrough': python -m "
                     "experiments.tic_tac_toe trains tic_tac_toe"):
    _cli.build_config("tic_tac_toe", "tic_tac_toe", ["game=breakthrough"], None, None)


def test_single_run_memory_estimate(tmp_path, shared_compilation):
  big = dataclasses.replace(TINY, buffer_size=10**12)
  with pytest.raises(ValueError, match=r"needs about .* buffer_size=1000000000000"):
    driver.train_and_evaluate(big, tmp_path / "big", progress=False)
  assert not (tmp_path / "big").exists()  # Refused before anything was written.
  with pytest.raises(ValueError, match="more than 90%"):
    driver.check_memory(train.Trainer.create(TINY), limit=1000)
  driver.check_memory(train.Trainer.create(TINY), limit=None)


def test_config_file_errors_name_the_file(tmp_path):
  path = tmp_path / "config.json"
  for text, why in (('{"learning_rate": 1', "not a valid config file"),
                    ('{"learning_rate": Infinity}', "Infinity is not a finite number"),
                    ("[1, 2]", "a JSON object of settings expected"),
                    ('{"lerning_rate": 1}', "unknown key 'lerning_rate'"),
                    (b"\xff\xfe".decode("latin-1"), "not a valid config file")):
    path.write_text(text, encoding="latin-1")
    with pytest.raises(ValueError, match=why) as info:
      config_lib.read_config(tmp_path)
    assert str(path) in str(info.value)
  with pytest.raises(ValueError, match="not a finite number"):
    checkpoint.write_config(tmp_path / "new", dataclasses.replace(TINY, learning_rate=float("inf")))
  assert not (tmp_path / "new" / "config.json").exists()


@pytest.mark.parametrize("module,argv,flag", [
    ("export", ["--states", "0"], "--states"), ("export", ["--batch", "0"], "--batch"),
    ("export", ["--simulations", "-3"], "--simulations"),
    ("export", ["--opening-moves", "-1"], "--opening-moves"),
    ("probe", ["--states", "0"], "--states"), ("probe", ["--batch", "-1"], "--batch"),
    ("probe", ["--simulations", "0"], "--simulations"), ("probe", ["--seeds", "0"], "--seeds")])
def test_export_and_probe_check_their_arguments(module, argv, flag, capsys, tmp_path):
  import importlib
  main = importlib.import_module(f"azjax.cli.{module}").main
  with pytest.raises(SystemExit) as info:
    main(["--checkpoint", str(tmp_path), *argv])  # Arguments are checked before the run.
  assert info.value.code == 2
  assert flag in capsys.readouterr().err


def test_a_records_compressed_metrics_read_as_the_plain_file(tmp_path):
  """results/efficiency keeps its metrics as metrics.jsonl.gz: read as metrics.jsonl is, the
  plain file first where both are, and the directory still counts as a run."""
  import gzip

  from azjax.evaluate import curves
  from azjax.runs import loop

  rows = [{"iteration": 1, "seconds": 2.0, "positions": 8},
          {"iteration": 2, "seconds": 5.0, "positions": 16}]
  with gzip.open(tmp_path / "metrics.jsonl.gz", "wt") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
  assert layout.metrics_file(tmp_path).name == "metrics.jsonl.gz"
  assert loop.read_metrics(tmp_path) == rows
  assert curves.training_seconds(tmp_path) == {1: (2.0, 8), 2: (5.0, 16)}
  with pytest.raises(ValueError, match="holds a run"):
    layout.check_run_dir(tmp_path, tiny.TINY)
  (tmp_path / "metrics.jsonl").write_text(json.dumps(rows[0]) + "\n")
  assert loop.read_metrics(tmp_path) == rows[:1]
