"""azjax: AlphaZero-style self-play research in JAX.

Reading order, from the bottom layer up (each imports only from the ones above it):

1. `azjax.games`: the rules as pure array functions (`games.make(name)`), one module per game;
   `games.base` is the contract every game keeps.
2. `azjax.nets`: Flax networks behind `nets.make(NetConfig)`.
3. `azjax.search`: mctx search (Gumbel MuZero, PUCT) with the game as its dynamics;
   `azjax.uct` (rollout MCTS) and `azjax.alphabeta` are the search-based baselines.
4. `azjax.selfplay`, `azjax.replay`, `azjax.augment`, `azjax.train`: one fused, jitted training
   iteration; `azjax.config` holds its settings (declared once, by section) and presets.
5. `azjax.gating`, `azjax.loop`, `azjax.driver`, `azjax.sweep` (+ `azjax.sweep_time`),
   `azjax.sharding`: the outer loop for one run, a vmapped sweep, and many devices;
   `azjax.checkpoint` saves and resumes.
6. `azjax.agents` (every player, `agents.load(run_dir)`), `azjax.arena` (matches, Elo),
   `azjax.tournament` (opponents, round robins, Elo over training), `azjax.ladder` (the
   rollout-MCTS ladder), `azjax.solver` and `azjax.solver_benchmark` (perfect play),
   `azjax.evaluation`, `azjax.curves`, `azjax.openspiel_bridge`.
7. `azjax.play`, `azjax.web` (+ `azjax.web_app`), `azjax.render`, `azjax.probe`: playing,
   drawing and probing; `azjax.plots` draws every figure.

`azjax.files` (atomic writes, JSONL) serves every layer.

The submodules load on first use (`import azjax; azjax.agents.load(...)` works), so `import
azjax` alone does not import JAX.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The public modules, in reading order.
__all__ = [
    "files", "games", "nets", "search", "uct", "alphabeta", "selfplay", "replay", "augment",
    "train", "config", "gating", "loop", "driver", "sweep", "sweep_time", "sharding",
    "checkpoint", "agents", "arena", "tournament", "ladder", "solver", "solver_benchmark",
    "evaluation", "curves", "openspiel_bridge", "play", "web", "web_app", "render", "probe",
    "plots",
]


def __getattr__(name: str) -> Any:
  """Imports a public submodule on first access (PEP 562)."""
  if name in __all__:
    return importlib.import_module(f"azjax.{name}")
  raise AttributeError(f"module 'azjax' has no attribute {name!r}")


def __dir__() -> list[str]:
  return sorted([*globals(), *__all__])
