"""`azjax.console`: Ctrl-C keeps what finished and exits 130 in one line; a missing extra exits 3
in one line; no tracebacks. The Ctrl-C tests send a real SIGINT to a command in a subprocess."""

import fcntl
import gc
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
import tiny

from azjax import console, files
from azjax.cli import probe as probe_cli
from azjax.config import Config
from azjax.runs import checkpoint, driver, layout

ROOT = Path(__file__).resolve().parents[1]

# Runs `azjax ARGS...` with `TARGET` (module:attribute[.attribute]) wrapped so that its second
# call sends SIGINT to the process first: a Ctrl-C after one unit of work has finished.
SIGINT_ON_SECOND_CALL = """
import functools, importlib, os, signal, sys
module, _, path = sys.argv[1].partition(":")
owner = importlib.import_module(module)
*parents, name = path.split(".")
for parent in parents:
  owner = getattr(owner, parent)
original, calls = getattr(owner, name), []
@functools.wraps(original)
def patched(*args, **kwargs):
  calls.append(1)
  if len(calls) == 2:
    os.kill(os.getpid(), signal.SIGINT)
  return original(*args, **kwargs)
setattr(owner, name, patched)
from azjax.cli import main
sys.exit(main.main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
  """A tiny tic-tac-toe run (one training iteration, nothing evaluated)."""
  path = tmp_path_factory.mktemp("console") / "ttt"
  config = Config(game="tic_tac_toe", net="mlp", hidden=16, blocks=1, value_hidden=8,
                  simulations=4, selfplay_batch=8, selfplay_steps=2, buffer_size=64,
                  min_buffer=8, train_batch=8, sgd_steps=1, iterations=1, eval_every=0,
                  eval_games=0, checkpoint_every=0)
  driver.train_and_evaluate(config, path, progress=False)
  return path


def sigint_on_second_call(target: str, *argv: str) -> subprocess.CompletedProcess:
  env = {**os.environ, "PYTHONPATH": str(ROOT)}
  return subprocess.run([sys.executable, "-c", SIGINT_ON_SECOND_CALL, target, *argv],
                        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)


def sigint_when(ready: Callable[[str], bool], *argv: str,
                timeout: float = 300) -> subprocess.CompletedProcess:
  """Runs `azjax ARGV...` with stderr on a terminal (a pseudo-terminal: its progress bar shows
  as a user sees it), and sends it SIGINT once `ready(output)` holds (`output`: its stdout and
  stderr so far; or `ready` looks at the files it writes); returns the finished process, its
  stderr as the lines a terminal would show. Fails if the command ends first, or `timeout`
  seconds pass."""
  main, terminal = pty.openpty()
  fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
  env = {**os.environ, "PYTHONPATH": str(ROOT)}
  proc = subprocess.Popen([sys.executable, "-m", "azjax.cli.main", *argv], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal)
  os.close(terminal)
  out = proc.stdout.fileno()
  chunks: dict[int, list[bytes]] = {out: [], main: []}

  def read(fd: int) -> None:
    while True:
      try:
        data = os.read(fd, 1 << 16)
      except OSError:  # EIO: the command has closed the terminal.
        return
      if not data:
        return
      chunks[fd].append(data)

  readers = [threading.Thread(target=read, args=(fd,), daemon=True) for fd in chunks]
  for reader in readers:
    reader.start()

  def text(fd: int) -> str:
    return b"".join(chunks[fd]).decode(errors="replace")

  deadline = time.time() + timeout
  try:
    while not ready(text(out) + text(main)):
      if proc.poll() is not None or time.time() > deadline:
        raise AssertionError(f"the command {'ended' if proc.poll() is not None else 'timed out'} "
                             f"before it was ready:\n{text(out)[-3000:]}\n"
                             f"{screen(text(main))[-3000:]}")
      time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=timeout)
  finally:
    if proc.poll() is None:
      proc.kill()
      proc.wait()
    for reader in readers:
      reader.join(timeout=10)
    os.close(main)
    proc.stdout.close()
  return subprocess.CompletedProcess(proc.args, proc.returncode, text(out),
                                     screen(text(main)))


def screen(text: str) -> str:
  """What a terminal shows of `text`: each line as its last carriage return left it (a progress
  bar redraws itself so), without the escape codes."""
  text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r\n", "\n")
  return "\n".join(next((part for part in reversed(line.split("\r")) if part.strip()), "")
                   for line in text.split("\n"))


def bar_shows(desc: str) -> Callable[[str], bool]:
  """Whether a progress bar labelled `desc` shows some units done (`| n/total [`, n > 0)."""
  pattern = re.compile(re.escape(desc) + r":[^\r\n]*\| *[1-9][0-9]*/[0-9?]+ \[")
  return lambda output: pattern.search(output) is not None


def assert_one_line_exit(proc: subprocess.CompletedProcess) -> None:
  assert proc.returncode == console.INTERRUPTED, proc.stderr
  assert "Traceback" not in proc.stderr, proc.stderr
  assert len([l for l in proc.stderr.splitlines() if l.startswith("interrupted:")]) == 1


@pytest.mark.slow
def test_solver_benchmark_ctrl_c_writes_the_players_scored(run_dir, tmp_path):
  out = tmp_path / "out"
  proc = sigint_on_second_call("azjax.solver.benchmark:SolverBenchmark.player_actions",
                               "evaluate", "--checkpoint", str(run_dir), "--solver",
                               "--simulations", "2", "--out", str(out))
  assert_one_line_exit(proc)
  # The raw policy finished before Ctrl-C, the search had not: the table holds the first.
  table = (out / "eval.md").read_text()
  assert "| policy | all |" in table and "| search2 |" not in table
  assert "- interrupted: players policy scored" in table
  assert not (run_dir / "strength.json").exists()  # Only a finished benchmark measures.


@pytest.mark.slow
def test_opponent_matches_ctrl_c_writes_the_matches_played(run_dir, tmp_path):
  out = tmp_path / "out"
  proc = sigint_on_second_call("azjax.evaluate.tournament:timed_play", "evaluate",
                               "--checkpoint", str(run_dir), "--opponents", "random,mcts:2",
                               "--games", "2", "--simulations", "2", "--out", str(out))
  assert_one_line_exit(proc)
  rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
  assert len(rows) == 1 and "- interrupted after 1 of 2 matches" in (out / "eval.md").read_text()


# -- Ctrl-C in every long command: sent once it shows that it works -------------------------------


@pytest.mark.slow
def test_probe_ctrl_c_writes_the_networks_probed(trained_run, tmp_path):
  run, out = trained_run("breakthrough"), tmp_path / "probe"  # Snapshots 2 and 4 (final).
  proc = sigint_when(lambda output: "probe: network 2 done" in output, "probe", "--run",
                     str(run), "--out", str(out), "--states", "120", "--batch", "16",
                     "--seeds", "2", "--sweep-seeds", "1", "--tcav-runs", "2",
                     "--concepts", "material,capture_available,must_defend")
  assert_one_line_exit(proc)
  assert re.search(r"probe:.*\| *[1-9][0-9]*/[0-9]+ \[", proc.stderr)  # Its bar showed.
  rows = probe_cli._read_csv(out / "scores.csv")
  # The controls and the first snapshot were probed before Ctrl-C: their rows are written.
  assert {"input", "init", "2"} <= {r["checkpoint"] for r in rows}
  assert "Interrupted (Ctrl-C)" in (out / "summary.md").read_text()
  assert (out / "dataset.json").exists() and not (out / "layers.png").exists()


@pytest.mark.slow
def test_export_ctrl_c_writes_nothing(trained_run, tmp_path):
  out = tmp_path / "export"
  proc = sigint_when(bar_shows("export: collecting positions"), "export", "--checkpoint",
                     str(trained_run("tic_tac_toe")), "--out", str(out), "--states", "3000",
                     "--batch", "8")
  assert_one_line_exit(proc)
  assert f"interrupted: nothing written to {out}: the positions were" in proc.stderr
  assert not out.exists()  # Not even the folder: nothing of an export is half there.


def test_staged_files_appear_together_or_not_at_all(tmp_path):
  """`files.staged`, where export writes: an interrupted block leaves the folder as it was (an
  earlier export whole); a finished one replaces its files and drops the leftovers it names."""
  out = tmp_path / "export"
  out.mkdir()
  (out / "meta.json").write_text("old")
  (out / "activations.npz").write_text("old")
  (out / "notes.txt").write_text("mine")
  with pytest.raises(KeyboardInterrupt):
    with files.staged(out, replaces=("meta.json", "activations.npz")) as stage:
      (stage / "meta.json").write_text("new")
      raise KeyboardInterrupt  # Ctrl-C before the rest was written.
  assert sorted(p.name for p in out.iterdir()) == ["activations.npz", "meta.json", "notes.txt"]
  assert (out / "meta.json").read_text() == "old"
  with files.staged(out, replaces=("meta.json", "activations.npz")) as stage:
    (stage / "meta.json").write_text("new")
  assert sorted(p.name for p in out.iterdir()) == ["meta.json", "notes.txt"]
  assert (out / "meta.json").read_text() == "new"
  with pytest.raises(ValueError):
    with files.staged(tmp_path / "fresh"):
      raise ValueError
  assert not (tmp_path / "fresh").exists()


@pytest.mark.slow
def test_efficiency_ctrl_c_writes_the_snapshots_scored(trained_run, tmp_path):
  run, out = trained_run("tic_tac_toe"), tmp_path / "curves"  # Snapshots 2 and 4, twice.
  proc = sigint_when(lambda _: (out / "a.jsonl").exists(), "efficiency", f"a={run}",
                     f"b={run}", "--out", str(out), "--simulations", "0,32")
  assert_one_line_exit(proc)
  assert re.search(r"a \(1/2\):.*snapshot", proc.stderr)  # Its bar showed.
  scored = {name: files.read_jsonl(out / f"{name}.jsonl") if (out / f"{name}.jsonl").exists()
            else [] for name in "ab"}
  assert scored["a"] and len(scored["a"]) + len(scored["b"]) < 4
  assert [r["iteration"] for r in scored["a"]] == [2, 4][:len(scored["a"])]
  assert "### a" in (out / "curves.md").read_text() and (out / "mistakes.png").exists()


@pytest.mark.slow
def test_sweep_ctrl_c_saves_the_runs_after_their_iteration(tmp_path):
  """Ctrl-C in a sweep's first group: its runs finish the iteration in flight and are saved
  (checkpoint, network, final.json); the second group never starts; the summary is written."""
  config = tmp_path / "tiny.json"
  config.write_text(tiny.TINY.to_json())
  sweep_dir = tmp_path / "sweeps" / "tiny"

  def training(_):
    return any(files.read_jsonl(p) for p in sweep_dir.glob(f"*/{layout.METRICS_JSONL}"))

  proc = sigint_when(training, "sweep", "--game", "tic_tac_toe", "--config", str(config),
                     "--iterations", "100000", "--grid", "hidden=16,32", "--seeds", "0,1",
                     "--out", str(tmp_path / "sweeps"), "--name", "tiny", "--no-memory-check")
  assert proc.returncode == console.INTERRUPTED, proc.stderr
  assert "Traceback" not in proc.stderr, proc.stderr
  assert proc.stdout.count("stopping after this iteration") == 1
  assert re.search(r"group 1:.*\| *[1-9][0-9]*/100000 \[", proc.stderr)  # Its bar showed.
  info = json.loads((sweep_dir / "sweep.json").read_text())
  (first, second), (timing,) = info["groups"], info["timings"]
  assert timing["stopped_by"] == "interrupt" and len(first) == 2
  for name in first:
    run = sweep_dir / name
    last = files.read_jsonl(run / layout.METRICS_JSONL)[-1]["iteration"]
    assert checkpoint.manager(run).latest_step() == last == timing["iterations"]
    assert layout.model_path(run).is_dir() and (run / layout.SWEEP_RESULT).exists()
  assert all(not layout.run_files(sweep_dir / name) for name in second)
  assert (sweep_dir / "summary.md").exists()


def test_a_held_interrupt_comes_once_the_block_ends():
  """`console.held_interrupt` (around orbax's restores): a Ctrl-C inside the block lets it
  finish, then raises; Python's handler is back afterwards."""
  finished = []
  with pytest.raises(KeyboardInterrupt):
    with console.held_interrupt():
      os.kill(os.getpid(), signal.SIGINT)
      time.sleep(0.01)  # The handler runs here: it holds the Ctrl-C.
      finished.append(True)
  assert finished and signal.getsignal(signal.SIGINT) is signal.default_int_handler
  with console.held_interrupt():  # No Ctrl-C: nothing raised.
    pass


def test_a_command_gives_back_the_ctrl_c_handler_it_found(capsys):
  """A command run in-process (a notebook, a test) leaves Ctrl-C as it found it, whether it
  wrote what it had after a Ctrl-C (`interrupted`, which ignores a second one) and returned, or
  ended with status 130: an ignored SIGINT would also be inherited by every subprocess the
  caller starts later, which then could not be stopped with Ctrl-C."""
  @console.command
  def writes_after_a_ctrl_c():
    return console.interrupted("writing what is done")

  @console.command
  def stopped():
    raise KeyboardInterrupt

  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
  assert writes_after_a_ctrl_c() is True
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
  with pytest.raises(SystemExit) as exc:
    stopped()
  assert exc.value.code == console.INTERRUPTED
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
  assert "interrupted: stopped" in capsys.readouterr().err


def test_a_ctrl_c_that_c_code_turned_into_a_system_error_still_stops(capsys):
  """A KeyboardInterrupt that C code calling back into Python mangled into a SystemError (its
  cause) ends the command as a Ctrl-C does; any other SystemError stays one."""
  def mangled(cause):
    @console.command
    def run():
      try:
        raise cause
      except BaseException as err:
        raise SystemError("returned a result with an exception set") from err
    return run

  with pytest.raises(SystemExit) as exc:
    mangled(KeyboardInterrupt())()
  assert exc.value.code == console.INTERRUPTED
  assert "interrupted: stopped" in capsys.readouterr().err
  with pytest.raises(SystemError):
    mangled(ValueError())()
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_inside_a_gc_callback_is_sent_again():
  """Python drops an exception raised in a garbage-collection callback (JAX has one): there
  `raise_interrupt` does not raise but sends Ctrl-C again once the callback has returned;
  anywhere else it raises."""
  outcomes, arrived = [], []

  def callback(phase, info):
    del info
    if phase == "start" and not outcomes:
      try:
        console.raise_interrupt(signal.SIGINT, sys._getframe())
        outcomes.append("held")
      except KeyboardInterrupt:
        outcomes.append("raised")

  previous = signal.signal(signal.SIGINT, lambda signum, frame: arrived.append(signum))
  gc.callbacks.append(callback)
  try:
    gc.collect()
    gc.callbacks.remove(callback)
    deadline = time.time() + 5
    while not arrived and time.time() < deadline:
      time.sleep(0.01)
  finally:
    if callback in gc.callbacks:
      gc.callbacks.remove(callback)
    signal.signal(signal.SIGINT, previous)
  assert outcomes == ["held"] and arrived == [signal.SIGINT]
  with pytest.raises(KeyboardInterrupt):
    console.raise_interrupt(signal.SIGINT, sys._getframe())


def test_a_ctrl_c_inside_jax_scalar_types_is_sent_again():
  """NumPy >= 2.4 calls JAX's scalar types from C as it reads a dtype (every `.astype`) and
  turns a KeyboardInterrupt raised there into a SystemError (CI saw it in `export`): a Ctrl-C
  landing in their methods is sent again, like one in a gc callback. The frame is a real one,
  `_ScalarMeta.__eq__`'s, caught through the reflected comparison it makes."""
  import jax.numpy as jnp  # noqa: PLC0415

  frames = []

  class Catch:
    def __eq__(self, other):
      frames.append(sys._getframe().f_back)
      return False

    __hash__ = object.__hash__

  assert not (jnp.float32 == Catch())
  assert frames and frames[0].f_code.co_name == "__eq__"
  assert console._in_dropping_code(frames[0])
  assert not console._in_dropping_code(sys._getframe())


def test_progress_is_quiet_in_a_pipe():
  """Without a terminal (here stderr is pytest's capture) a command's bar draws nothing."""
  bar = console.progress(10, "work")
  assert bar.disable
  bar.close()


def test_each_keeps_the_units_done(capsys):
  def work(unit, bar):
    if unit == 2:
      raise KeyboardInterrupt
    return unit * 10

  previous = signal.getsignal(signal.SIGINT)  # `interrupted` ignores a second Ctrl-C.
  try:
    done, interrupted = console.each([1, 2, 3], work, "units", what="writing them")
  finally:
    signal.signal(signal.SIGINT, previous)
  assert (done, interrupted) == ([10], True)
  assert capsys.readouterr().err.strip() == "interrupted: writing them (1 of 3 done)"


def test_missing_extra_is_one_line_and_exit_3(monkeypatch, capsys):
  from azjax import solver

  monkeypatch.setitem(sys.modules, "bitbully", None)  # "import bitbully" now fails.

  @console.command
  def needs_solver():
    # A new solver, not `solver.for_game`'s shared one, which an earlier test may have made.
    solver.ConnectFourSolver()

  with pytest.raises(SystemExit) as exc:
    needs_solver()
  assert exc.value.code == console.MISSING_EXTRA
  err = capsys.readouterr().err
  assert err.count("\n") == 1 and "'solver' (bitbully): pip install -e \".[solver]\"" in err


def test_gpu_asked_without_the_cuda_extra(monkeypatch, capsys):
  monkeypatch.setenv("JAX_PLATFORMS", "cuda")
  if not console.missing_gpu():
    pytest.skip("a CUDA plugin is installed")
  with pytest.raises(SystemExit) as exc:
    console.command(lambda: None)()
  assert exc.value.code == console.MISSING_EXTRA
  assert 'pip install -e ".[cuda]"' in capsys.readouterr().err


def test_missing_openspiel_names_its_extra(monkeypatch):
  from azjax import games
  from azjax.evaluate import openspiel_bridge

  monkeypatch.setitem(sys.modules, "pyspiel", None)
  with pytest.raises(console.MissingExtra, match=r"'openspiel' \(open-spiel\): pip install"):
    openspiel_bridge.openspiel_game(games.make("breakthrough"))
