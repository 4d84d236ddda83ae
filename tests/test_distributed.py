"""Many hosts, for real: two processes on this machine joined by JAX's distributed runtime
(`jax.distributed`; gloo collectives between the CPUs), each with 2 simulated CPU devices, so
4 in all, running the real commands: `python -m azjax.cli.main train | sweep ... --coordinator
127.0.0.1:PORT --num-processes 2 --process-id I`.

The commands that do not depend on each other run at once (one module fixture starts them and
waits), since each spends much of its time compiling or waiting for its other process:

- a run of 4 iterations over 2 processes, and meanwhile the same run trained in this process on
  its one device for 6 iterations straight (the reference: a run's numbers do not depend on how
  many devices share it, `tests/test_sharding.py`; and this process has compiled its programs);
- once the first is done, a `--resume` of it to 6 iterations, over 2 processes again, and a run
  whose process 1 is killed once it trains.

A sweep of 2 configurations over 2 processes (a configs=2 x data=2 mesh) is a deep test: its two
processes compile the sweep's program, about 35 s of CPU (4% of the full suite's).

Each process gets a working directory, HOME and temporary directory of its own, and a
sitecustomize (`_SITECUSTOMIZE`) records every file it writes through Python (an audit hook):
process 1 must write nothing but its shards of the checkpoints, which orbax writes from every
process into the run directory.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest
import tiny

from azjax import cpu_devices
from azjax.runs import checkpoint, driver, layout
from azjax.runs.loop import read_metrics
from azjax.train import Trainer

ROOT = Path(__file__).resolve().parents[1]
PROCESSES = 2
DEVICES_EACH = 2
# The tests' tiny run, with a checkpoint every 2 iterations and a small evaluation at the end of
# each session (the evaluation runs on each process's own device).
CONFIG = dataclasses.replace(tiny.TINY, checkpoint_every=2, eval_games=2, eval_simulations=2,
                             eval_mcts_simulations=2)
# Seconds: the limit of all the commands together (about 2 minutes on 2 idle cores; the cores
# may be shared with other work), and the heartbeat timeout of the run that loses a process
# (not much shorter: on cores shared by 20 busy processes, 20 s without a heartbeat happened
# to a process that was compiling).
LIMIT = 900
HEARTBEAT = 60
# Written only by orbax, which every process writes its shards into (`checkpoint.save`).
ORBAX_DIRS = (layout.CHECKPOINTS, layout.MODEL, layout.MODELS)

_SITECUSTOMIZE = '''
"""Records the paths this process writes through Python into $AZJAX_TEST_WRITES (JSON), at
exit (tests/test_distributed.py)."""
import atexit, json, os, sys

_LOG = os.environ.get("AZJAX_TEST_WRITES")
if _LOG:
  _FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
  _PATH_AT = {"open": 0, "os.mkdir": 0, "os.remove": 0, "os.rmdir": 0, "os.truncate": 0,
              "shutil.rmtree": 0, "os.rename": 1, "os.symlink": 1, "os.link": 1}
  _writes = []

  def _hook(event, args):
    if event not in _PATH_AT or (event == "open" and not args[2] & _FLAGS):
      return
    path = args[_PATH_AT[event]]
    if isinstance(path, (str, bytes, os.PathLike)):
      path = os.path.abspath(os.fsdecode(path))
      if path != _LOG:
        _writes.append(path)

  def _dump():
    with open(_LOG, "w") as f:
      json.dump(_writes, f)

  sys.addaudithook(_hook)
  atexit.register(_dump)
'''


@dataclasses.dataclass
class Process:
  """One started process of a command, and where it may write."""

  popen: subprocess.Popen
  home: Path  # its working directory, HOME and TMPDIR are under it
  stdout: Path
  stderr: Path
  writes: Path  # what it wrote through Python (the audit hook's JSON), once it has exited

  def output(self) -> str:
    return self.stdout.read_text() + self.stderr.read_text()

  def written(self) -> list[Path]:
    return [Path(p) for p in json.loads(self.writes.read_text())]


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _start(tmp: Path, name: str, argv: list[str], *, processes: int = PROCESSES,
           devices: int = DEVICES_EACH) -> list[Process]:
  """Starts `python -m azjax.cli.main ARGV` as `processes` processes of one distributed run (or
  one plain process), each with `devices` CPU devices, its own working directory, HOME and
  TMPDIR, and the audit hook."""
  hooks = tmp / "hooks"
  hooks.mkdir(exist_ok=True)
  (hooks / "sitecustomize.py").write_text(_SITECUSTOMIZE)
  # Loopback only: the coordinator would listen on every address of the machine.
  port = _free_port()
  started = []
  for i in range(processes):
    home = tmp / f"{name}-{i}"
    for sub in ("cwd", "home", "tmp"):
      (home / sub).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR")}
    env = cpu_devices.environment(devices, env)
    env.update(HOME=str(home / "home"), TMPDIR=str(home / "tmp"),
               PYTHONPATH=os.pathsep.join([str(hooks), str(ROOT), env.get("PYTHONPATH", "")]),
               AZJAX_TEST_WRITES=str(tmp / f"{name}-{i}.writes.json"), PYTHONUNBUFFERED="1",
               JAX_COORDINATOR_BIND_ADDRESS=f"127.0.0.1:{port}",
               # As in conftest: compiles faster (10% of these commands' CPU time); every
               # command here uses it, so they still train the same numbers.
               JAX_THREEFRY_PARTITIONABLE="false")
    cluster = ["--coordinator", f"127.0.0.1:{port}", "--num-processes", str(processes),
               "--process-id", str(i)] if processes > 1 else []
    stdout, stderr = tmp / f"{name}-{i}.out", tmp / f"{name}-{i}.err"
    with open(stdout, "w") as out, open(stderr, "w") as err:
      popen = subprocess.Popen([sys.executable, "-m", "azjax.cli.main", *argv, *cluster],
                               cwd=home / "cwd", env=env, stdout=out, stderr=err)
    started.append(Process(popen, home, stdout, stderr, tmp / f"{name}-{i}.writes.json"))
  return started


def _wait(processes: list[Process], deadline: float) -> None:
  """Waits for every process to end (by `deadline`, a `time.monotonic()`); each must succeed."""
  for p in processes:
    p.popen.wait(timeout=max(deadline - time.monotonic(), 1))
  for i, p in enumerate(processes):
    assert p.popen.returncode == 0, f"process {i} of {p.home.name}:\n{p.output()[-4000:]}"


def _rows(run_dir: Path) -> int:
  return len(read_metrics(run_dir)) if (run_dir / layout.METRICS_JSONL).exists() else 0


@dataclasses.dataclass
class Runs:
  tmp: Path
  trained: list[Process]  # 4 iterations over 2 processes
  resumed: list[Process]  # ... then 2 more
  killed: list[Process]
  seconds_to_end: float  # from killing process 1 to the end of process 0

  @property
  def run_dir(self) -> Path:
    return self.tmp / "run"

  @property
  def alone(self) -> Path:  # 6 iterations in this process, on its one device
    return self.tmp / "alone"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
  tmp = tmp_path_factory.mktemp("distributed")
  settings = tmp / "tiny.json"
  settings.write_text(CONFIG.to_json())
  train = ["train", "tic_tac_toe", "--config", str(settings), "--no-progress"]
  everything: list[Process] = []
  deadline = time.monotonic() + LIMIT
  try:
    # -- The first run over 2 processes, and meanwhile the reference in this process.
    trained = _start(tmp, "trained", train + ["--run-dir", str(tmp / "run"), "--iterations", "4"])
    everything += trained
    driver.train_and_evaluate(dataclasses.replace(CONFIG, iterations=6), tmp / "alone",
                              progress=False)
    _wait(trained, deadline)
    # -- Then the first run resumed, over 2 processes again, and a run that loses a process
    # (process 0 of each loads the iteration that the first run's process 0 compiled).
    resumed = _start(tmp, "resumed", train[:2] + ["--run-dir", str(tmp / "run"), "--resume",
                                                  "--iterations", "6", "--no-progress"])
    # No checkpoints: process 1 dies while process 0 trains (in the iteration's collectives),
    # not while it saves.
    killed = _start(tmp, "killed", train + ["--run-dir", str(tmp / "killed"), "--iterations",
                                            "100000", "--set", "eval_games=0", "--set",
                                            "checkpoint_every=0", "--heartbeat-timeout",
                                            str(HEARTBEAT)])
    everything += resumed + killed
    # Its process 1 dies (SIGKILL, as a host that fails) once it trains.
    while _rows(tmp / "killed") < 2:
      assert time.monotonic() < deadline and all(p.popen.poll() is None for p in killed), \
          "\n".join(p.output()[-2000:] for p in killed)
      time.sleep(0.2)
    killed[1].popen.kill()
    start = time.monotonic()
    try:
      killed[0].popen.wait(timeout=2 * HEARTBEAT)
      seconds_to_end = time.monotonic() - start
    except subprocess.TimeoutExpired:  # Killed in `finally`; the test says so.
      seconds_to_end = float("inf")
    _wait(resumed, deadline)
    return Runs(tmp, trained, resumed, killed, seconds_to_end)
  finally:
    for p in everything:
      if p.popen.poll() is None:
        p.popen.send_signal(signal.SIGKILL)
        p.popen.wait()


def _variables(run_dir: Path) -> dict:
  """The final network of `run_dir`, on this process's device."""
  trainer = Trainer.create(checkpoint.read_config(run_dir))
  abstract = Trainer.variables(jax.eval_shape(trainer.init_state, 0))
  return checkpoint.load_model(run_dir, abstract)


def _orbax_writes(path: Path, run_dir: Path) -> bool:
  """Whether `path` is in one of orbax's directories of `run_dir` (or the temporary one it
  renames when done: `model.orbax-checkpoint-tmp/`)."""
  if run_dir not in path.parents:
    return False
  return path.relative_to(run_dir).parts[0].split(".")[0] in ORBAX_DIRS


def _check_quiet(process: Process, *run_dirs: Path) -> None:
  """`process` (not the first of its run) printed nothing on stdout, left nothing in its
  working directory, HOME and TMPDIR, and wrote through Python only its part of the checkpoints
  in `run_dirs` (orbax's per-process metadata; the arrays' shards it writes from C++)."""
  assert process.stdout.read_text() == "", process.stdout.read_text()[:2000]
  left = [p for p in process.home.rglob("*") if p.is_file()]
  assert not left, left
  allowed = [Path(os.devnull),  # Its standard output (`start_distributed`).
             # The tests' compilation cache: every process makes sure that the directory is
             # there; JAX writes its entries from process 0 only.
             Path(os.environ["AZJAX_COMPILE_CACHE"]).absolute()]
  outside = [p for p in process.written()
             if p not in allowed and process.home / "tmp" not in p.parents
             and not any(_orbax_writes(p, run_dir) for run_dir in run_dirs)]
  assert not outside, outside


@pytest.mark.slow
def test_two_processes_train_what_one_device_trains(runs):
  """4 iterations, a checkpoint, and 2 more after a `--resume`, all over 2 processes, end with
  the network that one device trains in 6 iterations straight."""
  many, alone = read_metrics(runs.run_dir), read_metrics(runs.alone)
  # Every iteration logged once, by process 0 (a resumed run prunes and appends).
  assert [r["iteration"] for r in many] == [r["iteration"] for r in alone] == list(range(1, 7))
  for a, b in zip(many, alone):
    assert (a["positions"], a["games"], a["sgd_steps"]) == (b["positions"], b["games"],
                                                            b["sgd_steps"]), (a, b)
    np.testing.assert_allclose(a.get("loss", np.nan), b.get("loss", np.nan), rtol=1e-4)
  assert {k: v for k, v in many[-1].items() if k.startswith("eval/")} == {
      k: v for k, v in alone[-1].items() if k.startswith("eval/")}
  assert "eval/random/score" in many[3], many[3]  # The first session's final evaluation.
  # Equal to float rounding, not bit for bit: the gradients' all-reduce adds the devices' parts
  # in another order across processes (gloo) than within one; a few SGD steps keep the
  # difference near 1e-8.
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6),
               _variables(runs.run_dir), _variables(runs.alone))
  assert "trained 6 iterations" in runs.resumed[0].stdout.read_text()


@pytest.mark.slow
def test_each_device_plays_its_own_games(runs):
  """The 4 devices' games (4 each) are not copies of each other: the self-play keys are split
  over the whole batch, not handed whole to each device or each process."""
  trainer = Trainer.create(checkpoint.read_config(runs.run_dir))
  state, _ = checkpoint.restore(checkpoint.manager(runs.run_dir),
                                jax.eval_shape(trainer.init_state, 0))
  devices = PROCESSES * DEVICES_EACH
  # The buffer's `[T, B, ...]` columns are split over the devices in order, as the games are.
  for rows in (state.selfplay.buffer.observation, state.selfplay.games.board[None]):
    blocks = np.split(np.asarray(rows), devices, axis=1)
    assert len({block.tobytes() for block in blocks}) == devices


@pytest.mark.slow
def test_only_process_0_writes_the_run_directory(runs):
  for command in (runs.trained, runs.resumed):
    _check_quiet(command[1], runs.run_dir)
    # The hook saw process 0 write the files (else its silence above would prove nothing).
    written = command[0].written()
    for name in (layout.CONFIG, layout.METRICS_JSONL, layout.METRICS_CSV):
      assert runs.run_dir / name in written, (name, written[:20])
  for name in (layout.CONFIG, layout.LOSSES_PLOT, layout.WINRATE_PLOT):
    assert (runs.run_dir / name).is_file(), name
  # The resume's budget (the one setting that may change), written by process 0.
  assert checkpoint.read_config(runs.run_dir) == dataclasses.replace(CONFIG, iterations=6)
  assert sorted(int(p.name) for p in (runs.run_dir / layout.MODELS).iterdir()) == [2, 4, 6]


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, list[Process]]:
  """A sweep of 2 configurations over the 2 processes (a configs=2 x data=2 mesh), and its
  directory."""
  tmp = tmp_path_factory.mktemp("distributed_sweep")
  settings = tmp / "tiny.json"
  settings.write_text(CONFIG.to_json())
  processes = _start(tmp, "swept", ["sweep", "--game", "tic_tac_toe", "--config", str(settings),
                                    "--grid", "learning_rate=1e-3,3e-3", "--seeds", "0",
                                    "--iterations", "2", "--out", str(tmp / "sweeps"),
                                    "--name", "tiny", "--no-progress", "--set", "eval_games=0"])
  try:
    _wait(processes, time.monotonic() + LIMIT)
  finally:
    for p in processes:
      if p.popen.poll() is None:
        p.popen.send_signal(signal.SIGKILL)
        p.popen.wait()
  return tmp / "sweeps" / "tiny", processes


@pytest.mark.deep
def test_a_sweep_over_two_processes(swept):
  sweep_dir, processes = swept
  names = ["learning_rate=0.001,seed=0", "learning_rate=0.003,seed=0"]
  for name in ("summary.csv", "summary.md", "sweep.json", "curves.png"):  # No final.png:
    # it plots the final evaluations, which this sweep leaves out.
    assert (sweep_dir / name).is_file(), name
  for name in names:
    assert [r["iteration"] for r in read_metrics(sweep_dir / name)] == [1, 2], name
    assert json.loads((sweep_dir / name / "final.json").read_text())["iterations"] == 2
    assert (sweep_dir / name / layout.MODEL).is_dir()
  _check_quiet(processes[1], *(sweep_dir / name for name in names))
  assert "learning_rate=0.003" in processes[0].stdout.read_text()  # summary.md, printed


@pytest.mark.slow
def test_a_killed_process_ends_the_other(runs):
  """A process that dies (SIGKILL) ends the other one with an error in one line, within the
  heartbeat timeout: at once when it was in a collective (its connections closed), else when
  the coordination service misses its heartbeats."""
  first, second = runs.killed
  assert second.popen.returncode == -signal.SIGKILL
  assert first.popen.returncode not in (0, None), first.output()[-2000:]
  assert runs.seconds_to_end < HEARTBEAT + 30, runs.seconds_to_end
  errors = first.stderr.read_text()
  assert ("most likely another process stopped" in errors
          or "JAX distributed service detected fatal errors" in errors), errors[-2000:]
  print(f"process 0 ended {runs.seconds_to_end:.1f} s after process 1 was killed")


def test_the_distributed_flags_are_checked_before_jax_starts(capsys):
  from azjax.cli import train  # noqa: PLC0415

  cases = [(["--process-id", "2", "--num-processes", "2", "--run-dir", "x"],
            "--process-id must be below --num-processes (2), got 2"),
           (["--num-processes", "0", "--run-dir", "x"], "--num-processes must be >= 1"),
           (["--coordinator", "127.0.0.1:1"], "needs --run-dir DIR"),
           (["--heartbeat-timeout", "5"], "applies to a run of several processes")]
  for argv, message in cases:
    with pytest.raises(SystemExit) as info:
      train.main("tic_tac_toe", argv)
    assert info.value.code == 2 and message in capsys.readouterr().err, argv
  # Outside a cluster (or, in this process, after JAX has started): JAX's reason, in one line.
  with pytest.raises(SystemExit) as info:
    train.main("tic_tac_toe", ["--distributed", "--run-dir", "x"])
  assert info.value.code == 1 and "error: --distributed: " in capsys.readouterr().err


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_train_and_sweep_document_the_distributed_flags(command, capsys):
  from azjax.cli import sweep, train  # noqa: PLC0415

  with pytest.raises(SystemExit):
    if command == "train":
      train.main("tic_tac_toe", ["--help"])
    else:
      sweep.main(["--help"])
  text = capsys.readouterr().out
  for flag in ("--distributed", "--coordinator HOST:PORT", "--num-processes N",
               "--process-id I", "--heartbeat-timeout SECONDS"):
    assert flag in text, flag
