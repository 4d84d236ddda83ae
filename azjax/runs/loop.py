"""The outer training loop of every learner: one AlphaZero run (`azjax.runs.driver`), each group
of a sweep (`azjax.sweep`: `K` runs stacked on a leading axis and trained by one vmapped
program), one TD-Leaf run (`azjax.tdleaf.runs`). A learner hands it its jitted step and a
`Learning` (its settings, where the network and the counters are in its state, its evaluations).

Everything heavy happens inside the jitted step (`Trainer.iteration`, `azjax.runs.gating.gated`,
TD-Leaf's `Learner.iteration`); between steps this loop only moves a few scalars per run to the
host and decides what else to do: stop (iterations, minutes of training, `max_iterations`,
Ctrl-C), drop a run whose loss is no longer finite, write each run's metrics row, evaluate
(`eval_every`, `solver_every`), checkpoint (`checkpoint_every`), and show a progress bar. It
also owns the files every run writes: metrics.jsonl / metrics.csv and the plots.

The step is compiled ahead of time before the first iteration ("compiling the training
iteration ..."), and the time budget (`minutes`) and the rows' `seconds` count the steps only,
not compiling, evaluating or saving; `enable_compile_cache` keeps the
compiled programs on disk, so that a second start (a `--resume`, the same preset again) loads
them instead of compiling.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math
import os
import signal
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import numpy as np

from azjax import console, files, plots, sharding
from azjax.config import Config
from azjax.games.base import unstack_state
from azjax.runs import checkpoint, layout


class NaNLossError(RuntimeError):
  """Raised when a loss becomes NaN or infinite; the last good checkpoint is kept."""


# -- The compilation cache -------------------------------------------------------------------------


def default_compile_cache() -> Path:
  """`$AZJAX_COMPILE_CACHE`, else `$XDG_CACHE_HOME/azjax/jax` (`~/.cache/azjax/jax`): one
  cache for every run and checkout of this user, since a compiled program depends on the
  program and the machine, not on the run directory."""
  if os.environ.get("AZJAX_COMPILE_CACHE"):
    return Path(os.environ["AZJAX_COMPILE_CACHE"]).expanduser()
  root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
  return Path(root) / "azjax" / "jax"


def enable_compile_cache(path: str | Path | None = None) -> Path:
  """Turns on JAX's persistent compilation cache in `path` (default `default_compile_cache()`);
  returns the directory.

  Programs that take longer than 0.1 s to compile are kept (JAX's default of 1 s would leave
  out the evaluation matches of small presets). Called after something has compiled, the
  cache is set up again (JAX decides once per process whether to use it).
  """
  from jax._src import compilation_cache  # noqa: PLC0415 (reset_cache has no public name)

  path = Path(path) if path is not None else default_compile_cache()
  path.mkdir(parents=True, exist_ok=True)
  jax.config.update("jax_compilation_cache_dir", str(path))
  jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
  # 0 would let JAX choose its own minimum size on first use; 1 byte keeps every program.
  jax.config.update("jax_persistent_cache_min_entry_size_bytes", 1)
  compilation_cache.reset_cache()
  return path


# -- Metrics files ---------------------------------------------------------------------------------


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> list[str]:
  """Writes `rows` to the CSV at `path` (atomically: a reader never sees half of it); returns
  its columns, the union of the rows' keys in order of appearance."""
  fields = list(dict.fromkeys(k for r in rows for k in r))
  text = io.StringIO(newline="")
  writer = csv.writer(text)
  writer.writerow(fields)
  writer.writerows([[r.get(k, "") for k in fields] for r in rows])
  files.write_atomic(path, text.getvalue())
  return fields


class MetricsWriter:
  """Appends one row per iteration to metrics.csv and metrics.jsonl (and TensorBoard if asked).

  Rows are appended (rewriting the files every iteration would cost a run's whole history each
  time); a crash can only tear the last line, which `read_metrics` skips and `prune_metrics`
  removes on resume.
  """

  def __init__(self, run_dir: Path, tensorboard: bool = False):
    self.csv_path = run_dir / layout.METRICS_CSV
    self.jsonl_path = run_dir / layout.METRICS_JSONL
    self._fields: list[str] | None = None
    if self.csv_path.exists():
      with open(self.csv_path) as f:
        self._fields = next(csv.reader(f), None)
    self._tb = None
    if tensorboard:
      try:
        from tensorboardX import SummaryWriter
        self._tb = SummaryWriter(str(run_dir / layout.TENSORBOARD))
      except ImportError:
        print("tensorboardX is not installed (pip install azjax[tensorboard]); skipping it")

  def write(self, row: dict[str, Any]) -> None:
    with open(self.jsonl_path, "a") as f:
      f.write(json.dumps(row) + "\n")
    if self._fields is None or any(k not in self._fields for k in row):
      # New columns (e.g. the first evaluation): rewrite the CSV from the JSONL log.
      self._fields = _write_csv(self.csv_path, read_metrics(self.jsonl_path.parent))
    else:
      with open(self.csv_path, "a", newline="") as f:
        csv.writer(f).writerow([row.get(k, "") for k in self._fields])
    if self._tb is not None:
      for k, v in row.items():
        if isinstance(v, (int, float)) and math.isfinite(v):
          self._tb.add_scalar(k, v, row["iteration"])


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
  """The rows of `run_dir/metrics.jsonl` (or a record's `metrics.jsonl.gz`:
  `layout.metrics_file`), oldest first (none without the file); a torn last line is skipped
  (`azjax.files.read_jsonl`)."""
  path = layout.metrics_file(run_dir)
  return files.read_jsonl(path) if path.exists() else []


def prune_metrics(run_dir: Path, iteration: int) -> int:
  """Drops the rows after `iteration` from metrics.jsonl and metrics.csv (atomically), so that a
  run resumed from that iteration's checkpoint logs every later iteration once. A run restarted
  from scratch (`iteration` 0) keeps nothing. Returns the number of rows dropped."""
  run_dir = Path(run_dir)
  jsonl = run_dir / layout.METRICS_JSONL
  if not jsonl.exists():
    return 0
  rows = read_metrics(run_dir)
  kept = [r for r in rows if iteration and r.get("iteration", 0) <= iteration]
  text = jsonl.read_text()
  # A torn last line (skipped by read_metrics, or cut before its newline) is rewritten too.
  torn = len([line for line in text.splitlines() if line.strip()]) != len(rows) or (
      text and not text.endswith("\n"))
  if len(kept) == len(rows) and not torn:
    return 0
  files.write_atomic(jsonl, "".join(json.dumps(r) + "\n" for r in kept))
  if kept:
    _write_csv(run_dir / layout.METRICS_CSV, kept)
  else:
    (run_dir / layout.METRICS_CSV).unlink(missing_ok=True)
  return len(rows) - len(kept)


def seconds_before(run_dir: Path, iteration: int) -> float:
  """The training time of a resumed run's earlier sessions, up to `iteration` (its "seconds"
  column counts training time over all sessions)."""
  earlier = [r for r in read_metrics(run_dir) if r.get("iteration", 0) <= iteration]
  return float(earlier[-1].get("seconds", 0.0)) if iteration and earlier else 0.0


def eval_columns(results: dict[str, Any]) -> dict[str, float]:
  """Metrics columns of an evaluation: each opponent's score and 95% interval half-width."""
  row = {f"eval/{name}/score": r.score for name, r in results.items()}
  row.update({f"eval/{name}/ci": (r.interval[1] - r.interval[0]) / 2
              for name, r in results.items()})
  return row


# -- Where the state lives ------------------------------------------------------------------------


def committed(tree: Any) -> Any:
  """`tree` with every array that is not yet committed to a device committed to the default
  one (where it lives anyway). A fresh state is uncommitted and a restored one committed, and
  JAX compiles the two to different programs: without this the first `--resume` of a run misses
  the compilation cache. A placed (sharded) state is committed already and stays as it is."""
  device = jax.local_devices()[0]  # This process's (`jax.devices()[0]` is process 0's).
  return jax.tree.map(lambda x: jax.device_put(x, device)
                      if isinstance(x, jax.Array) and not x.committed else x, tree)


def to_host(tree: Any) -> Any:
  """`tree` as numpy arrays, also when its arrays span the devices of several hosts."""
  if jax.process_count() == 1:
    return jax.device_get(tree)
  from jax.experimental import multihost_utils
  return multihost_utils.process_allgather(tree, tiled=True)


# -- Ctrl-C and the progress bar -------------------------------------------------------------------


@contextlib.contextmanager
def stop_on_interrupt(log=print):
  """Turns the first Ctrl-C into a request: yields `{"flag": bool}`, set once Ctrl-C arrives,
  for a training loop to finish its iteration, checkpoint and stop; a second Ctrl-C raises
  KeyboardInterrupt. The previous handler is restored on exit."""
  interrupted = {"flag": False}

  def on_sigint(signum, frame):
    if interrupted["flag"]:
      console.raise_interrupt(signum, frame)
    interrupted["flag"] = True
    log("\nstopping after this iteration (Ctrl-C again to abort without saving)")

  previous = signal.signal(signal.SIGINT, on_sigint)
  try:
    yield interrupted
  finally:
    signal.signal(signal.SIGINT, previous)


def _postfix(rows: list[dict], runs: int, minutes_left: float | None) -> dict[str, str]:
  """The progress bar's numbers: totals over the live runs' `rows`, losses and scores their
  mean (one run: its own)."""
  postfix = {"runs": f"{len(rows)}/{runs}"} if runs > 1 else {}
  postfix["games"] = str(sum(r.get("games", 0) for r in rows))
  postfix["pos/s"] = f"{sum(r.get('positions_per_second', 0.0) for r in rows):.0f}"
  if minutes_left is not None:
    postfix["min left"] = f"{minutes_left:.1f}"
  # AlphaZero's two losses, else a learner's one.
  losses = (("policy_loss", "pi"), ("value_loss", "v")) if "policy_loss" in rows[0] else (
      ("loss", "loss"),)
  for key, label in losses:
    # No loss yet while the buffer fills to min_buffer (the row holds NaN): "-", not "nan".
    mean = np.mean([r.get(key, np.nan) for r in rows])
    postfix[label] = f"{mean:.3f}" if np.isfinite(mean) else "-"
  scores = sorted({k for r in rows for k in r if k.startswith("eval/") and k.endswith("/score")})
  postfix.update({k.split("/")[1]: f"{np.mean([r[k] for r in rows if k in r]):.2f}"
                  for k in scores})
  return postfix


# -- The loop --------------------------------------------------------------------------------------


@dataclasses.dataclass
class RunOutput:
  """One run the loop trains: where its files go and what it has reached."""

  run_dir: Path
  manager: Any  # its orbax CheckpointManager
  writer: MetricsWriter | None  # None: another host writes its metrics
  last_saved: int = 0  # the iteration of its newest checkpoint (if `have_checkpoint`)
  have_checkpoint: bool = False
  seconds_before: float = 0.0  # training time of the earlier sessions of a resumed run
  diverged_at: int | None = None  # the iteration whose loss was not finite (then dropped)
  matches: dict[str, Any] = dataclasses.field(default_factory=dict)  # opponent -> MatchResult
  solver: dict[str, float] = dataclasses.field(default_factory=dict)  # latest solver columns
  row: dict[str, Any] = dataclasses.field(default_factory=dict)  # its latest metrics row
  model_dir: Path | None = None  # its final network, once the loop has saved it
  plots: list[Path] = dataclasses.field(default_factory=list)

  def write(self, row: dict[str, Any]) -> None:
    self.row = row
    if self.writer is not None:
      self.writer.write(row)


@dataclasses.dataclass(frozen=True)
class Phases:
  """Jitted steps that take turns by iteration: `steps[k]` runs the iterations from
  `starts[k]` on (`starts[0] == 0`), and `columns[k]` join those iterations' metrics rows. The
  steps share one state structure: the same run with other static settings (`Config.phases`:
  more self-play simulations late in the run)."""

  starts: tuple[int, ...]
  steps: tuple[Callable, ...]
  columns: tuple[dict, ...]

  @classmethod
  def single(cls, step: Callable) -> "Phases":
    return cls((0,), (step,), ({},))

  @classmethod
  def of(cls, parts: Sequence[tuple[int, Config]], steps: Sequence[Callable]) -> "Phases":
    """The steps of a run's parts (`Config.phases`), each part's rows logging its simulations
    when there are several."""
    columns = tuple({"simulations": c.simulations} if len(parts) > 1 else {} for _, c in parts)
    return cls(tuple(start for start, _ in parts), tuple(steps), columns)

  def index(self, iteration: int) -> int:
    """The phase that runs the iteration after `iteration` iterations."""
    return max(k for k, start in enumerate(self.starts) if start <= iteration)

  def remaining(self, iteration: int) -> tuple[Callable, ...]:
    """The steps still to run from `iteration` on (those to compile)."""
    return self.steps[self.index(iteration):]


@dataclasses.dataclass
class LoopResult:
  state: Any  # the final state (stacked `[K]` for a group)
  iterations: int  # the state's iteration count
  stopped_by: str  # "iterations", "minutes", "interrupt", or "diverged" (every run dropped)
  compile_seconds: float  # compiling the step (ahead of time; 0 if it came compiled)
  seconds_per_iteration: float  # the mean after the first (evaluations, checkpoints excluded)
  train_seconds: float  # this session's training time: its steps (not compiling, evaluating)


@dataclasses.dataclass(frozen=True)
class Learning:
  """What the loop needs of a learner besides its step: the settings that pace the run, where
  the network and the counters are in its state, and how it is evaluated.

  AlphaZero's (`azjax.runs.driver`, `azjax.sweep`) and TD-Leaf's (`azjax.tdleaf.runs`) are built
  by their runs; a new learner writes one.
  """

  # Anything with the run's `iterations`, `minutes` (0: none), `eval_every`, `eval_games`,
  # `solver_every` and `checkpoint_every`: the learner's config.
  settings: Any
  # state -> the network's variables: what `model/` and `models/<it>` keep and evaluations play.
  variables: Callable[[Any], Any]
  # state -> `{"iteration": [], "positions": [], "games": [], ...}` counts (`[K]` for a group);
  # "iteration" counts the iterations done, the others go to every metrics row as they are.
  counters: Callable[[Any], dict[str, Any]]
  # (variables, key) -> `{opponent: arena.MatchResult}`, every `eval_every` and at the end.
  evaluate: Callable[[Any, jax.Array], dict[str, Any]] | None = None
  # (variables, key) -> `{column: value}` on the solver benchmark, every `solver_every`.
  solver: Callable[[Any, jax.Array], dict[str, float]] | None = None
  # state -> the network as SGD left it, where `variables` is an average of it (an AlphaZero
  # run's `ema_decay`): scored beside it on the solver benchmark, as columns "solver_trained/...".
  trained_variables: Callable[[Any], Any] | None = None
  # state -> what a checkpoint keeps (default: all of it).
  checkpointed: Callable[[Any], Any] | None = None
  # Whether a schedule spans `iterations` (a cosine learning rate): then the loop advises an
  # iteration count that fits the time budget (`budget_advice`).
  schedules: bool = False


def _finite(metrics: dict[str, np.ndarray], i: int) -> bool:
  return all(math.isfinite(float(metrics[k][i])) for k in ("loss", "grad_norm") if k in metrics)


def _nan_message(run: RunOutput, it: int, loss: float, settings: Any) -> str:
  kept = (f"The last good checkpoint (iteration {run.last_saved}) is kept in "
          f"{run.manager.directory}" if run.have_checkpoint else
          f"No checkpoint was saved yet (checkpoint_every={settings.checkpoint_every})")
  return (f"iteration {it}: the loss is {loss} (not finite); stopping. {kept}; lower "
          "learning_rate or check the inputs.")


def budget_advice(settings: Any, iteration: int, iterations_done: int, seconds: float,
                  seconds_left: float, advised: bool = False, *, schedules: bool) -> str | None:
  """Advice when a run's iteration count does not fit its time budget on this machine, or None.

  A schedule (`schedules`: a cosine learning rate, `late_simulations`) spans
  `settings.iterations`, which a preset sizes for one machine: on a slower one the budget ends
  before the learning rate has decayed, on a faster one the run stops early with minutes unused.
  From the pace so far (`iterations_done` in `seconds`, now at `iteration` with `seconds_left`
  of the budget) this projects where the budget ends and suggests the iteration count that
  fills 97% of it. When the run fits after all and earlier advice (`advised`) said otherwise,
  it says so instead of None.
  """
  if not (settings.minutes and schedules and iterations_done > 0 and seconds > 0):
    return None
  pace = seconds / iterations_done
  needed = (settings.iterations - iteration) * pace
  if 0.9 * seconds_left <= needed <= 1.02 * seconds_left:
    return (f"at {pace:.3f} s an iteration on this machine the {settings.iterations} iterations "
            f"fit the {settings.minutes:g}-minute budget after all" if advised else None)
  fit = iteration + int(0.97 * seconds_left / pace)
  if needed > seconds_left:
    outcome = (f"the {settings.minutes:g}-minute budget ends near iteration "
               f"{iteration + int(seconds_left / pace)}, before the schedules over "
               f"{settings.iterations} iterations have run their course")
  else:
    outcome = (f"the run ends about {(seconds_left - needed) / 60:.0f} minutes before its "
               f"{settings.minutes:g}-minute budget")
  return (f"at {pace:.3f} s an iteration on this machine {outcome}; --set iterations={fit} "
          "would fit the budget")


def compile_step(step: Callable, *args, log=print) -> float:
  """Compiles the jitted `step` for `args` ahead of time, saying so; returns the seconds it
  took (loaded from the compilation cache when a run of the same program compiled it before).
  A step that is not a jitted function (`lower`-less, e.g. a test's wrapper) compiles on its
  first call instead: 0."""
  if not hasattr(step, "lower"):
    return 0.0
  log("compiling the training iteration ...")
  start = time.time()
  # The jitted function keeps what this compiles: its first call does not compile again.
  step.lower(*args).compile()
  seconds = time.time() - start
  # With several processes, the first call's collectives wait for all of them: not long enough
  # for one that compiles while another loaded the program from the cache.
  sharding.barrier("compiled the training iteration")
  log(f"compiled in {seconds:.1f} s")
  return seconds


def train(step: Callable, state: Any, runs: Sequence[RunOutput], learning: Learning, *,
          hyper: Any = None, max_iterations: int | None = None,
          interrupted: dict | None = None, on_nan: str = "raise", progress: bool = True,
          desc: str | None = None, log=print) -> LoopResult:
  """Trains `state` with `step` until a stop condition, writing each run's rows, evaluations
  and checkpoints; saves every live run at the end.

  Args:
    step: the jitted step, `step(state) -> (state, metrics)`, or `step(state, hyper)` for a
      group; it may donate the state. Or `Phases` of such steps, each for its iterations.
      `metrics` are scalars (`[K]` for a group); "trained" (False while nothing was learned
      yet) and "loss" / "grad_norm" (the NaN stop) are read where present.
    state: one run's state, or with `hyper` given, `K = len(runs)` runs' states stacked on a
      leading axis.
    runs: the runs' outputs, in the order of the stacked axis.
    learning: the learner's settings, counters and evaluations (`Learning`; its settings'
      budget and schedules apply to every run of a group).
    hyper: a group's stacked `Hyper`, passed to `step`.
    max_iterations: stop after this many iterations in this call (tests; resumable).
    interrupted: `{"flag": bool}` from `stop_on_interrupt`: stop once it is set. The run is
      checkpointed before the last iteration's evaluation, which a second Ctrl-C skips.
    on_nan: "raise" (`NaNLossError`) when a loss is not finite, or "drop": that run stops being
      logged, evaluated and checkpointed (its last good checkpoint is kept) and the others go on.
    progress: show a progress bar (`desc` its label).
  """
  settings = learning.settings
  stacked = hyper is not None
  args = (hyper,) if stacked else ()
  interrupted = interrupted if interrupted is not None else {"flag": False}
  fetch = to_host if stacked else jax.device_get
  checkpointed = learning.checkpointed or (lambda s: s)

  def run_state(i: int):
    return unstack_state(state, i) if stacked else state

  def variables(i: int, of: Callable[[Any], Any] | None = None):
    """Run `i`'s network (`of` its state: default `learning.variables`)."""
    of = of or learning.variables
    # On the host first for a group: a slice of a state spread over devices lives on some only.
    return to_host(of(run_state(i))) if stacked else of(state)

  def live() -> list[int]:
    return [i for i, r in enumerate(runs) if r.diverged_at is None]

  def evaluate(i: int, it: int) -> dict[str, float]:
    runs[i].matches = learning.evaluate(variables(i), jax.random.PRNGKey(it))
    return eval_columns(runs[i].matches)

  def solver_columns(i: int) -> dict[str, float]:
    # The same key every time: the curve's changes come from the network alone.
    runs[i].solver = learning.solver(variables(i), jax.random.PRNGKey(0))
    if learning.trained_variables is None:
      return runs[i].solver
    trained = learning.solver(variables(i, learning.trained_variables), jax.random.PRNGKey(0))
    return {**runs[i].solver, **{k.replace("solver/", "solver_trained/", 1): v
                                 for k, v in trained.items()}}

  def save(i: int, it: int) -> None:
    """A resumable checkpoint plus a small snapshot of the network in `models/<it>`."""
    network = variables(i)
    checkpoint.save(runs[i].manager, it, checkpointed(run_state(i)), {"iteration": it},
                    variables=network)
    checkpoint.save_model(runs[i].run_dir, network, step=it)
    runs[i].last_saved, runs[i].have_checkpoint = it, True

  def counts() -> dict[str, np.ndarray]:
    return {k: np.atleast_1d(np.asarray(v)) for k, v in fetch(learning.counters(state)).items()}

  evaluates = learning.evaluate is not None
  state = committed(state)  # The same program for a fresh and a restored state.
  start = int(counts()["iteration"][0])
  phases = step if isinstance(step, Phases) else Phases.single(step)
  compile_seconds = sum(compile_step(s, state, *args, log=log) for s in phases.remaining(start))
  # -- The budget counts training only: the steps, not compiling, evaluating or saving.
  budget = settings.minutes * 60 if settings.minutes else math.inf
  if start == 0 and ((evaluates and settings.eval_every and settings.eval_games)
                     or learning.solver is not None):
    # The untrained network's scores: the starting point of the learning curves.
    zero = {k: 0 for k in counts() if k != "iteration"}
    for i in live():
      runs[i].write({"iteration": 0, **zero, "seconds": 0.0,
                     **(evaluate(i, 0) if evaluates and settings.eval_every else {}),
                     **(solver_columns(i) if learning.solver is not None else {})})
  # With a time budget the iteration count is only an upper bound: no misleading ETA then.
  # The bar stays when training ends: its last numbers are the run's.
  bar = console.progress(None if settings.minutes else settings.iterations, desc, unit="it",
                         initial=start, leave=True) if progress else None
  it, stopped_by = start, "iterations"
  t_last, positions_last = time.time(), counts().get("positions")
  step_seconds: list[float] = []  # training time, step by step
  # The pace is judged after the first minutes and again after ten, once the machine has
  # settled: session 38's first two minutes ran 12% slower than the run's average.
  advice_checks, advised = [min(120.0, budget / 20), min(600.0, budget / 6)], False
  try:
    while True:
      if it >= settings.iterations or (max_iterations is not None
                                       and it - start >= max_iterations):
        break
      if sum(step_seconds) >= budget:
        stopped_by = "minutes"
        break
      if interrupted["flag"]:
        stopped_by = "interrupt"
        break
      t0 = time.time()
      phase = phases.index(it)
      state, metrics = phases.steps[phase](state, *args)
      metrics = {k: np.atleast_1d(np.asarray(v)) for k, v in fetch(metrics).items()}
      counters = counts()
      step_seconds.append(time.time() - t0)
      it = int(counters["iteration"][0])
      trained = metrics.pop("trained", np.ones(len(runs), bool))
      for i in live():
        if bool(trained[i]) and not _finite(metrics, i):
          if on_nan == "raise":
            raise NaNLossError(_nan_message(runs[i], it, float(metrics["loss"][i]), settings))
          runs[i].diverged_at = it
          log(f"{runs[i].run_dir.name}: the loss is not finite at iteration {it}; its last good "
              "checkpoint is kept and it is left out from now on")
      if not live():
        stopped_by = "diverged"
        break
      now = time.time()
      trained = sum(step_seconds)
      is_last = (it >= settings.iterations or trained >= budget or interrupted["flag"]
                 or (max_iterations is not None and it - start >= max_iterations))
      for i in live():
        row = {"iteration": it, **{k: int(v[i]) for k, v in counters.items()
                                   if k != "iteration"},
               "seconds": round(runs[i].seconds_before + trained, 3)}
        if positions_last is not None:
          row["positions_per_second"] = float(
              counters["positions"][i] - positions_last[i]) / max(now - t_last, 1e-9)
        row.update({k: float(v[i]) for k, v in metrics.items()})
        row.update(phases.columns[phase])
        if interrupted["flag"] and it != runs[i].last_saved:
          save(i, it)  # Ctrl-C: the checkpoint first, then the final evaluation (skippable).
        try:
          if evaluates and ((settings.eval_every and it % settings.eval_every == 0) or is_last):
            row.update(evaluate(i, it))
          if learning.solver is not None and (it % settings.solver_every == 0 or is_last):
            row.update(solver_columns(i))
        except KeyboardInterrupt:
          if not interrupted["flag"]:
            raise
          log("skipped the final evaluation (the run is saved)")
        runs[i].write(row)
        if settings.checkpoint_every and it % settings.checkpoint_every == 0 \
            and it != runs[i].last_saved:
          save(i, it)
      t_last, positions_last = now, counters.get("positions")
      if advice_checks and trained >= advice_checks[0]:
        advice_checks.pop(0)  # Training time, as the budget counts it.
        advice = budget_advice(settings, it, it - start, trained, budget - trained, advised,
                               schedules=learning.schedules)
        if advice:
          log(advice)
        advised = advice is not None
      if bar is not None:
        bar.update(1)
        left = max(budget - trained, 0) / 60 if settings.minutes else None
        bar.set_postfix(_postfix([runs[i].row for i in live()], len(runs), left), refresh=False)
  finally:
    if bar is not None:
      bar.close()
  train_seconds = sum(step_seconds)
  for i in live():
    if it != runs[i].last_saved:
      save(i, it)
    runs[i].model_dir = checkpoint.save_model(runs[i].run_dir, variables(i))
  for run in runs:
    if run.writer is not None:
      run.plots = plots.plot_run(run.run_dir, read_metrics(run.run_dir))
  later = step_seconds[1:]
  return LoopResult(state=state, iterations=it, stopped_by=stopped_by,
                    compile_seconds=round(compile_seconds, 2),
                    seconds_per_iteration=round(float(np.mean(later)) if later else 0.0, 4),
                    train_seconds=train_seconds)
