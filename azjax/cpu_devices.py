"""Simulated devices: several XLA CPU devices in one process, on a machine without several
accelerators (the tests of sharded and multi-process training, benchmarks/sharding.py).

XLA reads both settings below once, when JAX starts, so `environment` is for a child process's
environment, or for `os.environ` before the first `import jax`. This module imports no JAX.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_DEVICE_COUNT = re.compile(r"--xla_force_host_platform_device_count=(\S*)")

# XLA runs every device's share of a program on one pool of max(cores, devices) threads, and a
# thread that reaches a collective (all-gather, all-reduce) blocks there until every device has
# reached it. Its CPU runtime also runs a program's independent collectives concurrently, in no
# order fixed across devices, so one device can hold two threads at two collectives. With as
# many threads as devices (8 devices on 2 cores) they can all block at once, each collective
# short of a device whose turn needs a thread: seen on 2 busy cores as 7 threads at an all-gather
# and 1 at an all-reduce, forever. Four threads a device leave room; they idle while blocked,
# and the pool never shrinks below one thread a core (XLA's own size for it).
THREADS_PER_DEVICE = 4


def environment(devices: int, env: Mapping[str, str] | None = None) -> dict[str, str]:
  """`env` (default `os.environ`) with `devices` simulated CPU devices (`XLA_FLAGS`, whose
  other flags are kept and whose earlier device count is replaced) and a thread pool large
  enough for their collectives (`PJRT_NPROC`, which XLA reads for it)."""
  if devices < 1:
    raise ValueError(f"devices={devices}: must be at least 1")
  env = dict(os.environ if env is None else env)
  flags = " ".join(_DEVICE_COUNT.sub("", env.get("XLA_FLAGS", "")).split())  # the count is ours
  env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
  threads = max(THREADS_PER_DEVICE * devices, os.cpu_count() or 1)
  given = env.get("PJRT_NPROC", "")
  env["PJRT_NPROC"] = str(max(int(given), threads) if given.isdigit() else threads)
  return env


def requested_devices(env: Mapping[str, str] | None = None) -> int | None:
  """The simulated device count `env`'s (default `os.environ`) `XLA_FLAGS` already asks for,
  or None; a malformed count is refused rather than left for XLA to misread."""
  found = _DEVICE_COUNT.findall((os.environ if env is None else env).get("XLA_FLAGS", ""))
  if not found:
    return None
  if not found[-1].isdigit() or int(found[-1]) < 1:
    raise ValueError(f"XLA_FLAGS --xla_force_host_platform_device_count={found[-1]}: must be "
                     "a whole number of devices, at least 1")
  return int(found[-1])
