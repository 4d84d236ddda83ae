"""Data parallelism: training sharded over 8 (simulated CPU) devices matches one device.

JAX reads `XLA_FLAGS` once, when it starts, and other test modules start it in this process with
one CPU device; so the checks run in a fresh Python process with
`--xla_force_host_platform_device_count=8`.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import pytest

from azjax import cpu_devices, sharding

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """
import os
assert "--xla_force_host_platform_device_count=8" in os.environ["XLA_FLAGS"]
import chex, jax, jax.numpy as jnp, numpy as np
from jax.sharding import PartitionSpec as P
from azjax import sharding, sweep, train
from azjax.runs import loop
from azjax.games import base
from azjax.config import Config
assert len(jax.devices()) == 8, jax.devices()
# As in conftest: the suite's throwaway compile cache ($AZJAX_COMPILE_CACHE), which lets the
# HLO read below and the resumed driver run load what the steps before them compiled.
loop.enable_compile_cache()
jax.config.update("jax_threefry_partitionable", False)
CONFIG = Config(game="tic_tac_toe", net="mlp", hidden=32, blocks=1, value_hidden=16,
                simulations=8, selfplay_batch=16, selfplay_steps=6, buffer_size=512,
                min_buffer=1, train_batch=32, sgd_steps=2, iterations=4)

def train_alone(config, iterations):
  trainer = train.Trainer.create(config)
  state, step = trainer.init(), trainer.jit_iteration()
  for _ in range(iterations):
    state, metrics = step(state)
  return state, metrics
"""

ONE_RUN = """
# One device, the single-run path.
alone, metrics = train_alone(CONFIG, 2)
assert bool(metrics["trained"])

# The same run over 8 devices: 2 games and their 2 buffer columns (of 32 blocks) per device,
# parameters replicated.
mesh = sharding.make_mesh()
trainer = train.Trainer.create(CONFIG, mesh=mesh)
state, step = trainer.init(), trainer.jit_iteration()
for _ in range(2):
  state, sharded_metrics = step(state)
buffer = state.selfplay.buffer.observation
assert buffer.sharding.spec == P(None, "data"), buffer.sharding
assert {s.data.shape[:2] for s in buffer.addressable_shards} == {(512 // 16, 16 // 8)}
assert {s.data.shape[0] for s in state.selfplay.games.board.addressable_shards} == {16 // 8}
assert all(x.sharding.is_fully_replicated for x in jax.tree.leaves(state.params))
assert bool(sharded_metrics["trained"])
assert int(state.positions) == int(alone.positions)
chex.assert_trees_all_equal(state.selfplay.buffer.value, alone.selfplay.buffer.value)
chex.assert_trees_all_close(state.params, alone.params, atol=1e-5, rtol=1e-4)
chex.assert_trees_all_close(state.opt_state, alone.opt_state, atol=1e-5, rtol=1e-4)
np.testing.assert_allclose(float(sharded_metrics["loss"]), float(metrics["loss"]), rtol=1e-5)

# Self-play sends nothing between devices: per run of its loops (a move, a search simulation)
# the compiled iteration exchanges less than one move's block of buffer rows, and nothing the
# size of the buffer is ever gathered (a flat buffer split by rows gathered all of it per move).
# SGD's exchange is the gradient's all-reduce, one a step (in the SGD loop for an MLP, whose
# steps are not unrolled): it comes from the differentiated loss, under jvp or its transpose.
ops = sharding.collectives(step.lower(state).compile().as_text())
gradient = [op for op in ops if "jvp(" in op["source"]]
param_bytes = sum(x.nbytes for x in jax.tree.leaves(state.params))
assert sum(op["bytes"] for op in gradient if op["kind"] == "all-reduce") >= param_bytes, ops
rows = [x for x in jax.tree.leaves(state.selfplay.buffer) if x.ndim >= 2]
block_bytes = sum(x.nbytes for x in rows) // rows[0].shape[0]
selfplay_loops = [op for op in ops if op["in_loop"] and op not in gradient]
assert sum(op["bytes"] for op in selfplay_loops) < block_bytes, ops
assert max(op["bytes"] for op in ops if op["kind"] == "all-gather") < buffer.nbytes // 4, ops

# A batch the devices do not divide is refused before anything compiles.
try:
  train.Trainer.create(Config(selfplay_batch=12, buffer_size=1200), mesh=mesh)
  raise AssertionError("no error")
except ValueError as err:
  assert "selfplay_batch=12: must be divisible by the number of devices (8)" in str(err), err

# The driver uses every device by default, and a sharded run checkpoints and resumes.
import dataclasses, tempfile
from azjax.runs.driver import train_and_evaluate
run_dir = tempfile.mkdtemp()
config = dataclasses.replace(CONFIG, iterations=3, eval_every=0, eval_games=0,
                             checkpoint_every=1)
train_and_evaluate(config, run_dir, progress=False, max_iterations=2)
summary = train_and_evaluate(config, run_dir, progress=False, resume=True)
assert summary.iterations == 3 and summary.positions == 3 * 16 * 6, summary
print("ok")
"""

SWEEP = """
# A sweep of 2 configurations over 8 devices: a (configs=2, data=4) mesh.
runs = sweep.expand(CONFIG, {"learning_rate": [CONFIG.learning_rate, 3e-3]}, seeds=[0])
(group,) = sweep.group_runs(runs)
mesh = sweep.group_mesh(group, None)
assert dict(mesh.shape) == {"configs": 2, "data": 4}, mesh
program = sweep.group_program(group, mesh)
states = program.init(jnp.zeros(2, jnp.int32))
hyper = sweep.stacked_hyper(group)
for _ in range(2):
  states, metrics = program.iteration(states, hyper)
assert states.selfplay.buffer.observation.sharding.spec == P("configs", None, "data")
alone, _ = train_alone(CONFIG, 2)
chex.assert_trees_all_close(base.unstack_state(states.params, 0), alone.params, atol=1e-5,
                            rtol=1e-4)
print("ok")
"""


def _run(code: str) -> None:
  # The parent's XLA_FLAGS (conftest's compile-time setting) go on, with 8 CPU devices.
  env = cpu_devices.environment(8)
  env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
  proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE + code)], cwd=ROOT,
                        env=env, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]


def test_simulated_devices_get_four_threads_each():
  env = cpu_devices.environment(8, {"XLA_FLAGS": "--xla_backend_optimization_level=0"})
  assert env["XLA_FLAGS"] == ("--xla_backend_optimization_level=0 "
                              "--xla_force_host_platform_device_count=8")
  assert env["PJRT_NPROC"] == str(max(32, os.cpu_count()))
  # A larger pool asked for stays; a smaller one grows; the caller's mapping is not changed.
  given = {"PJRT_NPROC": "100"}
  assert cpu_devices.environment(2, given)["PJRT_NPROC"] == "100"
  assert given == {"PJRT_NPROC": "100"}
  assert cpu_devices.environment(2, {"PJRT_NPROC": "1"})["PJRT_NPROC"] == str(
      max(8, os.cpu_count()))
  with pytest.raises(ValueError, match="devices=0: must be at least 1"):
    cpu_devices.environment(0, {})


def test_a_device_count_already_asked_for_is_read_and_replaced():
  flags = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4 --xla_cpu_use_thunk_runtime=1"}
  assert cpu_devices.requested_devices(flags) == 4
  assert cpu_devices.requested_devices({"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=1"}) is None
  assert cpu_devices.requested_devices({}) is None
  assert cpu_devices.environment(4, flags) == {
      "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=1 --xla_force_host_platform_device_count=4",
      "PJRT_NPROC": str(max(16, os.cpu_count()))}
  with pytest.raises(ValueError, match="device_count=four: must be a whole number"):
    cpu_devices.requested_devices({"XLA_FLAGS": "--xla_force_host_platform_device_count=four"})


@pytest.mark.slow
def test_one_iteration_sharded_over_8_devices_matches_one_device():
  _run(ONE_RUN)


@pytest.mark.deep
def test_sweep_spread_over_8_devices_matches_a_run_alone():
  _run(SWEEP)


def test_mesh_on_this_process_devices():
  mesh = sharding.make_mesh()
  assert mesh.axis_names == ("data",) and sharding.data_size(mesh) == len(jax.devices())
  mesh = sharding.make_mesh(jax.devices()[:1], num_configs=4)
  assert mesh.axis_names == ("configs", "data") and sharding.configs_size(mesh) == 1
  assert sharding.data_size(None) == 1


def test_collectives_read_off_hlo_text():
  hlo = textwrap.dedent("""\
      %all-gather.3 = f32[64,6]{1,0} all-gather(%x), metadata={op_name="f/while/body/update"}
      %add.1 = f32[64,6]{1,0} add(%a, %b)
      ROOT %all-reduce.2 = pred[]{} all-reduce(%y), to_apply=%or, metadata={op_name="f/gather"}
      %all-reduce.4 = (f32[8]{0}, s32[2,2]{1,0}) all-reduce(%p, %q), to_apply=%add
      %ag-start = (bf16[4]{0}, bf16[32]{0}) all-gather-start(%z), dimensions={0}
      %ag-done = bf16[32]{0} all-gather-done(%ag-start), metadata={op_name="f/while/body/g"}
      """)
  ops = sharding.collectives(hlo)
  assert [(op["kind"], op["shape"], op["bytes"], op["in_loop"]) for op in ops] == [
      ("all-gather", "f32[64,6]", 64 * 6 * 4, True), ("all-reduce", "pred[]", 1, False),
      ("all-reduce", "f32[8], s32[2,2]", 8 * 4 + 4 * 4, False),
      ("all-gather", "bf16[32]", 32 * 2, True)]
  assert ops[0]["source"] == "f/while/body/update"
