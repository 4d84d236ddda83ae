"""Run kinds (`azjax.runs.kinds`): every committed run is recognised by exactly one kind and
loads through `azjax.runs.load`; TD-Leaf runs train through the one outer loop (`azjax tdleaf`),
resumable after `kill -9` with every iteration logged once, and Ctrl-C leaves a checkpoint."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from azjax import runs
from azjax.runs import layout

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted({p.parent for kind in runs.KINDS.values()
                    for p in (ROOT / "results").rglob(kind.settings_file)})


def test_the_committed_runs_are_found():
  names = {p.relative_to(ROOT / "results").as_posix() for p in COMMITTED}
  assert {"connect_four_cpu", "connect_four_tdleaf", "slider/tdleaf", "slider/alphazero",
          "breakthrough8_cpu"} <= names


# Loaded in the quick tier: one run of each kind and each game's cited run; the rest with
# --runslow (some 80 networks take minutes to restore on a loaded CPU).
QUICK = {"connect_four_cpu", "connect_four_tdleaf", "slider/tdleaf", "slider/alphazero",
         "breakthrough8_cpu", "efficiency/breakthrough8/mlp256_m4_4000_1core_run"}


def _name(run_dir: Path) -> str:
  return run_dir.relative_to(ROOT / "results").as_posix()


@pytest.mark.parametrize("run_dir", COMMITTED, ids=_name)
def test_every_committed_run_has_one_kind(run_dir):
  kinds = [kind.name for kind in runs.KINDS.values() if kind.recognises(run_dir)]
  assert len(kinds) == 1, kinds
  assert runs.run_game(run_dir).name == runs.kind_of(run_dir).read_config(run_dir).game


@pytest.mark.parametrize("run_dir", [
    pytest.param(p, marks=() if _name(p) in QUICK else pytest.mark.slow) for p in COMMITTED],
    ids=_name)
def test_every_committed_run_loads(run_dir):
  """Its final network, or where a run keeps snapshots only, its last snapshot."""
  players = runs.players(run_dir)
  if players.final is None and not players.snapshots:
    pytest.skip("a record of metrics and plots only: no network to load")
  step = None if players.final is not None else players.snapshots[-1]
  env, agent = runs.load(run_dir, step=step)
  assert env.name == runs.run_game(run_dir).name and agent.name


def test_kind_of_refuses_a_directory_without_a_run(tmp_path):
  with pytest.raises(FileNotFoundError, match="not a run directory"):
    runs.kind_of(tmp_path)
  assert layout.settings_file("tdleaf") == "tdleaf.json"
  assert layout.settings_file("alphazero") == layout.CONFIG


# The files of a run directory that azjax.runs.layout names (and azjax.config.files, config.json);
# not the training plots, whose names other outputs share (efficiency's mistakes.png).
RUN_FILES = {layout.CONFIG, *layout.METRICS_FILES, layout.EVAL_TABLE,
             layout.MATCHES, layout.PROGRESS_PLOT, layout.ladder_plot(), layout.STRENGTH,
             layout.SWEEP_RESULT, *(layout.settings_file(k) for k in ("tdleaf", "klent"))}


def test_only_layout_spells_the_names_of_a_run_directorys_files():
  """Code names a run directory's files by `azjax.runs.layout`'s constants, never as a string
  literal of its own (docstrings and messages built from the constants aside), so that a file
  is renamed in one place."""
  import ast

  spelled = []
  for path in sorted((ROOT / "azjax").rglob("*.py")):
    if path.relative_to(ROOT).as_posix() in ("azjax/runs/layout.py", "azjax/config/files.py"):
      continue
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    spelled += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
                for node in ast.walk(tree) if isinstance(node, ast.Constant)
                and node.value in RUN_FILES and id(node) not in docstrings]
  assert not spelled, "\n".join(spelled)


# -- TD-Leaf through the one outer loop: kill -9, Ctrl-C, resume -----------------------------------

# Connect Four with a tiny MLP evaluation at depth 1: an iteration is a fraction of a second.
TINY_C4 = ["--set", "evaluation=mlp", "--set", "hidden=8", "--set", "blocks=1", "--set", "batch=4",
           "--set", "max_plies=8", "--set", "depth=1", "--set", "sgd_steps=1", "--set",
           "eval_every=0", "--set", "checkpoint_every=3", "--no-progress"]


def _iterations(run_dir: Path) -> list[int]:
  path = run_dir / layout.METRICS_JSONL
  rows = []
  for line in path.read_text().splitlines() if path.exists() else []:
    try:
      rows.append(json.loads(line)["iteration"])
    except ValueError:
      pass  # A line torn by the kill.
  return rows


def _start(run_dir: Path, *extra: str) -> subprocess.Popen:
  env = {**os.environ, "PYTHONPATH": str(ROOT)}
  return subprocess.Popen(
      [sys.executable, "-m", "azjax.cli.main", "tdleaf", "connect_four", "--run-dir",
       str(run_dir), *TINY_C4, *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE,
      stderr=subprocess.STDOUT, text=True)


def _wait_for(run_dir: Path, process: subprocess.Popen, iteration: int, timeout: float = 240):
  """Waits until the run has logged `iteration` (or the process has ended)."""
  deadline = time.time() + timeout
  while time.time() < deadline and process.poll() is None:
    if max(_iterations(run_dir), default=0) >= iteration:
      return
    time.sleep(0.05)
  out = process.stdout.read() if process.poll() is not None else ""
  raise AssertionError(f"the run did not reach iteration {iteration}: {out[-2000:]}")


@pytest.mark.slow
def test_tdleaf_run_killed_interrupted_and_resumed_logs_every_iteration_once(tmp_path):
  """`azjax tdleaf connect_four`, killed with SIGKILL between checkpoints, then resumed and
  stopped with Ctrl-C (SIGINT: the iteration in flight ends, a checkpoint is saved), then
  resumed to its end: every iteration is in metrics.jsonl exactly once."""
  run = tmp_path / "c4"
  first = _start(run, "--iterations", "1000")
  _wait_for(run, first, 4)  # Past the checkpoint at 3: 4.. are dropped on resume.
  first.send_signal(signal.SIGKILL)
  first.wait()
  second = _start(run, "--resume", "--iterations", "1000")
  _wait_for(run, second, 8)
  second.send_signal(signal.SIGINT)
  out, _ = second.communicate(timeout=120)
  assert second.returncode == 0, out[-2000:]
  assert "stopped by interrupt" in out and "resumed" in out
  logged = _iterations(run)
  saved = max(int(p.name) for p in (run / layout.CHECKPOINTS).iterdir() if p.name.isdigit())
  assert saved == logged[-1]  # Ctrl-C saved the iteration it stopped after.
  third = _start(run, "--resume", "--iterations", str(saved + 3))
  out, _ = third.communicate(timeout=240)
  assert third.returncode == 0, out[-2000:]
  assert _iterations(run) == list(range(1, saved + 4))
  assert (run / layout.MODEL).is_dir() and (run / "losses.png").exists()
