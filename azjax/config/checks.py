"""What every learner's config checks of its own fields, in one place.

AlphaZero's `Config`, TD-Leaf's (`azjax.tdleaf.config.Config`) and KLENT's
(`azjax.klent.config.KlentConfig`) declare their fields with `Section` (`fields.py`): a
number's range (`Check`) and a string's choices travel with the field. `check_declared`
applies those declarations, `check_choices` the choices alone, and `check_game` the game's own
options (`Game.options_spec`). What relates several fields stays with each config's
`validate`, as does the wording of its errors: each passes its own `need(ok, key, why)`, which
raises `ConfigError` naming the field.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

from azjax import games

# `need(ok, key, why)`: raises the config's error for field `key` unless `ok`.
Need = Callable[[bool, str, str], None]


class ConfigError(ValueError):
  """An impossible config value (a config's `validate`); `key` names its field."""

  def __init__(self, message: str, key: str):
    super().__init__(message)
    self.key = key


def one_of(choices: Sequence[str]) -> str:
  """"a, b or c"."""
  return ", ".join(choices[:-1]) + " or " + choices[-1] if len(choices) > 1 else choices[0]


def field_choices(field: dataclasses.Field) -> tuple[str, ...]:
  """The values a declared string field allows (its `choices`, asked for now where they are a
  function); () for any value."""
  choices = field.metadata["choices"]
  return tuple(choices()) if callable(choices) else choices


def check_declared(config: Any, need: Need, *, choices: bool = True) -> None:
  """Applies what each field of the dataclass `config` declares, field by field in order: an
  int field holds an int (not a bool), a float field a finite number (inf and nan pass most
  range comparisons, and are not JSON), the value lies in the declared range (`Check`) and,
  with `choices`, is one of the declared choices (`check_choices`)."""
  for field in dataclasses.fields(config):
    value, default, name = getattr(config, field.name), field.default, field.name
    if isinstance(default, float):
      need(isinstance(value, (int, float)) and not isinstance(value, bool)
           and math.isfinite(value), name, "must be a finite number")
    elif isinstance(default, int) and not isinstance(default, bool):
      need(isinstance(value, int) and not isinstance(value, bool), name, "must be an int")
    check = field.metadata.get("check")
    if check is not None:
      need(check.ok(value), name, f"must be {check.text}")
  if choices:
    check_choices(config, need)


def check_choices(config: Any, need: Need) -> None:
  """Each declared string field of `config` holds one of its choices (`field_choices`)."""
  for field in dataclasses.fields(config):
    if allowed := field_choices(field):
      need(getattr(config, field.name) in allowed, field.name, f"must be one of {one_of(allowed)}")


def check_game(config: Any, need: Need) -> None:
  """`config.game` is a game azjax has, and `config.game_options` are options it takes."""
  need(config.game in games.GAMES, "game", f"unknown game; available: {', '.join(games.GAMES)}")
  try:
    games.check_options(config.game, config.game_options)
    problem = ""
  except ValueError as err:
    problem = str(err)
  need(not problem, "game_options", problem)
