"""Shared pytest set-up: slow tests are opt-in (`pytest -m slow` or `--runslow`)."""

import os
import tempfile

import jax
import pytest

# Training commands keep compiled programs in a persistent cache
# (`azjax.loop.enable_compile_cache`); tests that run them use a throwaway one, not the user's
# ~/.cache/azjax/jax.
os.environ.setdefault("AZJAX_COMPILE_CACHE", tempfile.mkdtemp(prefix="azjax-test-jax-cache-"))

# Tests build many small networks and random batches; on a CPU the partitionable threefry PRNG
# makes every random initialisation compile several times slower. Streams differ from the
# default, correctness does not.
jax.config.update("jax_threefry_partitionable", False)


def pytest_addoption(parser):
  parser.addoption("--runslow", action="store_true", default=False, help="run slow tests too")


def pytest_configure(config):
  config.addinivalue_line("markers", "slow: slow test, run with --runslow")


def pytest_collection_modifyitems(config, items):
  if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
    return
  skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
  for item in items:
    if "slow" in item.keywords:
      item.add_marker(skip_slow)
