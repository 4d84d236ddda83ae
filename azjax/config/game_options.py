"""Which keys of `--set` and of config files are options of the config's game (`rows=6`,
`game.blocks=none`), for `azjax.config.override`; and the flat keys of older configs."""

from __future__ import annotations

import dataclasses
from typing import Any

from azjax import games

# The flat keys of game options in the configs written before `game_options` (session 63 and
# earlier; runs' config.json under results/), each with the value that meant "the game's
# default". Such a key with that value is dropped (every old config has all of them); with
# another it sets the option of that name (or alias) of the config's game.
LEGACY_UNSET = {"rows": 0, "cols": 0, "observation": "mover", "size": 0, "obstacles": "",
                "history": 0}


def is_legacy_default(config: Any, key: str, raw: Any) -> bool:
  """Whether `key=raw` is an older config's flat game option at its "default" (`LEGACY_UNSET`),
  which sets nothing, for a config class with `game_options` where `key` names no setting."""
  fields = {f.name for f in dataclasses.fields(config)}
  name = key.rpartition(".")[2]
  return ("game_options" in fields and name in LEGACY_UNSET and name not in fields
          and str(raw) == str(LEGACY_UNSET[name]))


def game_option(config: Any, key: str) -> games.Option | None:
  """The option of `config`'s game that `key` names, where it names no setting: a plain name
  (`rows`), or one dotted with the game's section where a setting has the plain name
  (`game.blocks`: `blocks` is the network's); None otherwise, and for a config class without
  `game_options`."""
  fields = {f.name: f for f in dataclasses.fields(config)}
  if "game_options" not in fields or config.game not in games.GAMES:
    return None
  section, dot, name = key.rpartition(".")
  game_section = fields["game_options"].metadata["section"].name
  if dot and section != game_section:
    return None
  if name in fields and (not dot or fields[name].metadata["section"].name == game_section):
    return None  # A setting: `blocks` is the network's, `game.game` the game's own.
  return games.find_option(config.game, name)


def not_an_option(config: Any, key: str) -> str:
  """Why `key`, which names no setting, is not an option of `config`'s game either: the games
  that take an option of that name (for the error message)."""
  name = key.rpartition(".")[2]
  takers = [g for g in games.GAMES if games.find_option(g, name) is not None]
  if not takers or config.game not in games.GAMES:
    return ""
  own = ", ".join(o.name for o in games.game_class(config.game).options_spec)
  return (f"config: {key!r} is an option of {', '.join(takers)}, not of {config.game} "
          f"({f'its options: {own}' if own else 'it takes none'})")
