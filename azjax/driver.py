"""The outer training loop: iterate, log, evaluate, checkpoint, plot. `train_and_evaluate` is the
testable entry point behind `python -m experiments.<game>`.

Everything heavy happens inside the jitted `Trainer.iteration`; this loop only moves a few
scalars to the host between iterations.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from azjax import checkpoint
from azjax.config import Config
from azjax.evaluation import Evaluator, SolverEvaluator
from azjax.train import Trainer, TrainState


class NaNLossError(RuntimeError):
  """Raised when a loss becomes NaN or infinite; the last good checkpoint is kept."""


@dataclasses.dataclass
class Summary:
  run_dir: Path
  iterations: int
  positions: int
  games: int
  minutes: float
  final_eval: dict[str, float]
  checkpoint_dir: Path
  model_dir: Path
  metrics_file: Path
  plots: list[Path]
  stopped_by: str  # "iterations", "minutes", "interrupt"

  def __str__(self) -> str:
    lines = [f"run: {self.run_dir}",
             f"trained {self.iterations} iterations, {self.positions:,} positions, "
             f"{self.games:,} games in {self.minutes:.1f} min (stopped by {self.stopped_by})"]
    for name, value in self.final_eval.items():
      lines.append(f"  {name}: {value:.3f}")
    lines += [f"checkpoint: {self.checkpoint_dir}", f"model: {self.model_dir}",
              f"metrics: {self.metrics_file}", "plots: " + ", ".join(map(str, self.plots))]
    return "\n".join(lines)


METRICS_FILES = ("metrics.jsonl", "metrics.csv")


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> list[str]:
  """Writes `rows` to the CSV at `path` (atomically: a reader never sees half of it); returns
  its columns, the union of the rows' keys in order of appearance."""
  fields = list(dict.fromkeys(k for r in rows for k in r))
  text = io.StringIO(newline="")
  writer = csv.writer(text)
  writer.writerow(fields)
  writer.writerows([[r.get(k, "") for k in fields] for r in rows])
  checkpoint.write_atomic(path, text.getvalue())
  return fields


class _MetricsWriter:
  """Appends one row per iteration to metrics.csv and metrics.jsonl (and TensorBoard if asked).

  Rows are appended (rewriting the files every iteration would cost a run's whole history each
  time); a crash can only tear the last line, which `read_metrics` skips and `prune_metrics`
  removes on resume.
  """

  def __init__(self, run_dir: Path, tensorboard: bool):
    self.csv_path = run_dir / "metrics.csv"
    self.jsonl_path = run_dir / "metrics.jsonl"
    self._fields: list[str] | None = None
    if self.csv_path.exists():
      with open(self.csv_path) as f:
        self._fields = next(csv.reader(f), None)
    self._tb = None
    if tensorboard:
      try:
        from tensorboardX import SummaryWriter
        self._tb = SummaryWriter(str(run_dir / "tensorboard"))
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
  """The rows of `run_dir/metrics.jsonl`, oldest first.

  A last line that is not JSON (a crash in the middle of appending it) is skipped.

  Raises:
    ValueError: another line is not JSON (the message names the file and the line).
  """
  path = Path(run_dir) / "metrics.jsonl"
  if not path.exists():
    return []
  lines = path.read_text().splitlines()
  rows = []
  for number, line in enumerate(lines, 1):
    if not line.strip():
      continue
    try:
      rows.append(json.loads(line))
    except ValueError:
      if number == len(lines):
        break
      raise ValueError(f"{path}, line {number}: not a JSON row of metrics") from None
  return rows


def prune_metrics(run_dir: Path, iteration: int) -> int:
  """Drops the rows after `iteration` from metrics.jsonl and metrics.csv (atomically), so that a
  run resumed from that iteration's checkpoint logs every later iteration once. A run restarted
  from scratch (`iteration` 0) keeps nothing. Returns the number of rows dropped."""
  run_dir = Path(run_dir)
  jsonl = run_dir / "metrics.jsonl"
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
  checkpoint.write_atomic(jsonl, "".join(json.dumps(r) + "\n" for r in kept))
  if kept:
    _write_csv(run_dir / "metrics.csv", kept)
  else:
    (run_dir / "metrics.csv").unlink(missing_ok=True)
  return len(rows) - len(kept)


def _finish(fig, ax, ylabel: str, title: str, path: Path) -> Path:
  """Labels a plot over self-play positions, writes it to `path` and closes it."""
  import matplotlib.pyplot as plt
  ax.set_xlabel("self-play positions")
  ax.set_ylabel(ylabel)
  ax.legend()
  ax.set_title(title)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return path


def plot_run(run_dir: Path) -> list[Path]:
  """Writes losses.png, winrate.png and mistakes.png (with `solver_every`) from metrics.jsonl;
  returns their paths."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt

  rows = read_metrics(run_dir)
  if not rows:
    return []
  out = []
  x = np.array([r["positions"] for r in rows], dtype=float)
  fig, ax = plt.subplots(figsize=(6, 4))
  for key in ("policy_loss", "value_loss"):
    y = np.array([r.get(key, np.nan) for r in rows], dtype=float)
    ax.plot(x, y, label=key)
  out.append(_finish(fig, ax, "loss", f"{run_dir.name}: training losses",
                     run_dir / "losses.png"))

  evals = [r for r in rows if any(k.startswith("eval/") for k in r)]
  if evals:
    fig, ax = plt.subplots(figsize=(6, 4))
    names = sorted({k for r in evals for k in r if k.startswith("eval/") and k.endswith("/score")})
    for name in names:
      pts = [(r["positions"], r[name], r.get(name.replace("/score", "/ci"), 0.0))
             for r in evals if name in r]
      px, py, pe = map(np.array, zip(*pts))
      ax.errorbar(px, py, yerr=pe, marker="o", capsize=3, label=name.split("/")[1])
    ax.set_ylim(0, 1.02)
    out.append(_finish(fig, ax, "score (win = 1, draw = 1/2)",
                       f"{run_dir.name}: score against baselines", run_dir / "winrate.png"))

  scored = [r for r in rows if any(k.startswith("solver/") for k in r)]
  if scored:  # Mistakes against perfect play (solver_every), over training minutes.
    from azjax import curves  # noqa: PLC0415

    curve = [{"minutes": r["seconds"] / 60, "positions": r["positions"],
              **{k.removeprefix("solver/"): v for k, v in r.items() if k.startswith("solver/")}}
             for r in scored]
    out.append(curves.plot_curves({run_dir.name: curve}, run_dir / "mistakes.png"))
  return out


def _progress(total: int | None, initial: int):
  try:
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, unit="it", dynamic_ncols=True)
  except ImportError:  # pragma: no cover
    return None


# What makes a directory a run's: a new run is refused where any of them is (a directory
# counts when it is not empty).
RUN_FILES = (checkpoint.CONFIG_FILE, *METRICS_FILES, "model", "models", "checkpoints")
# Everything a training run writes, removed by `overwrite=True` (eval.md, probe/, export/ and
# other files of the directory are left as they are).
TRAINING_OUTPUTS = (*RUN_FILES, "losses.png", "winrate.png", "tensorboard")


def run_files(run_dir: str | Path) -> list[str]:
  """The names of `RUN_FILES` present in `run_dir`: empty when it holds no run."""
  run_dir = Path(run_dir)
  found = []
  for name in RUN_FILES:
    path = run_dir / name
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
      found.append(name)
  return found


def check_run_dir(config: Config, run_dir: str | Path, *, resume: bool = False,
                  overwrite: bool = False) -> None:
  """Raises (having written nothing) unless `run_dir` may take this run: a new run needs a
  directory that holds no run (or `overwrite`); a resumed one, the same config as saved (only
  the budget, `minutes` and `iterations`, may change).

  A resume with no checkpoint starts over (the run stopped before its first one), unless the
  directory holds a network (`model/`, `models/`): a finished or committed run, which cannot be
  continued and must not be replaced.

  Raises:
    FileNotFoundError: `resume` where there is no config.json.
    ValueError: any other refusal, saying what to do instead.
  """
  run_dir = Path(run_dir)
  if resume and overwrite:
    raise ValueError("--resume continues the run in a directory and --overwrite replaces it: "
                     "give one of them")
  if resume:
    saved = checkpoint.read_config(run_dir)
    diff = {k: (getattr(saved, k), getattr(config, k)) for k in dataclasses.asdict(config)
            if getattr(saved, k) != getattr(config, k) and k not in ("minutes", "iterations")}
    if diff:
      raise ValueError(f"--resume: the config differs from {run_dir}/config.json: "
                       + ", ".join(f"{k}: saved {a!r}, now {b!r}" for k, (a, b) in diff.items()))
    checkpoints = run_dir / "checkpoints"
    has_checkpoint = checkpoints.is_dir() and any(
        p.is_dir() and p.name.isdigit() for p in checkpoints.iterdir())
    networks = [name for name in ("model", "models") if name in run_files(run_dir)]
    if not has_checkpoint and networks:
      # Starting such a run over would replace its network and drop its metrics.
      raise ValueError(f"--resume: {run_dir} holds a trained network ({', '.join(networks)}) "
                       "but no checkpoint to continue from; start a new run, e.g. with "
                       f"--init-from {run_dir} to begin from its network")
    return
  held = run_files(run_dir)
  if held and not overwrite:
    raise ValueError(f"{run_dir} already holds a run ({', '.join(held)}): pass --resume to "
                     "continue it, --overwrite to replace it, or leave out --run-dir to start "
                     "a new run in a new directory")


def clear_run(run_dir: str | Path) -> list[str]:
  """Removes what a training run wrote to `run_dir` (`TRAINING_OUTPUTS`); returns the names."""
  removed = []
  for name in TRAINING_OUTPUTS:
    path = Path(run_dir) / name
    if path.is_dir():
      shutil.rmtree(path)
    elif path.exists():
      path.unlink()
    else:
      continue
    removed.append(name)
  return removed


def check_memory(trainer: Trainer, mesh: Any = None, limit: int | None = -1) -> None:
  """Raises ValueError if the run's estimated device memory (`sweep.estimate_memory`, from
  shapes only) is more than 90% of `limit` bytes (-1: ask the device; None: no check)."""
  from azjax import sharding, sweep  # noqa: PLC0415  (sweep imports this module)

  limit = sweep.device_memory() if limit == -1 else limit
  if limit is None:
    return
  estimate = sweep.estimate_memory(trainer)
  data = sharding.data_size(mesh)
  device = jax.devices()[0]
  if device.platform == "cpu":  # The CPU's "devices" share one memory: compare the total.
    need = estimate.per_device(data) * data
    where = f"this host's {limit / 2**30:.2f} GiB of memory"
  else:
    need = estimate.per_device(data)
    where = f"the {limit / 2**30:.2f} GiB of one {device.device_kind}"
  if need <= 0.9 * limit:
    return
  gib = lambda n: f"{n / 2**30:.2f} GiB"  # noqa: E731
  raise ValueError(
      f"this run needs about {gib(need)} of device memory (replay buffer and games "
      f"{gib(estimate.replay)} with buffer_size={trainer.config.buffer_size}, search tree "
      f"{gib(estimate.search)}, training {gib(estimate.training)}, parameters and optimizer "
      f"{gib(estimate.replicated)}), more than 90% of {where}: lower buffer_size, "
      "selfplay_batch or train_batch (--no-memory-check skips this estimate)")


def _warn(message: str) -> None:
  print(f"warning: {message}", file=sys.stderr, flush=True)


def _mesh(devices: int | None):
  """A ("data",) mesh over the first `devices` devices, or None for a single device."""
  available = jax.devices()
  count = len(available) if devices is None else devices
  if not 1 <= count <= len(available):
    raise ValueError(f"devices={devices}: this machine has {len(available)} "
                     f"({available[0].platform})")
  if count == 1:
    return None
  from azjax import sharding  # noqa: PLC0415

  return sharding.make_mesh(available[:count])


def _save(mngr, run_dir: Path, state) -> None:
  """A resumable checkpoint plus a small snapshot of the network in `models/<iteration>`."""
  it = int(state.iteration)
  checkpoint.save(mngr, it, state, {"iteration": it})
  checkpoint.save_model(run_dir, Trainer.variables(state), step=it)


def _check_warm_start(config: Config, source: str | Path) -> None:
  """Raises ValueError unless run directory `source` has this run's game and network."""
  # How convolutions are computed does not change the parameters: either may warm-start.
  saved = dataclasses.replace(checkpoint.read_config(source), conv_impl=config.conv_impl)
  if saved.net_config() != config.net_config() or saved.game_kwargs() != \
      config.game_kwargs() or saved.game != config.game:
    raise ValueError(f"--init-from {source}: its game or network ({saved.game}, "
                     f"{saved.net_config()}) differs from this run's")


def _warm_start(trainer: Trainer, state, source: str | Path):
  """`state` with the network of run directory `source` (fresh optimizer state)."""
  _check_warm_start(trainer.config, source)
  variables = checkpoint.load_model(source, Trainer.variables(state))
  params = variables["params"]
  batch_stats = variables.get("batch_stats", {})
  best = jax.tree.map(jnp.copy, (params, batch_stats)) if trainer.config.gating else ({}, {})
  return state.replace(params=params, batch_stats=batch_stats, best_params=best[0],
                       best_batch_stats=best[1], opt_state=trainer.optimizer.init(params))


def _eval_columns(results: dict[str, Any]) -> dict[str, float]:
  """Metrics columns of an evaluation: each opponent's score and 95% interval half-width."""
  row = {f"eval/{name}/score": r.score for name, r in results.items()}
  row.update({f"eval/{name}/ci": (r.interval[1] - r.interval[0]) / 2
              for name, r in results.items()})
  return row


@contextlib.contextmanager
def stop_on_interrupt(log=print):
  """Turns the first Ctrl-C into a request: yields `{"flag": bool}`, set once Ctrl-C arrives,
  for a training loop to finish its iteration, checkpoint and stop; a second Ctrl-C raises
  KeyboardInterrupt. The previous handler is restored on exit."""
  interrupted = {"flag": False}

  def on_sigint(signum, frame):
    if interrupted["flag"]:
      raise KeyboardInterrupt
    interrupted["flag"] = True
    log("\nstopping after this iteration (Ctrl-C again to abort without saving)")

  previous = signal.signal(signal.SIGINT, on_sigint)
  try:
    yield interrupted
  finally:
    signal.signal(signal.SIGINT, previous)


def train_and_evaluate(config: Config, run_dir: str | Path, *, resume: bool = False,
                       overwrite: bool = False, progress: bool = True,
                       tensorboard: bool = False, max_iterations: int | None = None,
                       init_from: str | Path | None = None, devices: int | None = None,
                       memory_limit: int | None = -1) -> Summary:
  """Trains `config` in `run_dir`, evaluating and checkpointing as configured.

  Nothing is written until every check has passed: the config, the run directory
  (`check_run_dir`) and the memory estimate.

  Args:
    config: the run's configuration (validated here, before anything compiles).
    run_dir: where config.json, metrics, plots and checkpoints go.
    resume: continue from the newest intact checkpoint in `run_dir` (whose config must match).
      A checkpoint that does not restore is set aside (`<step>.unreadable`) with a warning, and
      the one before it is used; metrics rows after the restored iteration are dropped, so
      that every iteration is logged once.
    overwrite: start a new run in a `run_dir` that holds one, removing that run's training
      outputs first (`TRAINING_OUTPUTS`).
    progress: show a progress bar.
    max_iterations: stop after this many iterations in this call (tests; resumable).
    init_from: a run directory whose network (of the same shape) starts this run: a warm start
      with a fresh optimizer, replay buffer and games (e.g. to go on training on a new machine
      when the whole state is too big to carry). Ignored when resuming.
    devices: split self-play and training batches over the first `devices` of
      `jax.devices()` (data parallel, parameters replicated; `azjax.sharding`); default: all of
      them. With one device the program is the plain single-device one.
    memory_limit: bytes of device memory the run may need (-1: ask the device; None: no check).
  Raises:
    ValueError: bad config, a run directory that holds another run, a resume whose config
      differs from the saved one, or a run too big for the device's memory.
    NaNLossError: a loss became NaN; the last good checkpoint is kept.
  """
  run_dir = Path(run_dir)
  mesh = _mesh(devices)
  trainer = Trainer.create(config, mesh=mesh)  # Validates the config first.
  check_run_dir(config, run_dir, resume=resume, overwrite=overwrite)
  check_memory(trainer, mesh, memory_limit)
  if init_from is not None and not resume:
    _check_warm_start(config, init_from)
  # Loads the labelled positions: a missing file stops the run before it writes.
  solver_evaluator = SolverEvaluator(trainer) if config.solver_every else None
  # -- Every check passed: from here on the run writes. ---------------------------------------
  if overwrite:
    removed = clear_run(run_dir)
    if removed:
      _warn(f"--overwrite: removed the earlier run's {', '.join(removed)} from {run_dir}")
  checkpoint.write_config(run_dir, config)
  mngr = checkpoint.manager(run_dir)
  state = trainer.init()
  have_checkpoint = False
  if resume:
    if mngr.latest_step() is None:
      _warn(f"{run_dir} holds config.json but no checkpoint: nothing to resume, so the run "
            "starts from iteration 0 with its saved config")
    else:
      state, _, _ = checkpoint.restore_intact(mngr, state, log=_warn)
      state = trainer.place(state)
      have_checkpoint = True
    prune_metrics(run_dir, int(state.iteration))
  elif init_from is not None:
    state = trainer.place(_warm_start(trainer, state, init_from))
  iteration_fn = trainer.jit_iteration()
  evaluator = Evaluator(trainer)
  writer = _MetricsWriter(run_dir, tensorboard)

  # Ctrl-C: finish the iteration in flight, checkpoint, and stop.
  with stop_on_interrupt() as interrupted:
    start_iteration = int(state.iteration)
    last_saved = start_iteration  # The newest checkpoint's, if `have_checkpoint`.
    # With a time budget the iteration count is only an upper bound: no misleading ETA then.
    bar = _progress(None if config.minutes else config.iterations, start_iteration) \
        if progress else None
    budget = config.minutes * 60 if config.minutes else math.inf
    t_start = time.time()
    t_last = t_start
    # "seconds" counts training time over all sessions of a resumed run.
    earlier = [r for r in read_metrics(run_dir) if r.get("iteration", 0) <= start_iteration]
    seconds_before = float(earlier[-1].get("seconds", 0.0)) if resume and earlier else 0.0
    positions_last = int(state.positions)
    final_eval: dict[str, float] = {}  # The latest evaluation, for the summary.
    stopped_by = "iterations"

    def evaluate(state) -> dict[str, float]:
      results = evaluator.evaluate(Trainer.variables(state),
                                   jax.random.PRNGKey(int(state.iteration)))
      final_eval.clear()
      final_eval.update({f"score vs {name}": r.score for name, r in results.items()})
      return _eval_columns(results)

    def solver_columns(state) -> dict[str, float]:
      # The same key every time: the curve's changes come from the network alone.
      columns = solver_evaluator(Trainer.variables(state), jax.random.PRNGKey(0))
      final_eval.update({f"{k.split('/')[1]} mistakes vs perfect play": v
                         for k, v in columns.items() if k.endswith("/mistake_rate")})
      return columns

    try:
      if start_iteration == 0 and ((config.eval_every and config.eval_games)
                                   or solver_evaluator is not None):
        # The untrained network's scores: the starting point of the learning curves.
        writer.write({"iteration": 0, "positions": 0, "games": 0, "sgd_steps": 0, "seconds": 0.0,
                      **(evaluate(state) if config.eval_every else {}),
                      **(solver_columns(state) if solver_evaluator is not None else {})})
      while True:
        done = int(state.iteration)
        if done >= config.iterations:
          break
        if max_iterations is not None and done - start_iteration >= max_iterations:
          break
        if time.time() - t_start >= budget:
          stopped_by = "minutes"
          break
        if interrupted["flag"]:
          stopped_by = "interrupt"
          break
        new_state, metrics = iteration_fn(state)
        metrics = jax.device_get(metrics)
        trained = bool(metrics.pop("trained"))
        if trained and not all(math.isfinite(float(metrics[k])) for k in ("loss", "grad_norm")):
          kept = (f"The last good checkpoint (iteration {last_saved}) is kept in "
                  f"{mngr.directory}" if have_checkpoint else
                  f"No checkpoint was saved yet (checkpoint_every={config.checkpoint_every})")
          raise NaNLossError(
              f"iteration {done + 1}: the loss is {float(metrics['loss'])} (not finite); "
              f"stopping. {kept}; lower learning_rate or check the inputs.")
        state = new_state
        it = int(state.iteration)
        now = time.time()
        positions = int(state.positions)
        row = {"iteration": it, "positions": positions, "games": int(state.games_finished),
               "sgd_steps": int(state.sgd_steps),
               "seconds": round(seconds_before + now - t_start, 3),
               "positions_per_second": (positions - positions_last) / max(now - t_last, 1e-9)}
        row.update({k: float(v) for k, v in metrics.items()})
        t_last, positions_last = now, positions
        is_last = (it >= config.iterations or now - t_start >= budget or interrupted["flag"]
                   or (max_iterations is not None and it - start_iteration >= max_iterations))
        if (config.eval_every and it % config.eval_every == 0) or is_last:
          row.update(evaluate(state))
        if solver_evaluator is not None and (it % config.solver_every == 0 or is_last):
          row.update(solver_columns(state))
        writer.write(row)
        if config.checkpoint_every and it % config.checkpoint_every == 0 and it != last_saved:
          _save(mngr, run_dir, state)
          last_saved, have_checkpoint = it, True
        if bar is not None:
          bar.update(1)
          postfix = {"games": row["games"], "pos/s": f"{row['positions_per_second']:.0f}",
                     **({"min left": f"{max(budget - (now - t_start), 0) / 60:.1f}"}
                        if config.minutes else {}),
                     "pi": f"{row['policy_loss']:.3f}", "v": f"{row['value_loss']:.3f}"}
          postfix.update({k.split("/")[1]: f"{v:.2f}" for k, v in row.items()
                          if k.startswith("eval/") and k.endswith("/score")})
          bar.set_postfix(postfix, refresh=False)
    finally:
      if bar is not None:
        bar.close()
  it = int(state.iteration)
  if it != last_saved:
    _save(mngr, run_dir, state)
  model_dir = checkpoint.save_model(run_dir, Trainer.variables(state))
  plots = plot_run(run_dir)
  return Summary(run_dir=run_dir, iterations=it, positions=int(state.positions),
                 games=int(state.games_finished), minutes=(time.time() - t_start) / 60,
                 final_eval=final_eval, checkpoint_dir=Path(mngr.directory), model_dir=model_dir,
                 metrics_file=writer.csv_path, plots=plots, stopped_by=stopped_by)
