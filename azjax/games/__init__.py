"""Games as pure JAX array functions. `make(name, **kwargs)` builds one.

>>> env = make("breakthrough", rows=6, cols=6)
>>> state = env.init(jax.random.key(0))
>>> state = env.step(state, env.move_to_action(state, "a2a3"))

A game is one module with a `base.Game` subclass (its rules and what it says about itself: see
`base.Game`) and one line in `_REGISTRY` below; nothing else in azjax names a game.
"""

from __future__ import annotations

import importlib

from azjax.games.base import Game, step_autoreset, uniform_legal_action, uniform_legal_actions

# name -> (module, class). Modules are imported on first use.
_REGISTRY = {
    "breakthrough": ("azjax.games.breakthrough", "Breakthrough"),
    "checkers": ("azjax.games.checkers", "Checkers"),
    "connect_four": ("azjax.games.connect_four", "ConnectFour"),
    "slider": ("azjax.games.slider", "Slider"),
    "tic_tac_toe": ("azjax.games.tic_tac_toe", "TicTacToe"),
}

GAMES = tuple(_REGISTRY)
# The game people get when they name none (the terminal player and the web page).
DEFAULT_GAME = "breakthrough"


def game_class(name: str) -> type[Game]:
  """The class of game `name` (one of `GAMES`), for its class attributes without building one.

  Raises:
    ValueError: for an unknown name.
  """
  if name not in _REGISTRY:
    raise ValueError(f"unknown game {name!r}; available: {', '.join(GAMES)}")
  module_name, class_name = _REGISTRY[name]
  return getattr(importlib.import_module(module_name), class_name)


def option_choices(key: str) -> tuple[str, ...]:
  """The values that any game takes for its config option `key` (`Game.option_choices`), in
  the order of the games, each once; () where no game lists values. Imports every game's
  module: for validating and documenting a config, not at import time."""
  values = (v for name in GAMES for v in game_class(name).option_choices.get(key, ()))
  return tuple(dict.fromkeys(values))


def make(name: str, **kwargs) -> Game:
  """Returns the game `name` (one of `GAMES`) built with keyword options `kwargs`.

  Raises:
    ValueError: for an unknown name or an option the game does not take.
  """
  cls = game_class(name)
  try:
    return cls(**kwargs)
  except TypeError as err:
    raise ValueError(f"{name}: bad option: {err}") from None


__all__ = ["DEFAULT_GAME", "Game", "GAMES", "game_class", "make", "option_choices",
           "step_autoreset", "uniform_legal_action", "uniform_legal_actions"]
