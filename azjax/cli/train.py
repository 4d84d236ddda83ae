"""The training command: `azjax train GAME [options]`, or `python -m experiments.<game>`.

`main(game, argv)` trains one game (the scripts experiments/<game>.py call it with theirs);
`command(argv)` reads the game from the command line first (`azjax train`). `build_config`,
`new_run_dir` and the compile-cache options serve the sweep command too.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from azjax import config as config_lib
from azjax.cli.common import (
  add_distributed_options,
  distributed,
  ending_together,
  prog,
  start_distributed,
)


def build_config(game: str, preset: str, overrides: list[str], minutes: float | None,
                 iterations: int | None, base: config_lib.Config | None = None, *,
                 config_file: str | Path | None = None) -> config_lib.Config:
  """The preset (or `base`, a resumed run's saved config), then the settings of `config_file`
  (JSON or TOML), then the `key=value` overrides, validated.

  Raises:
    ValueError: naming the key, and the file for a key or a value that came from it.
  """
  config = base if base is not None else config_lib.preset(preset, game=game)
  if config.game != game:
    source = "the saved config" if base is not None else f"--preset {preset}"
    raise ValueError(f"{source} is for {config.game}, not {game}")
  pairs = config_lib.parse_overrides(overrides)
  settings = config_lib.read_settings(config_file) if config_file is not None else {}
  config = config_lib.override(config, settings.items(), source=config_file)
  config = config_lib.override(config, pairs)
  # The keys whose values come from the file, for errors.
  from_file = set(settings) - {key for key, _ in pairs} - {
      key for key, value in (("minutes", minutes), ("iterations", iterations))
      if value is not None}
  if config.game != game:  # Each entry point trains its own game (and says so in its name).
    where = f" (from {config_file})" if "game" in from_file else ""
    raise ValueError(f"config game={config.game!r}{where}: {prog(f'train {game}', game)} "
                     f"trains {game}; use {prog(f'train {config.game}', config.game)} instead")
  if minutes is not None:
    config = dataclasses.replace(config, minutes=minutes)
  if iterations is not None:
    config = dataclasses.replace(config, iterations=iterations)
  try:
    return config.validate()
  except config_lib.ConfigError as err:
    if err.key in from_file:
      raise ValueError(f"{err} (set in {config_file})") from None
    raise


def new_run_dir(preset_name: str, root: str | Path = "runs", now: float | None = None) -> Path:
  """A directory for a new run that does not exist yet: `runs/<preset>-<YYYYmmdd-HHMMSS>`
  (with `-2`, `-3`, ... if two runs start in the same second)."""
  stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
  path = Path(root) / f"{preset_name}-{stamp}"
  number = 1
  while path.exists():
    number += 1
    path = Path(root) / f"{preset_name}-{stamp}-{number}"
  return path


def add_settings_options(parser: argparse.ArgumentParser, what: str = "a config field") -> None:
  """--config FILE (settings over the command's defaults, `config.read_settings`) and --set
  KEY=VALUE (over both), for every learner's command; `what` names what --set overrides in its
  help (and where the keys are listed)."""
  parser.add_argument("--config", default=None, metavar="FILE",
                      help="settings from a JSON or TOML file (such as --print-config writes, "
                      "or a run's settings file) over the defaults (a preset's); --set "
                      "overrides them")
  parser.add_argument("--set", dest="overrides", action="append", default=[],
                      metavar="KEY=VALUE", help=f"override {what}, also one from --config "
                      "(repeatable), by name or section.name")


def print_config(config: config_lib.Config, fmt: str = "auto") -> None:
  """Prints `config`: "toml" (each key with its help), "json", or "auto" (TOML on a terminal,
  JSON into a file or a pipe, for programs that read it)."""
  if fmt == "auto":
    fmt = "toml" if sys.stdout.isatty() else "json"
  if fmt == "toml":
    print(config_lib.to_toml(config), end="")
  else:
    print(config.to_json())


def add_compile_cache_options(parser: argparse.ArgumentParser) -> None:
  """--compile-cache DIR and --no-compile-cache (see `use_compile_cache`)."""
  parser.add_argument("--compile-cache", default=None, metavar="DIR",
                      help="keep compiled programs in DIR, so that the next start with the "
                      "same program (a --resume, the same preset) skips compiling (default: "
                      "$AZJAX_COMPILE_CACHE, else ~/.cache/azjax/jax)")
  parser.add_argument("--no-compile-cache", action="store_true",
                      help="compile without JAX's persistent compilation cache")


def use_compile_cache(args: argparse.Namespace) -> None:
  """Turns on JAX's persistent compilation cache unless `--no-compile-cache`; says where."""
  if args.no_compile_cache:
    return
  from azjax.runs.loop import enable_compile_cache  # noqa: PLC0415 (imports JAX)

  path = enable_compile_cache(args.compile_cache)
  print(f"compilation cache: {path} (--no-compile-cache turns it off)")


def command(argv: list[str] | None = None) -> None:
  """`azjax train GAME [options]`: `main` for the game named first on the command line."""
  from azjax import games  # noqa: PLC0415 (imports JAX)

  parser = argparse.ArgumentParser(
      prog=prog("train"), description="Train an AlphaZero agent for a game by self-play.",
      epilog=f"`{prog('train')} GAME --help` lists the training options.")
  parser.add_argument("game", metavar="GAME", choices=games.GAMES,
                      help="one of " + ", ".join(games.GAMES))
  parser.add_argument("options", metavar="OPTIONS", nargs=argparse.REMAINDER,
                      help="the training options (--preset, --set KEY=VALUE, --minutes, ...)")
  args = parser.parse_args(argv)
  main(args.game, args.options)


def main(game: str, argv: list[str] | None = None) -> None:
  """Trains `game` as the command line `argv` (default `sys.argv[1:]`) asks."""
  parser = argparse.ArgumentParser(
      prog=prog(f"train {game}", game),
      description=f"Train an AlphaZero agent for {game} by self-play.")
  parser.add_argument("--preset", default=None,
                      help="auto (the default: a GPU preset with an accelerator, else a CPU "
                      "one) or one of: " + ", ".join(config_lib.PRESETS)
                      + "; with --resume the run's saved config is used instead")
  add_settings_options(parser, "a config field (search.simulations=32; docs/config.md lists "
                       "them)")
  parser.add_argument("--minutes", type=float, default=None,
                      help="training time budget: the training iterations' own time, not "
                      "compiling, evaluating or saving (with --resume: minutes more, on top of "
                      "those the run has trained)")
  parser.add_argument("--iterations", type=int, default=None, help="iteration limit")
  parser.add_argument("--run-dir", default=None,
                      help="where metrics, plots and checkpoints go (default: a new "
                      "runs/<preset>-<date>-<time>); a directory that holds a run is refused "
                      "unless --resume or --overwrite is given")
  parser.add_argument("--resume", action="store_true",
                      help="continue the run in --run-dir with its saved config (only "
                      "--minutes and --iterations may change)")
  parser.add_argument("--overwrite", action="store_true",
                      help="start a new run in a --run-dir that holds one, deleting that run's "
                      "config, metrics, plots, checkpoints and networks first")
  parser.add_argument("--no-memory-check", action="store_true",
                      help="skip the estimate of the run's device memory")
  parser.add_argument("--init-from", default=None, metavar="RUN_DIR",
                      help="start from the network of another run (same game and network; "
                      "fresh optimizer, buffer and games)")
  parser.add_argument("--devices", type=int, default=None,
                      help="split the batches over this many devices (default: all)")
  add_distributed_options(parser)
  add_compile_cache_options(parser)
  parser.add_argument("--no-progress", action="store_true",
                      help="no progress bar (there is none when stderr is not a terminal)")
  parser.add_argument("--tensorboard", action="store_true", help="also log to TensorBoard")
  parser.add_argument("--print-config", nargs="?", const="auto", default=None,
                      choices=("auto", "toml", "json"), metavar="FORMAT",
                      help="print the config and exit: every key with its value and a line of "
                      "help, as a TOML file that --config reads (the default on a terminal), "
                      "or 'json' (the default when the output goes to a file or a program)")
  args = parser.parse_args(argv)
  if args.resume and args.preset is not None:
    parser.exit(2, "error: --resume continues a run with its saved config; drop --preset\n")
  if args.resume and args.run_dir is None:
    parser.exit(2, "error: --resume continues the run in --run-dir DIR; name it\n")
  if args.resume and args.config is not None:
    parser.exit(2, "error: --resume continues a run with its saved config; drop --config\n")
  if args.resume and args.overwrite:
    parser.exit(2, "error: --resume continues a run and --overwrite replaces it; give one\n")
  if distributed(args) and args.run_dir is None:
    # Each process would name its own new directory (by the second it started in).
    parser.exit(2, "error: a run of several processes needs --run-dir DIR, on a filesystem "
                "that every process sees\n")
  # Before anything starts JAX's backends (the "auto" preset asks which there are).
  primary = start_distributed(parser, args)
  with ending_together(args):
    _train(parser, args, game, primary)


def _train(parser: argparse.ArgumentParser, args: argparse.Namespace, game: str,
           primary: bool) -> None:
  """The rest of `main`, once the processes of a distributed run have joined (`primary`: this
  process prints and writes the files)."""
  preset = args.preset or "auto"
  try:
    preset_name = config_lib.resolve_preset_name(preset, game)
    # A new directory by default: no command may write over a run (or the committed
    # results/) that it was not pointed at.
    run_dir = Path(args.run_dir) if args.run_dir else new_run_dir(preset_name)
    # Resuming starts from the run's own config, not today's preset (the presets, or the
    # machine that "auto" resolves on, may have changed since).
    base = config_lib.read_config(run_dir) if args.resume else None
    config = build_config(game, preset, args.overrides, args.minutes, args.iterations, base,
                          config_file=args.config)
  except (ValueError, FileNotFoundError) as err:
    parser.exit(2, f"error: {err}\n")
  if args.print_config:
    print_config(config, args.print_config)
    return
  source = ("its saved config" if args.resume else f"preset {preset_name}"
            + (f" with {args.config}" if args.config else ""))
  print(f"azjax: {game}, {source}, run directory {run_dir}")
  if args.resume and args.minutes is None and config.minutes:
    # A bare --resume gives the run its saved budget again, counted from now: say so.
    print(f"--resume: up to {config.minutes:g} more training minutes (the run's saved budget; "
          "--minutes N gives another)")
  use_compile_cache(args)  # Before anything compiles: JAX decides once per process.
  from azjax.runs.driver import NaNLossError, train_and_evaluate  # Imports JAX: after arg checks.
  try:
    summary = train_and_evaluate(config, run_dir, resume=args.resume, overwrite=args.overwrite,
                                 progress=primary and not args.no_progress,
                                 tensorboard=args.tensorboard,
                                 init_from=args.init_from, devices=args.devices,
                                 memory_limit=None if args.no_memory_check else -1)
  except (ValueError, FileNotFoundError, NaNLossError) as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
  print("\n" + str(summary))
  print("\n".join(["", "to go on with it:", *next_commands(parser.prog, game, run_dir)]))


def next_commands(train_prog: str, game: str, run_dir: str | Path) -> list[str]:
  """The commands printed at the end of a run, as the README shows them: play it, evaluate it
  (against perfect play where the game has a solver), continue it."""
  from azjax import solver  # noqa: PLC0415

  evaluate = (f"{prog('evaluate')} --checkpoint {run_dir} --solver" if game in solver.SOLVED_GAMES
              else f"{prog('evaluate')} --checkpoint {run_dir} --opponents random,mcts:200")
  commands = [(f"{prog('play')} --checkpoint {run_dir}", "play it in the terminal"),
              (f"{prog('play')} --checkpoint {run_dir} --web", "... or in a browser"),
              (evaluate, "score it"),
              (f"{train_prog} --run-dir {run_dir} --resume", "train it further")]
  return [f"  {c}  # {why}" for c, why in commands]
