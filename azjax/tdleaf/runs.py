"""TD-Leaf training runs through the one outer loop (`azjax.runs.loop`), and TD-Leaf's run kind
(`KIND`, a line of `azjax.runs.kinds`): its game, its players and its solver scoring.

A run gets what an AlphaZero run has: the run-directory rules (`azjax.runs.layout`), a progress
bar, Ctrl-C after the iteration in flight with a checkpoint, the NaN stop, metrics pruned on
resume (every iteration is logged once), the plots and the compile cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import jax

from azjax import agents, games
from azjax.games import base
from azjax.runs import checkpoint, layout, loop, start
from azjax.runs.base import RunKind
from azjax.tdleaf.config import CONFIG_FILE, Config
from azjax.tdleaf.learner import Learner


def solver_scorer(learner: Learner, positions: Any = None,
                  by_source: bool = False) -> Callable[[Any], dict[str, Any]]:
  """`params -> {"alphabeta<depth>": move_metrics}`: the player's moves (and the sign of its
  root values) on solver-labelled `positions` (default: the game's committed set, loaded once
  here; `by_source`: each source of positions apart too).

  Raises:
    ValueError: the game has no solver benchmark; FileNotFoundError: its file is missing.
  """
  from azjax.solver import benchmark as solver_benchmark

  if positions is None:
    positions = solver_benchmark.Positions.load(
        solver_benchmark.positions_path(learner.env.name))
  states = positions.states(learner.env)
  player = f"alphabeta{learner.config.depth}"

  def score(params: Any) -> dict[str, Any]:
    # The same key every time: the curve's changes come from the evaluation alone.
    actions, values = jax.device_get(learner.decide(params, states, jax.random.key(0)))
    return {player: solver_benchmark.move_metrics(positions, actions, values,
                                                  by_source=by_source)}

  return score


def learning(learner: Learner, solver: Callable | None = None) -> loop.Learning:
  """What the outer loop needs of a TD-Leaf run (`azjax.runs.loop.Learning`); its state is
  `(TrainState, kept games)`, of which the checkpoints keep the first."""
  from azjax.solver import benchmark as solver_benchmark

  config = learner.config

  def evaluate(params, key):
    return {"hand": learner.score_against_hand(params, key)}

  def counters(state):
    train_state, _ = state
    return {"iteration": train_state.iteration, "positions": train_state.positions,
            "games": train_state.games}

  return loop.Learning(
      settings=config, variables=lambda state: state[0].params, counters=counters,
      evaluate=evaluate if config.eval_every and config.eval_games else None,
      solver=None if solver is None else
      lambda params, key: solver_benchmark.overall(solver(params), prefix="solver/"),
      checkpointed=lambda state: state[0])


def train(config: Config, run_dir: str | os.PathLike, *, resume: bool = False,
          overwrite: bool = False, progress: bool = True, max_iterations: int | None = None,
          log=print) -> loop.RunOutput:
  """Trains a TD-Leaf run in `run_dir` (new, continued with `resume`, or replacing the run there
  with `overwrite`), writing `tdleaf.json`, `metrics.jsonl` (one row an iteration; `seconds`
  counts training time over every session, compiling excluded), checkpoints, `models/<it>`
  snapshots, `model` and the plots. Returns the run's output (its last row, model, plots).

  Raises:
    ValueError: the directory's rules (`azjax.runs.layout.check_run_dir`), or `solver_every`
      for a game without a solver benchmark (nothing is written then).
    NaNLossError: the loss became NaN; the last good checkpoint is kept.
  """
  run_dir = Path(run_dir)
  config.validate()
  layout.check_run_dir(run_dir, config, resume=resume, overwrite=overwrite,
                       settings=CONFIG_FILE, saved=Config.load)
  learner = Learner(config)
  solver = solver_scorer(learner) if config.solver_every else None  # Fails before writing.
  # -- Every check passed: from here on the run writes. ---------------------------------------
  state, run = start.open_run(run_dir, learner.init(jax.random.key(config.seed)),
                              settings_file=CONFIG_FILE, save_settings=config.save,
                              resume=resume, overwrite=overwrite, log=log)

  @jax.jit
  def step(carry):
    state, kept = carry
    state, kept, metrics = learner.iteration(state, kept)
    return (state, kept), metrics

  log(f"TD-Leaf on {learner.env.describe()}: alpha-beta depth {config.depth}, {config.batch} "
      f"games at once, {config.evaluation} evaluation; run directory {run_dir}")
  with loop.stop_on_interrupt(log) as interrupted:
    result = loop.train(step, (state, learner.empty_replay()), [run],
                        learning(learner, solver), max_iterations=max_iterations,
                        interrupted=interrupted, progress=progress, desc="tdleaf", log=log)
  log(f"trained {result.iterations} iterations in {result.train_seconds / 60:.1f} min of "
      f"training (stopped by {result.stopped_by}; compiling took "
      f"{result.compile_seconds:.0f} s); run: {run_dir}")
  return run


# -- The run kind --------------------------------------------------------------------------------


def load(run_dir: str | os.PathLike, step: int | None = None) -> tuple[Learner, Any]:
  """`(learner, params)` of a TD-Leaf run (its final `model`, or the snapshot at `step`)."""
  learner = Learner(Config.load(run_dir))
  abstract = learner.evaluator.init(jax.random.key(0))
  return learner, checkpoint.load_model(run_dir, abstract, step=step)


def game(run_dir: str | os.PathLike) -> base.Game:
  return Config.load(run_dir).make_env()


def load_player(run_dir: str, *, step: int | None = None, alphabeta_depth: int | None = None,
                game_options: dict | None = None, **search: Any
                ) -> tuple[base.Game, agents.Agent]:
  """The run's alpha-beta player with its learned evaluation (see `azjax.runs.load`), at
  `alphabeta_depth` (default the run's depth); with `game_options` (e.g. `{"size": 7}`) on
  another variant of its game. The options of a network with search (`search`) do not apply."""
  learner, params = load(run_dir, step=step)
  env = learner.env
  if game_options:
    env = games.make(learner.config.game, **{**learner.config.game_options, **game_options})
  depth = alphabeta_depth or learner.config.depth
  label = f"{run_dir}".rstrip("/") + ("" if step is None else f"@{step}")
  return env, learner.player(params, env, depth=depth, name=f"tdleaf-d{depth}({label})")


def kind_solver_scorer(run_dir: Path, positions: Any, simulations: tuple[int, ...], *,
                       batch_size: int | None = None):
  """The run's alpha-beta player ("alphabeta<depth>") on `positions`, for any snapshot's
  params; it has no raw policy and no search with simulations, and scores every position at
  once (`batch_size` does not apply)."""
  del simulations, batch_size
  learner = Learner(Config.load(run_dir))
  score = solver_scorer(learner, positions, by_source=True)
  return learner.evaluator.init(jax.random.key(0)), lambda params, key: score(params)


KIND = RunKind(name="tdleaf", summary="alpha-beta with a learned evaluation",
               read_config=Config.load, game=game, load=load_player,
               solver_scorer=kind_solver_scorer, play_kind="tdleaf")
