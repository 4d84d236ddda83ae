"""The contract of a kind of run (`RunKind`): what every learner's runs tell the rest of azjax.

A kind of run is a learner's answer to the questions evaluation, play and the commands ask of a
run directory: is it one of yours (its settings file, `azjax.runs.layout.settings_file`), what
game does it play, who are its players (the final network and the snapshots of `models/`), and
how do they score on the solver benchmark. `azjax.runs.kinds` holds the registry; a learner
defines its `KIND` beside its runs (`azjax.runs.alphazero`, `azjax.tdleaf.runs`). This module
imports no learner.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from azjax.runs import layout

if TYPE_CHECKING:
  from azjax.agents import Agent
  from azjax.games.base import Game

# (variables, key) -> `{player: {ply range: {metric: value}}}` (`azjax.solver.benchmark`).
SolverScore = Callable[[Any, Any], dict[str, dict[str, dict[str, float]]]]


@dataclasses.dataclass(frozen=True)
class Players:
  """A run's players: its final network (`model/`, None if it has none yet) and the snapshots
  of its checkpoints (`models/<iteration>`), oldest first."""

  final: Path | None
  snapshots: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class RunKind:
  """One kind of run (one learner). Its functions take the run directory.

  name: the learner ("alphazero", "tdleaf"); its runs' settings file is
    `layout.settings_file(name)`.
  summary: what its player is, in a few words ("a network with search").
  read_config: the run's settings (a frozen dataclass).
  game: the `Game` it plays, with its options; loads no weights.
  load: `load(run_dir, *, simulations=64, algorithm=None, raw_policy=False, step=None,
    compute_dtype=None, alphabeta_depth=None, alphabeta_width=..., game_options=None)` ->
    `(game, agent)`: its trained player, or with `step` that of a snapshot (`azjax.runs.load`
    documents the options; a kind refuses those it has no meaning for, or ignores the search's).
  solver_scorer: `(run_dir, positions, simulations, *, batch_size=None) -> (abstract variables,
    score)`: how its players score on solver-labelled positions, `score(variables, key)` for
    the variables of any snapshot (`azjax.runs.checkpoint.load_model(run_dir, abstract,
    step=...)`), so every snapshot shares one compilation. `simulations` are the search
    budgets to score where the kind has a search with simulations (0: the raw policy);
    `batch_size` the positions scored at once where the kind batches them (None: its default).
    A scorer that is a `SolverBenchmark` also scores player by player, batch by batch, which
    a command shows as progress.
  play_kind: the kind of player (`azjax.agents` or play's own) that plays its runs in
    `azjax play`: "az", "tdleaf".
  network_config: for kinds whose player is a policy-value network (AlphaZero, KLENT), the
    `azjax.config.Config` that describes it and its evaluation search, from the run
    directory; None for the others (TD-Leaf).
  """

  name: str
  summary: str
  read_config: Callable[[Path], Any]
  game: Callable[[Path], "Game"]
  load: Callable[..., tuple["Game", "Agent"]]
  solver_scorer: Callable[..., tuple[Any, SolverScore]]
  play_kind: str
  network_config: Callable[[Path], Any] | None = None

  @property
  def settings_file(self) -> str:
    return layout.settings_file(self.name)

  def recognises(self, run_dir: str | os.PathLike) -> bool:
    """Whether `run_dir` holds a run of this kind (its settings file)."""
    return (Path(run_dir) / self.settings_file).is_file()

  def players(self, run_dir: str | os.PathLike) -> Players:
    final = layout.model_path(run_dir)
    models = Path(run_dir) / layout.MODELS
    snapshots = sorted(int(p.name) for p in models.iterdir()
                       if p.is_dir() and p.name.isdigit()) if models.is_dir() else []
    return Players(final if final.is_dir() else None, tuple(snapshots))
