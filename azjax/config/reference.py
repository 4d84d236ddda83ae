"""docs/config.md, generated from the field declarations, and `python -m azjax.config`."""

from __future__ import annotations

import dataclasses
from typing import Any

from azjax.config.fields import _FIELDS, Config, field_choices
from azjax.config.files import _sections, _toml_value, to_toml
from azjax.config.presets import PRESETS, preset


def non_defaults(config: Config) -> dict[str, Any]:
  """The fields of `config` that differ from `Config()`'s, in the order of the class."""
  default = Config()
  return {key: getattr(config, key) for key in _FIELDS
          if getattr(config, key) != getattr(default, key)}


def _md(text: str) -> str:
  """`text` for a Markdown table cell."""
  return text.replace("|", "\\|").replace("*", "\\*")


def _setting(key: str, value: Any) -> str:
  """`key=value` as `--set` takes it."""
  return f"{key}={value if isinstance(value, str) else _toml_value(value)}"


def reference_markdown() -> str:
  """docs/config.md: every key (meaning, type, default, allowed values) by section, and the
  presets. `python -m azjax.config --markdown` prints it."""
  import textwrap  # noqa: PLC0415

  def paragraph(text: str) -> list[str]:
    return textwrap.wrap(text, width=96, break_long_words=False, break_on_hyphens=False)

  lines = [
      "# Config reference", "",
      "<!-- Generated from the field declarations in azjax/config/fields.py (and TD-Leaf's in",
      "     azjax/tdleaf/config.py) by",
      "     python -m azjax.config --markdown > docs/config.md",
      "     tests/test_config.py checks that it is up to date. -->", ""]
  lines += paragraph(
      "Every setting of a training run is a field of `azjax.config.Config`, documented where "
      "it is declared. A run takes them from a preset (`--preset NAME`), then a file "
      "(`--config FILE`, JSON or TOML), then `--set KEY=VALUE` (repeatable); each overrides "
      "the one before. `azjax train GAME --print-config` prints the result, each key with "
      "its value and a line of help, as a TOML file that `--config` reads back (into a file "
      "or a pipe it prints JSON, which `--config` reads too, unless told `--print-config "
      "toml`). An unknown key, or a value of the wrong type or outside the allowed values, "
      "stops the command before anything compiles, with a message naming the key (and the "
      "file it came from).")
  lines.append("")
  lines += paragraph(
      "The keys are grouped in the sections below. A key is named by itself "
      "(`--set simulations=32`) or with its section (`--set search.simulations=32`), and a "
      "TOML file may hold it at the top level or in its section's table (`[search]`, as "
      "`--print-config` writes). A run's `config.json` stores them flat, so the config files "
      "of older runs still load.")
  lines.append("")
  lines += paragraph(
      "*Traced* keys are read by the training iteration as values, not as program structure "
      "(`azjax.train.Hyper`): the runs of a sweep that differ only in them (and in `seed`) "
      "train together as one vmapped program ([sweeps.md](sweeps.md)).")
  lines += _section_tables(Config, "##")
  lines += ["", "## Game options", ""]
  lines += paragraph(
      "A game declares its constructor's options (`Game.options_spec`; a new game with options "
      "is its module and a registry line, nothing here). A run sets them in `game_options`, "
      "or one at a time by name: `--set rows=6`, or `--set game.blocks=none` where a setting "
      "has the name too (`blocks` is the network's). A value outside the option's range stops "
      "the command before anything compiles; an option left out keeps the game's default. "
      "KLENT and TD-Leaf take them the same way.")
  lines += ["", "| game | option | type | default | allowed | meaning |",
            "|---|---|---|---|---|---|"]
  lines += _option_rows()
  lines += ["", "## Presets", ""]
  lines += paragraph(
      "`--preset NAME` starts from one of these; `auto` (the default) is `<game>_gpu` with an "
      "accelerator, else `<game>_cpu`, else `<game>`. Each row lists the settings in which the "
      "preset differs from the defaults above.")
  lines += ["", "| preset | settings other than the defaults |", "|---|---|"]
  for name, config in PRESETS.items():
    settings = ", ".join(f"`{_setting(key, value)}`" for key, value in _set_items(config))
    lines.append(f"| `{name}` | {settings or '(the defaults)'} |")
  # Another learner's settings, declared with the same machinery (its own sections).
  from azjax.tdleaf import config as tdleaf_config  # noqa: PLC0415

  lines += ["", "## TD-Leaf (`azjax tdleaf GAME`)", ""]
  lines += paragraph(
      "TD-Leaf(lambda)'s settings (`azjax.tdleaf.config.Config`, a run's `tdleaf.json`), set "
      "the same way: `--set KEY=VALUE` (or `section.key`), `--config FILE` and "
      "`--print-config`. A key that is an option of the game sets it (`--set size=6`; "
      "`--set game.blocks=none` where a setting has the name too). A game without evaluation "
      "features learns an MLP value head by default (`evaluation=mlp`).")
  lines += _section_tables(tdleaf_config.Config, "###")
  return "\n".join(lines) + "\n"


def _set_items(config: Config) -> list[tuple[str, Any]]:
  """The settings of `config` other than the defaults as `--set` takes them: a game option by
  its name (`rows`), dotted where a setting has that name (`game.blocks`)."""
  items = []
  for key, value in non_defaults(config).items():
    if key == "game_options":
      items += [(f"game.{k}" if k in _FIELDS else k, v) for k, v in value.items()]
    else:
      items.append((key, value))
  return items


def _option_rows() -> list[str]:
  """A row for each option of each game: its type, the constructor's default, its range or
  values, and its help (and the keys older configs wrote for it)."""
  from azjax import games  # noqa: PLC0415

  lines = []
  for game in games.GAMES:
    defaults = games.option_defaults(game)
    for option in games.game_class(game).options_spec:
      allowed = (", ".join(f"`{c}`" for c in option.choices) if option.choices
                 else option.range_text().removeprefix("in "))
      also = f" (older configs: {', '.join(option.aliases)})" if option.aliases else ""
      lines.append(f"| {game} | `{option.name}` | {option.kind.__name__} | "
                   f"{_toml_value(defaults[option.name])} | {allowed} | "
                   f"{_md(option.help)}{also} |")
  return lines


def _section_tables(cls: type, heading: str) -> list[str]:
  """A table for each section of the config class `cls`: every key's type, default, allowed
  values and meaning."""
  import textwrap  # noqa: PLC0415

  lines = []
  for section, fields in _sections(cls).items():
    lines += ["", f"{heading} {section.title} (`[{section.name}]`)", ""]
    if section.about:
      lines += textwrap.wrap(section.about, width=96, break_long_words=False,
                             break_on_hyphens=False) + [""]
    lines += ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for field in fields:
      info = field.metadata
      kind = f"{field.type}, {info['unit']}" if info["unit"] else field.type
      choices = field_choices(field)
      allowed = (", ".join(f"`{c}`" for c in choices) if choices
                 else f"`{info['check'].text}`" if info["check"] is not None else "")
      meaning = _md(info["help"]) + (" *(traced)*" if info["traced"] else "")
      default = field.default if field.default is not dataclasses.MISSING else (
          field.default_factory())
      lines.append(f"| `{field.name}` | {kind} | `{_toml_value(default)}` | {allowed} "
                   f"| {meaning} |")
  return lines


def main(argv: list[str] | None = None) -> None:
  """`python -m azjax.config --markdown` prints docs/config.md; `--toml [PRESET]` a preset
  (default the defaults) as a commented TOML file."""
  import argparse  # noqa: PLC0415

  parser = argparse.ArgumentParser(prog="python -m azjax.config",
                                   description="Print the config reference or a preset.")
  group = parser.add_mutually_exclusive_group(required=True)
  group.add_argument("--markdown", action="store_true",
                     help="the reference of every key and preset (docs/config.md)")
  group.add_argument("--toml", nargs="?", const="tiny", metavar="PRESET",
                     help="a preset (default: tiny, the defaults) as TOML, a line of help a key")
  args = parser.parse_args(argv)
  if args.markdown:
    print(reference_markdown(), end="")
  else:
    try:
      print(to_toml(preset(args.toml)), end="")
    except ValueError as err:
      parser.exit(2, f"error: {err}\n")

