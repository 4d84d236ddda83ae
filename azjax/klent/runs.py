"""KLENT training runs on the one outer loop (`azjax.runs.loop.train` with KLENT's `Learning`),
and KLENT's run kind (`KIND`, a line of `azjax.runs.kinds`).

A run directory holds `klent.json` (its settings, `KlentConfig`), which marks it as KLENT's,
and what every run writes: metrics, plots, checkpoints, `models/<iteration>` and `model/`.
Its player is the policy network, an ordinary (logits, value) network: it is loaded, searched
and scored as an AlphaZero run's is (`azjax.runs.alphazero`), from the AlphaZero `Config` that
describes it (`KlentConfig.player_config`), so evaluate and play need nothing of their own.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from azjax.evaluate.evaluators import Evaluator, SolverEvaluator
from azjax.klent.config import CONFIG_FILE, KlentConfig
from azjax.klent.learner import KlentState, Learner
from azjax.runs import alphazero, layout, loop, start
from azjax.runs.base import RunKind


@dataclasses.dataclass(frozen=True)
class Player:
  """What the evaluators read of a run's static parts (as of a `Trainer`): the player config,
  the game and the network module."""

  config: Any  # azjax.config.Config
  game: Any
  model: Any


def learning(learner: Learner) -> loop.Learning:
  """What the outer loop needs of a KLENT run: its settings, the policy network as its
  variables, its counters, and the AlphaZero run's evaluations of that network (against
  random and rollout MCTS with the evaluation search; the solver benchmark raw and searched).

  Raises:
    ValueError: `solver_every` for a game without a solver benchmark.
  """
  config = learner.config
  player = Player(config.player_config(), learner.game, learner.model)
  # As an AlphaZero run's: eval_every = 0 evaluates at the end only; eval_games = 0 never.
  evaluator = Evaluator(player) if config.eval_games else None
  solver = SolverEvaluator(player) if config.solver_every else None

  def counters(state: KlentState) -> dict[str, Any]:
    return {"iteration": state.iteration, "positions": state.positions,
            "games": state.games_finished, "sgd_steps": state.sgd_steps}

  return loop.Learning(settings=config, variables=Learner.variables, counters=counters,
                       evaluate=None if evaluator is None else evaluator.evaluate,
                       solver=solver)


def train(config: KlentConfig, run_dir: str | os.PathLike, *, resume: bool = False,
          overwrite: bool = False, progress: bool = True, max_iterations: int | None = None,
          log=print) -> loop.LoopResult:
  """Trains a KLENT run in `run_dir` (new, continued with `resume`: only `minutes` and
  `iterations` may change; or replacing the run there with `overwrite`). Returns the loop's
  result.

  Raises:
    ValueError: the directory's rules (`azjax.runs.layout.check_run_dir`), or `solver_every`
      for a game without a solver benchmark (nothing is written then).
    NaNLossError: the loss became NaN; the last good checkpoint is kept.
  """
  run_dir = Path(run_dir)
  config = config.validate()
  layout.check_run_dir(run_dir, config, resume=resume, overwrite=overwrite,
                       settings=CONFIG_FILE, saved=KlentConfig.load)
  learner = Learner(config)
  learn = learning(learner)  # Loads the solver's positions: fails before writing.
  # -- Every check passed: from here on the run writes.
  state, run = start.open_run(run_dir, learner.init(), settings_file=CONFIG_FILE,
                              save_settings=config.save, resume=resume, overwrite=overwrite,
                              log=log)
  with loop.stop_on_interrupt(log) as interrupted:
    return loop.train(learner.iteration, state, [run], learn, max_iterations=max_iterations,
                      interrupted=interrupted, progress=progress, desc="klent", log=log)


# -- The run kind --------------------------------------------------------------------------------


def player_config(run_dir: str | os.PathLike):
  """The AlphaZero `Config` of a KLENT run's network and evaluation player."""
  return KlentConfig.load(run_dir).player_config()


def game(run_dir: str | os.PathLike):
  return KlentConfig.load(run_dir).make_env()


def load(run_dir: str, **options: Any):
  """The run's policy network as a player, as an AlphaZero run's (`azjax.runs.load`'s options)."""
  return alphazero.load(run_dir, config=player_config(run_dir), **options)


def solver_scorer(run_dir: Path, positions: Any, simulations: tuple[int, ...], *,
                  batch_size: int | None = None):
  return alphazero.solver_scorer(run_dir, positions, simulations, batch_size=batch_size,
                                 config=player_config(run_dir))


def is_run(run_dir: str | os.PathLike) -> bool:
  """Whether `run_dir` holds a KLENT run."""
  return KIND.recognises(run_dir)


KIND = RunKind(name="klent", summary="a policy-value network trained without search",
               read_config=KlentConfig.load, game=game, load=load,
               solver_scorer=solver_scorer, play_kind="az", network_config=player_config)
