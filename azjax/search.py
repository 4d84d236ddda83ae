"""mctx search built from a game and a network: Gumbel MuZero (default) or PUCT with noise.

`search` is the one entry point (self-play, evaluation, the solver benchmark and the play
engines call it; nothing else in azjax calls mctx); the algorithms are small functions in
`ALGORITHMS` (name -> mctx policy with its move choice), as mctx composes its own policies.
`for_evaluation` turns a run's search into its evaluation player, the one way every place that
plays or scores a trained network searches.

The tree's embeddings are the game states themselves; the "dynamics" is the real `game.step`.
Sign conventions, as mctx expects for two-player zero-sum games:

* `reward` of a transition is the reward of the player who moved (the parent node's mover);
* `discount` is -1 where the turn passes, +1 where the same player moves again (a checkers
  multi-jump), and 0 once the game has ended, so values beyond a terminal state never count;
* `value` is the network's value from the side of the player to move at that node.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Iterator

import chex
import jax
import jax.numpy as jnp
import mctx
from mctx._src import search as mctx_search

from azjax.games.base import Game
from azjax.nets import mask_logits

# (variables, observations [B, R, C, P]) -> (logits [B, A], value [B]); the network in eval mode.
EvalFn = Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]


@dataclasses.dataclass(frozen=True)
class SearchConfig:
  """Search hyperparameters (keyword-only, with defaults). These defaults are the only ones:
  `azjax.config.Config`'s search section reads them."""

  algorithm: str = "gumbel"  # "gumbel" (Gumbel MuZero) or "puct" (AlphaZero's PUCT).
  simulations: int = 16
  # Gumbel: actions considered at the root by Sequential Halving, and the noise scale
  # (0 gives a deterministic search, as for evaluation).
  max_num_considered_actions: int = 16
  gumbel_scale: float = 1.0
  # Gumbel: the first `gumbel_moves` actions of a game are Sequential Halving's noisy choice,
  # later ones its noiseless choice (`noiseless_gumbel_action`); 0: noisy throughout.
  gumbel_moves: int = 0
  # PUCT: root Dirichlet noise and exploration constants.
  dirichlet_alpha: float = 0.3
  dirichlet_fraction: float = 0.25
  pb_c_init: float = 1.25
  pb_c_base: float = 19652.0
  # PUCT: moves chosen in proportion to visit counts ** (1 / temperature) for the first
  # `temperature_moves` actions of a game, then the most visited move.
  temperature: float = 1.0
  temperature_moves: int = 0

  def validate(self) -> None:
    if self.algorithm not in ALGORITHMS:
      raise ValueError(f"search algorithm: unknown {self.algorithm!r}; use one of "
                       f"{tuple(ALGORITHMS)}")
    if self.simulations < 1:
      raise ValueError(f"simulations: must be >= 1, got {self.simulations}")
    if self.max_num_considered_actions < 1:
      raise ValueError("max_num_considered_actions: must be >= 1")
    if self.temperature <= 0:
      raise ValueError(f"temperature: must be > 0, got {self.temperature}")


# What makes a search an evaluation player rather than a self-play one: no root noise (Gumbel's
# or Dirichlet's) and the search's recommended move from the first move on (no temperature).
# Written here only; `for_evaluation` applies it.
NOISELESS = {"gumbel_scale": 0.0, "dirichlet_fraction": 0.0, "temperature_moves": 0}


def for_evaluation(config: SearchConfig, simulations: int | None = None,
                   **explicit: Any) -> SearchConfig:
  """The evaluation player of a network searched with `config` (a run's own search): the
  same search without noise (`NOISELESS`). Only `simulations` (None keeps the config's) and
  the fields a caller passes in `explicit` (e.g. `algorithm="puct"`, or a noise a stochastic
  player keeps on purpose) change; everything else is the run's.

  Raises:
    ValueError: for an unknown field or an impossible value.
  """
  changes = {**NOISELESS, **({} if simulations is None else {"simulations": simulations}),
             **explicit}
  try:
    config = dataclasses.replace(config, **changes)
  except TypeError as err:
    raise ValueError(f"search: bad option: {err}") from None
  config.validate()
  return config


@chex.dataclass(frozen=True)
class SearchOutput:
  """One search per state of a batch of `B` states with `A` actions.

  The root statistics (`visit_counts`, `qvalues`) are slices of the tree the search built
  anyway; they are zero for a state that was not searched (a single legal action, or a batch
  in which no state needed a search). Jitted callers that do not read them pay nothing.
  """

  action: chex.Array  # [B] int32: the action to play
  action_weights: chex.Array  # [B, A] float32: the policy target (improved policy / visits)
  root_value: chex.Array  # [B] float32: the search's value of the root, mover's side
  # [B] float32: the search's Q-value of `action`, mover's side; where the search did not run
  # (every state of the batch forced), the root value. Unlike `root_value`, it does not
  # average in the simulations spent refuting worse moves (Sequential Halving visits many).
  action_value: chex.Array
  network_value: chex.Array  # [B] float32: the network's raw value of the root
  visit_counts: chex.Array  # [B, A] int32: simulations through each root action
  qvalues: chex.Array  # [B, A] float32: each root action's Q-value, mover's side (0 unvisited)
  prior: chex.Array  # [B, A] float32: the network's policy at the root (0 on illegal actions)


# -- Algorithms ------------------------------------------------------------------------------------
#
# An algorithm is one mctx policy over a batch of roots, with the move choice that goes with it:
#
#   algorithm(config, variables, key, root, recurrent_fn, invalid_actions, step_count)
#       -> (action [B] int32, mctx.PolicyOutput)
#
# `key` is the search's own key, consumed; `step_count` `[B]` is the actions played so far in
# each game (for AlphaZero's early-game temperature). `search` adds what every algorithm shares
# (the root from the network, forced moves, the outputs), so a new variant is one function here
# and one line in `ALGORITHMS`, and no branch of `search` grows.

Algorithm = Callable[..., tuple[jax.Array, mctx.PolicyOutput]]


def gumbel(config: SearchConfig, variables: Any, key: jax.Array, root: mctx.RootFnOutput,
           recurrent_fn: mctx.RecurrentFn, invalid_actions: jax.Array,
           step_count: jax.Array) -> tuple[jax.Array, mctx.PolicyOutput]:
  """Gumbel MuZero (Danihelka et al. 2022): Sequential Halving over at most
  `max_num_considered_actions` root actions; plays the action it keeps, from the
  `gumbel_moves`-th action of a game on (when not 0) without the noise's say in the last pick."""
  search_key, _ = jax.random.split(key)  # PUCT's split: the same key searches either way.
  out = mctx.gumbel_muzero_policy(
      variables, search_key, root, recurrent_fn,
      num_simulations=config.simulations,
      invalid_actions=invalid_actions,
      max_num_considered_actions=config.max_num_considered_actions,
      gumbel_scale=config.gumbel_scale)
  noisy = (config.gumbel_moves == 0) | (step_count < config.gumbel_moves)  # May be traced.
  best = noiseless_gumbel_action(out.search_tree.summary().visit_counts, out.action_weights)
  return jnp.where(noisy, out.action, best), out


def noiseless_gumbel_action(visit_counts: jax.Array, action_weights: jax.Array) -> jax.Array:
  """Sequential Halving's final pick with the Gumbel noise taken out: among the most visited
  root actions (those the halving kept), the one the improved policy ranks first.

  mctx picks `argmax(g + logits + sigma(q))` over those actions; `action_weights` is
  `softmax(logits + sigma(completed q))`, the same order without `g`. The noise still chose
  which actions were considered and kept, so the search explores as before; only the move
  played is the search's best. Late-game blunders drawn by the noise would otherwise decide
  the outcome that every earlier position of the game learns its value from.

  Args:
    visit_counts: `[B, A]` root visits.
    action_weights: `[B, A]` the improved policy (0 on illegal actions).
  Returns:
    `[B]` int32 actions.
  """
  kept = visit_counts == jnp.max(visit_counts, axis=-1, keepdims=True)
  return jnp.argmax(jnp.where(kept, action_weights, -jnp.inf), axis=-1).astype(jnp.int32)


def puct(config: SearchConfig, variables: Any, key: jax.Array, root: mctx.RootFnOutput,
         recurrent_fn: mctx.RecurrentFn, invalid_actions: jax.Array,
         step_count: jax.Array) -> tuple[jax.Array, mctx.PolicyOutput]:
  """AlphaZero's PUCT with root Dirichlet noise; plays by visit counts with a temperature for
  the first `temperature_moves` actions of a game (`visit_temperature_action`)."""
  search_key, temperature_key = jax.random.split(key)
  out = mctx.muzero_policy(
      variables, search_key, root, recurrent_fn,
      num_simulations=config.simulations,
      invalid_actions=invalid_actions,
      dirichlet_fraction=config.dirichlet_fraction,
      dirichlet_alpha=config.dirichlet_alpha,
      pb_c_init=config.pb_c_init,
      pb_c_base=config.pb_c_base)
  action = visit_temperature_action(
      temperature_key, out.action_weights, step_count,
      temperature=config.temperature, temperature_moves=config.temperature_moves)
  return action, out


ALGORITHMS: dict[str, Algorithm] = {"gumbel": gumbel, "puct": puct}


# -- mctx's tree loops, batched --------------------------------------------------------------------
#
# mctx walks the tree with `jax.vmap` of per-root `while_loop`s, down (`simulate`) and back up
# (`backward`). A batched while loop runs until the deepest path of the batch is done and, each
# step, `select`s every carried array between its new and old value. Going up, the carry is the
# whole tree, so each level selects the `[B, N, A]` children values and visits whole: a
# simulation costs O(depth * B * N * A) memory traffic, not O(depth * B), and doubling the
# simulations quadruples it (mctx issue #107). Going down, the depth becomes batched too, so the
# root's action selection (Sequential Halving's) runs beside the interior one at every level.
# `batched_simulate` and `batched_backward` build exactly mctx's tree (tests/test_search.py)
# with one unbatched loop over levels each; `search` swaps them in while its policy is traced.
# On Breakthrough 8x8 (A = 192, 4 considered actions, 501 roots, the preset's MLP) the search
# got 1.3x faster at 8 simulations, 1.9x at 16 and 2.5x at 32 (`python -m benchmarks.tree_loops`).


def _rows(x: jax.Array, *index: jax.Array) -> jax.Array:
  """`x[b, index[0][b], ...]` for each row `b`: a gather whose batch dimension XLA sees, so a
  batch sharded over devices stays where it is (plain `x[arange(B), i]` gathers across them)."""
  return jax.vmap(lambda row, *i: row[i])(x, *index)


def _set_rows(x: jax.Array, value: jax.Array, *index: jax.Array) -> jax.Array:
  """`x` with `x[b, index[0][b], ...] = value[b]` for each row `b` (a batched scatter)."""
  return jax.vmap(lambda row, v, *i: row.at[i].set(v))(x, value, *index)


def batched_simulate(rng_key: jax.Array, tree: mctx.Tree, action_selection_fn: Callable,
                     max_depth: int) -> tuple[jax.Array, jax.Array]:
  """mctx's descent for a batch of roots: `(node [B], action [B])`, the node reached in each
  tree and the unvisited action (or one at `max_depth`) to expand from it.

  `rng_key` `[B]` are split per level as mctx splits them, so PUCT's random tie-breaks agree.
  Every row takes a step each level (those already stopped are masked), with a scalar depth:
  the root's selection runs at level 0 only.
  """
  batch = rng_key.shape[:1]
  select = jax.vmap(action_selection_fn, in_axes=(0, 0, 0, None))

  def step(carry):
    keys, node, action, next_node, depth, going = carry
    keys, selection_keys = jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0)
    chosen = select(selection_keys, tree, next_node, depth)
    reached = _rows(tree.children_index, next_node, chosen)
    depth = depth + 1
    keep = lambda new, old: jnp.where(going, new, old)  # noqa: E731
    return (keys, keep(next_node, node), keep(chosen, action), keep(reached, next_node), depth,
            going & (reached != mctx.Tree.UNVISITED) & (depth < max_depth))

  start = jnp.full(batch, mctx.Tree.NO_PARENT, jnp.int32)
  carry = (rng_key, start, start, jnp.full(batch, mctx.Tree.ROOT_INDEX, jnp.int32),
           jnp.zeros((), tree.children_prior_logits.dtype), jnp.ones(batch, bool))
  _, node, action, _, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[5]), step, carry)
  return node, action


def batched_backward(tree: mctx.Tree, leaf_index: jax.Array) -> mctx.Tree:
  """mctx's backward pass for a batch of leaves `[B]` (node indices), without the vmap.

  Each step moves every path that has not reached the root one edge up: the parent's value
  becomes the running mean of the returns through it, the edge's child value and visit count
  are refreshed. Paths already at the root write their old values back (a no-op).
  """
  root = mctx.Tree.ROOT_INDEX

  def step(carry):
    tree, leaf_value, index = carry
    active = index != root
    parent = jnp.where(active, _rows(tree.parents, index), root)
    action = jnp.where(active, _rows(tree.action_from_parent, index), 0)
    count = _rows(tree.node_visits, parent)
    leaf_value = jnp.where(
        active,
        _rows(tree.children_rewards, parent, action)
        + _rows(tree.children_discounts, parent, action) * leaf_value,
        leaf_value)
    parent_value = _rows(tree.node_values, parent)
    child_visits = _rows(tree.children_visits, parent, action)
    child_value = jnp.where(active, _rows(tree.node_values, index),
                            _rows(tree.children_values, parent, action))
    tree = tree.replace(
        node_values=_set_rows(
            tree.node_values,
            jnp.where(active, (parent_value * count + leaf_value) / (count + 1.0), parent_value),
            parent),
        node_visits=_set_rows(tree.node_visits, count + active, parent),
        children_values=_set_rows(tree.children_values, child_value, parent, action),
        children_visits=_set_rows(tree.children_visits, child_visits + active, parent, action))
    return tree, leaf_value, jnp.where(active, parent, index)

  leaf_index = jnp.asarray(leaf_index, jnp.int32)
  carry = (tree, _rows(tree.node_values, leaf_index), leaf_index)
  tree, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[2] != root), step, carry)
  return tree


@contextlib.contextmanager
def use_batched_loops() -> Iterator[None]:
  """mctx's search descends with `batched_simulate` and backs up with `batched_backward` in
  the policies traced inside this block."""
  original = mctx_search.simulate, mctx_search.backward
  mctx_search.simulate, mctx_search.backward = batched_simulate, batched_backward
  try:
    yield
  finally:
    mctx_search.simulate, mctx_search.backward = original


def _evaluate(eval_fn: EvalFn, variables: Any, states: Any) -> tuple[jax.Array, jax.Array]:
  """Masked prior logits `[B, A]` and values `[B]` of a batch of states."""
  logits, value = eval_fn(variables, states.observation)
  logits = mask_logits(logits.astype(jnp.float32), states.legal_action_mask)
  return logits, value.astype(jnp.float32)


def make_recurrent_fn(game: Game, eval_fn: EvalFn) -> mctx.RecurrentFn:
  """The mctx recurrent function: step the real game, evaluate the child with the network."""

  def recurrent_fn(variables, key, action, states):
    del key  # The rules are deterministic.
    mover = states.current_player
    children = jax.vmap(game.step)(states, action)
    logits, value = _evaluate(eval_fn, variables, children)
    reward = jnp.where(mover == 0, children.rewards[:, 0], children.rewards[:, 1])
    same_player = children.current_player == mover
    discount = jnp.where(children.terminated, 0.0, jnp.where(same_player, 1.0, -1.0))
    # A terminal child has no future: its value is 0 (its reward is already counted).
    value = jnp.where(children.terminated, 0.0, value)
    out = mctx.RecurrentFnOutput(
        reward=reward.astype(jnp.float32),
        discount=discount.astype(jnp.float32),
        prior_logits=logits,
        value=value)
    return out, children

  return recurrent_fn


def root_output(eval_fn: EvalFn, variables: Any, states: Any) -> mctx.RootFnOutput:
  """The search's root for a batch of states: the network's masked logits `[B, A]` and values
  `[B]`, the states as the embedding."""
  logits, value = _evaluate(eval_fn, variables, states)
  return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)


def policy(game: Game, eval_fn: EvalFn, config: SearchConfig, variables: Any, states: Any,
           root: mctx.RootFnOutput, key: jax.Array, *,
           batched_loops: bool = True) -> tuple[jax.Array, mctx.PolicyOutput]:
  """One search of each state of `states` from `root` (`root_output`) with the algorithm
  `ALGORITHMS[config.algorithm]`: the `[B]` actions it plays and mctx's output (tree included).

  `batched_loops=False` keeps mctx's own tree loops (for tests and benchmarks that compare).
  """
  mask = states.legal_action_mask  # [B, A]
  # Every action of a terminated root is invalid; mctx needs one valid action per row.
  invalid = ~mask
  invalid = invalid.at[:, 0].set(invalid[:, 0] & jnp.any(mask, axis=-1))
  with use_batched_loops() if batched_loops else contextlib.nullcontext():
    return ALGORITHMS[config.algorithm](config, variables, key, root,
                                        make_recurrent_fn(game, eval_fn), invalid,
                                        states.step_count)


def search(game: Game, eval_fn: EvalFn, config: SearchConfig, variables: Any, states: Any,
           key: jax.Array) -> SearchOutput:
  """Runs one search per state of the batch `states` (leading dimension `B`) with the
  algorithm `ALGORITHMS[config.algorithm]`.

  States with a single legal action are not searched (their action and one-hot target are
  read off the mask); if every live state in the batch has a single legal action, the search
  is skipped altogether.
  """
  mask = states.legal_action_mask  # [B, A]
  root = root_output(eval_fn, variables, states)
  logits, value = root.prior_logits, root.value

  def run_search(_):
    action, out = policy(game, eval_fn, config, variables, states, root, key)
    summary = out.search_tree.summary()
    qvalues = summary.qvalues.astype(jnp.float32)
    # A forced state was searched too (its one valid action), so its Q-value is the tree's.
    action = jnp.where(forced, jnp.argmax(mask, axis=-1), action).astype(jnp.int32)
    action_value = jnp.take_along_axis(qvalues, action[:, None], axis=-1)[:, 0]
    return (action, out.action_weights.astype(jnp.float32), summary.value, action_value,
            summary.visit_counts.astype(jnp.int32), qvalues)

  def skip_search(_):
    zeros = jnp.zeros(mask.shape, jnp.float32)
    return (jnp.argmax(mask, axis=-1).astype(jnp.int32), mask.astype(jnp.float32), value, value,
            zeros.astype(jnp.int32), zeros)

  num_legal = jnp.sum(mask, axis=-1)
  forced = num_legal == 1
  action, weights, root_value, action_value, visits, qvalues = jax.lax.cond(
      jnp.all(forced | (num_legal == 0)), skip_search, run_search, None)
  one_hot = mask.astype(jnp.float32)
  weights = jnp.where(forced[:, None], one_hot, weights)
  return SearchOutput(action=action, action_weights=weights, root_value=root_value,
                      action_value=action_value, network_value=value,
                      visit_counts=jnp.where(forced[:, None], 0, visits),
                      qvalues=jnp.where(forced[:, None], 0.0, qvalues),
                      prior=jax.nn.softmax(logits, axis=-1))


def visit_temperature_action(key: jax.Array, visit_probs: jax.Array, step_count: jax.Array, *,
                             temperature: float, temperature_moves: int) -> jax.Array:
  """AlphaZero's move choice: sample visits ** (1 / T) early in the game, then the argmax.

  Args:
    key: PRNG key.
    visit_probs: `[B, A]` normalised visit counts (zero on illegal actions).
    step_count: `[B]` actions played so far in each game.
  Returns:
    `[B]` int32 actions.
  """
  greedy = jnp.argmax(visit_probs, axis=-1)
  tempered = jnp.where(visit_probs > 0, jnp.log(jnp.maximum(visit_probs, 1e-30)) / temperature,
                       -jnp.inf)
  sampled = jax.random.categorical(key, tempered)
  return jnp.where(step_count < temperature_moves, sampled, greedy).astype(jnp.int32)
