"""The console command `azjax`: one front door to every command.

    azjax --help                      the commands, one line each
    azjax train connect_four --minutes 5
    azjax evaluate --checkpoint runs/<run> --opponents random,mcts:200
    azjax COMMAND --help              a command's own options

A command's module is imported only when it runs (`COMMANDS` names it as text), so `azjax
--help` and a mistyped command answer at once, without importing JAX.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from typing import NamedTuple


class Command(NamedTuple):
  """A subcommand: the function its arguments go to, as `"module:function"` (imported when the
  command runs), and what it does, in one line."""

  target: str
  summary: str
  usage: str = ""  # What follows the command's name in the listing, where not just options.


COMMANDS: dict[str, Command] = {
    "train": Command("azjax.cli.train:command", "train an agent for GAME by self-play", "GAME"),
    "evaluate": Command("azjax.cli.evaluate:main", "score a trained agent: baselines, the MCTS "
                        "ladder, perfect play, Elo"),
    "play": Command("azjax.cli.play:main", "play against an agent in the terminal or a browser, "
                    "or watch two play"),
    "sweep": Command("azjax.cli.sweep:main", "train a grid of configurations, vmapped together "
                     "where they can be"),
    "probe": Command("azjax.cli.probe:main", "probe a trained network for concepts (linear "
                     "probes, TCAV, causal checks)"),
    "export": Command("azjax.cli.export:main", "export a network's parameters and a probing "
                      "dataset as numpy files"),
    "tdleaf": Command("azjax.cli.tdleaf:main", "train TD-Leaf(lambda) for GAME: alpha-beta "
                      "learning its evaluation", "GAME"),
    "slider": Command("azjax.cli.slider:main", "Slider: TD-Leaf or AlphaZero (aliases of "
                      "tdleaf slider, train slider), scores against the hand-written evaluation"),
    "klent": Command("azjax.cli.klent:main", "train a KLENT agent for GAME: search-free "
                     "self-play, regularised policy targets", "GAME"),
    "efficiency": Command("azjax.cli.efficiency:main", "learning curves of runs against perfect "
                          "play"),
}


def build_parser() -> argparse.ArgumentParser:
  width = max(len(f"{name} {c.usage}".strip()) for name, c in COMMANDS.items())
  listing = "\n".join(f"  {f'{name} {c.usage}'.strip():<{width}}  {c.summary}"
                      for name, c in COMMANDS.items())
  parser = argparse.ArgumentParser(
      prog="azjax", usage="azjax COMMAND [ARGS ...]",
      description="AlphaZero-style self-play for board games in JAX.",
      epilog=f"commands:\n{listing}\n\n`azjax COMMAND --help` shows a command's options.",
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--version", action="version", version=f"azjax {_version()}")
  parser.add_argument("command", metavar="COMMAND", nargs="?", help="one of the commands below")
  parser.add_argument("args", metavar="ARGS", nargs=argparse.REMAINDER,
                      help="the command's arguments")
  return parser


def _version() -> str:
  import azjax  # noqa: PLC0415 (holds only a version string until a submodule is asked for)

  return azjax.__version__


def main(argv: list[str] | None = None) -> int:
  """Runs the command that `argv` (default `sys.argv[1:]`) names; its exit status."""
  parser = build_parser()
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  if args.command is None:
    parser.print_help()
    return 2
  if args.command not in COMMANDS:
    close = difflib.get_close_matches(args.command, COMMANDS, n=1)
    parser.error(f"unknown command {args.command!r}"
                 + (f" (did you mean {close[0]}?)" if close else "")
                 + f"; the commands are: {', '.join(COMMANDS)}")
  module, _, function = COMMANDS[args.command].target.partition(":")
  from azjax import console  # noqa: PLC0415 (imports nothing heavy)

  # Ctrl-C and a missing optional extra end any command in one line (exit 130 or 3).
  def run(argv: list[str]):
    return getattr(importlib.import_module(module), function)(argv)

  status = console.command(run)(args.args)
  return 0 if status is None else status


if __name__ == "__main__":
  sys.exit(main())
