"""azjax: AlphaZero-style self-play research in JAX.

Reading order, from the bottom layer up. The algorithm core is flat, as in mctx and pgx; the
periphery is grouped into packages:

1. `azjax.games`: the rules as pure array functions (`games.make(name)`), one module per game;
   `games.base` is the contract every game keeps.
2. `azjax.nets`: Flax networks behind `nets.make(NetConfig)`.
3. `azjax.search`: mctx search (Gumbel MuZero, PUCT) with the game as its dynamics;
   `azjax.uct` (rollout MCTS) and `azjax.alphabeta` are the search-based baselines.
4. `azjax.selfplay`, `azjax.replay`, `azjax.augment`, `azjax.train`: one fused, jitted training
   iteration; `azjax.config` holds its settings (declared once, by section) and presets;
   `azjax.sharding` spreads it over many devices.
5. `azjax.agents` (every player, from specs), `azjax.arena` (matches, Elo) and `azjax.solver`
   (exact values, a perfect player, and the solver benchmark `solver.benchmark`).
6. `azjax.runs`: a run directory: the kinds of run (`runs.kinds`, whose `runs.load(run_dir)` is
   every trained player; `runs.base`, `runs.alphazero`), its files (`runs.layout`), the outer
   loop of every learner (`runs.loop`), one AlphaZero run (`runs.driver`), `runs.gating`,
   `runs.checkpoint`, `runs.memory`; `azjax.tdleaf`, TD-Leaf(lambda)'s learner and run kind;
   `azjax.sweep` (+ `sweep.report`, `sweep.timing`): many runs as one vmapped program.
7. `azjax.evaluate` (in-training evaluators, tournaments, the ladder, curves, OpenSpiel),
   `azjax.play` (sessions, engines, the web page, rendering), `azjax.probe`: evaluating,
   playing and probing; `azjax.plots` draws every figure; `azjax.cli` holds the commands.

`azjax.files` (atomic writes, JSONL) serves every layer; `azjax.console` (progress on a terminal,
Ctrl-C that keeps what finished, a missing optional extra in one line) serves the long commands;
`azjax.cpu_devices` sets up simulated CPU devices (the sharding tests, `benchmarks.sharding`).

The submodules load on first use (`import azjax; azjax.runs.load(...)` works), so `import
azjax` alone does not import JAX.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The public modules, in reading order.
__all__ = [
    "files", "console", "games", "nets", "search", "uct", "alphabeta", "selfplay", "replay",
    "augment", "train", "config", "sharding", "agents", "arena", "solver", "runs", "tdleaf",
    "sweep", "evaluate", "play", "probe", "plots", "cli",
]


def __getattr__(name: str) -> Any:
  """Imports a public submodule on first access (PEP 562)."""
  if name in __all__:
    return importlib.import_module(f"azjax.{name}")
  raise AttributeError(f"module 'azjax' has no attribute {name!r}")


def __dir__() -> list[str]:
  return sorted([*globals(), *__all__])
