"""Agents: legality on every game, UCB1 against hand-computed scores, UCT tree semantics,
scripted tic-tac-toe tactics, and rollout MCTS against random."""

import importlib.util
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, arena, games
from azjax.games import base

NUM_POSITIONS = 24
SQRT2 = math.sqrt(2.0)


def _available(name):
  return importlib.util.find_spec(f"azjax.games.{name}") is not None


GAME_PARAMS = [
    pytest.param(name, marks=pytest.mark.skipif(not _available(name), reason=f"no {name} module"))
    for name in games.GAMES
]


def random_positions(env, key, num, max_plies):
  """`num` positions after a uniform random number of random plies in `[0, max_plies)`."""

  def one(key):
    init_key, length_key, play_key = jax.random.split(key, 3)
    stop = jax.random.randint(length_key, (), 0, max_plies)

    def body(i, carry):
      state, k = carry
      k, action_key = jax.random.split(k)
      stepped = env.step(state, base.uniform_legal_action(action_key, state.legal_action_mask))
      return base.tree_select((i < stop) & ~state.terminated, stepped, state), k

    state, _ = jax.lax.fori_loop(0, max_plies, body, (env.init(init_key), play_key))
    return state

  return jax.jit(jax.vmap(one))(jax.random.split(key, num))


_jitted_steps = {}


def tic_tac_toe_position(env, moves):
  """The position after `moves` (notation) from the start."""
  step = _jitted_steps.setdefault(env, jax.jit(env.step))
  state = env.init(jax.random.key(0))
  for move in moves:
    state = step(state, env.move_to_action(state, move))
  return state


@pytest.fixture(scope="module")
def ttt():
  return games.make("tic_tac_toe")


# -- Registry --------------------------------------------------------------------------------------


def test_registry_and_errors(ttt):
  assert {"random", "mcts"} <= set(agents.BUILDERS)
  with pytest.raises(ValueError, match="available: .*mcts.*random"):
    agents.make("no_such_agent", ttt)
  with pytest.raises(ValueError, match="bad option"):
    agents.make("random", ttt, simulations=3)
  with pytest.raises(ValueError, match="simulations"):
    agents.make("mcts", ttt, simulations=0)
  agent = agents.make("mcts", ttt, simulations=7)
  assert agent.name == "mcts-7" and isinstance(agent, agents.Agent)


# -- Legality on every game ------------------------------------------------------------------------


@pytest.fixture(scope="module", params=GAME_PARAMS)
def game_and_positions(request):
  env = games.make(request.param)
  max_plies = min(env.max_game_length // 2, 40)
  states = random_positions(env, jax.random.key(1), NUM_POSITIONS, max_plies)
  live = ~np.asarray(states.terminated)
  assert live.sum() >= NUM_POSITIONS // 2  # The sample must mostly be live positions.
  return env, states


@pytest.mark.parametrize("agent_name,kwargs", [("random", {}), ("mcts", {"simulations": 8})])
def test_actions_are_legal(game_and_positions, agent_name, kwargs):
  env, states = game_and_positions
  agent = agents.make(agent_name, env, **kwargs)
  actions = np.asarray(agent.act(states, jax.random.key(2)))
  assert actions.shape == (NUM_POSITIONS,) and actions.dtype == np.int32
  mask = np.asarray(states.legal_action_mask)
  live = ~np.asarray(states.terminated)
  assert np.all((0 <= actions) & (actions < env.num_actions))
  assert np.all(mask[np.arange(NUM_POSITIONS), actions][live])


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
  scores = np.asarray(agents.ucb1_scores(visits, value_sum, 8, legal, c=SQRT2))
  np.testing.assert_allclose(scores[:2], [5 / 6 + 1.4142136 * 0.5887050, 0 + 1.4142136 * 1.4420278],
                             rtol=1e-6)
  assert scores[2] == -np.inf and scores[3] == np.inf

  # With every legal child visited, exploration decides: at c = sqrt(2) the rarely visited a1
  # wins (2.0393 > 1.6659); at c = 0.5 the better a0 does (1.1277 > 0.7210).
  legal = jnp.array([True, True, False, False])
  pick = lambda c: int(agents.argmax_random_tie(  # noqa: E731
      jax.random.key(0), agents.ucb1_scores(visits, value_sum, 8, legal, c=c)))
  assert pick(SQRT2) == 1
  assert pick(0.5) == 0
  np.testing.assert_allclose(
      np.asarray(agents.ucb1_scores(visits, value_sum, 8, legal, c=0.5))[:2],
      [0.8333333 + 0.5 * 0.5887050, 0.5 * 1.4420278], rtol=1e-6)


def test_ucb1_tries_unvisited_children_in_random_order():
  visits = jnp.array([5, 0, 0, 0, 3])
  value_sum = jnp.array([5.0, 0.0, 0.0, 0.0, 3.0])
  legal = jnp.array([True, True, False, True, True])  # a2 is unvisited but illegal.
  scores = agents.ucb1_scores(visits, value_sum, 9, legal)
  picks = jax.jit(jax.vmap(lambda k: agents.argmax_random_tie(k, scores)))(
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
  return jax.jit(jax.vmap(lambda s, k: agents.uct_search(ttt, s, k, simulations=64)))


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


def test_uct_unvisited_children_first(ttt):
  # 5 simulations: every legal root child is tried before any is tried twice, each a new node.
  positions = [
      ["a1", "b2", "c3", "a3"],  # 5 legal moves: each visited once.
      ["a1", "b2", "c3", "a3", "c1"],  # 4 legal moves: all visited, one twice.
      ["a1", "b2", "c3"],  # 6 legal moves: five visited once, one not at all.
  ]
  states = base.stack_states([tic_tac_toe_position(ttt, moves) for moves in positions])
  search = jax.jit(jax.vmap(lambda s, k: agents.uct_search(ttt, s, k, simulations=5)))
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


@pytest.mark.skipif(not _available("checkers"), reason="no checkers module")
def test_uct_tree_invariants_checkers_multi_jump():
  """Checkers: a player moving twice in a row keeps the value's sign (discount +1)."""
  env = games.make("checkers")
  state = env.from_ascii(CHECKERS_DOUBLE_JUMP, to_move=0)
  assert env.legal_moves(state) == ["c3e5"]
  tree = jax.jit(lambda s, k: agents.uct_search(env, s, k, simulations=32))(
      state, jax.random.key(8))
  assert check_tree(tree) >= 1  # The second hop is an edge between two nodes of one mover.
  # The first hop is the only root child; its child is the second hop, by the same player.
  first = int(tree.children[0, env.move_to_action(state, "c3e5")])
  assert int(tree.mover[first]) == 0 and int(tree.states.current_player[first]) == 0


# -- Tactics and strength --------------------------------------------------------------------------


def test_mcts_wins_and_blocks_in_tic_tac_toe(ttt):
  cases = [
      (["a1", "a2", "b1", "b2"], "c1"),  # X to move wins on row 1 (O threatens c2).
      (["a1", "b1", "c3", "b2"], "b3"),  # X has no win and must block file b.
      (["b2", "a1", "c3", "a3", "b1"], "a2"),  # O to move wins on file a (X threatens b3).
  ]
  copies = 8
  positions = [tic_tac_toe_position(ttt, moves) for moves, _ in cases]
  states = base.stack_states([p for p in positions for _ in range(copies)])
  agent = agents.make("mcts", ttt, simulations=200)
  actions = np.asarray(agent.act(states, jax.random.key(4))).reshape(len(cases), copies)
  for (moves, best), position, row in zip(cases, positions, actions):
    assert np.all(row == ttt.move_to_action(position, best)), (moves, row)


def test_mcts_beats_random_in_tic_tac_toe(ttt):
  mcts = agents.make("mcts", ttt, simulations=400)
  result = arena.play(ttt, mcts, agents.make("random", ttt), 40, jax.random.key(0))
  assert result.score >= 0.8, str(result)
  assert result.first[2] == 0, str(result)  # Never loses with the first move.
  assert result.illegal_a == result.illegal_b == 0
