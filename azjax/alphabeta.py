"""Alpha-beta search: the "alphabeta" agent (a hand-written or small learned evaluation) and
the "azab" agent (a network's value at the leaves, its policy choosing the moves).

>>> env = azjax.games.make("slider")
>>> found = search(env, states, key, depth=6)     # states [B] -> Principal (action, value, pv)
>>> policy = search_policy(env, depth=6)          # (states [B], key) -> int32[B]
>>> evaluation, prior = network_functions(model, variables)
>>> policy = alphabeta_policy(env, depth=3, evaluation=evaluation, prior=prior, width=8)

Two searches with the same values (`tests/test_alphabeta.py` checks they agree):

* `search`: a real alpha-beta (pruning, move ordering, iterative deepening; see "Alpha-beta
  with pruning" below), depth-first, one node a step. Few nodes, so it suits deep searches with
  a cheap evaluation: depth 6 on Slider 5x5 takes about 0.2 s a move on this CPU, depth 3 on
  Breakthrough 8x8 0.4 s for 16 positions where the full-width search takes 34 s.
* `search_values` / `alphabeta_policy`: full-width negamax, the whole tree as one batched
  array program (below). Every node is visited, but every leaf's evaluation joins one batch,
  which suits a network evaluation over a narrow tree (`width`).

**Full-width search.** One array program of fixed shape: negamax to a fixed depth, every node
expanding all `A` actions at once with `jax.vmap(env.step, in_axes=(None, 0))(state,
jnp.arange(A))`, nested `depth` times (Python recursion at trace time), values backed up with
masked maxima. It finds the values `search` finds (pruning never changes them) and breaks ties
between equally valued moves uniformly at random. The sign and scoring rules, shared by both:

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
`azjax.games.checkers_knowledge.evaluation`), which is 0 for a game that defines none (Connect Four,
tic-tac-toe: pure search, which plays immediate wins, blocks immediate threats within its
horizon, and is otherwise random).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

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



# -- Alpha-beta with pruning -----------------------------------------------------------------------
#
# The full-width search above batches a whole tree into one array program, which suits shallow
# searches with an expensive evaluation (a network's forward pass, batched over every leaf). A
# deep search with a cheap evaluation (Slider's features, a hand-written score) needs the
# opposite: visit few nodes. `search` is a real alpha-beta: depth-first with an explicit stack,
# one node stepped per iteration of a `lax.while_loop`, every root of the batch in its own lane
# (vmapped: the loop runs until the slowest lane is done). Fail-soft negamax, the same values
# and sign rules as `child_values`; iterative deepening to `depth`, each iteration ordering the
# moves by the previous principal variation first, then by the game's `move_order_scores`
# (or a `prior`), then by the history heuristic (cutoffs so far, weighted by the remaining
# depth squared). It returns the principal variation and its leaf, which TD-Leaf learns from.


class Principal(NamedTuple):
  """What `search` found for a batch of `B` roots (`D` = the search depth)."""

  action: Array  # [B] int32: the best root action (0 for a finished root)
  value: Array  # [B] float32: the root's negamax value, from its mover's side
  pv: Array  # [B, D] int32: the principal variation, -1 after its end
  leaf: State  # [B]: the PV's last position (the root itself for a finished root)
  leaf_sign: Array  # [B] float32: value = leaf_sign * evaluation(leaf) unless leaf_exact
  leaf_exact: Array  # [B] bool: the PV ends the game, so value is an exact score
  nodes: Array  # [B] int32: positions stepped, all deepening iterations together


class _Stack(NamedTuple):
  """One lane's search stack: row `p` is the node at ply `p` of the current path (`D + 1`
  rows, row 0 the root) with its ordered moves and bounds, and the best line found below it."""

  node: State  # [D + 1]
  order: Array  # [D + 1, A] int32: the node's legal actions, best first
  count: Array  # [D + 1] int32: how many of `order` are legal
  next: Array  # [D + 1] int32: index in `order` of the next action to try
  incoming: Array  # [D + 1] int32: the action from row p - 1 to row p
  alpha: Array  # [D + 1] float32
  beta: Array  # [D + 1] float32
  best: Array  # [D + 1] float32: the best value found at the node so far (-inf: none yet)
  leaf: State  # [D + 1]: the leaf of the node's best line
  leaf_sign: Array  # [D + 1] float32: from the node's mover's side
  leaf_exact: Array  # [D + 1] bool
  pv: Array  # [D + 1, D] int32: the node's best line of actions
  on_pv: Array  # [D + 1] bool: the path so far follows the previous iteration's PV
  ply: Array  # [] int32: the row being worked on
  done: Array  # [] bool
  nodes: Array  # [] int32
  history: Array  # [A] float32: the history heuristic (kept across deepening iterations)
  prev_pv: Array  # [D] int32: the previous iteration's principal variation


def _row(tree: Any, i: Array) -> Any:
  return jax.tree.map(lambda x: x[i], tree)


def _set_row(tree: Any, i: Array, value: Any, where: Array) -> Any:
  return jax.tree.map(lambda x, v: x.at[i].set(jnp.where(where, v, x[i])), tree, value)


def _order(state: State, scores: Array, history: Array, pv_action: Array,
           noise: Array) -> tuple[Array, Array]:
  """`([A] int32 legal actions best first then the illegal ones, [] int32 legal count)`.

  The key is lexicographic in effect: the previous PV's action (`pv_action`, -1 for none)
  first, then `scores` (the game's move-order scores or a prior, of order 1), then the history
  heuristic scaled into [0, 0.5), then `noise` (tiny; random tie-breaking at the root).
  """
  legal = state.legal_action_mask
  actions = jnp.arange(legal.shape[-1])
  key = (scores.astype(jnp.float32) + 0.5 * history / (jnp.max(history) + 1.0) + noise
         + jnp.where(actions == pv_action, 1e6, 0.0))
  key = jnp.where(legal, key, -jnp.inf)
  return jnp.argsort(-key).astype(jnp.int32), jnp.sum(legal).astype(jnp.int32)


def _start(scores: Callable[[State], Array], max_depth: int, root: State, history: Array,
           prev_pv: Array, noise: Array) -> _Stack:
  """A lane's stack for one deepening iteration to `depth`, the root on row 0."""
  rows = max_depth + 1
  num_actions = root.legal_action_mask.shape[-1]
  order, count = _order(root, scores(root), history, prev_pv[0], noise)
  count = jnp.where(root.terminated, 0, count)
  stacked = jax.tree.map(lambda x: jnp.broadcast_to(x, (rows,) + x.shape), root)
  neg_inf = jnp.full(rows, -jnp.inf, jnp.float32)
  return _Stack(
      node=stacked, order=jnp.zeros((rows, num_actions), jnp.int32).at[0].set(order),
      count=jnp.zeros(rows, jnp.int32).at[0].set(count), next=jnp.zeros(rows, jnp.int32),
      incoming=jnp.full(rows, -1, jnp.int32), alpha=neg_inf, beta=-neg_inf, best=neg_inf,
      leaf=stacked, leaf_sign=jnp.zeros(rows, jnp.float32),
      leaf_exact=jnp.zeros(rows, jnp.bool_).at[0].set(root.terminated),
      pv=jnp.full((rows, max_depth), -1, jnp.int32),
      on_pv=jnp.zeros(rows, jnp.bool_).at[0].set(True), ply=jnp.int32(0),
      done=jnp.asarray(root.terminated), nodes=jnp.int32(0), history=history, prev_pv=prev_pv)


def _advance(env: base.Game, evaluation: Evaluation, scores: Callable[[State], Array],
             depth: Array, s: _Stack) -> _Stack:
  """One iteration of the depth-first search of one lane: try the next move of the node on
  top of the stack (scoring it at once if it is a leaf, else pushing it), or, when the node
  has no move left (or was cut off), pop it and back its value up to its parent."""
  max_depth = s.pv.shape[-1]
  p = s.ply
  node = _row(s.node, p)
  i = s.next[p]
  expand = (i < s.count[p]) & ~s.done
  action = s.order[p, jnp.minimum(i, s.order.shape[-1] - 1)]
  child = env.step(node, action)
  same = child.current_player == node.current_player
  leaf_child = child.terminated | (p + 1 >= depth)
  evaluated = evaluation(child).astype(jnp.float32)
  exact = jnp.take(child.rewards, node.current_player) * (WIN_SCORE - (p + 1).astype(jnp.float32))
  child_value = jnp.where(child.terminated, exact, jnp.where(same, evaluated, -evaluated))
  push = expand & ~leaf_child
  pop = ~expand & ~s.done
  # Popping row p backs its best value up to row p - 1 (negated if the turn passed there).
  up = jnp.maximum(p - 1, 0)
  same_up = node.current_player == _row(s.node, up).current_player
  # The update of row q with value v reached through `act` (a leaf child, or a popped node).
  update = (expand & leaf_child) | (pop & (p > 0))
  q = jnp.where(expand, p, up)
  v = jnp.where(expand, child_value, jnp.where(same_up, s.best[p], -s.best[p]))
  act = jnp.where(expand, action, s.incoming[p])
  leaf = jax.tree.map(lambda c, row: jnp.where(expand, c, row), child, _row(s.leaf, p))
  sign = jnp.where(expand, jnp.where(child.terminated, 0.0, jnp.where(same, 1.0, -1.0)),
                   s.leaf_sign[p] * jnp.where(same_up, 1.0, -1.0))
  leaf_exact = jnp.where(expand, child.terminated, s.leaf_exact[p])
  tail = jnp.where(expand, jnp.full(max_depth, -1, jnp.int32), s.pv[p])
  improved = update & (v > s.best[q])
  line = jnp.concatenate([act[None], tail[:-1]])
  alpha_q = jnp.where(update, jnp.maximum(s.alpha[q], v), s.alpha[q])
  cutoff = update & (alpha_q >= s.beta[q])
  next_ = s.next.at[p].add(expand.astype(jnp.int32))
  next_ = next_.at[q].set(jnp.where(cutoff, s.count[q], next_[q]))
  remaining = (depth - q).astype(jnp.float32)
  history = s.history.at[act].add(jnp.where(cutoff, remaining * remaining, 0.0))
  s = s._replace(
      best=s.best.at[q].set(jnp.where(improved, v, s.best[q])), alpha=s.alpha.at[q].set(alpha_q),
      leaf=_set_row(s.leaf, q, leaf, improved),
      leaf_sign=s.leaf_sign.at[q].set(jnp.where(improved, sign, s.leaf_sign[q])),
      leaf_exact=s.leaf_exact.at[q].set(jnp.where(improved, leaf_exact, s.leaf_exact[q])),
      pv=s.pv.at[q].set(jnp.where(improved, line, s.pv[q])), next=next_, history=history)
  # Push the child on row p + 1 with the window seen from its mover's side.
  c = jnp.minimum(p + 1, max_depth)
  on_pv = s.on_pv[p] & (action == s.prev_pv[jnp.minimum(p, max_depth - 1)])
  pv_action = jnp.where(on_pv & (p + 1 < max_depth), s.prev_pv[jnp.minimum(p + 1, max_depth - 1)],
                        -1)
  order, count = _order(child, scores(child), history, pv_action, 0.0)
  alpha, beta = s.alpha[p], s.beta[p]
  s = s._replace(
      node=_set_row(s.node, c, child, push),
      order=s.order.at[c].set(jnp.where(push, order, s.order[c])),
      count=s.count.at[c].set(jnp.where(push, count, s.count[c])),
      next=s.next.at[c].set(jnp.where(push, 0, s.next[c])),
      incoming=s.incoming.at[c].set(jnp.where(push, action, s.incoming[c])),
      alpha=s.alpha.at[c].set(jnp.where(push, jnp.where(same, alpha, -beta), s.alpha[c])),
      beta=s.beta.at[c].set(jnp.where(push, jnp.where(same, beta, -alpha), s.beta[c])),
      best=s.best.at[c].set(jnp.where(push, -jnp.inf, s.best[c])),
      on_pv=s.on_pv.at[c].set(jnp.where(push, on_pv, s.on_pv[c])))
  ply = jnp.where(push, p + 1, jnp.where(pop, up, p))
  return s._replace(ply=ply, done=s.done | (pop & (p == 0)),
                    nodes=s.nodes + expand.astype(jnp.int32))


def _check_search_depth(depth: int) -> int:
  """`depth` as an int in 1..MAX_DEPTH (depth-first: memory grows with the depth only)."""
  if isinstance(depth, bool) or int(depth) != depth or not 1 <= depth <= MAX_DEPTH:
    raise ValueError(f"alphabeta: depth must be in 1..{MAX_DEPTH}, got {depth!r}")
  return int(depth)


def search_policy(env: base.Game, *, depth: int, evaluation: Evaluation | str | None = None,
                  prior: Prior | None = None) -> Callable[[State, jax.Array], Array]:
  """The batched policy `(states [B], key) -> [B]` int32 playing `search`'s best move.

  Raises:
    ValueError: for a depth out of range or an unknown evaluation (at once, not when traced).
  """
  depth = _check_search_depth(depth)
  evaluation = _resolve_evaluation(env, evaluation)
  return lambda states, key: search(env, states, key, depth=depth, evaluation=evaluation,
                                    prior=prior).action


def search(env: base.Game, roots: State, key: jax.Array, *, depth: int,
           evaluation: Evaluation | str | None = None, prior: Prior | None = None) -> Principal:
  """Alpha-beta with iterative deepening over a batch of roots `[B]` (see the section notes).

  The value is the negamax value of a full-width search of `depth` plies with the same
  evaluation (`child_values`' maximum): pruning never changes it. Moves are ordered by the
  game's `move_order_scores` or, with a `prior` (`state -> [A]` logits, e.g. a network's
  policy), by its softmax; `key` breaks ties between equally ordered root moves at random, so
  equally valued best moves are chosen among at random too.
  """
  depth = _check_search_depth(depth)
  evaluation = _resolve_evaluation(env, evaluation)
  if prior is None:
    scores = env.move_order_scores
  else:
    scores = lambda state: jax.nn.softmax(prior(state).astype(jnp.float32))  # noqa: E731
  batch, num_actions = roots.legal_action_mask.shape
  noise = jax.random.uniform(key, (batch, num_actions), maxval=1e-3)
  advance = jax.vmap(functools.partial(_advance, env, evaluation, scores), in_axes=(None, 0))
  start = jax.vmap(functools.partial(_start, scores, depth))

  def iteration(d, carry):
    history, prev_pv, nodes, _ = carry
    stacks = start(roots, history, prev_pv, noise)
    stacks = jax.lax.while_loop(lambda s: ~jnp.all(s.done), lambda s: advance(d, s), stacks)
    return stacks.history, stacks.pv[:, 0], nodes + stacks.nodes, stacks

  history = jnp.zeros((batch, num_actions), jnp.float32)
  prev_pv = jnp.full((batch, depth), -1, jnp.int32)
  first = iteration(1, (history, prev_pv, jnp.zeros(batch, jnp.int32), None))
  _, _, nodes, stacks = jax.lax.fori_loop(2, depth + 1, iteration, first)
  root = lambda x: x[:, 0]  # noqa: E731
  pv = stacks.pv[:, 0]
  return Principal(action=jnp.maximum(pv[:, 0], 0), value=stacks.best[:, 0], pv=pv,
                   leaf=jax.tree.map(root, stacks.leaf), leaf_sign=stacks.leaf_sign[:, 0],
                   leaf_exact=stacks.leaf_exact[:, 0], nodes=nodes)


__all__ = ["WIN_SCORE", "Principal", "alphabeta_policy", "check_depth", "child_values", "choose",
           "network_functions", "root_search", "search", "search_policy", "search_values",
           "validate", "zero_evaluation"]
