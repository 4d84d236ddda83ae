"""Games as pure JAX array functions. `make(name, **kwargs)` builds one.

>>> env = make("breakthrough", rows=6, cols=6)
>>> state = env.init(jax.random.key(0))
>>> state = env.step(state, env.move_to_action(state, "a2a3"))

A game is one module with a `base.Game` subclass (its rules, its options and what it says about
itself: see `base.Game`) and one line in `_REGISTRY` below; nothing else in azjax names a game.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from azjax.games.base import (
    Game,
    Option,
    step_autoreset,
    uniform_legal_action,
    uniform_legal_actions,
)

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


def find_option(name: str, key: str) -> Option | None:
  """The option of game `name` that `key` names (its name, or an alias older configs wrote:
  Slider's `obstacles`), or None."""
  return next((o for o in game_class(name).options_spec if key in (o.name, *o.aliases)), None)


def check_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
  """`options` if they are valid constructor options of game `name` (`Game.options_spec`):
  each declared, of its type and in its range, and the game builds with them (its constructor
  checks what only it can, such as Slider's squares).

  Raises:
    ValueError: naming the game and the option.
  """
  specs = {option.name: option for option in game_class(name).options_spec}
  if not isinstance(options, dict):
    raise ValueError(f"{name}: the game's options must be a table, got {options!r}")
  for key, value in options.items():
    if key not in specs:
      takes = f"its options are {', '.join(specs)}" if specs else "it takes none"
      raise ValueError(f"{name} has no option {key!r}; {takes}")
    specs[key].check(name, value)
  if options:
    make(name, **options)
  return options


def option_defaults(name: str) -> dict[str, Any]:
  """The constructor's default of each option of game `name`, by option name."""
  parameters = inspect.signature(game_class(name)).parameters
  return {o.name: parameters[o.name].default for o in game_class(name).options_spec}


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


__all__ = ["DEFAULT_GAME", "Game", "GAMES", "Option", "check_options", "find_option", "game_class",
           "make", "option_defaults", "step_autoreset", "uniform_legal_action",
           "uniform_legal_actions"]
