"""The kinds of run: one registry, and every question about a run directory answered through it.

>>> env, agent = azjax.runs.load("results/connect_four_cpu", simulations=64)
>>> azjax.runs.kind_of("results/connect_four_tdleaf").name
'tdleaf'

A new learner adds its `KIND` (`azjax.runs.base.RunKind`) to `KINDS`; nothing else here or in
the callers (evaluate, play, curves, the commands) changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from azjax.klent import runs as klent_runs
from azjax.runs import alphazero
from azjax.runs.base import Players, RunKind
from azjax.tdleaf import runs as tdleaf_runs

KINDS: dict[str, RunKind] = {kind.name: kind for kind in (alphazero.KIND, tdleaf_runs.KIND,
                                                          klent_runs.KIND)}


def kind_of(run_dir: str | os.PathLike) -> RunKind:
  """The kind of the run in `run_dir` (the one whose settings file it holds).

  Raises:
    FileNotFoundError: `run_dir` holds no run of any kind.
    ValueError: it holds the settings files of several kinds.
  """
  found = [kind for kind in KINDS.values() if kind.recognises(run_dir)]
  if not found:
    files = ", ".join(kind.settings_file for kind in KINDS.values())
    raise FileNotFoundError(f"{run_dir}: not a run directory (it holds none of {files})")
  if len(found) > 1:
    raise ValueError(f"{run_dir}: holds the settings of several kinds of run "
                     f"({', '.join(k.settings_file for k in found)}); keep one")
  return found[0]


def is_run(run_dir: str | os.PathLike) -> bool:
  """Whether `run_dir` holds a run of some kind."""
  return any(kind.recognises(run_dir) for kind in KINDS.values())


def run_game(run_dir: str | os.PathLike):
  """The game a run directory plays, with its options (a Slider size, a Breakthrough board).
  Loads no weights.

  Raises:
    FileNotFoundError: the directory holds no run.
  """
  return kind_of(run_dir).game(Path(run_dir))


def load(run_dir: str | os.PathLike, **options: Any):
  """`(game, agent)`: the trained player of a run directory, of any kind; one interface for
  every trained player.

  Options (keywords):
    simulations: search simulations per move (AlphaZero; default 64).
    algorithm: "gumbel" or "puct"; default: the run's own search (AlphaZero).
    raw_policy: play the network's raw policy instead (AlphaZero).
    alphabeta_depth, alphabeta_width: AlphaZero: alpha-beta with the network as its
      evaluation, this deep, the policy's `alphabeta_width` best actions at every node (None:
      every action); TD-Leaf: its alpha-beta's depth (default the run's).
    step: the snapshot `models/<step>` instead of the final network.
    compute_dtype: "float32" or "bfloat16"; default: the run's, except on a CPU, where
      float32 is used (XLA:CPU emulates bfloat16 convolutions, some 50x slower).
    game_options: TD-Leaf: another variant of its game (e.g. `{"size": 7}`), which its
      size-independent evaluations play.
  """
  return kind_of(run_dir).load(str(run_dir), **options)


def network_config(run_dir: str | os.PathLike):
  """The `azjax.config.Config` of a run's policy-value network (AlphaZero's config.json,
  KLENT's `player_config`): what `azjax.agents.load_network(run_dir, config=...)` builds.

  Raises:
    FileNotFoundError: the directory holds no run.
    ValueError: its kind's player is not a policy-value network (TD-Leaf).
  """
  kind = kind_of(run_dir)
  if kind.network_config is None:
    raise ValueError(f"{run_dir}: a {kind.name} run's player is {kind.summary}, not a "
                     "policy-value network")
  return kind.network_config(Path(run_dir))


def players(run_dir: str | os.PathLike) -> Players:
  """The run's players: its final network and its snapshots."""
  return kind_of(run_dir).players(run_dir)


def solver_scorer(run_dir: str | os.PathLike, positions: Any,
                  simulations: tuple[int, ...] = (0, 32), *, batch_size: int | None = None):
  """`(abstract variables, score)`: how the run's players score on solver-labelled positions
  (`azjax.runs.base.RunKind.solver_scorer`)."""
  return kind_of(run_dir).solver_scorer(Path(run_dir), positions, tuple(simulations),
                                        batch_size=batch_size)
