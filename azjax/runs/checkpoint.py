"""Checkpoints with orbax, and export of parameters to `.npz`.

An AlphaZero run directory (`azjax.runs.layout` names the files of every kind) holds:

    config.json            the run's `Config` (enough to rebuild every static part)
    checkpoints/<step>/    orbax: item "state" (the whole `TrainState`: parameters, optimizer,
                           replay buffer, games in progress, RNG key, counters), item "model"
                           (parameters and BatchNorm statistics only) and item "meta" (JSON)
    model/                 orbax: the final "model" item alone (small; what `azjax.runs.load` reads)
    models/<iteration>/    orbax: the "model" item of every checkpoint, all kept (small), for
                           Elo over training (`experiments.evaluate --progress`) and probing

Stopping and resuming from `checkpoints/` continues the very same run. A checkpoint that does
not restore (cut short by a crash or a full disk) is renamed `checkpoints/<step>.unreadable` on
resume, and the one before it is used (`restore_intact`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

from azjax import console, replay, sharding

# A run directory's config.json is read and written by azjax.config (which does not import
# orbax); they are re-exported here beside the rest of a run directory's files.
from azjax.config.files import read_config, write_config  # noqa: F401
from azjax.runs import layout


def manager(run_dir: str | os.PathLike, max_to_keep: int | None = 3) -> ocp.CheckpointManager:
  """The orbax manager of `run_dir/checkpoints` (keeps the last `max_to_keep`)."""
  directory = Path(run_dir).absolute() / layout.CHECKPOINTS
  options = ocp.CheckpointManagerOptions(max_to_keep=max_to_keep, create=True)
  return ocp.CheckpointManager(directory, options=options,
                               item_names=("state", "model", "meta"))


def model_variables(state: Any) -> dict:
  """`{"params": ...}` plus `{"batch_stats": ...}` for networks with BatchNorm: the run's
  network, whose parameters are the moving average where the state keeps one (`ema_params`,
  `Config.ema_decay`; BatchNorm statistics are the trained network's either way)."""
  averaged = getattr(state, "ema_params", {})
  variables = {"params": averaged if averaged else state.params}
  if state.batch_stats:
    variables["batch_stats"] = state.batch_stats
  return variables


def _without_empty(tree: Any) -> Any:
  """`tree` with its zero-size arrays as None: orbax refuses to save them (checkers with
  `history=1` keeps an empty `[0, 64]` array of earlier positions in every game)."""
  return jax.tree.map(lambda x: None if np.prod(x.shape) == 0 else x, tree)


def _with_empty(restored: Any, target: Any) -> Any:
  """Undoes `_without_empty`: zero-size arrays shaped as in `target` where `restored` has None
  (and None where `target` has None too: a run without a self-play archive)."""
  return jax.tree.map(lambda r, t: jnp.zeros(t.shape, t.dtype) if r is None and t is not None
                      else r, restored, target, is_leaf=lambda x: x is None)


def save(mngr: ocp.CheckpointManager, step: int, state: Any, meta: dict | None = None, *,
         variables: dict | None = None) -> None:
  """Saves the whole training state at `step`, with its network's `variables` as the "model"
  item (default: an AlphaZero state's, `model_variables`), and waits until it is on disk."""
  variables = model_variables(state) if variables is None else variables
  mngr.save(step, args=ocp.args.Composite(
      state=ocp.args.StandardSave(_without_empty(state)),
      model=ocp.args.StandardSave(variables),
      meta=ocp.args.JsonSave(meta or {})))
  mngr.wait_until_finished()


def restore(mngr: ocp.CheckpointManager, abstract_state: Any, step: int | None = None):
  """Restores `(state, meta)` at `step` (default: the latest) into the structure given.

  Args:
    abstract_state: a TrainState of the same config (e.g. a fresh one); only its structure,
      shapes, dtypes and shardings are used (a leaf without a sharding, from `jax.eval_shape`,
      is restored onto this process's first device).
  """
  # Orbax restores with an asyncio loop that a KeyboardInterrupt inside garbles: Ctrl-C waits.
  with console.held_interrupt():
    step = mngr.latest_step() if step is None else step
    if step is None:
      raise FileNotFoundError(f"{mngr.directory}: no checkpoint to restore")
    target = jax.tree.map(_on_local_device, abstract_state)
    try:
      restored = mngr.restore(step, args=ocp.args.Composite(
          state=ocp.args.StandardRestore(_without_empty(target)), meta=ocp.args.JsonRestore()))
      return _with_empty(restored.state, target), restored.meta
    except ValueError:
      older = _older_state_target(mngr, step, target)
      if older is None:
        raise
    restored = mngr.restore(step, args=ocp.args.Composite(
        state=ocp.args.StandardRestore(older), meta=ocp.args.JsonRestore()))
    state = dict(restored.state)
    if isinstance(older["selfplay"].buffer, dict):
      saved = dict(state["selfplay"].buffer)
      like = target.selfplay.buffer
      for name, fill in _ADDED_BUFFER_FIELDS.items():
        if name not in saved:
          saved[name] = fill(saved)
      if "game" in saved:
        buffer = replay.from_flat_layout(saved, like)
      else:
        buffer = replay.ReplayBuffer(**{name: saved[name] for name in like.keys()})
      buffer = jax.tree.map(_place_like, buffer, like)
      state["selfplay"] = state["selfplay"].replace(buffer=buffer)
    missing = {f.name: {} for f in dataclasses.fields(target) if f.name not in older}
    return type(abstract_state)(**state, **missing), restored.meta


def restore_intact(mngr: ocp.CheckpointManager, abstract_state: Any, *, log=print):
  """Restores `(state, meta, step)` from the newest checkpoint that reads back whole.

  A newer checkpoint that does not (a truncated or corrupted file, a crash while it was
  written) is renamed `<step>.unreadable`, so that the run can save that step again and
  nothing is deleted, and `log` gets one line naming it.

  Raises:
    FileNotFoundError: there is no checkpoint.
    ValueError: none of them restores (the message gives each one's error).
  """
  steps = sorted(mngr.all_steps(), reverse=True)
  if not steps:
    raise FileNotFoundError(f"{mngr.directory}: no checkpoint to restore")
  failed: list[tuple[int, Exception]] = []
  for step in steps:
    try:
      state, meta = restore(mngr, abstract_state, step)
    except Exception as err:  # noqa: BLE001 (orbax and tensorstore raise many kinds)
      failed.append((step, err))
      continue
    for bad, err in failed:
      directory = Path(mngr.directory)
      aside = directory / f"{bad}.unreadable"
      if sharding.is_primary():  # With several processes, one renames it for all.
        os.replace(directory / str(bad), aside)
      log(f"checkpoint {bad} in {directory} does not restore ({_one_line(err)}); resuming "
          f"from checkpoint {step} (the unreadable one is kept as {aside.name})")
    if failed:
      sharding.barrier("unreadable checkpoints set aside")
      mngr.reload()  # It lists its steps once; the unreadable ones are gone now.
    return state, meta, step
  raise ValueError(f"{mngr.directory}: no checkpoint restores: "
                   + "; ".join(f"{step}: {_one_line(err)}" for step, err in failed))


def _one_line(err: Exception, limit: int = 160) -> str:
  """`err` as `Type: first line`, cut to `limit` characters."""
  text = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
  return text if len(text) <= limit else text[:limit - 3] + "..."


def _place_like(x: jax.Array, like: Any) -> jax.Array:
  sharding = getattr(like, "sharding", None)
  return x if sharding is None else jax.device_put(x, sharding)


# Replay-buffer fields added since some checkpoints were written, and what an old row holds:
# its outcome as the root value (so mixing it into the value target changes nothing) and a
# full search (there were no cheap ones).
_ADDED_BUFFER_FIELDS = {
    "root_value": lambda buffer: buffer["value"],
    "full_search": lambda buffer: jnp.ones_like(buffer["has_target"]),
}


def _older_state_target(mngr: ocp.CheckpointManager, step: int, target: Any) -> dict | None:
  """For a checkpoint an older azjax wrote, the target's fields as on disk (a dict); None when
  the mismatch is not one of these:

  - fields of the state added since that are empty (the gating network, `{}` without gating);
  - the replay buffer as one flat ring of rows (`replay.flat_layout`), before its `[T, B]`
    layout: restored into that shape, then laid out anew;
  - a replay buffer without the fields added since (`_ADDED_BUFFER_FIELDS`), which are filled in.

  A missing field that holds arrays cannot be made up.
  """
  if not dataclasses.is_dataclass(target):
    return None
  absl = logging.getLogger("absl")
  level = absl.level
  absl.setLevel(logging.ERROR)  # item_metadata warns of each item it is given no handler for
  try:
    saved = mngr.item_metadata(step)["state"]
  finally:
    absl.setLevel(level)
  on_disk = set(saved.keys())
  fields = {f.name: getattr(target, f.name) for f in dataclasses.fields(target)}
  missing = [name for name in fields if name not in on_disk]
  if any(fields[name] != {} for name in missing):
    return None
  older = {name: value for name, value in fields.items() if name in on_disk}
  buffer_on_disk = set(saved.get("selfplay", {}).get("buffer", {}).keys())
  flat_buffer = "game" in buffer_on_disk
  added = [name for name in _ADDED_BUFFER_FIELDS if buffer_on_disk and name not in buffer_on_disk]
  if flat_buffer or added:
    sp = older["selfplay"]
    buffer = replay.flat_layout(sp.buffer) if flat_buffer else dict(sp.buffer.items())
    older["selfplay"] = sp.replace(buffer={k: v for k, v in buffer.items() if k not in added})
  return older if missing or flat_buffer or added else None


def save_model(run_dir: str | os.PathLike, variables: dict, step: int | None = None) -> Path:
  """Writes the model item alone to `run_dir/model`, or with `step` to `run_dir/models/<step>`
  (replacing an older one at that path)."""
  path = layout.model_path(run_dir, step)
  checkpointer = ocp.StandardCheckpointer()
  checkpointer.save(path, variables, force=True)
  checkpointer.wait_until_finished()
  return path


def list_models(run_dir: str | os.PathLike) -> list[tuple[int, Path]]:
  """The per-checkpoint snapshots `[(iteration, path)]` of `run_dir/models`, oldest first."""
  root = Path(run_dir).absolute() / layout.MODELS
  if not root.is_dir():
    return []
  found = [(int(p.name), p) for p in root.iterdir() if p.is_dir() and p.name.isdigit()]
  return sorted(found)


def load_model(run_dir: str | os.PathLike, abstract_variables: dict,
               step: int | None = None) -> dict:
  """Reads `run_dir/model` (or with `step`, the snapshot `run_dir/models/<step>`), or else the
  model item of the latest checkpoint.

  Leaves of `abstract_variables` that have a sharding (arrays placed on a mesh) are restored
  so; the others (`jax.eval_shape`'s) onto this process's first device, whatever devices the run
  was trained on: orbax would otherwise look for the devices that saved them.
  """
  with console.held_interrupt():  # As in `restore`.
    target = jax.tree.map(_on_local_device, abstract_variables)
    if step is not None:
      path = layout.model_path(run_dir, step)
      if not path.exists():
        have = ", ".join(str(s) for s, _ in list_models(run_dir)) or "none"
        raise FileNotFoundError(f"{run_dir}: no model snapshot for iteration {step} "
                                f"(snapshots: {have})")
      return ocp.StandardCheckpointer().restore(path, target)
    path = layout.model_path(run_dir)
    if path.exists():
      return ocp.StandardCheckpointer().restore(path, target)
    mngr = manager(run_dir, max_to_keep=None)
    step = mngr.latest_step()
    if step is None:
      raise FileNotFoundError(f"{run_dir}: neither model/ nor checkpoints/ holds a network")
    return mngr.restore(step, args=ocp.args.Composite(
        model=ocp.args.StandardRestore(target))).model


def _on_local_device(x: Any) -> jax.ShapeDtypeStruct:
  """The restore target of `x`: its shape, dtype and sharding, or without a sharding this
  process's first device."""
  target = ocp.utils.to_shape_dtype_struct(x)
  if getattr(target, "sharding", None) is not None:
    return target
  device = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
  return jax.ShapeDtypeStruct(target.shape, target.dtype, sharding=device)


def flat_names(tree: Any, prefix: str = "") -> dict[str, np.ndarray]:
  """Flattens a nested dict of arrays to `{"params/block_0/Conv_0/kernel": array}`."""
  out = {}
  for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
    name = "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
    out[prefix + name] = np.asarray(leaf)
  return out


def export_npz(variables: dict, path: str | os.PathLike) -> Path:
  """Writes parameters (and BatchNorm statistics) as a flat-named `.npz` (loadable by numpy)."""
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  np.savez(path, **flat_names(variables))
  return path
