"""The benchmarks' one timer."""

from __future__ import annotations

import time
from typing import Any, Callable

import jax


def best_time(fn: Callable, *args, repeats: int = 3) -> tuple[float, Any]:
  """`(seconds, output)`: the best of `repeats` timed calls of `fn(*args)` after one call that
  compiles and warms up (its time not counted), each waited for to the end."""
  out = jax.block_until_ready(fn(*args))
  best = float("inf")
  for _ in range(repeats):
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    best = min(best, time.perf_counter() - start)
  return best, out
