"""Rollout UCT (the source projects' "vanilla MCTS"): Kocsis & Szepesvari 2006 with fixed-size
arrays, a baseline that needs no network.

>>> tree = uct_search(env, state, key, simulations=400)      # one unbatched state
>>> stats = root_search(env, state, key, simulations=400)    # the move and its root statistics

`UCTTree` and `uct_search` state the exact tree semantics; `root_search` is what a player
needs from a tree (the move, each action's visits and mean outcome), and the "mcts" agent
(`azjax.agents.make_mcts`) and the play engine are both built on it.

Plain UCT with fixed-size arrays rather than `mctx.search`: mctx backs values up with a vmapped
`while_loop` whose carry is the whole tree, so under `vmap` every step of every backup selects
over all `B x N` node slots and a search costs O(simulations^2) (measured on CPU, Connect Four,
B = 50: 0.26 s per move at 200 simulations, 5.2 s at 800). Here a simulation records its path
while descending (a carry of `max_depth + 1` ints) and backs up with one scatter-add along it,
so it costs O(depth + playout length) whatever the tree size.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from azjax.games import base

Array = jax.Array
PRNGKey = jax.Array
State = Any  # A game's State pytree.


@struct.dataclass
class UCTTree:
  """One rollout-UCT search tree (trees of a batch carry a leading `B` on every field).

  `N = simulations + 1` node slots, `A` actions. Node 0 is the root; each simulation that ends
  by expanding a node takes the next free slot (`num_nodes`).

  Values are kept **from the side of the player who moved into the node** (the parent's player
  to move), as in vanilla UCT's `wins / visits`: `value_sum[n] / visits[n]` is the mean outcome,
  in [-1, 1] (win +1, draw 0, loss -1), of the move that leads to `n`, for the player who chose
  it. A parent therefore reads its children's values directly, whether or not the turn passed
  between them (checkers multi-jumps need no special case). This is mctx's convention with
  discount -1 where the turn passes and +1 where the same player moves again: there
  `Q(parent, a) = reward + discount * value(child)` with `value(child)` from the child's mover.
  The root's own value is never used.
  """

  children: Array  # [N, A] int32: node reached by each action, -1 while not expanded
  visits: Array  # [N] int32: simulations that passed through the node
  value_sum: Array  # [N] float32: sum of their outcomes for `mover[n]`
  mover: Array  # [N] int32: the player who moved into the node (root: the opponent of its mover)
  states: State  # [N, ...] the game state at each node
  num_nodes: Array  # [] int32: slots in use

  def child_stats(self, node: Array | int = 0) -> tuple[Array, Array]:
    """`([A] int32 visits, [A] float32 value sums)` of `node`'s children (0 where unexpanded).

    Unbatched tree only.
    """
    kids = self.children[node]
    expanded = kids >= 0
    safe = jnp.maximum(kids, 0)
    return (jnp.where(expanded, self.visits[safe], 0),
            jnp.where(expanded, self.value_sum[safe], 0.0))


def ucb1_scores(child_visits: Array, child_value_sum: Array, parent_visits: Array,
                legal_action_mask: Array, *, c: float = math.sqrt(2.0)) -> Array:
  """UCB1 score of each action of one node.

      score(a) = (Q(a) + 1) / 2 + c * sqrt(ln N / n(a))   legal, visited (n(a) > 0)
      score(a) = +inf                                     legal, unvisited
      score(a) = -inf                                     illegal

  `Q(a) = value_sum(a) / n(a)` is the child's mean outcome in [-1, 1] for the player choosing at
  the node, mapped to [0, 1] (win 1, draw 1/2, loss 0) so that `c = sqrt(2)` is UCB1's constant
  for rewards in [0, 1]; `N` is the node's visit count, which is 1 (its own expansion) plus its
  children's visits for an interior node, and the number of simulations so far at the root.

  Args:
    child_visits: `[A]` int visits `n(a)` of each child (0 if not expanded).
    child_value_sum: `[A]` float sum of each child's outcomes for the player at the node.
    parent_visits: `[]` int `N`.
    legal_action_mask: `[A]` bool.
    c: exploration constant.
  Returns:
    `[A]` float32 scores.
  """
  n = child_visits.astype(jnp.float32)
  n_safe = jnp.maximum(n, 1.0)
  q01 = (child_value_sum / n_safe + 1.0) / 2.0
  log_parent = jnp.log(jnp.maximum(jnp.asarray(parent_visits, jnp.float32), 1.0))
  scores = jnp.where(n > 0, q01 + c * jnp.sqrt(log_parent / n_safe), jnp.inf)
  return jnp.where(legal_action_mask, scores, -jnp.inf).astype(jnp.float32)


def argmax_random_tie(key: PRNGKey, scores: Array) -> Array:
  """Index of the maximum of `scores` (`[A]`), uniform among exact ties; `[]` int32."""
  return base.uniform_legal_action(key, scores == jnp.max(scores))


def _expand_and_playout(env: base.Game, state: State, action: Array, expand: Array,
                        key: PRNGKey) -> tuple[State, State]:
  """Plays `action` from `state` if `expand`, then random moves to the end of the game.

  Unbatched. Returns `(child, final)`: the state after `action` (`state` itself when not
  `expand`) and the final state, whose `rewards` are the game's outcome.
  """

  def cond(carry):
    s, _, first, _ = carry
    return first | ~s.terminated

  def body(carry):
    s, k, first, child = carry
    k, action_key = jax.random.split(k)
    a = jnp.where(first, action, base.uniform_legal_action(action_key, s.legal_action_mask))
    s = env.step(s, a)
    return s, k, jnp.bool_(False), base.tree_select(first, s, child)

  final, _, _, child = jax.lax.while_loop(cond, body, (state, key, jnp.asarray(expand), state))
  return child, final


class _Descent(struct.PyTreeNode):
  node: Array  # [] int32: the node reached
  action: Array  # [] int32: the action selected at `node` (meaningful when `expand`)
  depth: Array  # [] int32: depth of `node`
  path: Array  # [max_depth + 1] int32: nodes from the root; out-of-range padding
  expand: Array  # [] bool: the selected child of `node` is not expanded yet
  done: Array  # [] bool
  key: PRNGKey


def uct_search(env: base.Game, state: State, key: PRNGKey, *, simulations: int,
               c: float = math.sqrt(2.0), max_depth: int | None = None) -> UCTTree:
  """Rollout UCT from one (unbatched) state; vmap it for a batch.

  Each simulation:

  1. **Selection.** From the root, pick `argmax ucb1_scores` (ties uniform at random) and follow
     the child while it is expanded. Stop at a node whose pick is an unexpanded child, at a
     terminal node, or at depth `max_depth`.
  2. **Expansion.** In the first case, step the game to create that child in the next free slot
     (so unvisited children are tried first, in random order, before any is revisited).
  3. **Evaluation.** The outcome of ONE uniformly random playout from the new child to the end
     of the game; a terminal child, or a terminal node reached again by selection, is scored by
     its real reward; a node cut at `max_depth` by a fresh playout from it.
  4. **Backup.** Every node on the path from the root to the evaluated node gets one more visit
     and the outcome for its `mover` added to `value_sum` (one scatter-add).

  Args:
    env: the game.
    state: one live state (a terminated root gives a tree with no children).
    key: PRNG key, consumed.
    simulations: number of simulations (>= 1).
    c: UCB1 exploration constant.
    max_depth: depth cut; default `env.max_game_length`, which a game can never exceed, so
      by default no simulation is cut. Capped at `simulations`.
  Returns:
    The `UCTTree` (`N = simulations + 1`).
  """
  num_actions = state.legal_action_mask.shape[-1]
  num_slots = simulations + 1
  if max_depth is None:
    max_depth = env.max_game_length
  max_depth = max(1, min(int(max_depth), simulations))
  path_len = max_depth + 1

  tree = UCTTree(
      children=jnp.full((num_slots, num_actions), -1, jnp.int32),
      visits=jnp.zeros(num_slots, jnp.int32),
      value_sum=jnp.zeros(num_slots, jnp.float32),
      mover=jnp.full(num_slots, 1 - state.current_player, jnp.int32),
      states=jax.tree.map(lambda x: jnp.broadcast_to(x, (num_slots,) + x.shape), state),
      num_nodes=jnp.int32(1))

  def simulate(_, carry):
    tree, key = carry
    key, descend_key, playout_key = jax.random.split(key, 3)

    # -- 1. Selection ----------------------------------------------------------------------------
    def descend_cond(d):
      return ~d.done

    def descend_body(d):
      k, select_key = jax.random.split(d.key)
      visits, value_sum = tree.child_stats(d.node)
      scores = ucb1_scores(visits, value_sum, tree.visits[d.node],
                           tree.states.legal_action_mask[d.node], c=c)
      action = argmax_random_tie(select_key, scores)
      child = tree.children[d.node, action]
      descend = child >= 0
      node = jnp.where(descend, child, d.node)
      depth = d.depth + descend.astype(jnp.int32)
      done = ~descend | tree.states.terminated[node] | (depth >= max_depth)
      return _Descent(node=node, action=action, depth=depth, path=d.path.at[depth].set(node),
                      expand=~descend, done=done, key=k)

    start = _Descent(
        node=jnp.int32(0), action=jnp.int32(0), depth=jnp.int32(0),
        path=jnp.full(path_len, num_slots, jnp.int32).at[0].set(0),
        expand=jnp.bool_(False), done=tree.states.terminated[0], key=descend_key)
    d = jax.lax.while_loop(descend_cond, descend_body, start)

    # -- 2. Expansion and 3. evaluation, in one loop ---------------------------------------------
    # The loop's first step plays the selected action (creating the child) and the following
    # steps are the random playout; one `env.step` in the graph instead of two halves the
    # compile time for games with an expensive step. Without expansion (a terminal node, or a
    # node cut at `max_depth`) it is a plain playout from the node (none from a terminal node).
    leaf_state = jax.tree.map(lambda x: x[d.node], tree.states)
    child_state, final = _expand_and_playout(env, leaf_state, d.action, d.expand, playout_key)
    outcome = final.rewards[0]  # For player 0: +1, 0 or -1.

    new = tree.num_nodes
    slot = jnp.where(d.expand, new, num_slots)  # Out of range: the writes below are dropped.
    children = tree.children.at[d.node, d.action].set(
        jnp.where(d.expand, new, tree.children[d.node, d.action]))
    states = jax.tree.map(lambda t, s: t.at[slot].set(s, mode="drop"), tree.states, child_state)
    mover = tree.mover.at[slot].set(leaf_state.current_player, mode="drop")
    path = d.path.at[d.depth + 1].set(slot, mode="drop")

    # -- 4. Backup along the path ----------------------------------------------------------------
    path_mover = mover.at[path].get(mode="fill", fill_value=0)
    signed = jnp.where(path_mover == 0, outcome, -outcome)
    tree = UCTTree(
        children=children,
        visits=tree.visits.at[path].add(1, mode="drop"),
        value_sum=tree.value_sum.at[path].add(signed, mode="drop"),
        mover=mover,
        states=states,
        num_nodes=new + d.expand.astype(jnp.int32))
    return tree, key

  tree, _ = jax.lax.fori_loop(0, simulations, simulate, (tree, key))
  return tree


def most_visited_action(tree: UCTTree, legal_action_mask: Array, key: PRNGKey) -> Array:
  """`[]` int32: the most visited legal root child of one tree, ties uniform at random."""
  visits, _ = tree.child_stats(0)
  scores = jnp.where(legal_action_mask, visits.astype(jnp.float32), -jnp.inf)
  return argmax_random_tie(key, scores)


@struct.dataclass
class RootStats:
  """What one search found at its root (unbatched; vmap adds a leading `B`)."""

  action: Array  # [] int32: the most visited legal child, ties uniform at random
  visit_counts: Array  # [A] int32: simulations through each child (0 if unexpanded)
  qvalues: Array  # [A] float32: each child's mean outcome in [-1, 1] for the root's mover; 0 if
  # unvisited (see `visit_counts`)


def root_search(env: base.Game, state: State, key: PRNGKey, *, simulations: int,
                c: float = math.sqrt(2.0), max_depth: int | None = None) -> RootStats:
  """`uct_search` from one state, read at the root: the move to play and each action's stats.

  Children's values are kept from the side of the player who moved into them, the root's
  mover, so `qvalues` read directly as that player's expected outcome.
  """
  search_key, choice_key = jax.random.split(key)
  tree = uct_search(env, state, search_key, simulations=simulations, c=c, max_depth=max_depth)
  visits, value_sum = tree.child_stats(0)
  action = most_visited_action(tree, state.legal_action_mask, choice_key)
  qvalues = jnp.where(visits > 0, value_sum / jnp.maximum(visits, 1), 0.0)
  return RootStats(action=action.astype(jnp.int32), visit_counts=visits,
                   qvalues=qvalues.astype(jnp.float32))


__all__ = ["RootStats", "UCTTree", "argmax_random_tie", "most_visited_action", "root_search",
           "ucb1_scores", "uct_search"]
