"""KLENT training runs on the one outer loop (`azjax.runs.loop.train`): progress, Ctrl-C with a
checkpoint, the NaN stop, resume with the metrics pruned, plots, snapshots in `models/<it>`,
and the same evaluations as an AlphaZero run (the policy network with the evaluation search
against random and rollout MCTS, and on solved games its mistakes raw and searched).

A KLENT run directory holds `klent.json` (its settings, `KlentConfig`) and `config.json`, the
AlphaZero `Config` of its network and evaluation player (`KlentConfig.player_config`): the
policy network is an ordinary (logits, value) network, so `azjax.agents.load`, `azjax
evaluate` and `azjax play` read it as they read any run's. `klent.json` is what marks the
directory as KLENT's (a run-kind registry should look for it before `config.json`).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from azjax.evaluate.evaluators import SolverEvaluator
from azjax.klent.config import CONFIG_FILE, KlentConfig
from azjax.klent.learner import Learner
from azjax.runs import checkpoint, driver, loop


@dataclasses.dataclass(frozen=True)
class Player:
  """What the loop and the evaluators read of a run's static parts (as of a `Trainer`): the
  player config, the game and the network module."""

  config: Any  # azjax.config.Config
  game: Any
  model: Any


def is_run(run_dir: str | Path) -> bool:
  """Whether `run_dir` holds a KLENT run."""
  return (Path(run_dir) / CONFIG_FILE).exists()


def train(config: KlentConfig, run_dir: str | Path, *, resume: bool = False,
          progress: bool = True, max_iterations: int | None = None,
          log=print) -> loop.LoopResult:
  """Trains a KLENT run in `run_dir` (new, or continued with `resume`; only `minutes` and
  `iterations` may change then). Returns the loop's result.

  Raises:
    ValueError: a new run where a run is, a resume where no KLENT run is, a resume whose
      settings differ, or `solver_every` for a game without a solver benchmark (nothing is
      written then).
  """
  run_dir = Path(run_dir)
  config = config.validate()
  if resume:
    if not is_run(run_dir):
      raise ValueError(f"{run_dir}: no KLENT run to resume (no {CONFIG_FILE})")
    saved = KlentConfig.load(run_dir)
    diff = [k for k in dataclasses.asdict(config) if k not in ("minutes", "iterations")
            and getattr(saved, k) != getattr(config, k)]
    if diff:
      raise ValueError(f"--resume: the settings differ from {run_dir}/{CONFIG_FILE}: "
                       + ", ".join(f"{k}: saved {getattr(saved, k)!r}, now "
                                   f"{getattr(config, k)!r}" for k in diff))
  elif is_run(run_dir) or driver.run_files(run_dir):
    held = ", ".join(([CONFIG_FILE] if is_run(run_dir) else []) + driver.run_files(run_dir))
    raise ValueError(f"{run_dir} holds a run ({held}); continue it with --resume or choose "
                     "another directory (nothing was changed)")
  learner = Learner(config)
  player = Player(config.player_config(), learner.game, learner.model)
  solver = SolverEvaluator(player) if config.solver_every else None  # Fails before writing.

  # -- Every check passed: from here on the run writes.
  run_dir.mkdir(parents=True, exist_ok=True)
  config.save(run_dir)
  checkpoint.write_config(run_dir, player.config)
  mngr = checkpoint.manager(run_dir)
  state = learner.init()
  have_checkpoint = False
  if resume and mngr.latest_step() is not None:
    state, _, step = checkpoint.restore_intact(
        mngr, state, log=lambda m: print(f"warning: {m}", file=sys.stderr))
    have_checkpoint = True
    log(f"resumed {run_dir} at iteration {step}")
  iteration = int(state.iteration)
  loop.prune_metrics(run_dir, iteration)
  earlier = [r for r in loop.read_metrics(run_dir) if r.get("iteration", 0) <= iteration]
  run = loop.RunOutput(
      run_dir=run_dir, manager=mngr, writer=loop.MetricsWriter(run_dir),
      last_saved=iteration, have_checkpoint=have_checkpoint,
      seconds_before=float(earlier[-1].get("seconds", 0.0)) if iteration and earlier else 0.0)
  with loop.stop_on_interrupt(log=log) as interrupted:
    return loop.train(learner.iteration, state, [run], player, solver_evaluator=solver,
                      max_iterations=max_iterations, interrupted=interrupted,
                      progress=progress, desc="klent", log=log)
