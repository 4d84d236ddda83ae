"""Shared pytest set-up: slow tests are opt-in (`pytest -m slow` or `--runslow`)."""

import pytest


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
