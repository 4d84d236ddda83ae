"""AlphaZero's run kind (`KIND`, a line of `azjax.runs.kinds`): its game, its players and its
solver scoring, read from a run directory that `azjax.runs.driver` (or a sweep) wrote."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from azjax import agents, games
from azjax.games import base
from azjax.runs import checkpoint
from azjax.runs.base import RunKind


def game(run_dir: str | os.PathLike) -> base.Game:
  """The game of an AlphaZero run, with its options (`Config.game_kwargs`)."""
  config = checkpoint.read_config(run_dir)
  return games.make(config.game, **config.game_kwargs())


def load(run_dir: str, *, simulations: int = 64, algorithm: str | None = None,
         raw_policy: bool = False, step: int | None = None,
         compute_dtype: str | None = None, alphabeta_depth: int | None = None,
         alphabeta_width: int | None = agents.NETWORK_ALPHABETA_WIDTH,
         game_options: dict | None = None, config: Any = None
         ) -> tuple[base.Game, agents.Agent]:
  """The network of an AlphaZero run as a player (see `azjax.runs.load`); `config`: its
  `Config` where the run has no config.json (`agents.load_network`)."""
  if game_options:
    raise ValueError(f"{run_dir}: an AlphaZero network plays the variant it was trained on; "
                     f"game options {game_options} apply to TD-Leaf runs only")
  config, env, model, abstract = agents.load_network(run_dir, compute_dtype=compute_dtype,
                                                     config=config)
  variables = checkpoint.load_model(run_dir, abstract, step=step)
  label = f"{config.game}:{run_dir}".rstrip("/") + ("" if step is None else f"@{step}")
  if raw_policy:
    agent = agents.make_raw_policy(env, model=model, variables=variables,
                                   name=f"policy({label})")
  elif alphabeta_depth is not None:
    width = "" if alphabeta_width is None else f"w{alphabeta_width}"
    agent = agents.make_network_alphabeta(
        env, model=model, variables=variables, depth=alphabeta_depth, width=alphabeta_width,
        name=f"ab-d{alphabeta_depth}{width}({label})")
  else:
    # The run's own search as its evaluation player; only what the caller passes changes.
    explicit = {} if algorithm is None else {"algorithm": algorithm}
    search_config = config.search_config(evaluation=True, simulations=simulations, **explicit)
    agent = agents.make_alphazero(
        env, model=model, variables=variables, simulations=simulations,
        search_config=search_config,
        name=f"az-{search_config.algorithm}{simulations}({label})")
  return env, agents.reading_with(env, agent)


def solver_scorer(run_dir: Path, positions: Any, simulations: tuple[int, ...], *,
                  batch_size: int | None = None, config: Any = None):
  """The raw policy ("policy", for 0) and the search ("search<s>") of the run's network on
  `positions`, compiled once for every snapshot (`azjax.solver.benchmark.SolverBenchmark`,
  `batch_size` positions at a time; default its own), with the run's own search settings."""
  from azjax.solver import benchmark as solver_benchmark

  config, env, model, abstract = agents.load_network(str(run_dir), config=config)
  batching = {} if batch_size is None else {"batch_size": batch_size}
  bench = solver_benchmark.SolverBenchmark(env, model, positions, simulations=simulations,
                                           search_config=config.search_config(), **batching)
  return abstract, bench


KIND = RunKind(name="alphazero", summary="a policy-value network with search",
               read_config=checkpoint.read_config, game=game, load=load,
               solver_scorer=solver_scorer, play_kind="az",
               network_config=checkpoint.read_config)
