"""The outer loop's start: the compilation cache, the compile message, what the training core
imports, and the advice when a run's iterations do not fit its time budget."""

import dataclasses
import functools
import subprocess
import sys

import jax
import pytest
from jax._src import compilation_cache

from azjax.cli import train as _cli
from azjax.config import preset
from azjax.runs import driver, loop


@pytest.fixture
def restore_compile_cache():
  """Leaves JAX's persistent cache as it was (the session's shared one, tests/conftest.py)."""
  before = jax.config.jax_compilation_cache_dir
  yield
  jax.config.update("jax_compilation_cache_dir", before)
  compilation_cache.reset_cache()


@pytest.mark.slow
def test_a_training_command_fills_the_compile_cache(tmp_path, capsys, restore_compile_cache):
  cache = tmp_path / "cache"
  # A network no other test builds: the iteration must compile here, not come from memory.
  _cli.main("tic_tac_toe", [
      "--preset", "tic_tac_toe", "--run-dir", str(tmp_path / "run"), "--iterations", "1",
      "--compile-cache", str(cache), "--no-progress", "--set", "hidden=24", "--set", "blocks=1",
      "--set", "simulations=4", "--set", "selfplay_batch=8", "--set", "selfplay_steps=2",
      "--set", "buffer_size=256", "--set", "min_buffer=16", "--set", "train_batch=16",
      "--set", "sgd_steps=1", "--set", "eval_games=0"])
  out = capsys.readouterr().out
  assert f"compilation cache: {cache}" in out
  assert out.index("compiling the training iteration ...") < out.index("compiled in ")
  assert "trained 1 iterations" in out
  entries = [p for p in cache.rglob("*") if p.is_file()]
  assert entries and any(p.name.startswith("jit_") for p in entries), entries


def test_no_compile_cache_leaves_it_off(tmp_path, capsys, restore_compile_cache):
  # Off to begin with, whatever the tests before this one in this process (a pytest-xdist worker
  # runs any files before this one) left on.
  jax.config.update("jax_compilation_cache_dir", None)
  _cli.main("tic_tac_toe", ["--run-dir", str(tmp_path / "run"), "--no-compile-cache",
                            "--print-config"])
  assert "compilation cache" not in capsys.readouterr().out
  assert jax.config.jax_compilation_cache_dir is None


def test_default_compile_cache_directory(monkeypatch, tmp_path):
  monkeypatch.delenv("AZJAX_COMPILE_CACHE", raising=False)
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
  assert loop.default_compile_cache() == tmp_path / "azjax" / "jax"
  monkeypatch.setenv("AZJAX_COMPILE_CACHE", str(tmp_path / "elsewhere"))
  assert loop.default_compile_cache() == tmp_path / "elsewhere"


@pytest.mark.slow
def test_training_core_does_not_import_the_evaluation_layer():
  code = ("import sys, azjax.train; "
          "print(sorted(m for m in sys.modules if m in ('azjax.agents', 'azjax.arena', "
          "'azjax.evaluate.evaluators', 'azjax.runs.gating')))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
  assert out.stdout.strip() == "[]"


def test_progress_bar_shows_a_dash_before_the_first_sgd_step():
  from azjax.runs import loop
  rows = [{"games": 3, "positions_per_second": 10.0, "policy_loss": float("nan"),
           "value_loss": float("nan")}]
  postfix = loop._postfix(rows, 1, None)
  assert postfix["pi"] == "-" and postfix["v"] == "-"
  rows[0].update(policy_loss=1.25, value_loss=0.5)
  assert loop._postfix(rows, 1, 2.0) == {"games": "3", "pos/s": "10", "min left": "2.0",
                                         "pi": "1.250", "v": "0.500"}


def test_budget_advice_projects_the_end_of_the_budget_from_the_pace():
  config = preset("breakthrough8_cpu")  # 17500 iterations of a cosine in 120 minutes.
  # 0.3 s an iteration: 17300 more take 5190 s of the 7141 left, 1951 s (33 min) to spare.
  advice = functools.partial(loop.budget_advice, schedules=driver.schedules(config))
  fast = advice(config, 200, 200, 60.0, 7141.0)
  assert "0.300 s an iteration" in fast and "about 33 minutes before" in fast
  assert fast.endswith("--set iterations=23289 would fit the budget")  # 200 + 0.97*7141/0.3
  # 0.5 s: 8650 s needed, the budget ends near iteration 200 + 7101/0.5.
  slow = advice(config, 200, 200, 100.0, 7101.0)
  assert "ends near iteration 14402" in slow and "--set iterations=13975 " in slow
  assert advice(config, 100, 100, 40.0, 7160.0) is None  # 6960 s of 7160: fits.
  # A later check that finds the run fits after all takes back earlier advice.
  assert advice(config, 100, 100, 40.0, 7160.0, advised=True) == (
      "at 0.400 s an iteration on this machine the 17500 iterations fit the 120-minute budget "
      "after all")
  # Without a schedule over the iterations, or without a time budget, nothing to fit.
  for other in (dataclasses.replace(config, lr_schedule="constant"),
                dataclasses.replace(config, minutes=0.0)):
    assert loop.budget_advice(other, 200, 200, 100.0, 7101.0,
                              schedules=driver.schedules(other)) is None
