"""Shared pytest set-up: the test tiers, the compile cache, and the fixtures tests train.

Two markers make the tiers (README.md, "Developing"):
- `slow`: left out of the quick tier, `python -m pytest -m "not slow"` (under 3 minutes on 2
  cores: rules, search, a training iteration, the command parsers); the full suite,
  `python -m pytest` (what `.ci/run` runs), runs them.
- `deep`: exhaustive checks (deep perft, sweeps over 8 devices and over 2 processes) that
  neither tier runs: opt in with `--deep` (or `-m deep`).
"""

import os
import shutil
import signal
import tempfile
from pathlib import Path

# A shell that starts pytest in the background (`pytest &` in a script) starts it with Ctrl-C
# ignored, and every subprocess inherits that: the Ctrl-C tests' commands would never see the
# SIGINT they are sent. Tests run with Python's own handler, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
  signal.signal(signal.SIGINT, signal.default_int_handler)

# Tests compile far more than they run: without LLVM's optimisations XLA compiles a tiny
# training iteration in about half the CPU time and runs it about 2x slower, which tests do not
# notice (`python -m benchmarks.xla_opt_level`: 6.2 s against 11.1 s at the default level 3).
# The few programs that run for long compile at the default again (`perft.OPTIMISED`).
# XLA's CPU fusion emitters (its default) take most of what is left: with its older elemental
# emitters the same iteration compiles in 2.5 s against 6.5 s and runs as fast (0.14 s for 20
# iterations either way; 2-core AMD EPYC, one core), and checkers' perft tests run faster too
# (13 s against 19 s). Set before JAX starts its CPU backend; xdist's workers and the tests'
# subprocesses inherit both.
TEST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
if TEST_XLA_FLAGS not in os.environ.get("XLA_FLAGS", ""):
  os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {TEST_XLA_FLAGS}".strip()

import jax  # noqa: E402  (after XLA_FLAGS)
import pytest  # noqa: E402

from azjax.runs import loop  # noqa: E402

# Training commands keep compiled programs in a persistent cache
# (`azjax.runs.loop.enable_compile_cache`); tests use a throwaway one, not the user's
# ~/.cache/azjax/jax, and every test uses it: many build equal programs from separate
# closures (a Trainer per test), which jit's in-memory cache cannot share.
# tests/test_train.py alone: 379 s against 512 s without it (one process, 2-core Intel Xeon,
# session 29).
if "AZJAX_COMPILE_CACHE" not in os.environ:
  # Set here, in pytest's first process, so that xdist's workers inherit (and share) it.
  os.environ["AZJAX_COMPILE_CACHE"] = _OWN_CACHE = tempfile.mkdtemp(prefix="azjax-test-jax-cache-")
else:
  _OWN_CACHE = None

# Tests build many small networks and random batches; on a CPU the partitionable threefry PRNG
# makes every random initialisation compile several times slower. Streams differ from the
# default, correctness does not.
jax.config.update("jax_threefry_partitionable", False)
loop.enable_compile_cache(os.environ["AZJAX_COMPILE_CACHE"])


def pytest_addoption(parser):
  parser.addoption("--deep", "--runslow", dest="deep", action="store_true", default=False,
                   help="run the deep tests too (exhaustive perft, an 8-device sweep)")


def pytest_configure(config):
  config.addinivalue_line("markers", "slow: left out of the quick tier (-m 'not slow')")
  config.addinivalue_line("markers", "deep: exhaustive; run only with --deep or -m deep")


def pytest_unconfigure(config):
  # The process that made the throwaway cache removes it (xdist's workers did not make it).
  if _OWN_CACHE is not None and not hasattr(config, "workerinput"):
    shutil.rmtree(_OWN_CACHE, ignore_errors=True)


# The files that take longest, longest first (each file alone on one idle core, `--durations`,
# with the emitters above; test_distributed.py's commands use both cores): they are collected
# first, so that pytest-xdist's workers (`--dist loadfile` hands out whole files in collection
# order) start on them and end on short files instead of one worker running a long file alone
# at the end. Any file not named keeps its place after these.
HEAVIEST_FIRST = ("test_distributed.py", "test_tdleaf.py", "test_console.py", "test_run_kinds.py",
                  "test_driver.py", "test_evaluate_cli.py", "test_alphabeta.py", "test_play.py",
                  "test_sharding.py", "test_search.py", "test_successor_targets.py",
                  "test_play_web.py", "test_checkpoint.py", "test_nets.py", "test_api.py",
                  "test_openspiel_bridge.py", "test_checkers.py", "test_curves.py",
                  "test_sweep.py", "test_agents.py", "test_selfplay.py", "test_klent.py",
                  "test_resume_cache.py", "test_scripts.py", "test_probe.py")


def _heaviest_first(items):
  missing = [n for n in HEAVIEST_FIRST if not (Path(__file__).parent / n).exists()]
  assert not missing, f"conftest.HEAVIEST_FIRST names no such test file: {missing}"
  rank = {name: i for i, name in enumerate(HEAVIEST_FIRST)}
  items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # Stable: keeps the rest.


def pytest_collection_modifyitems(config, items):
  _heaviest_first(items)
  selected = config.getoption("-m") or ""
  if config.getoption("deep") or ("deep" in selected and "not deep" not in selected):
    return
  skip_deep = pytest.mark.skip(reason="deep: run with --deep")
  for item in items:
    if "deep" in item.keywords:
      item.add_marker(skip_deep)


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
  """`trained_run(game, **overrides)`: the run directory of `tiny.config(game, **overrides)`
  trained for `tiny.TINY.iterations` iterations (its final network in `model/`, a snapshot in
  `models/` every 2 iterations), made once per test session (per xdist worker) in a temporary
  directory. Tests read it and must not write into it: copy it (`shutil.copytree`) first.
  Tests never read `results/`, the record of real runs, for their networks."""
  from tiny import config

  from azjax.runs import driver

  runs = {}

  def get(game: str = "tic_tac_toe", **overrides):
    name = ",".join([game, *(f"{k}={v}" for k, v in sorted(overrides.items()))])
    if name not in runs:
      run_dir = tmp_path_factory.mktemp("trained") / name.replace("=", "_").replace(",", "_")
      driver.train_and_evaluate(config(game, checkpoint_every=2, **overrides), run_dir,
                                progress=False)
      runs[name] = run_dir
    return runs[name]

  return get


@pytest.fixture(scope="session")
def tiny_trainer():
  """A `Trainer` of `tiny.TRAINING`, built once per session (tests must not change it)."""
  from tiny import TRAINING

  from azjax import train

  return train.Trainer.create(TRAINING)


@pytest.fixture(scope="session")
def tiny_iteration(tiny_trainer):
  """`tiny_trainer`'s iteration, jitted once per session."""
  return jax.jit(tiny_trainer.iteration)
