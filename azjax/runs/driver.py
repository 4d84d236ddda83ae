"""One training run: `train_and_evaluate` is the testable entry point behind
`python -m experiments.<game>`.

It checks everything before writing anything (the config, the run directory, the memory
estimate, a warm start's network), sets up or resumes the run, and hands it to the outer loop
(`azjax.runs.loop`, which a sweep's groups share), with gating as a step after the iteration
(`azjax.runs.gating`) when the config asks for it.

With several processes (`azjax.sharding.initialize_distributed`) every process runs this same
function on its share of the devices: each checks, trains, evaluates and takes part in saving
and restoring every checkpoint (orbax writes each process's shards of the state), and the
first one alone writes the rest of the run directory (config.json, metrics, plots).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import jax

from azjax import sharding
from azjax.config import Config
from azjax.evaluate.evaluators import Evaluator, SolverEvaluator
from azjax.runs import checkpoint, gating, layout, loop
from azjax.runs.loop import NaNLossError, prune_metrics, read_metrics  # noqa: F401 (raised, used)
from azjax.runs.memory import check_run as check_memory
from azjax.train import Trainer


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
  compile_seconds: float = 0.0  # compiling the training iteration (not counted in `minutes`)

  def __str__(self) -> str:
    lines = [f"run: {self.run_dir}",
             f"trained {self.iterations} iterations, {self.positions:,} positions, "
             f"{self.games:,} games in {self.minutes:.1f} min of training (stopped by "
             f"{self.stopped_by}; compiling took {self.compile_seconds:.0f} s)"]
    for name, value in self.final_eval.items():
      lines.append(f"  {name}: {value:.3f}")
    lines += [f"checkpoint: {self.checkpoint_dir}", f"model: {self.model_dir}",
              f"metrics: {self.metrics_file}", "plots: " + ", ".join(map(str, self.plots))]
    return "\n".join(lines)


def _warn(message: str) -> None:
  if sharding.is_primary():  # The others would say the same.
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _mesh(devices: int | None):
  """A ("data",) mesh over the first `devices` devices, or None for a single device."""
  available = jax.devices()
  count = len(available) if devices is None else devices
  if jax.process_count() > 1 and count != len(available):
    # The first devices of the list would leave some processes without any.
    raise ValueError(f"devices={devices}: a run of {jax.process_count()} processes trains on "
                     f"all of their {len(available)} devices")
  if not 1 <= count <= len(available):
    raise ValueError(f"devices={devices}: this machine has {len(available)} "
                     f"({available[0].platform})")
  if count == 1:
    return None
  return sharding.make_mesh(available[:count])


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
  return state.replace(**trainer.network_fields(params, variables.get("batch_stats", {})),
                       opt_state=trainer.optimizer.init(params))


def learning(trainer: Trainer, solver: SolverEvaluator | None = None) -> loop.Learning:
  """What the outer loop needs of an AlphaZero run (`azjax.runs.loop.Learning`): its config,
  the network in its `TrainState`, the counters, the evaluation against the baselines
  (`azjax.evaluate.evaluators`) and `solver` for `solver_every`."""
  config = trainer.config

  def counters(state) -> dict[str, Any]:
    return {"iteration": state.iteration, "positions": state.positions,
            "games": state.games_finished, "sgd_steps": state.sgd_steps}

  evaluator = Evaluator(trainer)

  # Each process plays the same matches on a device of its own (the network replicated over a
  # mesh that spans processes is partly on devices it cannot use; on one process, the matches
  # then run once rather than on every device of the mesh at once).
  def evaluate(variables, key):
    return evaluator.evaluate(sharding.local_copy(variables), key)

  def score(variables, key):
    return solver(sharding.local_copy(variables), key)

  return loop.Learning(settings=config, variables=Trainer.variables, counters=counters,
                       evaluate=evaluate, solver=score if solver is not None else None,
                       trained_variables=Trainer.trained_variables if config.ema_decay
                       else None, schedules=schedules(config))


def schedules(config: Config) -> bool:
  """Whether a schedule of `config` spans its iterations (`azjax.runs.loop.budget_advice`)."""
  return config.lr_schedule != "constant" or bool(config.late_simulations)


def _phases(trainer: Trainer, config: Config, mesh: Any) -> loop.Phases:
  """The jitted iteration of each part of the run (`Config.phases`), `trainer`'s first."""
  parts = config.phases()
  trainers = [trainer] + [Trainer.create(c, mesh=mesh) for _, c in parts[1:]]
  steps = tuple(t.jit_iteration(gating.gated(t)) if config.gating else t.jit_iteration()
                for t in trainers)
  return loop.Phases.of(parts, steps)


def train_and_evaluate(config: Config, run_dir: str | Path, *, resume: bool = False,
                       overwrite: bool = False, progress: bool = True,
                       tensorboard: bool = False, max_iterations: int | None = None,
                       init_from: str | Path | None = None, devices: int | None = None,
                       memory_limit: int | None = -1) -> Summary:
  """Trains `config` in `run_dir`, evaluating and checkpointing as configured.

  Nothing is written until every check has passed: the config, the run directory
  (`azjax.runs.layout.check_run_dir`) and the memory estimate. With several processes each
  calls this with the same arguments and `run_dir` on a filesystem that all of them see; the
  first writes the files, and every one writes its shards of the checkpoints.

  Args:
    config: the run's configuration (validated here, before anything compiles).
    run_dir: where config.json, metrics, plots and checkpoints go.
    resume: continue from the newest intact checkpoint in `run_dir` (whose config must match).
      A checkpoint that does not restore is set aside (`<step>.unreadable`) with a warning, and
      the one before it is used; metrics rows after the restored iteration are dropped, so
      that every iteration is logged once.
    overwrite: start a new run in a `run_dir` that holds one, removing that run's training
      outputs first (`azjax.runs.layout.clear_run`).
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
  layout.check_run_dir(run_dir, config, resume=resume, overwrite=overwrite,
                       saved=checkpoint.read_config)
  check_memory(trainer, mesh, memory_limit)
  if init_from is not None and not resume:
    _check_warm_start(config, init_from)
  # Loads the labelled positions: a missing file stops the run before it writes.
  solver_evaluator = SolverEvaluator(trainer) if config.solver_every else None
  # -- Every check passed: from here on the run writes. ---------------------------------------
  primary = sharding.is_primary()
  sharding.barrier("run directory checked")  # No process checks what the first has written.
  if overwrite and primary:
    removed = layout.clear_run(run_dir)
    if removed:
      _warn(f"--overwrite: removed the earlier run's {', '.join(removed)} from {run_dir}")
  if primary:
    checkpoint.write_config(run_dir, config)
  # Nor opens the checkpoints before the first has cleared them (--overwrite).
  sharding.barrier("run directory ready")
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
    if primary:
      prune_metrics(run_dir, int(state.iteration))
  elif init_from is not None:
    state = trainer.place(_warm_start(trainer, state, init_from))
  step = _phases(trainer, config, mesh)
  run = loop.RunOutput(run_dir=run_dir, manager=mngr,
                       writer=loop.MetricsWriter(run_dir, tensorboard) if primary else None,
                       last_saved=int(state.iteration), have_checkpoint=have_checkpoint,
                       seconds_before=loop.seconds_before(run_dir, int(state.iteration)))
  # Ctrl-C: finish the iteration in flight, checkpoint, and stop.
  with loop.stop_on_interrupt() as interrupted:
    result = loop.train(step, state, [run], learning(trainer, solver_evaluator),
                        max_iterations=max_iterations, interrupted=interrupted,
                        progress=progress)
  final_eval = {f"score vs {name}": r.score for name, r in run.matches.items()}
  final_eval.update({f"{k.split('/')[1]} mistakes vs perfect play": v
                     for k, v in run.solver.items() if k.endswith("/mistake_rate")})
  state = result.state
  return Summary(run_dir=run_dir, iterations=result.iterations, positions=int(state.positions),
                 games=int(state.games_finished), minutes=result.train_seconds / 60,
                 compile_seconds=result.compile_seconds, final_eval=final_eval,
                 checkpoint_dir=Path(mngr.directory), model_dir=run.model_dir,
                 metrics_file=run_dir / layout.METRICS_CSV, plots=run.plots,
                 stopped_by=result.stopped_by)
