"""The TD-Leaf command: `azjax tdleaf GAME [options]` trains TD-Leaf(lambda) (`azjax.tdleaf`) on
any game with an evaluation for it (Slider, Connect Four, Breakthrough, checkers, ...).

    azjax tdleaf slider --set size=6 --set depth=3 --minutes 60
    azjax tdleaf connect_four --set hidden=64 --minutes 30    # an MLP value head by default
    azjax tdleaf connect_four --run-dir runs/c4_tdleaf --resume --minutes 10
    azjax tdleaf slider --print-config toml > tdleaf.toml; azjax tdleaf slider --config tdleaf.toml

The settings are TD-Leaf's section of the config system (`azjax.tdleaf.config`): `--set`,
`--config` and `--print-config` work as for `azjax train`, and a key that is an option of the
game sets it (`size=6`; `game.blocks=none` where a setting has the name too: `blocks` is the
trunk's). Runs train through the one outer loop (`azjax.runs.loop`): a progress
bar, Ctrl-C after the iteration in flight with a checkpoint, `--resume`, `--overwrite` and the
run-directory rules of an AlphaZero run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from azjax.cli.common import prog
from azjax.cli.train import add_compile_cache_options, add_settings_options, use_compile_cache


def build_config(game: str, overrides: list[str], minutes: float | None,
                 iterations: int | None, base=None, *, config_file: str | None = None):
  """TD-Leaf's defaults for `game` (`azjax.tdleaf.config.defaults`; or `base`, a resumed run's
  saved settings), then the settings of `config_file`, then the `key=value` overrides,
  validated.

  Raises:
    ValueError: naming the key (and the file a bad key or value came from).
  """
  from azjax import config as config_lib
  from azjax.tdleaf import config as tdleaf_config

  config = base if base is not None else tdleaf_config.defaults(game)
  if config.game != game:
    raise ValueError(f"the saved run is for {config.game}, not {game}")
  settings = (config_lib.read_settings(config_file, tdleaf_config.Config)
              if config_file is not None else {})
  config = config_lib.override(config, settings.items(), source=config_file)
  config = config_lib.override(config, config_lib.parse_overrides(overrides))
  if config.game != game:
    raise ValueError(f"config game={config.game!r}: {prog(f'tdleaf {game}')} learns {game}; "
                     f"use {prog(f'tdleaf {config.game}')} instead")
  for key, value in (("minutes", minutes), ("iterations", iterations)):
    if value is not None:
      config = dataclasses.replace(config, **{key: value})
  return config.validate()


def parser(game: str | None = None) -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog=prog("tdleaf" if game is None else f"tdleaf {game}"),
      description="Train TD-Leaf(lambda): an alpha-beta player whose evaluation learns from "
      "its own games (azjax.tdleaf).")
  if game is None:
    parser.add_argument("game", metavar="GAME", help="the game (any with an evaluation for "
                        "TD-Leaf: slider, connect_four, breakthrough, checkers, ...)")
  add_settings_options(parser, "a TD-Leaf setting or an option of the game (size=6)")
  parser.add_argument("--minutes", type=float, default=None,
                      help="training time budget: the training iterations' own time, not "
                      "compiling, evaluating or saving (with --resume: minutes more)")
  parser.add_argument("--iterations", type=int, default=None, help="iteration limit")
  parser.add_argument("--run-dir", default=None,
                      help="default: a new runs/<game>-tdleaf-<date>-<time>; a directory that "
                      "holds a run is refused unless --resume or --overwrite is given")
  parser.add_argument("--resume", action="store_true",
                      help="continue the run in --run-dir with its saved settings (only "
                      "--minutes and --iterations may change)")
  parser.add_argument("--overwrite", action="store_true",
                      help="start a new run in a --run-dir that holds one, deleting that run's "
                      "settings, metrics, plots, checkpoints and networks first")
  add_compile_cache_options(parser)
  parser.add_argument("--no-progress", action="store_true", help="no progress bar")
  parser.add_argument("--print-config", nargs="?", const="auto", default=None,
                      choices=("auto", "toml", "json"), metavar="FORMAT",
                      help="print the settings and exit (TOML that --config reads, or json)")
  return parser


def main(argv: list[str] | None = None) -> None:
  """`azjax tdleaf GAME [options]`."""
  argv = sys.argv[1:] if argv is None else list(argv)
  if not argv or argv[0].startswith("-"):
    parser().parse_args(argv)  # --help, or the error that GAME is missing.
    return
  train(argv[0], argv[1:])


def train(game: str, argv: list[str]) -> None:
  """Trains TD-Leaf on `game` as the options `argv` ask."""
  from azjax import games

  if game not in games.GAMES:
    raise SystemExit(f"{prog('tdleaf')}: unknown game {game!r}; the games are: "
                     f"{', '.join(games.GAMES)}")
  command = parser(game)
  args = command.parse_args(argv)
  if args.resume and args.run_dir is None:
    command.exit(2, "error: --resume continues the run in --run-dir DIR; name it\n")
  if args.resume and args.config is not None:
    command.exit(2, "error: --resume continues a run with its saved settings; drop --config\n")
  if args.resume and args.overwrite:
    command.exit(2, "error: --resume continues a run and --overwrite replaces it; give one\n")
  from azjax.tdleaf import config as tdleaf_config

  run_dir = Path(args.run_dir or time.strftime(f"runs/{game}-tdleaf-%Y%m%d-%H%M%S"))
  try:
    base = tdleaf_config.Config.load(run_dir) if args.resume else None
    config = build_config(game, args.overrides, args.minutes, args.iterations, base,
                          config_file=args.config)
  except (ValueError, FileNotFoundError) as err:
    command.exit(2, f"error: {err}\n")
  if args.print_config:
    from azjax import config as config_lib

    fmt = args.print_config
    if fmt == "auto":
      fmt = "toml" if sys.stdout.isatty() else "json"
    text = (config_lib.to_toml(config) if fmt == "toml" else
            json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True) + "\n")
    print(text, end="")
    return
  use_compile_cache(args)  # Before anything compiles: JAX decides once per process.
  from azjax import tdleaf
  from azjax.runs.loop import NaNLossError

  try:
    tdleaf.train(config, run_dir, resume=args.resume, overwrite=args.overwrite,
                 progress=not args.no_progress)
  except (ValueError, FileNotFoundError, NaNLossError) as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
  print(f"continue it: {prog(f'tdleaf {game}')} --run-dir {run_dir} --resume; play against "
        f"it: {prog('play')} --checkpoint {run_dir}")
