"""Runs: a run directory and everything that trains or reads one.

`base` (the contract of a kind of run), `kinds` (the registry: `KINDS`, `kind_of`, `load`,
`run_game`, `players`), `alphazero` (AlphaZero's kind), `layout` (the run directory's files and
safety rules), `loop` (the outer training loop of every learner: progress, Ctrl-C, NaN stop,
metrics, plots, compile cache), `start` (a learner's run directory started or resumed before
the loop), `driver` (one AlphaZero run, `train_and_evaluate`), `gating`
(the best-network gate), `checkpoint` (orbax checkpoints and exported parameters), `memory`
(the shape-only memory check made before anything compiles).

`azjax.runs.load(run_dir, simulations=64)` and `azjax.runs.run_game(run_dir)` are the registry's
(`kinds`), loaded on first use: the kinds import their learners, which train through `loop`.
"""

from __future__ import annotations

from typing import Any

_REGISTRY = ("KINDS", "kind_of", "is_run", "load", "players", "run_game", "solver_scorer",
             "network_config")


def __getattr__(name: str) -> Any:
  """The registry's names (`azjax.runs.kinds`), imported on first access (PEP 562)."""
  if name in _REGISTRY:
    from azjax.runs import kinds

    return getattr(kinds, name)
  raise AttributeError(f"module 'azjax.runs' has no attribute {name!r}")
