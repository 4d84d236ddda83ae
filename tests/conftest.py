"""Shared pytest set-up: slow tests are opt-in (`pytest -m slow` or `--runslow`)."""

import jax
import pytest

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
