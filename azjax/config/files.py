"""Config files: settings files (JSON or TOML) read for `--config`, a run directory's
config.json, and a config written back as a commented TOML file (`--print-config`)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from azjax.config.fields import Config, Section, declared_fields, field_help, flat_settings
from azjax.files import write_atomic

CONFIG_FILE = "config.json"


def read_settings(path: str | os.PathLike, cls: type = Config) -> dict[str, Any]:
  """The settings in a config file for a config of class `cls`, unchecked: `{key: value}`.

  The file is JSON (an object, like a run's config.json) when its text starts with `{`, else
  TOML. Settings may sit at the top level (`simulations = 32`) or in their section's table
  (`[search]` then `simulations = 32`, as `--print-config toml` writes); a table's settings come
  back with dotted keys (`search.simulations`), which `override` checks.

  Raises:
    ValueError: the file cannot be read or parsed, or is not a table of settings; the
      message names the file.
  """
  path = Path(path)
  try:
    text = path.read_text()
  except OSError as err:
    raise ValueError(f"{path}: cannot read it ({err.strerror or err})") from None
  except UnicodeDecodeError as err:
    raise ValueError(f"{path}: not a valid config file ({err})") from None
  if text.lstrip().startswith("{"):
    try:
      values = json.loads(text, parse_constant=_no_constant)
    except ValueError as err:
      raise ValueError(f"{path}: not a valid JSON config file ({err})") from None
  else:
    try:
      import tomllib  # noqa: PLC0415 (Python 3.11)
    except ModuleNotFoundError:  # Python 3.10.
      try:
        import tomli as tomllib  # noqa: PLC0415
      except ModuleNotFoundError:
        raise ValueError(f"{path}: reading TOML needs Python 3.11 or the tomli package; "
                         "write the settings as a JSON object instead") from None
    try:
      values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
      raise ValueError(f"{path}: not a valid TOML config file ({err})") from None
  if not isinstance(values, dict):
    raise ValueError(f"{path}: not a valid config file (an object of settings expected)")
  try:
    return flat_settings(values, cls)
  except ValueError as err:
    raise ValueError(f"{path}: {err}") from None



def write_config(run_dir: str | os.PathLike, config: Config) -> None:
  """Writes `run_dir/config.json` atomically; a non-finite float is refused (not JSON)."""
  path = Path(run_dir)
  path.mkdir(parents=True, exist_ok=True)
  try:
    text = json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True, allow_nan=False)
  except ValueError:
    raise ValueError(f"{path / CONFIG_FILE}: a value is not a finite number; "
                     "run config.validate() first") from None
  write_atomic(path / CONFIG_FILE, text + "\n")


def _no_constant(name: str) -> float:
  raise ValueError(f"{name} is not a finite number")


def read_config(run_dir: str | os.PathLike) -> Config:
  """The config a run directory was trained with.

  Raises:
    FileNotFoundError: `run_dir/config.json` does not exist.
    ValueError: it cannot be read or parsed, or holds an unknown key or a value of the wrong
      type; the message names the file.
  """
  path = Path(run_dir) / CONFIG_FILE
  if not path.exists():
    raise FileNotFoundError(f"{path} does not exist; is {run_dir} an azjax run directory?")
  try:
    values = json.loads(path.read_text(), parse_constant=_no_constant)
  except OSError as err:
    raise ValueError(f"{path}: cannot read it ({err.strerror or err})") from None
  except ValueError as err:  # Also UnicodeDecodeError and JSONDecodeError.
    raise ValueError(f"{path}: not a valid config file ({err})") from None
  if not isinstance(values, dict):
    raise ValueError(f"{path}: not a valid config file (a JSON object of settings expected)")
  try:
    return Config.from_dict(values)
  except ValueError as err:
    raise ValueError(f"{path}: {err}") from None



# -- The config as a TOML file: --print-config ----------------------------------------------------


def _sections(cls: type = Config) -> dict[Section, list[dataclasses.Field]]:
  """The fields of each section, in the order of the class."""
  out: dict[Section, list[dataclasses.Field]] = {}
  for field in declared_fields(cls).values():
    out.setdefault(field.metadata["section"], []).append(field)
  return out


def _toml_value(value: Any) -> str:
  if isinstance(value, bool):
    return "true" if value else "false"
  if isinstance(value, str):
    return json.dumps(value)  # A JSON string is a TOML basic string.
  if isinstance(value, dict):  # An inline table.
    return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
  return repr(value)


def to_toml(config: Any) -> str:
  """Every key of `config` (a `Config`, or another class declared by `Section`) as a
  `key = value` line with its one-line help, in a TOML table for each section (`[search]`): a
  file that `--config` reads back (`read_settings`)."""
  cls = type(config)
  width = max(len(f"{key} = {_toml_value(getattr(config, key))}")
              for key in declared_fields(cls))
  lines = ["# azjax config: `--config FILE` reads it; docs/config.md explains every key.",
           "# A key may also sit at the top level, or be set as --set section.key=value."]
  for section, fields in _sections(cls).items():
    lines += ["", f"# -- {section.title}", f"[{section.name}]"]
    for field in fields:
      setting = f"{field.name} = {_toml_value(getattr(config, field.name))}"
      lines.append(f"{setting:<{width}}  # {field_help(field.name, cls)}")
  return "\n".join(lines) + "\n"
