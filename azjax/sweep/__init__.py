"""Hyperparameter sweeps: configurations that differ only in numbers train as one vmapped program.

A sweep is a base config, a grid (`{"learning_rate": [1e-3, 3e-4], ...}`, the cartesian product
of its values) and seeds. Its runs fall into groups:

* within a group the runs differ only in `BATCHED_KEYS` (the seed and the fields of
  `train.Hyper`: learning rate, weight decay, search noise, ...). Their states are stacked on a
  leading `[K]` axis and `jax.vmap(Trainer.iteration)` trains all `K` as one jitted program: one
  compilation, and on an accelerator one set of kernel launches for `K` times the work;
* runs that differ in `GROUPED_KEYS` (network size, simulations, batch sizes, ...) change array
  shapes or the program itself, so each such group compiles and trains on its own, one group
  after another;
* `FIXED_KEYS` (the game and the budget and evaluation protocol) are the same for every run of a
  sweep, so that their results compare; sweeping them is an error.

Every run gets what a single run gets, in `<sweep>/<run name>/`: config.json (so
`python -m experiments.<game> --run-dir <that dir> --resume` continues it alone), metrics.csv /
metrics.jsonl, orbax checkpoints, model/, losses.png and winrate.png. The sweep directory gets
summary.csv (one row per run), summary.md (a ranking of the settings with 95% intervals),
curves.png (learning curves, mean over seeds with a min-max band) and final.png (final scores
with 95% intervals).

Over several devices a group is spread with `azjax.sharding`: configurations along a "configs"
mesh axis, each one's batches along "data".

`plan` checks a sweep before anything compiles; `azjax.sweep.timing.estimate_time` says how long
each group will take, from the time per iteration recorded in earlier sweeps' sweep.json or the
minutes budget (`--dry-run` prints both).

A group trains in the outer loop a single run uses (`azjax.runs.loop.train`, its states stacked);
memory estimates are `azjax.runs.memory`'s and the summary files `azjax.sweep.report`'s.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import games, sharding
from azjax.config import Config, override, resolve_key
from azjax.evaluate.evaluators import SolverEvaluator
from azjax.games.base import stack_states
from azjax.runs import checkpoint, driver, gating, layout, loop
from azjax.runs.loop import read_metrics, stop_on_interrupt
from azjax.runs.memory import MemoryEstimate, _gib, check_group, device_memory, estimate_memory
from azjax.sweep.report import format_value, write_summary
from azjax.train import HYPER_KEYS, Hyper, Trainer

# -- Which keys batch ------------------------------------------------------------------------------

BATCHED_KEYS: tuple[str, ...] = ("seed",) + HYPER_KEYS
FIXED_KEYS: tuple[str, ...] = (
    "game", "game_options", "iterations", "minutes", "eval_every", "eval_games",
    "eval_simulations", "eval_mcts_simulations", "checkpoint_every")
_FIELDS = tuple(f.name for f in dataclasses.fields(Config))
GROUPED_KEYS: tuple[str, ...] = tuple(k for k in _FIELDS
                                      if k not in BATCHED_KEYS and k not in FIXED_KEYS)


@dataclasses.dataclass(frozen=True)
class Run:
  """One configuration of a sweep."""

  name: str  # "learning_rate=0.001,seed=0": its directory under the sweep
  setting: str  # the name without the seed: runs of one setting are its seeds
  values: dict[str, Any]  # the grid values (and seed) that define it
  config: Config


@dataclasses.dataclass(frozen=True)
class Group:
  """Runs that share every non-batched key: they train together as one vmapped program."""

  runs: tuple[Run, ...]

  @property
  def config(self) -> Config:
    """The shared static parts (the first run's config; batched values come per run)."""
    return self.runs[0].config

  def __len__(self) -> int:
    return len(self.runs)


def check_keys(keys: Iterable[str]) -> None:
  """Raises ValueError for a key that is not a config field or that a sweep cannot vary."""
  for key in keys:
    if key not in _FIELDS and any(games.find_option(g, key) for g in games.GAMES):
      raise ValueError(f"sweep: {key!r} is an option of the game, the same for every run of a "
                       f"sweep (game_options): run one sweep per value (--set {key}=...)")
    if key not in _FIELDS:
      import difflib
      close = difflib.get_close_matches(key, _FIELDS, n=3)
      hint = f"; did you mean {', '.join(close)}?" if close else ""
      raise ValueError(f"sweep: unknown config key {key!r}{hint}")
    if key in FIXED_KEYS:
      raise ValueError(
          f"sweep: {key!r} cannot be swept: it is the same for every run of a sweep so that "
          f"their results compare ({', '.join(FIXED_KEYS)}); run one sweep per value instead"
          + (" (--game)" if key == "game" else ""))


def parse_grid(specs: Sequence[str]) -> dict[str, list[str]]:
  """`["learning_rate=1e-3,3e-4", "channels=32,64"]` -> `{key: [raw values]}` (checked keys)."""
  grid: dict[str, list[str]] = {}
  for spec in specs:
    if "=" not in spec:
      raise ValueError(f"sweep --grid {spec!r}: expected key=value1,value2,...")
    key, raw = (s.strip() for s in spec.split("=", 1))
    if "." in key:  # A dotted name (`training.learning_rate`) names the field itself.
      try:
        key = resolve_key(key)
      except ValueError as err:
        raise ValueError(f"sweep --grid {spec!r}: {err}") from None
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not values:
      raise ValueError(f"sweep --grid {spec!r}: no values")
    if key in grid:
      raise ValueError(f"sweep --grid: {key!r} given twice")
    grid[key] = values
  check_keys(grid)
  return grid


def expand(base: Config, grid: dict[str, Sequence[Any]],
           seeds: Sequence[int] | None = None) -> list[Run]:
  """Every combination of the grid's values (then each seed), as validated configs.

  Args:
    base: the config every run starts from.
    grid: `{key: values}`; values may be strings (parsed to the field's type) or values.
    seeds: the seeds of every combination (default: `base.seed`); or put "seed" in `grid`.
  Raises:
    ValueError: unknown or unsweepable key, a value of the wrong type, an impossible config
      (naming the run), a repeated value.
  """
  grid = dict(grid)
  check_keys(grid)
  if seeds is not None and "seed" in grid:
    raise ValueError("sweep: give the seeds either with --seeds or in the grid, not both")
  if "seed" not in grid:
    grid["seed"] = list(seeds) if seeds is not None else [base.seed]
  # Parse each key's values once (through `override`, which names the key on a bad value).
  parsed = {}
  for key, values in grid.items():
    parsed[key] = [getattr(override(base, [(key, v)]), key) for v in values]
    if len(set(map(repr, parsed[key]))) != len(parsed[key]):
      raise ValueError(f"sweep: {key} has a repeated value: {', '.join(map(str, values))}")
  keys = [k for k in parsed if k != "seed"] + ["seed"]
  runs = []
  for combo in itertools.product(*(parsed[k] for k in keys)):
    values = dict(zip(keys, combo))
    name = ",".join(f"{k}={format_value(v)}" for k, v in values.items())
    setting = ",".join(f"{k}={format_value(v)}" for k, v in values.items() if k != "seed") or "base"
    config = dataclasses.replace(base, **values)
    try:
      config.validate()
    except ValueError as err:
      raise ValueError(f"sweep run {name}: {err}") from None
    runs.append(Run(name=name, setting=setting, values=values, config=config))
  return runs


def _structure(config: Config) -> tuple[Config, bool]:
  """What a group shares: every non-batched value, and whether gradients are clipped at all."""
  return dataclasses.replace(config, **{k: None for k in BATCHED_KEYS}), config.max_grad_norm > 0


def group_runs(runs: Sequence[Run], max_vmap: int | None = None) -> list[Group]:
  """Runs with the same structure form a group (first-appearance order), cut into pieces of at
  most `max_vmap` runs."""
  by_structure: dict[Any, list[Run]] = {}
  for run in runs:
    by_structure.setdefault(_structure(run.config), []).append(run)
  groups = []
  for members in by_structure.values():
    size = max_vmap or len(members)
    groups += [Group(tuple(members[i:i + size])) for i in range(0, len(members), size)]
  return groups


# -- Stacked states --------------------------------------------------------------------------------


def stacked_hyper(group: Group) -> Hyper:
  """`[K]` arrays of every run's batched hyperparameters."""
  return stack_states([Hyper.from_config(run.config).as_arrays() for run in group.runs])


@dataclasses.dataclass(frozen=True)
class GroupProgram:
  """The compiled functions of one group: stacked init and the vmapped iteration."""

  trainer: Trainer
  init: Any  # seeds [K] int32 -> stacked TrainState
  iteration: Any  # (stacked TrainState, stacked Hyper) -> (TrainState, metrics of [K]); with
  # gating, the iteration followed by each run's gating match (`azjax.runs.gating.gated`)


def group_program(group: Group, mesh: Any = None, *,
                  loop_configs: bool = False) -> GroupProgram:
  """jit(vmap(init)) and jit(vmap(iteration)) for `group`, sharded over `mesh` if given.

  The state is donated to the iteration (updated in place). With a mesh, the stacked state's
  leading axis is split over "configs" and its games and replay rows over "data".

  `loop_configs` (`Trainer.loop_configs`): inside the vmapped program, run the network one
  configuration at a time instead of as jax.vmap's grouped convolutions. On 2 CPU cores it
  trains a little faster per iteration but compiles several times longer
  (`results/benchmarks/sweep_cpu.md`); `benchmarks/sweep.py` times both. Not with a mesh that
  splits configurations over devices: the loop would index across devices.
  """
  if loop_configs and sharding.configs_size(mesh) > 1:
    raise ValueError("loop_configs: not with configurations split over devices")
  trainer = dataclasses.replace(Trainer.create(group.config, mesh=mesh),
                                loop_configs=loop_configs)
  init = jax.vmap(trainer.init_state)
  # spmd_axis_name: sharding constraints inside the iteration split the vmapped axis too.
  iteration = jax.vmap(gating.step_fn(trainer),
                       spmd_axis_name=sharding.CONFIGS if sharding.configs_size(mesh) > 1
                       else None)
  if mesh is None:
    return GroupProgram(trainer, jax.jit(init), jax.jit(iteration, donate_argnums=0))
  seeds = jax.ShapeDtypeStruct((len(group),), jnp.int32)
  shardings = sharding.state_shardings(jax.eval_shape(init, seeds), mesh, stacked=True)
  lead = jax.sharding.NamedSharding(
      mesh, jax.sharding.PartitionSpec(sharding.CONFIGS if sharding.configs_size(mesh) > 1
                                       else None))
  # Metrics come back replicated: every host of a multi-host run can read them.
  return GroupProgram(
      trainer,
      jax.jit(init, out_shardings=shardings),
      jax.jit(iteration, in_shardings=(shardings, lead),
              out_shardings=(shardings, sharding.replicated(mesh)), donate_argnums=0))


def group_mesh(group: Group, devices: Sequence[Any] | None) -> Any:
  """The mesh a group spreads over: None on one device."""
  devices = list(jax.devices() if devices is None else devices)
  if len(devices) == 1:
    return None
  return sharding.make_mesh(devices, num_configs=len(group))


# -- Training a group ------------------------------------------------------------------------------


@dataclasses.dataclass
class RunResult:
  run: Run
  group: int
  run_dir: Path
  iterations: int = 0
  positions: int = 0
  games: int = 0
  final: dict[str, Any] = dataclasses.field(default_factory=dict)  # opponent -> MatchResult
  losses: dict[str, float] = dataclasses.field(default_factory=dict)  # mean of the last rows
  diverged_at: int | None = None


@dataclasses.dataclass
class GroupTiming:
  runs: int
  mesh: str
  compile_seconds: float  # compiling the vmapped iteration, before the first one
  seconds_per_iteration: float  # later iterations (evaluations and checkpoints excluded)
  iterations: int
  stopped_by: str = "iterations"  # or "minutes", "interrupt"


def _phases(group: Group, program: GroupProgram, mesh: Any, loop_configs: bool) -> loop.Phases:
  """The group's vmapped iteration for each part of its runs (`Config.phases`: every run of a
  group has the same static settings, so the same parts), `program`'s first."""
  parts = group.config.phases()
  steps = [program.iteration] + [
      group_program(Group(tuple(dataclasses.replace(run, config=run.config.phases()[k][1])
                                for run in group.runs)), mesh,
                    loop_configs=loop_configs).iteration for k in range(1, len(parts))]
  return loop.Phases.of(parts, steps)


def train_group(group: Group, index: int, sweep_dir: Path, *, mesh: Any = None,
                loop_configs: bool = False, progress: bool = True,
                interrupted: dict | None = None,
                log=print) -> tuple[list[RunResult], GroupTiming]:
  """Trains the runs of `group` together (`azjax.runs.loop.train` over their stacked states); writes
  each run's directory like a single run.

  A run whose loss turns NaN stops being logged, checkpointed and evaluated (its last good
  checkpoint is kept, and the summary says when it diverged); the others go on.
  """
  program = group_program(group, mesh, loop_configs=loop_configs)
  trainer = program.trainer
  # Loads the labelled positions: a missing file stops the group before it writes.
  solver_evaluator = SolverEvaluator(trainer) if group.config.solver_every else None
  results = [RunResult(run=run, group=index, run_dir=sweep_dir / run.name) for run in group.runs]
  # With several hosts, every process trains and checkpoints (orbax saves collectively) and the
  # first one alone writes metrics and plots.
  primary = sharding.is_primary()
  outputs = []
  for result in results:
    if primary:
      checkpoint.write_config(result.run_dir, result.run.config)
    outputs.append(loop.RunOutput(
        run_dir=result.run_dir, manager=checkpoint.manager(result.run_dir),
        writer=loop.MetricsWriter(result.run_dir) if primary else None))
  seeds = jnp.array([run.config.seed for run in group.runs], jnp.int32)
  done = loop.train(_phases(group, program, mesh, loop_configs), program.init(seeds), outputs,
                    driver.learning(trainer, solver_evaluator), hyper=stacked_hyper(group),
                    interrupted=interrupted, on_nan="drop", progress=progress,
                    desc=f"group {index + 1}", log=log)
  for result, output in zip(results, outputs):
    result.final, result.diverged_at = output.matches, output.diverged_at
    result.iterations = output.row.get("iteration", 0)
    result.positions, result.games = output.row.get("positions", 0), output.row.get("games", 0)
    if primary:
      result.losses = _final_losses(result.run_dir)
      write_result(result)
  timing = GroupTiming(
      runs=len(group), mesh=sharding.describe(mesh), compile_seconds=done.compile_seconds,
      seconds_per_iteration=done.seconds_per_iteration, iterations=done.iterations,
      stopped_by=done.stopped_by)
  return results, timing


RESULT_FILE = layout.SWEEP_RESULT


def write_result(result: RunResult) -> Path:
  """`<run>/final.json`: what the summary needs of a run (final matches with W/D/L, losses)."""
  path = result.run_dir / RESULT_FILE
  path.write_text(json.dumps({
      "run": result.run.name, "setting": result.run.setting, "values": result.run.values,
      "group": result.group, "iterations": result.iterations, "positions": result.positions,
      "games": result.games, "diverged_at": result.diverged_at, "losses": result.losses,
      "final": {name: dataclasses.asdict(m) for name, m in result.final.items()}},
      indent=2) + "\n")
  return path


def load_results(sweep_dir: str | Path) -> list[RunResult]:
  """The `RunResult`s of a finished sweep, read back from its runs' final.json (in the order of
  sweep.json's groups)."""
  from azjax.arena import MatchResult
  sweep_dir = Path(sweep_dir)
  info = json.loads((sweep_dir / "sweep.json").read_text())
  results = []
  for name in (n for group in info["groups"] for n in group):
    path = sweep_dir / name / RESULT_FILE
    if not path.exists():  # A group the sweep did not reach.
      continue
    d = json.loads(path.read_text())
    final = {k: MatchResult(**{f: tuple(v) if isinstance(v, list) else v for f, v in m.items()})
             for k, m in d["final"].items()}
    run = Run(name=d["run"], setting=d["setting"], values=d["values"],
              config=checkpoint.read_config(sweep_dir / name))
    results.append(RunResult(run=run, group=d["group"], run_dir=sweep_dir / name,
                             iterations=d["iterations"], positions=d["positions"],
                             games=d["games"], final=final, losses=d["losses"],
                             diverged_at=d["diverged_at"]))
  return results


def summarize(sweep_dir: str | Path) -> list[Path]:
  """Rewrites a sweep's summary files from its directory (e.g. after Ctrl-C, or new plots)."""
  sweep_dir = Path(sweep_dir)
  info = json.loads((sweep_dir / "sweep.json").read_text())
  timings = [GroupTiming(**t) for t in info.get("timings", [])]
  return write_summary(sweep_dir, load_results(sweep_dir), timings, command=info.get("command"),
                       grid_keys=list(info["grid"]))


def _final_losses(run_dir: Path, last: int = 5) -> dict[str, float]:
  """Mean policy and value loss over the last `last` trained iterations (NaN if none)."""
  rows = [r for r in read_metrics(run_dir) if math.isfinite(r.get("policy_loss", math.nan))]
  rows = rows[-last:]
  return {k: float(np.mean([r[k] for r in rows])) if rows else math.nan
          for k in ("policy_loss", "value_loss")}


# -- The whole sweep -------------------------------------------------------------------------------


@dataclasses.dataclass
class SweepSummary:
  sweep_dir: Path
  results: list[RunResult]
  timings: list[GroupTiming]
  files: list[Path]
  interrupted: bool

  def __str__(self) -> str:
    lines = [f"sweep: {self.sweep_dir} ({len(self.results)} runs in {len(self.timings)} groups"
             + (", interrupted)" if self.interrupted else ")")]
    for i, t in enumerate(self.timings):
      lines.append(f"  group {i + 1}: {t.runs} runs on {t.mesh}, {t.iterations} iterations "
                   f"(stopped by {t.stopped_by}), compile {t.compile_seconds:.1f} s, "
                   f"{t.seconds_per_iteration:.3f} s/it")
    lines += ["files: " + ", ".join(str(p.relative_to(self.sweep_dir)) for p in self.files)]
    return "\n".join(lines)


def plan(base: Config, grid: dict[str, Sequence[Any]], seeds: Sequence[int] | None = None, *,
         max_vmap: int | None = None, devices: Sequence[Any] | None = None,
         memory_limit: int | None = -1,
         loop_configs: bool = False) -> list[tuple[Group, Any, MemoryEstimate]]:
  """Validates a sweep and returns its groups with their meshes and memory estimates.

  Everything that can be wrong with the input is found here, before anything compiles: keys,
  values, configs, batch sizes against the device count, memory (`memory_limit`: bytes per
  device, -1 to ask the device, None to skip the check).
  """
  if max_vmap is not None and max_vmap < 1:
    raise ValueError(f"sweep --max-vmap {max_vmap}: must be >= 1")
  runs = expand(base, grid, seeds)
  groups = group_runs(runs, max_vmap)
  limit = device_memory() if memory_limit == -1 else memory_limit
  out = []
  for index, group in enumerate(groups):
    mesh = group_mesh(group, devices)
    try:
      sharding.check_divisible(group.config, mesh)
    except ValueError as err:
      raise ValueError(f"sweep group {index + 1} over {sharding.describe(mesh)}: {err}") from None
    if loop_configs and sharding.configs_size(mesh) > 1:
      raise ValueError(f"sweep group {index + 1}: --loop-configs needs the configurations on "
                       f"one device, but {sharding.describe(mesh)} splits them; use --devices 1 "
                       "or leave it out")
    estimate = estimate_memory(Trainer.create(group.config))
    check_group(group, estimate, mesh, limit, index)
    out.append((group, mesh, estimate))
  return out


def run_sweep(base: Config, grid: dict[str, Sequence[Any]], sweep_dir: str | Path,
              seeds: Sequence[int] | None = None, *, max_vmap: int | None = None,
              devices: Sequence[Any] | None = None, progress: bool = True,
              memory_limit: int | None = -1, loop_configs: bool = False,
              command: str | None = None, log=print) -> SweepSummary:
  """Trains every run of the sweep, group after group, and writes the summary.

  Args:
    base: the config every run starts from (its `iterations`, `minutes` and evaluation settings
      apply to every group: a time budget is per group).
    grid: `{key: values}` (strings are parsed); the cartesian product is swept.
    sweep_dir: where the runs' directories and the summary go.
    seeds: the seeds of every combination (default `base.seed`).
    max_vmap: at most this many runs per vmapped program.
    devices: the devices to spread each group over (default all).
    memory_limit: see `plan`.
    loop_configs: see `group_program`.
    command: the command line, recorded in summary.md.
  Raises:
    ValueError: bad input (see `plan`), or a sweep directory that already holds checkpoints.
  """
  sweep_dir = Path(sweep_dir)
  planned = plan(base, grid, seeds, max_vmap=max_vmap, devices=devices,
                 memory_limit=memory_limit, loop_configs=loop_configs)
  for group, _, _ in planned:
    for run in group.runs:
      run_dir = sweep_dir / run.name
      if layout.run_files(run_dir):
        raise ValueError(f"{run_dir} already holds a run; choose another sweep name or "
                         "directory")
  # With several processes, every one has checked before the first one writes.
  primary = sharding.is_primary()
  sharding.barrier("sweep directory checked")
  info = {"command": command, "game": base.game, "base": json.loads(base.to_json()),
          "grid": {k: [format_value(v) if not isinstance(v, str) else v for v in vs]
                   for k, vs in grid.items()},
          "seeds": list(seeds) if seeds is not None else None,
          "groups": [[run.name for run in g.runs] for g, _, _ in planned]}
  if primary:
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / "sweep.json").write_text(json.dumps(info, indent=2) + "\n")
  for i, (group, mesh, estimate) in enumerate(planned):
    log(f"group {i + 1}/{len(planned)}: {len(group)} runs vmapped on "
        f"{sharding.describe(mesh)}, ~{_gib(estimate.per_device(sharding.data_size(mesh)))} "
        f"per run: " + " | ".join(run.name for run in group.runs))

  results: list[RunResult] = []
  timings: list[GroupTiming] = []
  with stop_on_interrupt(log) as interrupted:
    for index, (group, mesh, _) in enumerate(planned):
      if interrupted["flag"]:
        break
      group_results, timing = train_group(group, index, sweep_dir, mesh=mesh,
                                          loop_configs=loop_configs, progress=progress,
                                          interrupted=interrupted, log=log)
      results += group_results
      timings.append(timing)
  info["timings"] = [dataclasses.asdict(t) for t in timings]
  files = []
  if primary:
    (sweep_dir / "sweep.json").write_text(json.dumps(info, indent=2) + "\n")
    files = write_summary(sweep_dir, results, timings, command=command, grid_keys=list(grid))
  return SweepSummary(sweep_dir=sweep_dir, results=results, timings=timings, files=files,
                      interrupted=interrupted["flag"])
