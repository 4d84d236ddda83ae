"""What the commands share: the name they were called by, the command line they record beside
their results, and checks of their arguments. Imports nothing heavy.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Iterable, Sequence


def front_door() -> bool:
  """Whether this process is the console command `azjax` (else `python -m experiments.<x>`)."""
  return Path(sys.argv[0]).name == "azjax"


def prog(command: str, experiment: str | None = None) -> str:
  """How the user calls `command`: `azjax <command>` under the console command, else
  `python -m experiments.<experiment>` (`experiment` defaults to `command`): `prog("train
  connect_four", "connect_four")` is `azjax train connect_four` or `python -m
  experiments.connect_four`.
  """
  if front_door():
    return f"azjax {command}"
  return f"python -m experiments.{experiment or command}"


def command_line(prog_: str, argv: Sequence[str] | None) -> str:
  """The command that is running, to write beside its results: `prog_` and the arguments
  (`argv`, default the process's own), quoted for a shell."""
  words = sys.argv[1:] if argv is None else argv
  return " ".join([prog_, *map(shlex.quote, words)])


def check_counts(parser: argparse.ArgumentParser,
                 counts: Iterable[tuple[str, int | None, int]]) -> None:
  """Exits (status 2) naming the flag of the first `(flag, value, least)` whose value is below
  its least; a value of None (the flag's default: decided later) passes."""
  for flag, value, least in counts:
    if value is not None and value < least:
      parser.error(f"{flag} must be >= {least}, got {value}")
