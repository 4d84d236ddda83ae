"""Probing datasets: positions from played games, their state table, and layer activations.

`collect` plays batches of games and records every position before its move; `activations`
runs a network over the observations; `save` / `load` write and read a directory that numpy
alone can read (no azjax needed):

    meta.json          game, game_kwargs, layer names and shapes, concept names and kinds, how
                       the states were collected, the checkpoint
    states.npz         the state table, one row per position (N rows):
                         game_id [N] int32       games are numbered from 0 in play order
                         ply [N] int32           actions played before this position
                         player [N] int32        the player to move (0 moves first)
                         board [N, S] int8       the board as stored, in the mover's frame
                                                 (Breakthrough: +1 mover, -1 opponent;
                                                 checkers: +-1 men, +-2 kings)
                         board_absolute [N, R, C] int8  piece codes as seen by player 0, row 0 =
                                                 rank 1 (`Game.board_array`)
                         legal_mask [N, A] bool
                         action [N] int32        the action played (the "chosen action")
                         search_policy [N, A] float32  the search's action weights
                         search_value [N] float32      the search's root value, mover's side
                         network_value [N] float32     the raw value head, mover's side
                         outcome [N] float32     the game's result for the mover: +1, 0, -1
                         concept/<name> [N] float32    every concept label (`concepts`)
    states.csv         the scalar columns and the board as text, for a quick look
    activations.npz    `<layer>` -> [N, ...] float32: "input" (the observation), "stem",
                       "block_0", ..., "policy_trunk", "value_trunk" (compressed)

Identical positions reached in several games (every game starts from the same one) are kept
once, at their first occurrence, so that a split by game never puts the same input on both
sides.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import console, nets
from azjax.games.base import Game
from azjax.probe import concepts as concepts_lib
from azjax.runs import layout
from azjax.search import SearchConfig, search

# (states [B], key) -> actions [B] int32: an `agents.Agent.policy`.
Policy = Callable[[Any, jax.Array], jax.Array]

# The files of an export, as `save` writes them.
META, STATES, STATES_CSV, ACTIVATIONS = "meta.json", "states.npz", "states.csv", "activations.npz"
FILES = (META, STATES, STATES_CSV, ACTIVATIONS)

SCALAR_COLUMNS = ("game_id", "ply", "player", "action", "search_value", "network_value",
                  "outcome")


@dataclasses.dataclass
class Dataset:
  """A probing dataset: the state table, activations by layer, and metadata.

  Attributes:
    table: `{column: [N, ...] array}` (see the module docstring).
    activations: `{layer: [N, ...] float32}`, "input" first; may be empty.
    meta: JSON-able metadata (`game`, `game_kwargs`, `concepts`, `layers`, ...).
  """

  table: dict[str, np.ndarray]
  activations: dict[str, np.ndarray]
  meta: dict[str, Any]

  def __len__(self) -> int:
    return int(self.table["game_id"].shape[0])

  def take(self, rows: np.ndarray) -> "Dataset":
    """The dataset of the positions `rows` (table and activations), same metadata."""
    return Dataset(table=_take(self.table, rows), activations=_take(self.activations, rows),
                   meta=self.meta)

  @property
  def concept_names(self) -> list[str]:
    return [k.removeprefix("concept/") for k in self.table if k.startswith("concept/")]

  def labels(self, name: str) -> np.ndarray:
    """`[N]` float32 labels of concept `name`."""
    return self.table[f"concept/{name}"]

  def is_binary(self, name: str) -> bool:
    return bool(self.meta["concepts"][name]["binary"])

  @property
  def groups(self) -> np.ndarray:
    """`[N]` game ids: the groups of every split (no game on both sides)."""
    return self.table["game_id"]


# -- Playing games ------------------------------------------------------------------------------


def _eval_fn(model: Any) -> Callable:
  return lambda variables, obs: model.apply(variables, obs, train=False)


@functools.lru_cache(maxsize=None)
def _ply_fn(env: Game, model: Any, search_config: SearchConfig, policy: Policy | None,
            opening_moves: int) -> Callable:
  """A jitted ply of a batch of games: search every position, pick the moves, step."""

  @jax.jit
  def ply(variables, states, key):
    search_key, policy_key, opening_key = jax.random.split(key, 3)
    out = search(env, _eval_fn(model), search_config, variables, states, search_key)
    action = out.action if policy is None else policy(states, policy_key)
    # Random opening moves make the games differ from their first ply on.
    logits = nets.mask_logits(jnp.zeros(states.legal_action_mask.shape), states.legal_action_mask)
    random_action = jax.random.categorical(opening_key, logits).astype(jnp.int32)
    action = jnp.where(states.step_count < opening_moves, random_action, action)
    record = dict(action=action, search_policy=out.action_weights,
                  search_value=out.root_value, network_value=out.network_value)
    return jax.vmap(env.step)(states, action), record

  return ply


def play_batch(env: Game, model: Any, variables: Any, search_config: SearchConfig, *,
               num_games: int, key: jax.Array, policy: Policy | None = None,
               opening_moves: int = 0) -> tuple[Any, dict[str, np.ndarray]]:
  """Plays `num_games` games to the end and returns every position before its move.

  Args:
    env: the game.
    model, variables: the network whose search gives each position's policy and value.
    search_config: that search (with noise, it also makes self-play games differ).
    num_games: games played together.
    key: PRNG key.
    policy: who chooses the moves (an `agents.Agent.policy`); None: the search's own action
      (self-play).
    opening_moves: the first plies of every game are uniformly random legal moves.
  Returns:
    `(states, columns)`: the positions as one batched state `[M]` (numpy leaves) and
    `{game_id, ply, player, action, search_policy, search_value, network_value, outcome}`,
    each `[M, ...]`, game ids counted from 0 within this batch.
  """
  ply_fn = _ply_fn(env, model, search_config, policy, int(opening_moves))
  init_key, key = jax.random.split(key)
  states = jax.vmap(env.init)(jax.random.split(init_key, num_games))
  final_rewards = np.zeros((num_games, 2), np.float32)
  history, records, alive = [], [], []
  for ply_key in jax.random.split(key, env.max_game_length + 1):
    live = ~np.asarray(states.terminated)
    if not live.any():
      break
    next_states, record = ply_fn(variables, states, ply_key)
    history.append(jax.tree.map(np.asarray, states))
    records.append(jax.tree.map(np.asarray, record))
    alive.append(live)
    final_rewards += np.asarray(next_states.rewards)  # non-zero only where a game ends
    states = next_states
  alive = np.stack(alive)  # [T, B]
  plies, games = np.nonzero(alive)  # every live position, in ply order
  # [T, B, ...] -> [M, ...]: the live positions only.
  positions = jax.tree.map(lambda *xs: np.stack(xs)[plies, games], *history)
  columns = {k: np.stack([r[k] for r in records])[plies, games] for k in records[0]}
  player = np.asarray(positions.current_player, np.int32)
  columns.update(
      game_id=games.astype(np.int32), ply=plies.astype(np.int32), player=player,
      outcome=final_rewards[games, player])
  return positions, columns


def _take(tree: Any, index: np.ndarray) -> Any:
  return jax.tree.map(lambda x: np.asarray(x)[index], tree)


def _concat(trees: Sequence[Any]) -> Any:
  return jax.tree.map(lambda *xs: np.concatenate(xs), *trees)


def collect(env: Game, model: Any, variables: Any, search_config: SearchConfig, *,
            num_states: int, key: jax.Array, batch: int = 64, policy: Policy | None = None,
            opening_moves: int = 0, dedupe: bool = True, max_rounds: int = 1000,
            on_round: Callable[[int], None] | None = None) -> tuple[Any, dict[str, np.ndarray]]:
  """Plays rounds of `batch` games until `num_states` distinct positions are found;
  `on_round(found)` is called after each round with the distinct positions found so far (a
  progress bar's step).

  Returns:
    `(states, table)`: `num_states` positions (a uniform sample without replacement of the
    distinct ones, kept in play order) as one batched state with numpy leaves, and the state
    table of the module docstring (concept labels and the absolute board included).
  Raises:
    RuntimeError: when `max_rounds` rounds do not give enough distinct positions.
  """
  found_states, found_columns, seen = [], [], set()
  total = 0
  for round_index in range(max_rounds):
    key, round_key = jax.random.split(key)
    states, columns = play_batch(env, model, variables, search_config, num_games=batch,
                                 key=round_key, policy=policy, opening_moves=opening_moves)
    columns["game_id"] = columns["game_id"] + round_index * batch
    obs = np.asarray(states.observation)
    keep = []
    for i, row in enumerate(obs.reshape(len(obs), -1)):
      digest = row.tobytes()
      if not dedupe or digest not in seen:
        seen.add(digest)
        keep.append(i)
    keep = np.asarray(keep, np.int64)
    found_states.append(_take(states, keep))
    found_columns.append({k: v[keep] for k, v in columns.items()})
    total += len(keep)
    if on_round is not None:
      on_round(total)
    if total >= num_states:
      break
  else:
    raise RuntimeError(f"probe: {max_rounds} rounds of {batch} games gave {total} distinct "
                       f"positions, fewer than {num_states}")
  states = _concat(found_states)
  columns = {k: np.concatenate([c[k] for c in found_columns]) for k in found_columns[0]}
  sample_key, _ = jax.random.split(key)
  chosen = np.sort(np.asarray(jax.random.choice(sample_key, total, (num_states,), replace=False)))
  states = _take(states, chosen)
  columns = {k: v[chosen] for k, v in columns.items()}
  return states, state_table(env, states, columns)


def state_table(env: Game, states: Any, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
  """The full table: `columns` plus boards, legal masks and every concept label."""
  count = len(columns["game_id"])
  absolute = np.stack([env.board_array(_take(states, i)) for i in range(count)])
  table = {
      "game_id": columns["game_id"].astype(np.int32),
      "ply": columns["ply"].astype(np.int32),
      "player": columns["player"].astype(np.int32),
      "board": np.asarray(states.board, np.int8),
      "board_absolute": absolute.astype(np.int8),
      "legal_mask": np.asarray(states.legal_action_mask, np.bool_),
      "action": columns["action"].astype(np.int32),
      "search_policy": columns["search_policy"].astype(np.float32),
      "search_value": columns["search_value"].astype(np.float32),
      "network_value": columns["network_value"].astype(np.float32),
      "outcome": columns["outcome"].astype(np.float32),
  }
  for name, values in concepts_lib.labels(env, states).items():
    table[f"concept/{name}"] = values.astype(np.float32)
  return table


# -- Networks --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _init_fn(model: Any, observation_shape: tuple[int, ...]) -> Callable:
  return jax.jit(lambda key: nets.init_variables(model, key, observation_shape))


def random_network(model: Any, observation_shape: Sequence[int], seed: int) -> Any:
  """Freshly initialised variables of `model` (as `nets.init_variables`), compiled once per
  model: the random-network control needs one per seed."""
  return _init_fn(model, tuple(observation_shape))(jax.random.key(seed))


def abstract_network(model: Any, observation_shape: Sequence[int]) -> Any:
  """The variables' shapes, dtypes and placement (`jax.ShapeDtypeStruct`s on the first local
  device), without computing them: what `checkpoint.load_model` needs to restore a network,
  also one saved on another machine (orbax refuses a checkpoint's own GPU placement on a
  CPU)."""
  sharding = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
  shapes = jax.eval_shape(lambda: random_network(model, observation_shape, 0))
  return jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding), shapes)


# -- Activations ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _activations_fn(model: Any) -> Callable:
  return jax.jit(lambda variables, obs: nets.activations(model, variables, obs))


def activations(model: Any, variables: Any, observations: np.ndarray, *,
                batch: int = 1024) -> dict[str, np.ndarray]:
  """Every layer's activations of `observations` `[N, R, C, P]`, in eval mode.

  Returns:
    `{layer: [N, ...] float32}` in forward order: "input" (the observations themselves),
    "stem", "block_0", ..., "policy_trunk", "value_trunk".
  """
  observations = np.asarray(observations, np.float32)
  fn = _activations_fn(model)
  chunks = []
  for start in range(0, len(observations), batch):
    part = observations[start:start + batch]
    size = len(part)
    if size < batch and len(observations) > batch:  # one compiled shape: pad the last chunk
      part = np.concatenate([part, np.zeros((batch - size,) + part.shape[1:], part.dtype)])
    chunks.append(jax.tree.map(lambda x, size=size: np.asarray(x)[:size], fn(variables, part)))
  merged = {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}
  blocks = sorted((k for k in merged if k.startswith("block_")), key=lambda k: int(k[6:]))
  order = ["stem"] + blocks + ["policy_trunk", "value_trunk"]
  return {"input": observations, **{k: merged[k] for k in order}}


# -- Files -----------------------------------------------------------------------------------------


def save(directory: str | Path, dataset: Dataset) -> Path:
  """Writes `meta.json`, `states.npz`, `states.csv` and (if any) `activations.npz`."""
  directory = Path(directory)
  directory.mkdir(parents=True, exist_ok=True)
  meta = dict(dataset.meta)
  meta["num_states"] = len(dataset)
  if dataset.activations:
    meta["layers"] = {k: list(v.shape[1:]) for k, v in dataset.activations.items()}
  # Insertion order kept: "layers" lists the layers in forward order.
  (directory / META).write_text(json.dumps(meta, indent=2) + "\n")
  np.savez(directory / STATES, **dataset.table)
  write_csv(directory / STATES_CSV, dataset.table)
  if dataset.activations:
    np.savez_compressed(directory / ACTIVATIONS, **dataset.activations)
  return directory


def write_csv(path: str | Path, table: dict[str, np.ndarray]) -> None:
  """The scalar columns, every concept and the absolute board (ranks joined by "/")."""
  concept_columns = [k for k in table if k.startswith("concept/")]
  columns = list(SCALAR_COLUMNS) + concept_columns
  with open(path, "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow([c.removeprefix("concept/") for c in columns] + ["board_absolute"])
    for i in range(len(table["game_id"])):
      board = table["board_absolute"][i]
      text = "/".join("".join(str(int(v)) for v in rank) for rank in board[::-1])
      writer.writerow([_fmt(table[c][i]) for c in columns] + [text])


def _fmt(value: Any) -> str:
  value = np.asarray(value).item()
  return f"{value:.6g}" if isinstance(value, float) else str(value)


def load(directory: str | Path, *, with_activations: bool = True) -> Dataset:
  """Reads a directory written by `save` (activations only if present and asked for)."""
  directory = Path(directory)
  if not (directory / STATES).exists():
    raise FileNotFoundError(f"{directory}: no {STATES}; is this a probing export?")
  meta = json.loads((directory / META).read_text())
  with np.load(directory / STATES) as data:
    table = {k: data[k] for k in data.files}
  acts = {}
  path = directory / ACTIVATIONS
  if with_activations and path.exists():
    with np.load(path) as data:
      order = list(meta.get("layers", {})) or data.files
      acts = {k: data[k] for k in order}
  return Dataset(table=table, activations=acts, meta=meta)


def concept_meta(env: Game) -> dict[str, dict[str, Any]]:
  """`{name: {"binary", "description"}}` of `env`'s concepts, for `Dataset.meta`."""
  return {c.name: {"binary": c.binary, "description": c.description}
          for c in concepts_lib.concepts_for(env).values()}


# -- The networks of a run ----------------------------------------------------------------------


def run_networks(run_dir: str | Path, abstract_variables: Any, *,
                 snapshots: bool = True) -> list[tuple[str, int | None, Any]]:
  """The networks of a run directory, oldest first, as `(label, iteration, variables)`.

  With `snapshots`: every `models/<iteration>` snapshot, or, for runs made before those
  existed, the model item of every checkpoint left in `checkpoints/<step>`; then the final
  `model/`, labelled "final", unless it equals the last snapshot. Without: the final network
  alone.
  """
  import orbax.checkpoint as ocp

  from azjax.runs import checkpoint  # Local import: checkpoint reads the training config.

  final = checkpoint.load_model(run_dir, abstract_variables)
  found = []
  if snapshots:
    for iteration, _ in checkpoint.list_models(run_dir):
      found.append((str(iteration), iteration,
                    checkpoint.load_model(run_dir, abstract_variables, step=iteration)))
    if not found and (Path(run_dir) / layout.CHECKPOINTS).is_dir():
      target = jax.tree.map(ocp.utils.to_shape_dtype_struct, abstract_variables)
      mngr = checkpoint.manager(run_dir, max_to_keep=None)
      for step in sorted(mngr.all_steps()):
        with console.held_interrupt():  # As `checkpoint.restore` does.
          model = mngr.restore(step, args=ocp.args.Composite(
              model=ocp.args.StandardRestore(target))).model
        found.append((str(step), int(step), model))
  same = found and all(np.array_equal(a, b) for a, b in zip(
      jax.tree.leaves(found[-1][2]), jax.tree.leaves(final)))
  if not same:
    found.append(("final", None, final))
  return found
