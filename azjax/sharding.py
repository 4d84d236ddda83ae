"""Data parallelism over many devices with `jax.sharding`: a mesh, and where each array lives.

One run over `D` devices uses a 1-D mesh with axis "data": the self-play games (`[B]`) and the
replay buffer's slot columns (`[T, B]`, see `azjax/replay.py`) are split over "data", every
minibatch of the SGD loop is split over "data", and everything else (parameters, optimizer
state, RNG key, counters) is replicated. The iteration is the same program as on one device;
`jax.jit` with these shardings lets XLA's SPMD partitioner split it, and the gradient of a loss
averaged over a split batch becomes a local gradient plus an all-reduce by itself.

What crosses devices: during self-play, no position: each device searches, steps and stores its
own games (the search adds a small all-reduce of the games' legal masks per simulation: mctx
reads its tree at `[batch index, node]`, which XLA cannot prove local). Once an iteration: which
rows have targets (a byte a row, gathered so that rows are drawn uniformly over every device's
rows and a sharded run samples exactly what one device would), the sampled minibatches (an
all-reduce of `K x b` rows) and the gradients' all-reduce. `python -m benchmarks.sharding`
lists every collective of the compiled iteration.

A sweep of `K` configurations vmapped together (`azjax.sweep`) stacks every state leaf on a
leading `[K]` axis. Over `D` devices it uses a 2-D mesh ("configs", "data") of shape
`(gcd(K, D), D / gcd(K, D))`: configurations are spread over the first axis (no communication
between them at all) and each one's batches over the second.

Many hosts (docs/multihost.md): every process calls `initialize_distributed` before anything
else touches JAX (on a SLURM, Open MPI, Kubernetes or Cloud TPU cluster its arguments are found in
the environment); `jax.devices()` then lists the devices of every host, and the same mesh and
shardings span them. Each process holds its own devices' shards; `is_primary` names the one
that writes the files, `barrier` lines the processes up around those writes, and `local_copy`
brings a network whole onto this process's first device, for work that each process does alone
(evaluation matches).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

DATA = "data"  # the batch axis: games, replay rows, minibatch examples
CONFIGS = "configs"  # a sweep's configuration axis


# -- Many processes --------------------------------------------------------------------------------


def initialize_distributed(coordinator: str | None = None, num_processes: int | None = None,
                           process_id: int | None = None, *,
                           heartbeat_timeout: int | None = None) -> None:
  """Joins this process to the others of a multi-process run (`jax.distributed.initialize`).

  Must come before anything starts JAX's backends (a computation, `jax.devices()`). Arguments
  left None are read from the cluster's environment (SLURM, Open MPI, Kubernetes, Cloud TPU), or
  from `JAX_COORDINATOR_ADDRESS`.

  Args:
    coordinator: `HOST:PORT` of process 0, which runs the coordination service there.
    num_processes: how many processes take part.
    process_id: this process's number, `0 <= process_id < num_processes`.
    heartbeat_timeout: seconds without word from a process after which the service declares it
      dead and every other process ends (None: JAX's default, 100 s).
  Raises:
    ValueError: what JAX could not find (e.g. no coordinator outside a known cluster).
    RuntimeError: the processes did not all connect within JAX's initialization timeout.
  """
  # The CPU's collectives across processes need an implementation; gloo is the one that comes
  # with jaxlib (JAX 0.10 chooses it by default, older versions chose none). On GPUs and TPUs
  # this setting is unused.
  if getattr(jax.config, "jax_cpu_collectives_implementation", "gloo") is None:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
  timeouts = {} if heartbeat_timeout is None else {"heartbeat_timeout_seconds": heartbeat_timeout}
  jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes,
                             process_id=process_id, **timeouts)


def is_primary() -> bool:
  """Whether this process writes the files: process 0 (the only one without `jax.distributed`)."""
  return jax.process_index() == 0


_BARRIERS = itertools.count()  # Every process passes the same barriers in the same order.


def barrier(name: str, *, timeout: float = 1200.0) -> None:
  """Waits until every process has reached the barrier `name` (nothing with one process).

  It is the coordination service's barrier (the service `initialize_distributed` joined), not a
  collective on the devices: it compiles nothing and waits up to `timeout` seconds for a late
  process. The first run of a collective waits far less for the others: on CPUs, gloo gives
  them 30 s to join a group of devices it has not connected yet, and one process may well
  compile for longer than that after another (on a `--resume`, process 0 loads the program from
  the compilation cache, which JAX writes from process 0 only, and the others compile it). A
  process that dies meanwhile ends the wait once the heartbeat timeout declares it dead.
  """
  if jax.process_count() == 1:
    return
  from jax._src import distributed  # noqa: PLC0415 (the client has no public name)

  distributed.global_state.client.wait_at_barrier(f"azjax/{next(_BARRIERS)}/{name}",
                                                  int(timeout * 1000))


def local_copy(tree: Any) -> Any:
  """`tree` whole on this process's first device (`jax.local_devices()[0]`).

  A network replicated over a mesh that spans processes lives partly on devices this process
  cannot use; work that each process does by itself (an evaluation match, identical on every
  process) needs its own copy. A replicated array gives its local copy; one split over
  processes is gathered from all of them (a collective: every process must call this).
  """
  device = jax.local_devices()[0]

  def one(x):
    if not isinstance(x, jax.Array) or x.is_fully_addressable:
      return jax.device_put(x, device)
    if x.is_fully_replicated:
      return jax.device_put(x.addressable_shards[0].data, device)
    from jax.experimental import multihost_utils  # noqa: PLC0415

    return jax.device_put(multihost_utils.process_allgather(x, tiled=True), device)

  return jax.tree.map(one, tree)


# -- Meshes ----------------------------------------------------------------------------------------


def make_mesh(devices: Sequence[Any] | None = None, *, num_configs: int = 0) -> Mesh:
  """A mesh over `devices` (default: all of `jax.devices()`, every host's).

  Args:
    devices: the devices to use.
    num_configs: 0 for one run: a 1-D ("data",) mesh. For a sweep of that many stacked
      configurations: a 2-D ("configs", "data") mesh with `gcd(num_configs, D)` devices along
      "configs" and the rest along "data".
  """
  devices = list(jax.devices() if devices is None else devices)
  if not num_configs:
    return Mesh(np.array(devices), (DATA,))
  along_configs = math.gcd(num_configs, len(devices))
  grid = np.array(devices).reshape(along_configs, len(devices) // along_configs)
  return Mesh(grid, (CONFIGS, DATA))


def data_size(mesh: Mesh | None) -> int:
  """Devices along the "data" axis (1 without a mesh): batches must be divisible by it."""
  return 1 if mesh is None else int(mesh.shape[DATA])


def configs_size(mesh: Mesh | None) -> int:
  """Devices along the "configs" axis (1 if the mesh has none)."""
  return int(mesh.shape[CONFIGS]) if mesh is not None and CONFIGS in mesh.axis_names else 1


def replicated(mesh: Mesh) -> NamedSharding:
  """The whole array on every device."""
  return NamedSharding(mesh, P())


def _lead(mesh: Mesh, stacked: bool) -> tuple:
  """The spec of a stacked state's leading `[K]` axis (nothing for a single run's state)."""
  if not stacked:
    return ()
  return (CONFIGS if CONFIGS in mesh.axis_names else None,)


def state_shardings(state: Any, mesh: Mesh, *, stacked: bool = False) -> Any:
  """`NamedSharding`s for a `TrainState` (or its abstract shape): a pytree like `state`.

  Split over "data": every leaf of `state.selfplay.games` and `state.selfplay.episode` (their
  axis 0 is the `B` games) and of the replay buffer (axis 1: its `B` slot columns; axis 0 is
  the `T` blocks), except the write pointer. Replicated: the rest. With `stacked=True` each
  leaf has a leading `[K]` configuration axis first, split over "configs" if the mesh has that
  axis.
  """
  lead = _lead(mesh, stacked)

  def rep(_):
    return NamedSharding(mesh, P(*lead))

  def split(x):
    return NamedSharding(mesh, P(*lead, DATA))

  def split_columns(x):
    # Scalars (the buffer's write pointer) have nothing to split.
    return NamedSharding(mesh, P(*lead, None, DATA) if x.ndim > len(lead) else P(*lead))

  shardings = jax.tree.map(rep, state)
  sp = state.selfplay
  return shardings.replace(selfplay=sp.replace(
      games=jax.tree.map(split, sp.games),
      episode=split(sp.episode),
      buffer=jax.tree.map(split_columns, sp.buffer)))


def constrain(tree: Any, mesh: Mesh | None, *, batch_axis: int = 0) -> Any:
  """Asks XLA to split every leaf of `tree` over "data" along `batch_axis` (no-op without mesh).

  Used inside the iteration on the sampled minibatches `[K, b, ...]`, which XLA would otherwise
  be free to keep whole on every device. Under `jax.vmap(..., spmd_axis_name="configs")` the
  vmapped axis is split over "configs" too.
  """
  if mesh is None or data_size(mesh) == 1:
    return tree
  spec = P(*([None] * batch_axis), DATA)
  return jax.lax.with_sharding_constraint(tree, NamedSharding(mesh, spec))


def check_divisible(config: Any, mesh: Mesh | None) -> None:
  """Raises ValueError naming the batch size that the "data" axis does not divide."""
  config.validate(num_devices=data_size(mesh))


def describe(mesh: Mesh | None) -> str:
  """`"8 x cpu (data=8)"`: for logs."""
  if mesh is None:
    device = jax.local_devices()[0]
    return f"1 x {device.platform} ({device.device_kind})"
  axes = ", ".join(f"{name}={size}" for name, size in mesh.shape.items())
  return f"{mesh.devices.size} x {mesh.devices.flat[0].platform} ({axes})"


COLLECTIVES = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
_DTYPE_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "bf16": 2, "f16": 2, "s32": 4,
                "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8}
# `%name = TYPE op(` where TYPE is `f32[8,2]{1,0}` or a tuple `(f32[8]{0}, s32[4]{0})`, and op
# is a collective, maybe asynchronous (`-start` ... `-done`, as on GPUs).
_COLLECTIVE = re.compile(r"= (\(.*?\)|\S+) (" + "|".join(COLLECTIVES) + r")(-start|-done)?\(")
_ARRAY = re.compile(r"(\w+)\[([\d,]*)\]")


def collectives(hlo: str) -> list[dict]:
  """The cross-device operations of a compiled program, read off its HLO text.

  `jax.jit(f).lower(*args).compile().as_text()` gives the text. Used by `benchmarks/sharding.py`
  and the tests to check what a sharded iteration sends between devices. An asynchronous
  collective counts once, at its `-done` (whose result is what arrives); a tuple-shaped one (XLA
  combines small all-reduces) counts all its arrays.

  Returns:
    one `{"kind", "shape", "bytes", "source", "in_loop"}` per op: its result's bytes, the JAX
    operation it came from (`op_name`), and whether that is in a `while` loop's body (a
    self-play move, a search simulation), which runs many times per call.
  """
  found = []
  for line in hlo.splitlines():
    match = _COLLECTIVE.search(line)
    if not match or match.group(3) == "-start":
      continue
    arrays = _ARRAY.findall(match.group(1))
    size = sum(math.prod(int(d) for d in dims.split(",") if d) * _DTYPE_BYTES.get(dtype, 4)
               for dtype, dims in arrays)
    source = re.search(r'op_name="([^"]*)"', line)
    source = source.group(1) if source else ""
    found.append({"kind": match.group(2),
                  "shape": ", ".join(f"{dtype}[{dims}]" for dtype, dims in arrays),
                  "bytes": size, "source": source, "in_loop": "while/body" in source})
  return found
