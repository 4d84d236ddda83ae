"""Fixed-depth minimax search ("alphabeta"): a baseline agent with a hand-written evaluation,
or with a learned one (the network's value at the leaves, its policy choosing the moves).

>>> env = azjax.games.make("breakthrough")
>>> policy = alphabeta_policy(env, depth=2)     # (states [B], key) -> int32[B]
>>> evaluation, prior = network_functions(model, variables)
>>> policy = alphabeta_policy(env, depth=3, evaluation=evaluation, prior=prior, width=8)

The agents "alphabeta" and "azab" (`azjax.agents.make_alphabeta`, `make_network_alphabeta`)
name these policies; this module knows nothing of agents.

**Search.** An agent's policy must be a pure batched JAX function, so the search is full-width
negamax to a fixed depth: every node expands all `A` actions at once with
`jax.vmap(env.step, in_axes=(None, 0))(state, jnp.arange(A))`, nested `depth` times (Python
recursion at trace time), and values are backed up with masked maxima. Alpha-beta pruning is a
data-dependent early exit and does not vectorise, but it never changes the minimax value nor the
set of best moves, so **the move chosen is one alpha-beta at the same depth with the same
evaluation would choose** (ties between equally valued moves are broken uniformly at random).

* Values are from the side of the player to move at the node (negamax). A child's value enters
  its parent negated when the turn passed and unchanged when the same player moves again
  (checkers multi-jumps): the sign is decided by comparing the child's `current_player` with
  the parent's, never by the ply parity.
* Illegal actions get `-inf`.
* A terminal child is scored exactly from its `rewards`, from the parent mover's side:
  `reward * (WIN_SCORE - ply)`, `ply` = actions from the root to the child (1 for the root's
  children). Faster wins score higher, slower losses less badly, and draws 0. Evaluations are
  kept far below `WIN_SCORE` in magnitude.
* A live node at depth 0 is scored by `evaluation(state)`, from the side of its player to move.

**Selective search** (`width`, with a `prior`): every node expands only the `width` legal
actions its `prior(state)` ranks highest (`lax.top_k`), the rest count as illegal. The tree is
then `width**depth` leaves, whatever the game's action space, which is what makes a network
evaluation affordable: the "azab" agent (`azjax.agents.make_network_alphabeta`) uses the
network's policy as the prior and its value as the evaluation (one forward pass a node,
batched over the whole tree by the vmaps): `1 + width + ... + width**depth` forward passes a
move, against `simulations + 1` for MCTS. Pruning by the prior can miss a move the policy
ranks low; a full-width search cannot.

**Cost.** A search expands `A + A^2 + ... + A^depth` states per root, so the arrays of the last
level hold `B * A^depth` game states (`A` = 9 tic-tac-toe, 7 Connect Four, 192 Breakthrough 8x8,
256 checkers). At the default depth 2 that is about 37k (Breakthrough) to 65k (checkers) states
per root, a few hundred bytes each (board and legal mask), i.e. 10-20 MB per root state. Roots
are therefore searched in chunks of `max(1, max_leaves // A^depth)` with `jax.lax.map`, which
bounds the memory at about `max_leaves` leaf states whatever the batch size. The depth is
limited to trees of at most `MAX_TREE_LEAVES` (2^24) leaves per root: depth 3 on Breakthrough
8x8 and checkers (7-17M leaves: allowed but slow), 7 on tic-tac-toe, 8 on Connect Four; with a
width `w` (below), `w**depth` leaves.

**Evaluations** (pure functions of one state, from the mover's side): by default the game's
own, `env.alphabeta_evaluation` (Breakthrough: material and advancement; checkers: material,
kings, back-rank guards and advancement; see `azjax.games.breakthrough.evaluation` and
`azjax.games.checkers.evaluation`), which is 0 for a game that defines none (Connect Four,
tic-tac-toe: pure search, which plays immediate wins, blocks immediate threats within its
horizon, and is otherwise random).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from azjax.games import base
from azjax.games.base import zero_evaluation
from azjax.uct import argmax_random_tie

Array = jax.Array
State = Any
Evaluation = Callable[[State], Array]
Prior = Callable[[State], Array]  # one state -> [A] logits that rank its actions

WIN_SCORE = 1000.0
MAX_DEPTH = 12
MAX_TREE_LEAVES = 1 << 24  # checkers' full-width depth 3 (256**3) is the largest tree allowed


# -- Search ----------------------------------------------------------------------------------------


def child_values(env: base.Game, state: State, depth: int, evaluation: Evaluation,
                 ply: int = 1, *, prior: Prior | None = None, width: int | None = None) -> Array:
  """`[A]` float32 negamax values of the actions of one (unbatched) live `state`.

  Each value is from the side of `state.current_player`: `-inf` for an illegal action, the
  exact score `reward * (WIN_SCORE - ply)` for an action that ends the game, else the value of
  the child searched `depth - 1` more plies (its `evaluation` when `depth == 1`), negated when
  the turn passes. `ply` is the number of actions from the root to the children.

  With `width` (and a `prior`: `state -> [A]` logits) the search is selective: at every node
  only the `width` legal actions with the highest prior are expanded and the others get
  `-inf` as if illegal, so a node costs `width` children instead of `A`.
  """
  num_actions = state.legal_action_mask.shape[-1]
  if width is None or width >= num_actions:
    actions = jnp.arange(num_actions)
  else:
    # top_k returns distinct indices; with fewer than `width` legal actions the rest are
    # illegal ones, masked below.
    scores = jnp.where(state.legal_action_mask, prior(state).astype(jnp.float32), -jnp.inf)
    actions = jax.lax.top_k(scores, width)[1]
  children = jax.vmap(env.step, in_axes=(None, 0))(state, actions)
  if depth <= 1:
    inner = jax.vmap(evaluation)(children)
  else:
    grandchildren = jax.vmap(lambda c: child_values(
        env, c, depth - 1, evaluation, ply + 1, prior=prior, width=width))(children)
    inner = jnp.max(grandchildren, axis=-1)  # -inf for a terminal child (replaced below)
  inner = inner.astype(jnp.float32)
  same_player = children.current_player == state.current_player
  inner = jnp.where(same_player, inner, -inner)
  mover_reward = jnp.take(children.rewards, state.current_player, axis=-1)
  exact = mover_reward * (WIN_SCORE - ply)
  values = jnp.where(children.terminated, exact, inner)
  values = jnp.where(state.legal_action_mask[actions], values, -jnp.inf)
  if actions.shape[0] == num_actions:
    return values
  return jnp.full((num_actions,), -jnp.inf, jnp.float32).at[actions].set(values)


def search_values(env: base.Game, states: State, *, depth: int = 2,
                  evaluation: Evaluation | None = None, max_leaves: int = 1 << 20,
                  prior: Prior | None = None, width: int | None = None) -> Array:
  """`[B, A]` root action values of a batch of states (see `child_values`), searched in chunks.

  Roots are processed `max(1, max_leaves // branching**depth)` at a time, which bounds the
  memory (`branching` is `width` for a selective search, else `A`).
  """
  evaluation = _resolve_evaluation(env, evaluation)
  batch, num_actions = states.legal_action_mask.shape
  branching = num_actions if width is None else min(width, num_actions)
  chunk = max(1, max_leaves // branching ** depth)
  one = lambda s: child_values(env, s, depth, evaluation, prior=prior, width=width)  # noqa: E731
  if chunk >= batch:
    return jax.vmap(one)(states)
  return jax.lax.map(one, states, batch_size=chunk)


def _resolve_evaluation(env: base.Game, evaluation: Evaluation | str | None) -> Evaluation:
  """The evaluation function named by `evaluation`: None (or the game's name) is the game's own
  (`env.alphabeta_evaluation`), "zero" pure search; a function is taken as it is."""
  if evaluation is None or evaluation == env.name:
    return env.alphabeta_evaluation
  if isinstance(evaluation, str):
    if evaluation == "zero":
      return zero_evaluation
    raise ValueError(f"alphabeta: unknown evaluation {evaluation!r}; available: zero, "
                     f"{env.name} (the game's own, the default)")
  return evaluation


def check_depth(num_actions: int, depth: int, width: int | None = None) -> int:
  """`depth` as an int if a search of it is allowed: `1 <= depth <= MAX_DEPTH` and at most
  `MAX_TREE_LEAVES` leaves per root (`branching**depth`, the branching being `num_actions`, or
  `width` for a selective search). Raises ValueError naming the deepest allowed otherwise."""
  depth = int(depth)
  branching = num_actions if width is None else min(int(width), num_actions)
  if not 1 <= depth <= MAX_DEPTH or branching ** depth > MAX_TREE_LEAVES:
    most = max(d for d in range(1, MAX_DEPTH + 1) if branching ** d <= MAX_TREE_LEAVES)
    raise ValueError(f"alphabeta: depth must be in 1..{most} with {branching} actions searched "
                     f"a node (at most {MAX_TREE_LEAVES} leaves), got {depth}")
  return depth


def validate(env: base.Game, *, depth: int, prior: Prior | None = None,
             width: int | None = None) -> int:
  """The checked depth of a search (see `check_depth`), also checking that a selective search
  has both `width` (at least 1) and `prior`. Raises ValueError saying what is wrong."""
  if (width is None) != (prior is None):
    raise ValueError("alphabeta: a selective search needs both width and prior")
  if width is not None and int(width) < 1:
    raise ValueError(f"alphabeta: width must be at least 1, got {width}")
  return check_depth(env.num_actions, depth, width)


def choose(values: Array, key: jax.Array) -> Array:
  """`[B]` int32: each row's best action of the `[B, A]` `values`, ties uniform at random."""
  keys = jax.random.split(key, values.shape[0])
  return jax.vmap(argmax_random_tie)(keys, values).astype(jnp.int32)


def alphabeta_policy(env: base.Game, *, depth: int = 2, evaluation: Evaluation | str | None = None,
                     max_leaves: int = 1 << 20, prior: Prior | None = None,
                     width: int | None = None) -> Callable[[State, jax.Array], Array]:
  """The batched policy `(states [B], key) -> [B]` int32 playing the best searched action.

  Raises:
    ValueError: for a depth out of range, an unknown evaluation, a width below 1 or a width
      without a prior.
  """
  depth = validate(env, depth=depth, prior=prior, width=width)
  evaluation = _resolve_evaluation(env, evaluation)

  def policy(states: State, key: jax.Array) -> Array:
    values = search_values(env, states, depth=depth, evaluation=evaluation,
                           max_leaves=max_leaves, prior=prior, width=width)
    return choose(values, key)

  return policy


def root_search(env: base.Game, state: State, key: jax.Array, *, depth: int,
                evaluation: Evaluation | str | None = None, prior: Prior | None = None,
                width: int | None = None) -> tuple[Array, Array]:
  """`([] int32 action, [A] float32 values)` of one (unbatched) live state: what the policy
  plays there and every action's negamax value (`child_values`), for an analysis display."""
  evaluation = _resolve_evaluation(env, evaluation)
  values = child_values(env, state, depth, evaluation, prior=prior, width=width)
  return argmax_random_tie(key, values).astype(jnp.int32), values


def network_functions(model: Any, variables: Any) -> tuple[Evaluation, Prior]:
  """The learned evaluation and prior of a network: `(state -> value [], state -> logits [A])`
  for one unbatched state, both from the side of its player to move (as the network was
  trained). Inside the search's nested vmaps every node's forward pass joins one batch."""

  def forward(state: State) -> tuple[Array, Array]:
    logits, value = model.apply(variables, state.observation[None], train=False)
    return logits[0], value[0]

  return (lambda state: forward(state)[1]), (lambda state: forward(state)[0])


__all__ = ["WIN_SCORE", "alphabeta_policy", "check_depth", "child_values", "choose",
           "network_functions", "root_search", "search_values", "validate", "zero_evaluation"]
