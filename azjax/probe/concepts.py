"""Human concepts as functions of a position, from the side of the player to move.

Each game names its own concepts (`Game.concepts()`, e.g. `azjax.games.breakthrough.concepts`
and `azjax.games.checkers_knowledge.concepts`, whose docstrings list them): pure jnp functions
of one unbatched state returning a float32 scalar. Boards are stored in the mover's frame (row 0 is
the mover's home rank and the mover moves towards higher rows; the opponent's pieces are
negative), so "the mover's side" needs no case on the player, and `flip` gives the opponent's
view of the same board, which turns a mover's concept into the opponent's (must defend = the
opponent's win in one). `labels` vmaps and jits the concepts over a batch.

Binary concepts are probed with classifiers (balanced accuracy), counts with Ridge (R^2).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import numpy as np

from azjax.games.base import Concept, Game
from azjax.games.base import flip_grid as flip

Array = jax.Array


def concepts_for(env: Game) -> dict[str, Concept]:
  """The concepts of `env`'s game, by name, in a fixed order (`env.concepts()`).

  Raises:
    ValueError: for a game without concepts.
  """
  known = env.concepts()
  if not known:
    raise ValueError(f"probe: no concepts for {env.name!r}; its game defines none "
                     "(Game.concepts)")
  return known


@functools.lru_cache(maxsize=None)
def _label_fn(env: Game, names: tuple[str, ...]) -> Callable[[Any], dict[str, Array]]:
  chosen = [concepts_for(env)[name] for name in names]
  return jax.jit(jax.vmap(lambda state: {c.name: c.fn(state) for c in chosen}))


def labels(env: Game, states: Any, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
  """Concept labels of a batch of states: `{name: [B] float32}` in the concepts' order.

  Args:
    env: the game (its concepts are `concepts_for(env)`).
    states: a batched state (leading dimension `B`).
    names: the concepts to compute (default: all); unknown names raise ValueError.
  """
  known = concepts_for(env)
  names = tuple(known) if names is None else tuple(names)
  unknown = [n for n in names if n not in known]
  if unknown:
    raise ValueError(f"probe: unknown concepts {unknown} for {env.name}; known: {list(known)}")
  out = _label_fn(env, names)(states)
  return {name: np.asarray(out[name]) for name in names}


__all__ = ["Concept", "concepts_for", "flip", "labels"]
