"""Long commands on a console: progress on a terminal, quiet in a pipe, and a Ctrl-C that keeps
what has finished; a missing optional extra in one line.

Every command that can run longer than a minute (`azjax evaluate` in all its modes, probe,
export, efficiency, sweep) follows one pattern:

    bar = console.progress(len(opponents), "matches", unit="match")
    try:
      for opponent in opponents:
        ...                                   # one unit of work, seconds at most
        bar.update(1)
    except KeyboardInterrupt:
      interrupted = console.interrupted("writing the matches played so far")
    finally:
      bar.close()
    ...                                       # write what has finished
    if interrupted:
      sys.exit(console.INTERRUPTED)

The bar is tqdm's, on stderr, with `disable=None` (the training loop's, `azjax.runs.loop`, is
this one too): it shows what is done, how far and an estimate of the time left on a terminal,
and nothing when stderr is a file or a pipe (`nohup ... > log` gets the command's own lines).
`interrupted` prints one line and ignores a second Ctrl-C while the results are written, so the
command exits with status 130 (the shell's code for SIGINT) and no traceback. `command` wraps a
command's `main` as a backstop: a Ctrl-C that no loop caught, or a `MissingExtra`, ends in one
line (status 130 or 3), not a traceback, and so does `JAX_PLATFORMS=cuda` without the GPU extra.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterator, NamedTuple, Sequence

INTERRUPTED = 130  # The exit status of a command stopped by Ctrl-C (128 + SIGINT).
MISSING_EXTRA = 3  # The exit status of a command that needs an optional extra not installed.


# -- Progress --------------------------------------------------------------------------------------


class _NoBar:
  """What `progress` returns without tqdm: the calls a command makes, doing nothing."""

  def update(self, n: int = 1) -> None:
    del n

  def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
    del text, refresh

  def set_postfix(self, ordered_dict: Any = None, refresh: bool = True) -> None:
    del ordered_dict, refresh

  def set_description_str(self, text: str = "", refresh: bool = True) -> None:
    del text, refresh

  def write(self, text: str) -> None:
    print(text)

  def close(self) -> None:
    pass


def progress(total: int | None, desc: str | None, *, unit: str = "it", initial: int = 0,
             leave: bool = False) -> Any:
  """A progress bar over `total` units of work (None: unknown), labelled `desc`: tqdm on stderr
  on a terminal (what is done, how far, the rate and the time left), disabled in a pipe or a
  file; a do-nothing bar without tqdm. Call `update(n)` as units finish and `close()` at the
  end; with `leave` the last state stays on the terminal (training's bar), else it is cleared.
  """
  try:
    from tqdm.auto import tqdm  # noqa: PLC0415
  except ImportError:  # pragma: no cover
    return _NoBar()
  # disable=None: no bar when stderr is not a terminal, so a log file (`nohup ... > log`) gets
  # the command's own lines rather than a carriage-return stream of updates.
  return tqdm(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True,
              disable=None, leave=leave)


def reach(bar: Any, limit: int | None = None) -> Callable[[int], None]:
  """A callback moving `bar` to an absolute count (at most `limit`), for work that reports how
  far it is (positions found so far) rather than steps."""
  done = [0]

  def to(count: int) -> None:
    count = count if limit is None else min(count, limit)
    bar.update(count - done[0])
    done[0] = count

  return to


def echo(bar: Any, text: str) -> None:
  """Prints a line of the command's output (stdout) above the bar, and flushes it, so a pipe
  (`| tee log`) gets each line as it is made."""
  bar.write(text)
  sys.stdout.flush()


# -- Ctrl-C ----------------------------------------------------------------------------------------


def raise_interrupt(signum: int, frame: Any) -> None:
  """Ctrl-C's handler while a command runs: Python's default (raises KeyboardInterrupt), except
  where the exception would not reach the command as a KeyboardInterrupt: inside a
  garbage-collection callback (JAX registers one, and a long command spends moments in it) or a
  `__del__`, where Python prints it as "Exception ignored" and drops it, and inside JAX's scalar
  types (`jnp.float32`), which NumPy >= 2.4 calls from C while it reads a dtype
  (`np.dtype(jnp.float32)`, behind every `.astype`) and turns an exception there into a
  SystemError. There the signal is sent again a moment later, once that code has returned."""
  del signum
  if _in_dropping_code(frame):
    threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT)).start()
    return
  raise KeyboardInterrupt


def _in_dropping_code(frame: Any) -> bool:
  """Whether `frame` (the frame a signal interrupted) runs inside code whose exceptions are
  dropped or mangled by its caller: a `gc.callbacks` function, a `__del__` method or a method
  of JAX's scalar types, at any depth."""
  callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks}
  # Only loaded with JAX; looked up, not imported, so the console stays free of JAX.
  scalar_types = getattr(sys.modules.get("jax._src.numpy.scalar_types"), "__file__", None)
  while frame is not None:
    code = frame.f_code
    if code in callbacks or code.co_name == "__del__" or code.co_filename == scalar_types:
      return True
    frame = frame.f_back
  return False


def _raises(handler: Any) -> bool:
  """Whether `handler` is a Ctrl-C handler that raises KeyboardInterrupt at once."""
  return handler is signal.default_int_handler or handler is raise_interrupt


def interrupted(what: str) -> bool:
  """Call on KeyboardInterrupt: prints `interrupted: <what>` in one line on stderr and ignores
  a further Ctrl-C, so the command can write what has finished; returns True (the flag the
  command exits 130 by)."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  print(f"\ninterrupted: {what}", file=sys.stderr, flush=True)
  return True


@contextlib.contextmanager
def held_interrupt() -> Iterator[None]:
  """Holds a Ctrl-C that comes inside the block and raises it (KeyboardInterrupt) once the block
  has ended: for library code that must not be cut short, such as orbax's restores, whose
  asyncio loop a KeyboardInterrupt inside may leave with tracebacks from its threads, or lose.
  Only where Ctrl-C raises (Python's default handler or `raise_interrupt`) in the main thread:
  any other handler (a training loop's, `interrupted`'s ignoring one) stays as it is."""
  previous = signal.getsignal(signal.SIGINT)
  if threading.current_thread() is not threading.main_thread() or not _raises(previous):
    yield
    return
  held = []
  signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
  try:
    yield
  finally:
    signal.signal(signal.SIGINT, previous)
  if held:
    raise KeyboardInterrupt


def each(units: Sequence[Any], work: Callable[[Any, Any], Any], desc: str, *, unit: str = "it",
         total: int | None = None, what: str = "writing what has finished"
         ) -> tuple[list[Any], bool]:
  """`work(u, bar)` for each of `units` in turn under a progress bar; on Ctrl-C, stops between
  two units (or wherever `work` returns control) with `interrupted(what)`.

  Args:
    total: the bar's length, when `work` advances it itself (`bar.update` per batch); default
      `len(units)`, one step per unit.
  Returns:
    `(results, interrupted)`: the results of the units that finished, and whether Ctrl-C came.
  """
  bar = progress(len(units) if total is None else total, desc, unit=unit)
  done = []
  try:
    for u in units:
      done.append(work(u, bar))
      if total is None:
        bar.update(1)
  except KeyboardInterrupt:
    return done, interrupted(f"{what} ({len(done)} of {len(units)} done)")
  finally:
    bar.close()
  return done, False


# -- Optional extras -------------------------------------------------------------------------------


class Extra(NamedTuple):
  """An optional extra: what it gives and the command that installs it."""

  package: str
  gives: str
  install: str


EXTRAS: dict[str, Extra] = {
    "solver": Extra("bitbully", "the Connect Four solver (--solver, --opponents solver)",
                    'pip install -e ".[solver]"'),
    "openspiel": Extra("open-spiel", "OpenSpiel's opponents and ladder (openspiel-mcts:N, "
                       "--engine openspiel)", 'pip install -e ".[openspiel]"'),
    "browser": Extra("selenium", "the play page's browser test (with Chromium: apt-get install "
                     "chromium chromium-driver)", 'pip install -e ".[test]"'),
    "cuda": Extra("jax[cuda12]", "training and evaluation on an NVIDIA GPU",
                  'pip install -e ".[cuda]"'),
    "tensorboard": Extra("tensorboardX", "--tensorboard logs", 'pip install -e ".[tensorboard]"'),
}


class MissingExtra(ImportError):
  """An optional extra that a command needs is not installed; the message names it and the
  command that installs it."""

  def __init__(self, extra: str, detail: str = ""):
    info = EXTRAS[extra]
    self.extra = extra
    super().__init__(f"{detail or info.gives} needs the optional extra {extra!r} "
                     f"({info.package}): {info.install}")


def require(module: str, extra: str, detail: str = "") -> Any:
  """`import module`, or `MissingExtra(extra, detail)` when it is not installed."""
  import importlib  # noqa: PLC0415

  try:
    return importlib.import_module(module)
  except ImportError:
    raise MissingExtra(extra, detail) from None


def missing_gpu() -> bool:
  """JAX is asked for an NVIDIA GPU (`JAX_PLATFORMS=cuda` or `gpu`) that no installed plugin
  provides: JAX would fail with an assertion deep inside its backend setup."""
  import importlib.util  # noqa: PLC0415
  import os  # noqa: PLC0415

  asked = {p.strip().lower() for p in os.environ.get("JAX_PLATFORMS", "").split(",")}
  if not asked & {"cuda", "gpu"}:
    return False
  return all(importlib.util.find_spec(name) is None
             for name in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_plugins"))


def command(main: Callable[..., Any]) -> Callable[..., Any]:
  """Wraps a command's `main`: a KeyboardInterrupt that reached it ends the process with one line
  and status 130, a `MissingExtra` (or a GPU backend JAX cannot start) with one line naming the
  extra and how to install it, status 3. While it runs, Ctrl-C raises through `raise_interrupt`
  (no Ctrl-C is lost in a garbage-collection callback). Ctrl-C's handler is given back as it
  was when the command returns or exits: `interrupted` ignores a second Ctrl-C while the
  command writes what it has, and a command called in-process (a notebook, a test) must not
  leave its caller's Ctrl-C ignored, nor that of the subprocesses the caller starts later (an
  ignored signal is inherited)."""

  @functools.wraps(main)
  def wrapped(*args, **kwargs):
    if missing_gpu():
      print(f"error: {MissingExtra('cuda', 'JAX_PLATFORMS asks for a GPU: it')}",
            file=sys.stderr, flush=True)
      sys.exit(MISSING_EXTRA)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if in_main else None
    if previous is signal.default_int_handler:
      signal.signal(signal.SIGINT, raise_interrupt)
    try:
      return main(*args, **kwargs)
    except KeyboardInterrupt:
      interrupted("stopped")
      sys.exit(INTERRUPTED)
    except SystemError as err:
      # A Ctrl-C that C code calling back into Python turned into a SystemError (the cases
      # `raise_interrupt` knows are sent again; this is for those it does not know).
      if not isinstance(err.__cause__, KeyboardInterrupt):
        raise
      interrupted("stopped")
      sys.exit(INTERRUPTED)
    except MissingExtra as err:
      print(f"error: {err}", file=sys.stderr, flush=True)
      sys.exit(MISSING_EXTRA)
    finally:
      if previous is not None:
        signal.signal(signal.SIGINT, previous)

  return wrapped
