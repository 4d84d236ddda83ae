"""TD-Leaf training runs: a run directory's training (checkpointed, resumable, scored during
training), and reading a trained run back."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import jax

from azjax import arena, files
from azjax.tdleaf.learner import CONFIG_FILE, Config, Learner


def _score_columns(result: arena.MatchResult, prefix: str = "hand") -> dict:
  low, high = result.interval
  return {f"score_vs_{prefix}": result.score, f"score_vs_{prefix}_low": low,
          f"score_vs_{prefix}_high": high}


def solver_scorer(learner: Learner, positions: Any = None) -> Callable[[Any], dict[str, float]]:
  """`params -> {"solver/alphabeta<depth>/<metric>": value}`: the player's moves (and the sign
  of its root values) on solver-labelled `positions` (default: the game's committed set,
  loaded once here).

  Raises:
    ValueError: the game has no solver benchmark; FileNotFoundError: its file is missing.
  """
  from azjax.solver import benchmark as solver_benchmark

  if positions is None:
    positions = solver_benchmark.Positions.load(
        solver_benchmark.positions_path(learner.env.name))
  states = positions.states(learner.env)
  player = f"alphabeta{learner.config.depth}"

  def score(params: Any) -> dict[str, float]:
    # The same key every time: the curve's changes come from the evaluation alone.
    actions, values = jax.device_get(learner.decide(params, states, jax.random.key(0)))
    results = {player: solver_benchmark.move_metrics(positions, actions, values)}
    return solver_benchmark.overall(results, prefix="solver/")

  return score


def _summary(row: dict) -> str:
  """The scores of a metrics row, for the log: against the hand evaluation, mistakes."""
  parts = []
  if "score_vs_hand" in row:
    parts.append(f"score vs hand {row['score_vs_hand']:.3f}")
  if "training_vs_hand" in row:
    parts.append(f"in training games vs hand {row['training_vs_hand']:.2f}")
  parts += [f"{key.split('/')[1]} mistakes {value:.1%}" for key, value in row.items()
            if key.startswith("solver/") and key.endswith("/mistake_rate")]
  return ", ".join(parts)


def _played_so_far(path: Path) -> tuple[int, int]:
  """`(positions, games)` played so far by a run being resumed (zeros for a new one)."""
  last = (files.read_jsonl(path) or [{}])[-1] if path.exists() else {}
  return int(last.get("positions", 0)), int(last.get("games", 0))


def train(config: Config, run_dir: str | Path, *, resume: bool = False, log=print) -> dict:
  """Trains a TD-Leaf run in `run_dir` (new, or continued with `resume`), writing
  `tdleaf.json`, `metrics.jsonl` (one row an iteration; `seconds` counts training time over
  every chunk, compiling excluded), checkpoints, `models/<iteration>` snapshots and `model`.
  Returns the last metrics row.

  Raises:
    ValueError: a new run in a directory that holds a run, `resume` of one that holds none, or
      `solver_every` for a game without a solver benchmark (nothing is written then).
  """
  import time

  from azjax.runs import checkpoint

  run_dir = Path(run_dir)
  holds = (run_dir / CONFIG_FILE).exists() or (run_dir / "config.json").exists()
  if resume and not (run_dir / CONFIG_FILE).exists():
    raise ValueError(f"{run_dir}: no TD-Leaf run to resume (no {CONFIG_FILE})")
  if not resume and holds:
    raise ValueError(f"{run_dir} holds a run; continue it with --resume, or choose another "
                     f"--run-dir (nothing was changed)")
  if resume:
    saved = Config.load(run_dir)
    config = dataclasses.replace(saved, minutes=config.minutes, iterations=config.iterations)
  learner = Learner(config)
  solver = solver_scorer(learner) if config.solver_every else None  # Fails before writing.
  run_dir.mkdir(parents=True, exist_ok=True)
  config.save(run_dir)
  state = learner.init(jax.random.key(config.seed))
  mngr = checkpoint.manager(run_dir)
  seconds = 0.0
  if resume and mngr.latest_step() is not None:
    state, meta, step = checkpoint.restore_intact(mngr, state, log=log)
    seconds = float(meta.get("seconds", 0.0))
    log(f"resumed {run_dir} at iteration {step} ({seconds / 60:.1f} min trained)")
  metrics_path = run_dir / "metrics.jsonl"
  eval_key = jax.random.key(config.seed + 1)

  def save(it: int) -> None:
    checkpoint.save(mngr, it, state, meta={"seconds": seconds})
    checkpoint.save_model(run_dir, state.params, step=it)
    checkpoint.save_model(run_dir, state.params)  # `model`: the latest, what `load` reads

  log(f"compiling the TD-Leaf iteration ({config.game}, depth {config.depth}, "
      f"{config.batch} games at once) ...")
  t0 = time.time()
  kept = learner.empty_replay()
  learner.iteration.lower(state, kept).compile()
  log(f"compiled in {time.time() - t0:.0f} s")
  if int(state.iteration) == 0 and (config.eval_every or solver):
    row = {"iteration": 0, "seconds": 0.0, "games": 0}
    if config.eval_every:
      row.update(_score_columns(learner.score_against_hand(state.params, eval_key)))
    if solver:
      row.update(solver(state.params))
    files.append_jsonl([row], metrics_path)
    log(f"iteration 0: {_summary(row)}")
  budget = config.minutes * 60 if config.minutes else float("inf")
  start_seconds, row = seconds, {}
  positions, games_so_far = _played_so_far(metrics_path)
  while int(state.iteration) < config.iterations and seconds - start_seconds < budget:
    t = time.time()
    state, kept, metrics = learner.iteration(state, kept)
    metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
    seconds += time.time() - t
    it = int(state.iteration)
    games_so_far += int(metrics["games_finished"])
    positions += int(metrics["iteration_positions"])
    row = {"iteration": it, "seconds": round(seconds, 2), **metrics, "games": games_so_far,
           "positions": positions}
    if config.eval_every and it % config.eval_every == 0:
      eval_key, key = jax.random.split(eval_key)
      row.update(_score_columns(learner.score_against_hand(state.params, key)))
    if solver and it % config.solver_every == 0:
      row.update(solver(state.params))
    files.append_jsonl([row], metrics_path)
    extra = _summary(row)
    log(f"iteration {it}: {seconds / 60:.1f} min, loss {metrics['loss']:.4f}, game length "
        f"{metrics['mean_game_length']:.0f}, draws {metrics['draw_rate']:.2f}"
        + (f", {extra}" if extra else ""))
    if it % config.checkpoint_every == 0:
      save(it)
  save(int(state.iteration))
  log(f"trained {int(state.iteration)} iterations in {seconds / 60:.1f} min; run: {run_dir}")
  return row


def load(run_dir: str | Path, step: int | None = None) -> tuple[Learner, Any]:
  """`(learner, params)` of a TD-Leaf run (its final `model`, or the snapshot at `step`)."""
  from azjax.runs import checkpoint

  learner = Learner(Config.load(run_dir))
  abstract = learner.evaluator.init(jax.random.key(0))
  return learner, checkpoint.load_model(run_dir, abstract, step=step)


def is_run(run_dir: str | Path) -> bool:
  """Whether `run_dir` holds a TD-Leaf run."""
  return (Path(run_dir) / CONFIG_FILE).exists()
