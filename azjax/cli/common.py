"""What the commands share: the name they were called by, the command line they record beside
their results, checks of their arguments, and the options that join several processes into one
run (`azjax train`, `azjax sweep`). Imports nothing heavy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import traceback
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


def add_distributed_options(parser: argparse.ArgumentParser) -> None:
  """--distributed, --coordinator HOST:PORT, --num-processes N, --process-id I and
  --heartbeat-timeout SECONDS (`start_distributed`; docs/multihost.md)."""
  group = parser.add_argument_group(
      "many hosts", "start the same command once per host (one process per host), with the run "
      "directory on a filesystem that every host sees; docs/multihost.md")
  group.add_argument("--distributed", action="store_true",
                     help="join the other processes with jax.distributed.initialize(), which "
                     "finds them in the cluster's environment (SLURM, Open MPI, Kubernetes, "
                     "Cloud TPU)")
  group.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                     help="where process 0 listens for the others (implies --distributed)")
  group.add_argument("--num-processes", type=int, default=None, metavar="N",
                     help="how many processes take part (implies --distributed)")
  group.add_argument("--process-id", type=int, default=None, metavar="I",
                     help="this process's number, 0 to N-1; process 0 writes the files "
                     "(implies --distributed)")
  group.add_argument("--heartbeat-timeout", type=int, default=None, metavar="SECONDS",
                     help="a process not heard from for this long ends the run on every "
                     "process (default: JAX's, 100)")


def distributed(args: argparse.Namespace) -> bool:
  """Whether `args` ask to join other processes (`add_distributed_options`)."""
  return args.distributed or any(v is not None for v in (args.coordinator, args.num_processes,
                                                         args.process_id))


def _first_line(err: BaseException) -> str:
  """The first line of an error's message (JAX's run on for pages), or its type's name."""
  text = str(err).strip()
  return text.splitlines()[0] if text else type(err).__name__


def start_distributed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
  """Joins the other processes if `args` ask for it (`add_distributed_options`), before
  anything starts JAX; returns whether this process is the primary one, which prints and
  writes the files (True without them).

  The other processes run the same command and would print every line again: their standard
  output goes to /dev/null (their errors still show, on standard error). A flag out of range
  exits with status 2; a cluster that JAX cannot find or join, with status 1.
  """
  if not distributed(args):
    if args.heartbeat_timeout is not None:
      parser.error("--heartbeat-timeout applies to a run of several processes (--distributed)")
    return True
  check_counts(parser, [("--num-processes", args.num_processes, 1),
                        ("--process-id", args.process_id, 0),
                        ("--heartbeat-timeout", args.heartbeat_timeout, 1)])
  if None not in (args.num_processes, args.process_id) and args.process_id >= args.num_processes:
    parser.error(f"--process-id must be below --num-processes ({args.num_processes}), "
                 f"got {args.process_id}")
  from azjax import sharding  # noqa: PLC0415 (imports JAX)

  try:
    sharding.initialize_distributed(args.coordinator, args.num_processes, args.process_id,
                                    heartbeat_timeout=args.heartbeat_timeout)
  except (ValueError, RuntimeError) as err:
    what = _first_line(err)
    # A ValueError: JAX found no cluster to fill in what the flags left out.
    hint = (" (outside SLURM, Open MPI, Kubernetes or Cloud TPU, give --coordinator HOST:PORT "
            "--num-processes N --process-id I)" if isinstance(err, ValueError) else "")
    parser.exit(1, f"error: --distributed: {what}{hint}\n")
  if sharding.is_primary():
    return True
  # The file descriptor itself, so that what JAX's C++ prints there (gloo's "connected" lines)
  # goes too.
  sys.stdout.flush()
  os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  return False


@contextlib.contextmanager
def ending_together(args: argparse.Namespace):
  """Around a command's work: in a run of several processes (`distributed(args)`), an error
  that ends this process ends it at once (`os._exit`), having said why on standard error.

  Why: the others wait for this one in their next collective. A normal exit would first wait in
  JAX's shutdown barrier for them, who wait for this one in turn, until the coordination
  service's heartbeat timeout (100 s by default) ends it with an abort and a C++ stack trace.
  Ended at once, its connections close, a collective that waits for it fails at once, and the
  other processes end the same way, each with one line: a collective that failed (a
  `JaxRuntimeError`) most likely means that another process stopped.
  """
  try:
    yield
  except BaseException as err:  # noqa: BLE001 (every way out of the command)
    if not distributed(args) or (isinstance(err, SystemExit) and not err.code):
      raise
    if isinstance(err, SystemExit):  # The command has said why already.
      status = err.code if isinstance(err.code, int) else 1
      if not isinstance(err.code, int):
        print(err.code, file=sys.stderr)
    elif isinstance(err, KeyboardInterrupt):
      print("stopped (Ctrl-C)", file=sys.stderr)
      status = 130
    elif type(err).__name__ in ("JaxRuntimeError", "XlaRuntimeError"):
      what = _first_line(err)
      print(f"error: a collective operation across the run's processes failed ({what}): most "
            "likely another process stopped; see its output for why. This one stops too.",
            file=sys.stderr)
      status = 1
    else:
      traceback.print_exc()
      status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
