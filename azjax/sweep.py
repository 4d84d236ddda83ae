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
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any, Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import checkpoint, sharding
from azjax.config import Config, override
from azjax.driver import stop_on_interrupt
from azjax.train import HYPER_KEYS, Hyper, Trainer

# -- Which keys batch ------------------------------------------------------------------------------

BATCHED_KEYS: tuple[str, ...] = ("seed",) + HYPER_KEYS
FIXED_KEYS: tuple[str, ...] = (
    "game", "rows", "cols", "iterations", "minutes", "eval_every", "eval_games",
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


def _format(value: Any) -> str:
  if isinstance(value, bool):
    return str(value).lower()
  if isinstance(value, float):
    return f"{value:g}"
  return str(value)


def check_keys(keys: Iterable[str]) -> None:
  """Raises ValueError for a key that is not a config field or that a sweep cannot vary."""
  for key in keys:
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
    name = ",".join(f"{k}={_format(v)}" for k, v in values.items())
    setting = ",".join(f"{k}={_format(v)}" for k, v in values.items() if k != "seed") or "base"
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


# -- Memory: a clear message before compiling -----------------------------------------------------


def _nbytes(tree: Any) -> int:
  return int(sum(np.prod(x.shape, dtype=np.int64) * np.dtype(x.dtype).itemsize
                 for x in jax.tree.leaves(tree)))


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
  """Bytes one run of a group needs on the device (an estimate, from shapes only)."""

  replicated: int  # parameters, optimizer state (whole on every device of the "data" axis)
  replay: int  # replay buffer and games in progress (split over "data")
  search: int  # the self-play search tree (split over "data")
  training: int  # sampled minibatches and network activations (split over "data")

  @property
  def split(self) -> int:
    return self.replay + self.search + self.training

  def per_device(self, data: int) -> int:
    return self.replicated + -(-self.split // data)


def _leaf_outputs(tree: dict) -> list:
  """The `__call__` outputs of the modules with no submodules in a capture_intermediates tree."""
  subs = [v for k, v in tree.items() if k != "__call__" and isinstance(v, dict)]
  if not subs:
    return [tree.get("__call__", ())]
  return [out for sub in subs for out in _leaf_outputs(sub)]


def estimate_memory(trainer: Trainer) -> MemoryEstimate:
  """Shape-only estimate of one run's device memory (nothing is compiled or allocated).

  The state's bytes are exact (`jax.eval_shape` of its initialisation). The transients are
  approximations with a 25% margin: mctx's tree holds one game state and six `[A]` arrays per
  node (`B x (simulations + 1)` nodes); training holds the `sgd_steps x train_batch` sampled
  rows and the network's activations, saved for the backward pass, for one minibatch. Checked
  against measured peaks it errs on the generous side; `--no-memory-check` skips it.
  """
  config = trainer.config
  state = jax.eval_shape(trainer.init_state, 0)
  replicated = _nbytes((state.params, state.batch_stats, state.best_params,
                        state.best_batch_stats, state.opt_state))
  replay = _nbytes(state.selfplay)
  batch = config.selfplay_batch
  game_bytes = _nbytes(state.selfplay.games) // batch
  actions = trainer.game.num_actions
  search = batch * (config.simulations + 1) * (game_bytes + 6 * 4 * actions + 64)
  row_bytes = _nbytes(state.selfplay.buffer) // config.buffer_size
  obs = jax.ShapeDtypeStruct((1, *trainer.game.observation_shape), jnp.float32)
  _, inter = jax.eval_shape(
      lambda v, x: trainer.model.apply(v, x, train=False, capture_intermediates=True,
                                       mutable=["intermediates"]), Trainer.variables(state), obs)
  # Per example: the outputs of the innermost modules (convolutions, normalisations, dense
  # layers; a block's own output repeats its last layer's), saved for the backward pass, plus
  # as much again for the gradients in flight.
  activation_bytes = _nbytes(_leaf_outputs(inter["intermediates"]))
  training = (config.sgd_steps * config.train_batch * row_bytes
              + 2 * config.train_batch * activation_bytes + batch * activation_bytes)
  margin = lambda n: int(n * 1.25)  # noqa: E731
  return MemoryEstimate(replicated=margin(replicated), replay=replay, search=margin(search),
                        training=margin(training))


def device_memory(device: Any = None) -> int | None:
  """The memory one device may use (bytes), or None if unknown.

  An accelerator reports its allocator's limit (`memory_stats()["bytes_limit"]`); the CPU's
  devices share the host's physical memory.
  """
  device = device or jax.devices()[0]
  try:
    stats = device.memory_stats()
  except Exception:  # Not every backend implements it.
    stats = None
  if stats and stats.get("bytes_limit"):
    return int(stats["bytes_limit"])
  if device.platform == "cpu":
    try:
      return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
      return None
  return None


def _gib(n: float) -> str:
  return f"{n / 2**30:.2f} GiB"


def check_memory(group: Group, estimate: MemoryEstimate, mesh: Any, limit: int | None,
                 index: int = 0) -> None:
  """Raises ValueError if `group`, spread over `mesh`, needs more than 90% of `limit`."""
  if limit is None:
    return
  data = sharding.data_size(mesh)
  along_configs = sharding.configs_size(mesh)
  runs_per_device = -(-len(group) // along_configs)
  cpu = jax.devices()[0].platform == "cpu"
  if cpu:  # The CPU's "devices" share one memory: compare the total.
    devices = 1 if mesh is None else mesh.devices.size
    need = len(group) * estimate.per_device(data) * (data if devices > 1 else 1)
    where = f"this host's {_gib(limit)} of memory"
  else:
    need = runs_per_device * estimate.per_device(data)
    where = f"the {_gib(limit)} of one {jax.devices()[0].device_kind}"
  if need <= 0.9 * limit:
    return
  per_run = need / (len(group) if cpu else runs_per_device)
  fit = int(0.9 * limit // per_run) * (1 if cpu else along_configs)
  advice = (f"split it with --max-vmap {fit}" if fit >= 1 else
            "even one run does not fit: lower buffer_size, selfplay_batch or train_batch")
  raise ValueError(
      f"sweep group {index + 1} ({len(group)} runs vmapped: {group.runs[0].name}, ...) needs "
      f"about {_gib(need)} (per run: replay buffer and games {_gib(estimate.replay)}, search "
      f"tree {_gib(estimate.search)}, training {_gib(estimate.training)}, parameters and "
      f"optimizer {_gib(estimate.replicated)}), more than 90% of {where}; {advice}, or use "
      "fewer seeds or values per group")


# -- Stacked states --------------------------------------------------------------------------------


def stack(trees: Sequence[Any]) -> Any:
  """`K` pytrees of one structure -> one pytree with a leading `[K]` axis."""
  return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def unstack(tree: Any, index: int) -> Any:
  """Row `index` of a stacked pytree."""
  return jax.tree.map(lambda x: x[index], tree)


def to_host(tree: Any) -> Any:
  """`tree` as numpy arrays, also when its arrays span the devices of several hosts."""
  if jax.process_count() == 1:
    return jax.device_get(tree)
  from jax.experimental import multihost_utils
  return multihost_utils.process_allgather(tree, tiled=True)


def stacked_hyper(group: Group) -> Hyper:
  """`[K]` arrays of every run's batched hyperparameters."""
  return stack([Hyper.from_config(run.config).as_arrays() for run in group.runs])


@dataclasses.dataclass(frozen=True)
class GroupProgram:
  """The compiled functions of one group: stacked init and the vmapped iteration."""

  trainer: Trainer
  init: Any  # seeds [K] int32 -> stacked TrainState
  iteration: Any  # (stacked TrainState, stacked Hyper) -> (TrainState, metrics of [K])


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
  iteration = jax.vmap(trainer.iteration,
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
  compile_seconds: float  # the first iteration, compilation included
  seconds_per_iteration: float  # later iterations (evaluations and checkpoints excluded)
  iterations: int
  stopped_by: str = "iterations"  # or "minutes", "interrupt"


def _eval_columns(results: dict[str, Any]) -> dict[str, float]:
  """The metrics columns of an evaluation, as a single run writes them."""
  row = {f"eval/{name}/score": r.score for name, r in results.items()}
  row.update({f"eval/{name}/ci": (r.interval[1] - r.interval[0]) / 2
              for name, r in results.items()})
  return row


def _finite(metrics: dict[str, np.ndarray], index: int) -> bool:
  return all(math.isfinite(float(metrics[k][index])) for k in ("loss", "grad_norm"))


def train_group(group: Group, index: int, sweep_dir: Path, *, mesh: Any = None,
                loop_configs: bool = False, progress: bool = True,
                interrupted: dict | None = None,
                log=print) -> tuple[list[RunResult], GroupTiming]:
  """Trains the runs of `group` together; writes each run's directory like a single run.

  A run whose loss turns NaN stops being logged, checkpointed and evaluated (its last good
  checkpoint is kept, and the summary says when it diverged); the others go on.
  """
  from azjax.driver import _MetricsWriter, plot_run  # Shared with single runs.
  from azjax.evaluation import Evaluator

  config = group.config
  program = group_program(group, mesh, loop_configs=loop_configs)
  trainer = program.trainer
  evaluator = Evaluator(trainer)
  results = [RunResult(run=run, group=index, run_dir=sweep_dir / run.name) for run in group.runs]
  # With several hosts, every process trains and checkpoints (orbax saves collectively) and the
  # first one alone writes metrics and plots.
  primary = jax.process_index() == 0
  writers, managers = [], []
  for result in results:
    if primary:
      checkpoint.write_config(result.run_dir, result.run.config)
    writers.append(_MetricsWriter(result.run_dir, tensorboard=False) if primary else None)
    managers.append(checkpoint.manager(result.run_dir))

  def write(i: int, row: dict) -> None:
    if writers[i] is not None:
      writers[i].write(row)

  hypers = stacked_hyper(group)
  seeds = jnp.array([run.config.seed for run in group.runs], jnp.int32)
  states = program.init(seeds)
  interrupted = interrupted if interrupted is not None else {"flag": False}

  def evaluate(states, it: int) -> list[dict[str, Any]]:
    out = []
    for i, result in enumerate(results):
      if result.diverged_at is not None:
        out.append({})
        continue
      # On the host first: a slice of a state spread over devices lives on some of them only.
      variables = to_host(Trainer.variables(unstack(states, i)))
      final = evaluator.evaluate(variables, jax.random.PRNGKey(it))
      result.final = final
      out.append(_eval_columns(final))
    return out

  def save(states, it: int) -> None:
    """As a single run saves: the resumable state, and a snapshot of the network."""
    for i, result in enumerate(results):
      if result.diverged_at is None:
        state = unstack(states, i)
        checkpoint.save(managers[i], it, state, {"iteration": it})
        checkpoint.save_model(result.run_dir, to_host(Trainer.variables(state)), step=it)

  if config.eval_every and config.eval_games:
    for i, columns in enumerate(evaluate(states, 0)):
      write(i, {"iteration": 0, "positions": 0, "games": 0, "sgd_steps": 0, "seconds": 0.0,
                **columns})
  bar = None
  if progress:
    try:
      from tqdm.auto import tqdm
      bar = tqdm(total=None if config.minutes else config.iterations, unit="it",
                 desc=f"group {index + 1}", dynamic_ncols=True)
    except ImportError:  # pragma: no cover
      pass
  budget = config.minutes * 60 if config.minutes else math.inf
  t_start = time.time()
  t_last, positions_last, last_saved = t_start, 0, 0
  compile_seconds, loop_seconds, loop_iterations = 0.0, 0.0, 0
  it = 0
  try:
    while it < config.iterations and time.time() - t_start < budget and not interrupted["flag"]:
      t0 = time.time()
      states, metrics = program.iteration(states, hypers)
      metrics = jax.device_get(metrics)
      counters = to_host((states.iteration, states.positions, states.games_finished,
                          states.sgd_steps))
      seconds = time.time() - t0
      if it == 0:
        compile_seconds = seconds
      else:
        loop_seconds, loop_iterations = loop_seconds + seconds, loop_iterations + 1
      it = int(counters[0][0])
      now = time.time()
      is_last = (it >= config.iterations or now - t_start >= budget or interrupted["flag"])
      for i, result in enumerate(results):
        if result.diverged_at is not None:
          continue
        if bool(metrics["trained"][i]) and not _finite(metrics, i):
          result.diverged_at = it
          log(f"{result.run.name}: the loss is not finite at iteration {it}; its last good "
              "checkpoint is kept and it is left out from now on")
      positions = int(counters[1][0])
      row_base = {"iteration": it, "positions": positions, "seconds": round(now - t_start, 3),
                  "positions_per_second": (positions - positions_last) / max(now - t_last, 1e-9)}
      t_last, positions_last = now, positions
      evals = (evaluate(states, it) if (config.eval_every and it % config.eval_every == 0)
               or is_last else [{}] * len(results))
      for i, result in enumerate(results):
        if result.diverged_at is not None:
          continue
        row = dict(row_base, games=int(counters[2][i]), sgd_steps=int(counters[3][i]))
        row.update({k: float(v[i]) for k, v in metrics.items() if k != "trained"})
        row.update(evals[i])
        write(i, row)
        result.iterations, result.positions, result.games = it, positions, int(counters[2][i])
      if config.checkpoint_every and it % config.checkpoint_every == 0:
        save(states, it)
        last_saved = it
      if bar is not None:
        bar.update(1)
        live = [i for i, r in enumerate(results) if r.diverged_at is None]
        postfix = {"runs": f"{len(live)}/{len(results)}",
                   "pos/s": f"{row_base['positions_per_second'] * len(live):.0f}"}
        if config.minutes:
          postfix["min left"] = f"{max(budget - (now - t_start), 0) / 60:.1f}"
        if live and bool(metrics["trained"][live[0]]):
          postfix["pi"] = f"{np.mean([metrics['policy_loss'][i] for i in live]):.3f}"
        bar.set_postfix(postfix, refresh=False)
  finally:
    if bar is not None:
      bar.close()
  if it and it != last_saved:
    save(states, it)
  for i, result in enumerate(results):
    if result.diverged_at is None and it:
      checkpoint.save_model(result.run_dir, to_host(Trainer.variables(unstack(states, i))))
    if primary:
      plot_run(result.run_dir)
      result.losses = _final_losses(result.run_dir)
      write_result(result)
  stopped_by = ("interrupt" if interrupted["flag"] else
                "iterations" if it >= config.iterations else "minutes")
  timing = GroupTiming(
      runs=len(group), mesh=sharding.describe(mesh), compile_seconds=round(compile_seconds, 2),
      seconds_per_iteration=round(loop_seconds / max(loop_iterations, 1), 4), iterations=it,
      stopped_by=stopped_by)
  return results, timing


RESULT_FILE = "final.json"


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
  from azjax.driver import read_metrics
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
    check_memory(group, estimate, mesh, limit, index)
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
      ckpt = run_dir / "checkpoints"
      if (run_dir / "metrics.jsonl").exists() or (ckpt.exists() and any(ckpt.iterdir())):
        raise ValueError(f"{run_dir} already holds a run; choose another sweep name or "
                         "directory")
  sweep_dir.mkdir(parents=True, exist_ok=True)
  info = {"command": command, "game": base.game, "base": json.loads(base.to_json()),
          "grid": {k: [_format(v) if not isinstance(v, str) else v for v in vs]
                   for k, vs in grid.items()},
          "seeds": list(seeds) if seeds is not None else None,
          "groups": [[run.name for run in g.runs] for g, _, _ in planned]}
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
  (sweep_dir / "sweep.json").write_text(json.dumps(info, indent=2) + "\n")
  files = (write_summary(sweep_dir, results, timings, command=command, grid_keys=list(grid))
           if jax.process_index() == 0 else [])
  return SweepSummary(sweep_dir=sweep_dir, results=results, timings=timings, files=files,
                      interrupted=interrupted["flag"])


# -- Summary: CSV, ranking, plots ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SettingScore:
  """A setting's final results pooled over its seeds."""

  setting: str
  seeds: int
  wins: int
  draws: int
  losses: int
  seed_scores: tuple[float, ...]

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def score(self) -> float:
    return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

  @property
  def interval(self) -> tuple[float, float]:
    from azjax.arena import wilson_interval
    return wilson_interval(self.score, self.games) if self.games else (math.nan, math.nan)


def pool(results: Sequence[RunResult], opponent: str) -> dict[str, SettingScore]:
  """Per setting: the final games against `opponent` of all its seeds, pooled."""
  out: dict[str, list[RunResult]] = {}
  for r in results:
    out.setdefault(r.run.setting, []).append(r)
  pooled = {}
  for setting, members in out.items():
    finals = [m.final[opponent] for m in members if opponent in m.final]
    pooled[setting] = SettingScore(
        setting=setting, seeds=len(members), wins=sum(f.wins for f in finals),
        draws=sum(f.draws for f in finals), losses=sum(f.losses for f in finals),
        seed_scores=tuple(f.score for f in finals))
  return pooled


def _finite_mean(values: Iterable[float]) -> float:
  """Mean of the finite values (NaN if none: e.g. every seed diverged)."""
  finite = [v for v in values if math.isfinite(v)]
  return float(np.mean(finite)) if finite else math.nan


def rank(results: Sequence[RunResult]) -> tuple[list[str], list[str]]:
  """`(settings best first, opponents)`: by pooled score against the strongest opponent (the
  last evaluated), then the next, and so on; then by final value loss."""
  opponents = list(dict.fromkeys(k for r in results for k in r.final))
  pooled = {o: pool(results, o) for o in opponents}
  settings = list(dict.fromkeys(r.run.setting for r in results))
  value_loss = {s: _finite_mean(r.losses.get("value_loss", math.nan) for r in results
                                if r.run.setting == s) for s in settings}

  def key(setting):
    scores = [pooled[o][setting].score for o in reversed(opponents)]
    scores = [-s if math.isfinite(s) else math.inf for s in scores]
    vl = value_loss[setting]
    return (*scores, vl if math.isfinite(vl) else math.inf)

  return sorted(settings, key=key), opponents


def write_summary(sweep_dir: Path, results: Sequence[RunResult], timings: Sequence[GroupTiming],
                  *, command: str | None = None, grid_keys: Sequence[str] = ()) -> list[Path]:
  """summary.csv, summary.md, curves.png and final.png in `sweep_dir`; returns their paths."""
  sweep_dir = Path(sweep_dir)
  if not results:
    return []
  order, opponents = rank(results)
  keys = [k for k in grid_keys if k != "seed"]
  # -- summary.csv: one row per run.
  fields = (["run", "setting", "rank", "group", *keys, "seed", "iterations", "positions", "games",
             "final_policy_loss", "final_value_loss", "diverged_at"]
            + [f"{o}_{c}" for o in opponents
               for c in ("score", "ci_low", "ci_high", "wins", "draws", "losses")])
  csv_path = sweep_dir / "summary.csv"
  with open(csv_path, "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(fields)
    for r in results:
      row = {"run": r.run.name, "setting": r.run.setting, "rank": order.index(r.run.setting) + 1,
             "group": r.group + 1, **{k: _format(r.run.values[k]) for k in keys},
             "seed": r.run.values["seed"], "iterations": r.iterations, "positions": r.positions,
             "games": r.games, "final_policy_loss": f"{r.losses.get('policy_loss', math.nan):.4f}",
             "final_value_loss": f"{r.losses.get('value_loss', math.nan):.4f}",
             "diverged_at": r.diverged_at if r.diverged_at is not None else ""}
      for o in opponents:
        m = r.final.get(o)
        if m is not None:
          row.update({f"{o}_score": f"{m.score:.4f}", f"{o}_ci_low": f"{m.interval[0]:.4f}",
                      f"{o}_ci_high": f"{m.interval[1]:.4f}", f"{o}_wins": m.wins,
                      f"{o}_draws": m.draws, f"{o}_losses": m.losses})
      writer.writerow([row.get(k, "") for k in fields])
  # -- summary.md: the ranking and the groups.
  pooled = {o: pool(results, o) for o in opponents}
  by_setting = {s: [r for r in results if r.run.setting == s] for s in order}
  lines = [f"# Sweep {sweep_dir.name}", ""]
  if command:
    lines += ["```", command, "```", ""]
  lines += [f"{len(results)} runs, {len(order)} settings; scores are final (win = 1, draw = 1/2), "
            "each setting's games pooled over its seeds, with a 95% Wilson interval (it counts "
            "games, not seeds, so it leaves out seed-to-seed variation: the spread column "
            "gives the lowest and highest seed). Losses: mean of the last 5 iterations, "
            "averaged over seeds.", ""]
  header = "| rank | setting | seeds | " + " | ".join(
      f"vs {o} (95% CI) | {o} seed range" for o in opponents) + " | policy loss | value loss |"
  lines += [header, "|" + "---|" * (header.count("|") - 1)]
  for i, s in enumerate(order):
    cells = []
    for o in opponents:
      p = pooled[o][s]
      low, high = p.interval
      cells.append(f"{p.score:.3f} [{low:.3f}, {high:.3f}]" if p.games else "n/a")
      cells.append(f"{min(p.seed_scores):.2f}-{max(p.seed_scores):.2f}" if p.seed_scores
                   else "n/a")
    runs = by_setting[s]
    pl = _finite_mean(r.losses.get("policy_loss", math.nan) for r in runs)
    vl = _finite_mean(r.losses.get("value_loss", math.nan) for r in runs)
    diverged = sum(r.diverged_at is not None for r in runs)
    note = f" ({diverged} diverged)" if diverged else ""
    lines.append(f"| {i + 1} | {s}{note} | {len(runs)} | " + " | ".join(cells)
                 + f" | {pl:.3f} | {vl:.3f} |")
  if timings:  # (`--summarize` of an existing sweep has none)
    lines += ["", "| group | runs | vmapped on | iterations | first iteration (compile) "
              "| s / iteration |", "|---|---|---|---|---|---|"]
  for i, t in enumerate(timings):
    lines.append(f"| {i + 1} | {t.runs} | {t.mesh} | {t.iterations} | {t.compile_seconds:.1f} s "
                 f"| {t.seconds_per_iteration:.3f} |")
  lines += ["", "Per run: `summary.csv`; learning curves: `curves.png`; final scores: "
            "`final.png`; each run's own metrics, plots and checkpoints: `<run>/`.", ""]
  md_path = sweep_dir / "summary.md"
  md_path.write_text("\n".join(lines))
  return [csv_path, md_path] + plot_sweep(sweep_dir, results, order, opponents)


def _smooth(y: np.ndarray, width: int) -> np.ndarray:
  """Centered moving average that ignores NaNs (the iterations before training starts)."""
  if width <= 1:
    return y
  ok = np.isfinite(y)
  kernel = np.ones(width)
  num = np.convolve(np.where(ok, y, 0.0), kernel, mode="same")
  den = np.convolve(ok.astype(float), kernel, mode="same")
  with np.errstate(invalid="ignore", divide="ignore"):
    return np.where(ok, num / den, np.nan)


def plot_sweep(sweep_dir: Path, results: Sequence[RunResult], order: Sequence[str],
               opponents: Sequence[str]) -> list[Path]:
  """curves.png (losses and scores over positions: mean over seeds, min-max band) and final.png
  (each setting's pooled final score with its 95% interval, and each seed's)."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  from azjax.driver import read_metrics

  colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
  colour = {s: colours[i % len(colours)] for i, s in enumerate(order)}
  panels = [("policy_loss", "policy loss"), ("value_loss", "value loss")] + [
      (f"eval/{o}/score", f"score vs {o}") for o in opponents]
  fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
  for setting in order:
    runs = [read_metrics(r.run_dir) for r in results if r.run.setting == setting]
    for ax, (key, label) in zip(axes[0], panels):
      curves = []
      for rows in runs:
        pts = [(r["positions"], r[key]) for r in rows if key in r and r[key] is not None]
        if pts:
          curves.append(dict(pts))
      if not curves:
        continue
      # Runs of one setting share their x values (same batch sizes, same iterations).
      xs = sorted(set().union(*curves))
      ys = np.array([[c.get(x, np.nan) for x in xs] for c in curves], dtype=float)
      if not key.startswith("eval/"):
        ys = np.stack([_smooth(y, max(1, len(xs) // 25)) for y in ys])
      with warnings.catch_warnings():  # All-NaN columns (before training starts) are fine.
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, low, high = np.nanmean(ys, 0), np.nanmin(ys, 0), np.nanmax(ys, 0)
      marker = "o" if key.startswith("eval/") else None
      ax.plot(xs, mean, color=colour[setting], marker=marker, ms=3, label=setting)
      if len(curves) > 1:
        ax.fill_between(xs, low, high, color=colour[setting], alpha=0.2, lw=0)
  for ax, (key, label) in zip(axes[0], panels):
    ax.set_xlabel("self-play positions (per run)")
    ax.set_title(label)
    if key.startswith("eval/"):
      ax.set_ylim(-0.02, 1.02)
  axes[0][-1].legend(fontsize=7, loc="lower right")
  fig.suptitle(f"{sweep_dir.name}: mean over seeds, band = lowest to highest seed", fontsize=10)
  fig.tight_layout()
  curves_path = sweep_dir / "curves.png"
  fig.savefig(curves_path, dpi=100)
  plt.close(fig)
  out = [curves_path]
  if opponents:
    fig, axes = plt.subplots(1, len(opponents), figsize=(5 * len(opponents),
                                                         1.2 + 0.45 * len(order)), squeeze=False)
    for ax, o in zip(axes[0], opponents):
      pooled = pool(results, o)
      for y, setting in enumerate(order):
        p = pooled[setting]
        if not p.games:
          continue
        low, high = p.interval
        ax.errorbar([p.score], [y], xerr=[[p.score - low], [high - p.score]], fmt="o",
                    color=colour[setting], capsize=4)
        ax.scatter(p.seed_scores, [y] * len(p.seed_scores), marker="|", s=120,
                   color=colour[setting], alpha=0.7)
      ax.set_yticks(range(len(order)), [f"{i + 1}. {s}" for i, s in enumerate(order)],
                    fontsize=8)
      ax.set_ylim(len(order) - 0.5, -0.5)  # Best on top.
      ax.set_xlim(-0.02, 1.02)
      ax.set_xlabel(f"final score vs {o} (95% CI; ticks: seeds)")
    fig.tight_layout()
    final_path = sweep_dir / "final.png"
    fig.savefig(final_path, dpi=100)
    plt.close(fig)
    out.append(final_path)
  return out
