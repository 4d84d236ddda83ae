"""`azjax klent GAME`: train a KLENT agent (search-free self-play, `azjax.klent`) for a game.

    azjax klent tic_tac_toe --minutes 2
    azjax klent connect_four --minutes 30 --set solver_every=10 --run-dir runs/klent_c4
    azjax klent connect_four --run-dir runs/klent_c4 --resume --minutes 30
    azjax klent connect_four --print-config > klent.toml     # every setting, with its help
    azjax klent connect_four --config klent.toml --minutes 30  # ... edited, read back
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from azjax import games
from azjax.cli.common import prog
from azjax.cli.train import add_settings_options, new_run_dir


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(
      prog=prog("klent"), description="Train a KLENT agent for a game: self-play with no "
      "search, a policy update regularised by a reverse KL divergence and an entropy bonus, "
      "lambda-returns (docs/klent.md).")
  parser.add_argument("game", metavar="GAME", choices=games.GAMES,
                      help="one of " + ", ".join(games.GAMES))
  parser.add_argument("--minutes", type=float, default=None,
                      help="training time budget (default: the config's, 60)")
  parser.add_argument("--iterations", type=int, default=None, help="iteration limit")
  parser.add_argument("--run-dir", default=None,
                      help="the run's directory (default: a new runs/klent-GAME-<date-time>)")
  parser.add_argument("--resume", action="store_true",
                      help="continue the run in --run-dir (only --minutes and --iterations "
                      "may change)")
  parser.add_argument("--overwrite", action="store_true",
                      help="replace the run in --run-dir (its training outputs are removed)")
  add_settings_options(parser, "a KLENT setting (--print-config lists them)")
  parser.add_argument("--no-progress", action="store_true", help="no progress bar")
  parser.add_argument("--print-config", action="store_true",
                      help="print every setting with its value and help, then exit")
  args = parser.parse_args(argv)
  if args.resume and args.run_dir is None:
    parser.error("--resume needs --run-dir")
  if args.resume and args.config is not None:
    parser.error("--resume continues a run with its saved settings; drop --config")

  from azjax import config as config_lib  # Imports JAX: after the argument checks.
  from azjax.klent import KlentConfig
  from azjax.klent.config import ConfigError

  try:
    if args.resume:
      base = KlentConfig.load(args.run_dir)
      if base.game != args.game:
        parser.error(f"--resume: {args.run_dir} is a {base.game} run, not {args.game}")
    else:
      base = KlentConfig(game=args.game)
    if args.config is not None:
      settings = config_lib.read_settings(args.config, KlentConfig)
      base = config_lib.override(base, settings.items(), source=args.config)
    budget = [f"{k}={v}" for k, v in (("minutes", args.minutes),
                                       ("iterations", args.iterations)) if v is not None]
    config = base.override(args.overrides + budget)
    if config.game != args.game:
      raise ConfigError(f"klent: game={config.game} (--set or --config): this command "
                        f"trains {args.game}; give the game as GAME", "game")
  except (ValueError, FileNotFoundError) as err:  # ConfigError is a ValueError
    print(f"error: {err}", file=sys.stderr)
    sys.exit(2)
  if args.print_config:
    print(config.describe())
    return
  run_dir = Path(args.run_dir) if args.run_dir else new_run_dir(f"klent-{args.game}")
  print(f"azjax klent: {args.game}, run directory {run_dir}")
  from azjax.klent import runs
  from azjax.runs.loop import NaNLossError

  try:
    result = runs.train(config, run_dir, resume=args.resume, overwrite=args.overwrite,
                        progress=not args.no_progress)
  except (ValueError, FileNotFoundError, NaNLossError) as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
  row = runs.loop.read_metrics(run_dir)[-1:] or [{}]
  scores = {k: v for k, v in row[0].items()
            if k.endswith("/score") or k.endswith("/mistake_rate")}
  print(f"\ntrained {result.iterations} iterations in {result.train_seconds / 60:.1f} min "
        f"(stopped by {result.stopped_by}; compiling took {result.compile_seconds:.0f} s)")
  for name, value in scores.items():
    print(f"  {name}: {value:.3f}")
  print(f"continue it: {parser.prog} {args.game} --run-dir {run_dir} --resume; play against "
        f"it: {prog('play')} --checkpoint {run_dir}")
