"""Device memory: a shape-only estimate of what a run needs, checked before anything compiles,
for a single run (`check_run`) and for a sweep's group of runs vmapped together
(`check_group`). A run that would not fit is refused with a message that says what to lower.

Each process checks its own host: its own devices (`jax.local_devices()`), and on a CPU the
share of the mesh's devices that it holds, which share its memory.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from azjax import sharding
from azjax.train import Trainer


def _nbytes(tree: Any) -> int:
  return int(sum(np.prod(x.shape, dtype=np.int64) * np.dtype(x.dtype).itemsize
                 for x in jax.tree.leaves(tree)))


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
  """Bytes one run of a group needs on the device (an estimate, from shapes only)."""

  replicated: int  # parameters, optimizer state (whole on every device of the "data" axis)
  replay: int  # replay buffer and games in progress (split over "data")
  search: int  # the self-play search tree (split over "data")
  training: int  # sampled minibatches and network activations (split over "data")

  @property
  def split(self) -> int:
    return self.replay + self.search + self.training

  def per_device(self, data: int) -> int:
    return self.replicated + -(-self.split // data)


def _leaf_outputs(tree: dict) -> list:
  """The `__call__` outputs of the modules with no submodules in a capture_intermediates tree."""
  subs = [v for k, v in tree.items() if k != "__call__" and isinstance(v, dict)]
  if not subs:
    return [tree.get("__call__", ())]
  return [out for sub in subs for out in _leaf_outputs(sub)]


def estimate_memory(trainer: Trainer) -> MemoryEstimate:
  """Shape-only estimate of one run's device memory (nothing is compiled or allocated).

  The state's bytes are exact (`jax.eval_shape` of its initialisation). The transients are
  approximations with a 25% margin: mctx's tree holds one game state and six `[A]` arrays per
  node (`B x (simulations + 1)` nodes); training holds the `sgd_steps x train_batch` sampled
  rows and the network's activations, saved for the backward pass, for one minibatch. Checked
  against measured peaks it errs on the generous side; `--no-memory-check` skips it.
  """
  config = trainer.config
  state = jax.eval_shape(trainer.init_state, 0)
  replicated = _nbytes((state.params, state.batch_stats, state.best_params,
                        state.best_batch_stats, state.ema_params, state.opt_state))
  replay = _nbytes(state.selfplay)
  batch = config.selfplay_batch
  game_bytes = _nbytes(state.selfplay.games) // batch
  actions = trainer.game.num_actions
  search = batch * (config.simulations + 1) * (game_bytes + 6 * 4 * actions + 64)
  row_bytes = _nbytes(state.selfplay.buffer) // config.buffer_size
  obs = jax.ShapeDtypeStruct((1, *trainer.game.observation_shape), jnp.float32)
  _, inter = jax.eval_shape(
      lambda v, x: trainer.model.apply(v, x, train=False, capture_intermediates=True,
                                       mutable=["intermediates"]), Trainer.variables(state), obs)
  # Per example: the outputs of the innermost modules (convolutions, normalisations, dense
  # layers; a block's own output repeats its last layer's), saved for the backward pass, plus
  # as much again for the gradients in flight.
  activation_bytes = _nbytes(_leaf_outputs(inter["intermediates"]))
  training = (config.sgd_steps * config.train_batch * row_bytes
              + 2 * config.train_batch * activation_bytes + batch * activation_bytes)
  margin = lambda n: int(n * 1.25)  # noqa: E731
  return MemoryEstimate(replicated=margin(replicated), replay=replay, search=margin(search),
                        training=margin(training))


def device_memory(device: Any = None) -> int | None:
  """The memory one device may use (bytes), or None if unknown.

  An accelerator reports its allocator's limit (`memory_stats()["bytes_limit"]`); the CPU's
  devices share the host's physical memory.
  """
  device = device or jax.local_devices()[0]
  try:
    stats = device.memory_stats()
  except Exception:  # Not every backend implements it.
    stats = None
  if stats and stats.get("bytes_limit"):
    return int(stats["bytes_limit"])
  if device.platform == "cpu":
    try:
      return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
      return None
  return None


def _gib(n: float) -> str:
  return f"{n / 2**30:.2f} GiB"


def _on_this_host(mesh: Any) -> int:
  """How many of `mesh`'s devices this process holds (1 without a mesh): on a CPU they share
  its memory; with several processes the others hold the rest, in theirs."""
  if mesh is None:
    return 1
  return sum(d.process_index == jax.process_index() for d in mesh.devices.flat)


def check_group(group: Any, estimate: MemoryEstimate, mesh: Any, limit: int | None,
                index: int = 0) -> None:
  """Raises ValueError if `group`, spread over `mesh`, needs more than 90% of `limit`."""
  if limit is None:
    return
  data = sharding.data_size(mesh)
  along_configs = sharding.configs_size(mesh)
  runs_per_device = -(-len(group) // along_configs)
  device = jax.local_devices()[0]
  cpu = device.platform == "cpu"
  if cpu:  # The CPU's "devices" share one memory: compare the total of this host's.
    need = runs_per_device * estimate.per_device(data) * _on_this_host(mesh)
    where = f"this host's {_gib(limit)} of memory"
  else:
    need = runs_per_device * estimate.per_device(data)
    where = f"the {_gib(limit)} of one {device.device_kind}"
  if need <= 0.9 * limit:
    return
  per_run = need / (len(group) if cpu else runs_per_device)
  fit = int(0.9 * limit // per_run) * (1 if cpu else along_configs)
  advice = (f"split it with --max-vmap {fit}" if fit >= 1 else
            "even one run does not fit: lower buffer_size, selfplay_batch or train_batch")
  raise ValueError(
      f"sweep group {index + 1} ({len(group)} runs vmapped: {group.runs[0].name}, ...) needs "
      f"about {_gib(need)} (per run: replay buffer and games {_gib(estimate.replay)}, search "
      f"tree {_gib(estimate.search)}, training {_gib(estimate.training)}, parameters and "
      f"optimizer {_gib(estimate.replicated)}), more than 90% of {where}; {advice}, or use "
      "fewer seeds or values per group")


def check_run(trainer: Trainer, mesh: Any = None, limit: int | None = -1) -> None:
  """Raises ValueError if the run's estimated device memory (`estimate_memory`, from
  shapes only) is more than 90% of `limit` bytes (-1: ask the device; None: no check)."""
  limit = device_memory() if limit == -1 else limit
  if limit is None:
    return
  estimate = estimate_memory(trainer)
  data = sharding.data_size(mesh)
  device = jax.local_devices()[0]
  if device.platform == "cpu":  # The CPU's "devices" share one memory: compare this host's.
    need = estimate.per_device(data) * _on_this_host(mesh)
    where = f"this host's {limit / 2**30:.2f} GiB of memory"
  else:
    need = estimate.per_device(data)
    where = f"the {limit / 2**30:.2f} GiB of one {device.device_kind}"
  if need <= 0.9 * limit:
    return
  gib = lambda n: f"{n / 2**30:.2f} GiB"  # noqa: E731
  raise ValueError(
      f"this run needs about {gib(need)} of device memory (replay buffer and games "
      f"{gib(estimate.replay)} with buffer_size={trainer.config.buffer_size}, search tree "
      f"{gib(estimate.search)}, training {gib(estimate.training)}, parameters and optimizer "
      f"{gib(estimate.replicated)}), more than 90% of {where}: lower buffer_size, "
      "selfplay_batch or train_batch (--no-memory-check skips this estimate)")
