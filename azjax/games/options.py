"""A game's constructor options as a run's config sets them: `Option`, which a game declares
in `Game.options_spec` (`azjax.games.base`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Option:
  """A constructor option of a game, as a run's config sets it (`Config.game_options`, `--set
  rows=6`): the game declares it once (`Game.options_spec`) and checks values with it, in its
  constructor and for a config before anything is built.

  `name` is the constructor's argument; `kind` its type in a config (int or str; a str option's
  value is what the constructor parses, e.g. Slider's "c3,d4"); `help` one line for
  docs/config.md and `--print-config`; `low..high` an int's inclusive range; `choices` a str's
  values (empty: any the constructor parses); `aliases` the keys older configs wrote for it
  (Slider's `obstacles`, from when a config's `blocks` could only be the network's).
  """

  name: str
  kind: type
  help: str
  low: int | None = None
  high: int | None = None
  choices: tuple[str, ...] = ()
  aliases: tuple[str, ...] = ()

  def check(self, game: str, value: Any) -> Any:
    """`value` if it is a valid value of this option of `game`.

    Raises:
      ValueError: "<game>: <name> must be ...", naming what is wrong.
    """
    if self.kind is int:
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{game}: {self.name} must be an int, got {value!r}")
      too_low = self.low is not None and value < self.low
      too_high = self.high is not None and value > self.high
      if too_low or too_high:
        raise ValueError(f"{game}: {self.name} must be {self.range_text()}, got {value}")
    elif not isinstance(value, self.kind):
      raise ValueError(f"{game}: {self.name} must be a {self.kind.__name__}, got {value!r}")
    if self.choices and value not in self.choices:
      raise ValueError(f"{game}: {self.name} must be one of {', '.join(self.choices)}, "
                       f"got {value!r}")
    return value

  def parse(self, game: str, raw: Any) -> Any:
    """A value from the command line or a config file (`raw`: a string or a value), checked.

    Raises:
      ValueError: not a value of the option (`check`).
    """
    if self.kind is int and isinstance(raw, str):
      try:
        raw = int(raw)
      except ValueError:
        raise ValueError(f"{game}: {self.name} must be an int, got {raw!r}") from None
    return self.check(game, raw)

  def range_text(self) -> str:
    """The values it takes, in words: "in 2..26", ">= 1", "one of a, b"; "" for any."""
    if self.low is not None and self.high is not None:
      return f"in {self.low}..{self.high}"
    if self.low is not None:
      return f">= {self.low}"
    if self.high is not None:
      return f"<= {self.high}"
    return f"one of {', '.join(self.choices)}" if self.choices else ""
