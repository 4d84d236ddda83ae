"""Shared command line of the training entry points (`python -m experiments.<game>`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from azjax import config as config_lib


def build_config(game: str, preset: str, overrides: list[str], minutes: float | None,
                 iterations: int | None,
                 base: config_lib.Config | None = None) -> config_lib.Config:
  """The preset (or `base`, a resumed run's saved config) with overrides applied and
  validated (raises ValueError naming the key)."""
  config = base if base is not None else config_lib.preset(preset, game=game)
  if config.game != game:
    source = "the saved config" if base is not None else f"--preset {preset}"
    raise ValueError(f"{source} is for {config.game}, not {game}")
  config = config_lib.override(config, config_lib.parse_overrides(overrides))
  if config.game != game:  # Each entry point trains its own game (and says so in its name).
    raise ValueError(f"config game={config.game!r}: python -m experiments.{game} trains {game}; "
                     f"use python -m experiments.{config.game} instead")
  if minutes is not None:
    config = dataclasses.replace(config, minutes=minutes)
  if iterations is not None:
    config = dataclasses.replace(config, iterations=iterations)
  return config.validate()


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
  from azjax.loop import enable_compile_cache  # noqa: PLC0415 (imports JAX)

  path = enable_compile_cache(args.compile_cache)
  print(f"compilation cache: {path} (--no-compile-cache turns it off)")


def main(game: str, argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(
      prog=f"python -m experiments.{game}",
      description=f"Train an AlphaZero agent for {game} by self-play.")
  parser.add_argument("--preset", default=None,
                      help="auto (the default: a GPU preset with an accelerator, else a CPU "
                      "one) or one of: " + ", ".join(config_lib.PRESETS)
                      + "; with --resume the run's saved config is used instead")
  parser.add_argument("--set", dest="overrides", action="append", default=[],
                      metavar="KEY=VALUE", help="override a config field (repeatable)")
  parser.add_argument("--minutes", type=float, default=None,
                      help="training time budget; the clock starts once the training "
                      "iteration has compiled, so compilation is not counted")
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
  add_compile_cache_options(parser)
  parser.add_argument("--no-progress", action="store_true", help="no progress bar")
  parser.add_argument("--tensorboard", action="store_true", help="also log to TensorBoard")
  parser.add_argument("--print-config", action="store_true", help="print the config and exit")
  args = parser.parse_args(argv)
  if args.resume and args.preset is not None:
    parser.exit(2, "error: --resume continues a run with its saved config; drop --preset\n")
  if args.resume and args.run_dir is None:
    parser.exit(2, "error: --resume continues the run in --run-dir DIR; name it\n")
  if args.resume and args.overwrite:
    parser.exit(2, "error: --resume continues a run and --overwrite replaces it; give one\n")
  preset = args.preset or "auto"
  try:
    preset_name = config_lib.resolve_preset_name(preset, game)
    # A new directory by default: no command may write over a run (or the committed
    # results/) that it was not pointed at.
    run_dir = Path(args.run_dir) if args.run_dir else new_run_dir(preset_name)
    # Resuming starts from the run's own config, not today's preset (the presets, or the
    # machine that "auto" resolves on, may have changed since).
    base = config_lib.read_config(run_dir) if args.resume else None
    config = build_config(game, preset, args.overrides, args.minutes, args.iterations, base)
  except (ValueError, FileNotFoundError) as err:
    parser.exit(2, f"error: {err}\n")
  if args.print_config:
    print(config.to_json())
    return
  source = "its saved config" if args.resume else f"preset {preset_name}"
  print(f"azjax: {game}, {source}, run directory {run_dir}")
  use_compile_cache(args)  # Before anything compiles: JAX decides once per process.
  from azjax.driver import NaNLossError, train_and_evaluate  # Imports JAX: after arg checks.
  try:
    summary = train_and_evaluate(config, run_dir, resume=args.resume, overwrite=args.overwrite,
                                 progress=not args.no_progress, tensorboard=args.tensorboard,
                                 init_from=args.init_from, devices=args.devices,
                                 memory_limit=None if args.no_memory_check else -1)
  except (ValueError, FileNotFoundError, NaNLossError) as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
  print("\n" + str(summary))
  print(f"continue it: python -m experiments.{game} --run-dir {run_dir} --resume; play "
        f"against it: python -m experiments.play --checkpoint {run_dir}")
