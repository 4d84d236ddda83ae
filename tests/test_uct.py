"""Rollout UCT (`azjax.uct`): UCB1 against hand-computed scores, the tree's semantics, and the
root statistics a player reads (the "mcts" agent's games are in test_agents.py)."""

import importlib.util
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games, uct
from azjax.games import base

from positions import tic_tac_toe_position

SQRT2 = math.sqrt(2.0)


def _available(name):
  return importlib.util.find_spec(f"azjax.games.{name}") is not None


@pytest.fixture(scope="module")
def ttt():
  return games.make("tic_tac_toe")


# -- UCB1 ------------------------------------------------------------------------------------------


def test_ucb1_scores_hand_computed():
  # A node visited N = 8 times (1 own playout + 7 through children), four actions:
  #   a0: 6 visits, value sum 4   -> Q = 2/3, (Q + 1) / 2 = 5/6
  #   a1: 1 visit,  value sum -1  -> Q = -1,  (Q + 1) / 2 = 0
  #   a2: illegal (its counts must be ignored)
  #   a3: legal, unvisited        -> +inf
  # ln 8 = 2.0794415; sqrt(ln 8 / 6) = 0.5887050; sqrt(ln 8 / 1) = 1.4420278.
  visits = jnp.array([6, 1, 0, 0])
  value_sum = jnp.array([4.0, -1.0, 0.0, 0.0])
  legal = jnp.array([True, True, False, True])
  scores = np.asarray(uct.ucb1_scores(visits, value_sum, 8, legal, c=SQRT2))
  np.testing.assert_allclose(scores[:2], [5 / 6 + 1.4142136 * 0.5887050, 0 + 1.4142136 * 1.4420278],
                             rtol=1e-6)
  assert scores[2] == -np.inf and scores[3] == np.inf

  # With every legal child visited, exploration decides: at c = sqrt(2) the rarely visited a1
  # wins (2.0393 > 1.6659); at c = 0.5 the better a0 does (1.1277 > 0.7210).
  legal = jnp.array([True, True, False, False])
  pick = lambda c: int(uct.argmax_random_tie(  # noqa: E731
      jax.random.key(0), uct.ucb1_scores(visits, value_sum, 8, legal, c=c)))
  assert pick(SQRT2) == 1
  assert pick(0.5) == 0
  np.testing.assert_allclose(
      np.asarray(uct.ucb1_scores(visits, value_sum, 8, legal, c=0.5))[:2],
      [0.8333333 + 0.5 * 0.5887050, 0.5 * 1.4420278], rtol=1e-6)


def test_ucb1_tries_unvisited_children_in_random_order():
  visits = jnp.array([5, 0, 0, 0, 3])
  value_sum = jnp.array([5.0, 0.0, 0.0, 0.0, 3.0])
  legal = jnp.array([True, True, False, True, True])  # a2 is unvisited but illegal.
  scores = uct.ucb1_scores(visits, value_sum, 9, legal)
  picks = jax.jit(jax.vmap(lambda k: uct.argmax_random_tie(k, scores)))(
      jax.random.split(jax.random.key(0), 200))
  counts = np.bincount(np.asarray(picks), minlength=5)
  assert counts[0] == counts[2] == counts[4] == 0
  assert counts[1] > 60 and counts[3] > 60  # Uniform between the two unvisited legal children.


# -- UCT tree semantics ----------------------------------------------------------------------------


def check_tree(tree, root_live=True):
  """Checks the `UCTTree` invariants of one unbatched tree (numpy)."""
  children = np.asarray(tree.children)
  visits = np.asarray(tree.visits)
  value_sum = np.asarray(tree.value_sum)
  mover = np.asarray(tree.mover)
  player = np.asarray(tree.states.current_player)
  terminated = np.asarray(tree.states.terminated)
  rewards = np.asarray(tree.states.rewards)
  legal = np.asarray(tree.states.legal_action_mask)
  num_nodes = int(tree.num_nodes)
  simulations = visits.shape[0] - 1
  assert visits[0] == simulations  # Every simulation passes through the root.
  # Every node but the root has exactly one parent, and only legal actions are expanded.
  used = children[:num_nodes][children[:num_nodes] >= 0]
  assert sorted(used.tolist()) == list(range(1, num_nodes))
  assert np.all(children[num_nodes:] == -1)
  assert np.all(legal[:num_nodes][children[:num_nodes] >= 0])
  multi_moves = 0
  for node in range(num_nodes):
    kids = children[node][children[node] >= 0]
    assert np.all(mover[kids] == player[node])  # A child's mover is its parent's player.
    if terminated[node]:
      assert kids.size == 0
      if node > 0:  # Scored by its real reward, every time it was reached.
        assert value_sum[node] == visits[node] * rewards[node][mover[node]]
      continue
    if node == 0:
      assert visits[0] == (visits[kids].sum() if root_live else visits[0])
      continue
    # An interior node: one own playout, plus everything backed up through its children.
    assert visits[node] == 1 + visits[kids].sum()
    same = mover[kids] == mover[node]
    multi_moves += int(same.sum())
    own_playout = value_sum[node] - np.sum(np.where(same, value_sum[kids], -value_sum[kids]))
    assert own_playout in (-1.0, 0.0, 1.0)
  return multi_moves


@pytest.fixture(scope="module")
def ttt_search(ttt):
  return jax.jit(jax.vmap(lambda s, k: uct.uct_search(ttt, s, k, simulations=64)))


@pytest.mark.slow
def test_uct_tree_invariants_tic_tac_toe(ttt, ttt_search):
  states = base.stack_states([ttt.init(jax.random.key(0))] * 2 + [
      tic_tac_toe_position(ttt, ["b2", "a1", "c3"]),
      tic_tac_toe_position(ttt, ["a1", "a2", "b1", "b2"])])
  trees = ttt_search(states, jax.random.split(jax.random.key(3), 4))
  for b in range(4):
    check_tree(base.unstack_state(trees, b))
  # From the empty board, 64 simulations expand all 9 root children before revisiting any.
  root_visits = np.asarray(jax.vmap(lambda t: t.child_stats(0)[0])(trees))
  assert np.all(root_visits[:2] >= 1) and root_visits[:2].sum() == 128


@pytest.mark.slow
def test_uct_unvisited_children_first(ttt):
  # 5 simulations: every legal root child is tried before any is tried twice, each a new node.
  positions = [
      ["a1", "b2", "c3", "a3"],  # 5 legal moves: each visited once.
      ["a1", "b2", "c3", "a3", "c1"],  # 4 legal moves: all visited, one twice.
      ["a1", "b2", "c3"],  # 6 legal moves: five visited once, one not at all.
  ]
  states = base.stack_states([tic_tac_toe_position(ttt, moves) for moves in positions])
  search = jax.jit(jax.vmap(lambda s, k: uct.uct_search(ttt, s, k, simulations=5)))
  trees = search(states, jax.random.split(jax.random.key(7), len(positions)))
  visits = np.asarray(jax.vmap(lambda t: t.child_stats(0)[0])(trees))
  legal = np.asarray(states.legal_action_mask)
  assert np.all(visits[~legal] == 0) and np.all(visits.sum(axis=1) == 5)
  assert sorted(visits[0][legal[0]]) == [1, 1, 1, 1, 1]
  assert sorted(visits[1][legal[1]]) == [1, 1, 1, 2]
  assert sorted(visits[2][legal[2]]) == [0, 1, 1, 1, 1, 1]
  # Position 1's fifth simulation went below a root child: 5 new nodes in every tree.
  np.testing.assert_array_equal(np.asarray(trees.num_nodes), [6, 6, 6])


# A checkers double jump: o c3 must take d4 (landing on e5) and then f6 (landing on g7); each
# hop is an action and o stays to move after the first.
CHECKERS_DOUBLE_JUMP = """
8 . x . . . . . x
7 . . . . . . . .
6 . . . . . x . .
5 . . . . . . . .
4 . . . x . . . .
3 . . o . . . . .
2 . . . . . . . .
1 o . . . . . . .
"""


@pytest.mark.slow
@pytest.mark.skipif(not _available("checkers"), reason="no checkers module")
def test_uct_tree_invariants_checkers_multi_jump():
  """Checkers: a player moving twice in a row keeps the value's sign (discount +1)."""
  env = games.make("checkers")
  state = env.from_ascii(CHECKERS_DOUBLE_JUMP, to_move=0)
  assert env.legal_moves(state) == ["c3e5"]
  tree = jax.jit(lambda s, k: uct.uct_search(env, s, k, simulations=32))(
      state, jax.random.key(8))
  assert check_tree(tree) >= 1  # The second hop is an edge between two nodes of one mover.
  # The first hop is the only root child; its child is the second hop, by the same player.
  first = int(tree.children[0, env.move_to_action(state, "c3e5")])
  assert int(tree.mover[first]) == 0 and int(tree.states.current_player[first]) == 0


# -- Root statistics -------------------------------------------------------------------------------


@pytest.mark.slow
def test_root_search_reads_the_tree_at_its_root(ttt):
  """`root_search` plays the most visited child; its visits and Q-values are the root's
  children's, the Q-values from the side of the player to move (X wins with c1 here)."""
  state = tic_tac_toe_position(ttt, ["a1", "a2", "b1", "b2"])
  key = jax.random.key(5)
  stats = jax.jit(lambda s, k: uct.root_search(ttt, s, k, simulations=200))(state, key)
  search_key, _ = jax.random.split(key)
  tree = uct.uct_search(ttt, state, search_key, simulations=200)
  visits, value_sum = (np.asarray(x) for x in tree.child_stats(0))
  np.testing.assert_array_equal(stats.visit_counts, visits)
  assert int(stats.visit_counts.sum()) == 200
  visited = visits > 0
  np.testing.assert_allclose(np.asarray(stats.qvalues)[visited],
                             value_sum[visited] / visits[visited], rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(stats.qvalues)[~visited], 0.0)
  c1 = ttt.move_to_action(state, "c1")
  assert int(stats.action) == c1 == int(np.argmax(visits))
  assert float(stats.qvalues[c1]) == 1.0  # The win, every time.
