"""Agents: the kinds table and the spec parser, legality on every game, scripted tic-tac-toe
tactics, and rollout MCTS against random (UCT itself is tested in test_uct.py)."""

import importlib.util
import inspect

import jax
import numpy as np
import pytest

from azjax import agents, arena, games
from azjax.games import base

from positions import tic_tac_toe_position

NUM_POSITIONS = 24


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


@pytest.fixture(scope="module")
def ttt():
  return games.make("tic_tac_toe")


# -- Registry --------------------------------------------------------------------------------------


def test_registry_and_errors(ttt):
  assert {"random", "mcts", "alphabeta", "solver", "policy", "az", "azab"} <= set(
      agents.kinds("jax"))
  with pytest.raises(ValueError, match="available: random, mcts, alphabeta"):
    agents.make("no_such_agent", ttt)
  with pytest.raises(ValueError, match="unknown agent 'human'"):
    agents.make("human", ttt)  # In the table, but a person, not an agent.
  with pytest.raises(ValueError, match="bad option"):
    agents.make("random", ttt, simulations=3)
  with pytest.raises(ValueError, match="simulations"):
    agents.make("mcts", ttt, simulations=0)
  agent = agents.make("mcts", ttt, simulations=7)
  assert agent.name == "mcts-7" and isinstance(agent, agents.Agent)


# -- Specs -----------------------------------------------------------------------------------------


def test_every_kind_parses_with_its_default():
  for name, kind in agents.KINDS.items():
    assert kind.summary and "\n" not in kind.summary and kind.plays in agents.PLAYS, name
    assert (kind.builder is None) == (kind.plays != "jax"), name
    spec = agents.parse_spec(name)
    assert spec == agents.Spec(name) and str(spec) == name
    assert name in agents.describe_kinds() and kind.help_line().startswith(kind.usage())
    if kind.number is None:
      assert spec.number() is None and spec.kwargs() == {}
      continue
    assert spec.number() == kind.default and spec.kwargs() == {kind.number: kind.default}
    if kind.builder is not None:  # The default is the builder's own, written once.
      assert inspect.signature(kind.builder).parameters[kind.number].default == kind.default
    spec = agents.parse_spec(f"{name.upper()}:{kind.minimum + 3}")
    assert spec == agents.Spec(name, kind.minimum + 3) and str(spec) == f"{name}:{kind.minimum + 3}"
    assert spec.number(fallback=99) == kind.minimum + 3
    assert agents.Spec(name).number(fallback=99) == 99


def test_spec_grammar_and_defaults():
  parse = agents.parse_spec
  assert parse("mcts:400") == agents.Spec("mcts", 400)
  assert parse("alphabeta:3").kwargs() == {"depth": 3}
  assert parse("az").kwargs() == {"simulations": 64}
  assert parse("az:128").kwargs() == {"simulations": 128}
  assert parse("azab:3").kwargs() == {"depth": 3} and parse("azab").number() == 3
  assert parse("random").kwargs() == {}
  assert parse("mcts").number() == 1000 and parse("alphabeta").number() == 2
  assert parse("solver").kwargs() == {"random_opening_moves": 2}
  assert parse("solver:0").kwargs() == {"random_opening_moves": 0}  # 0 is allowed here
  assert parse("openspiel-mcts:1000") == agents.Spec("openspiel-mcts", 1000)
  assert parse("openspiel-mcts").info.plays == "openspiel"
  assert parse("human").info.plays == "human"
  assert parse(" AZ ") == agents.Spec("az")
  spec = parse("mcts:50:c=0.5:max_depth=none")
  assert spec.kwargs() == {"simulations": 50, "c": 0.5, "max_depth": None}
  assert str(spec) == "mcts:50:c=0.5:max_depth=none" and parse(str(spec)) == spec
  assert parse("az:16:algorithm=puct").kwargs() == {"simulations": 16, "algorithm": "puct"}
  assert parse("solver:randomize=true").kwargs() == {"random_opening_moves": 2,
                                                     "randomize": True}
  assert parse("alphabeta:evaluation=zero").kwargs() == {"depth": 2, "evaluation": "zero"}


@pytest.mark.parametrize("text, message", [
    ("gnugo", "unknown player 'gnugo'; kinds: random, mcts, alphabeta, solver, policy, az, azab, "
     "openspiel-mcts, human"),
    ("", "unknown player ''"),
    ("random:3", "bad player 'random:3': random takes no number"),
    ("human:1", "human takes no number"),
    ("mcts:0", "bad player 'mcts:0': mcts takes a whole number of simulations >= 1"),
    ("mcts:x", "mcts takes a whole number of simulations >= 1 after the colon, e.g. mcts:1000"),
    ("alphabeta:-1", "alphabeta takes a whole number of depth >= 1"),
    ("solver:-1", "solver takes a whole number of random_opening_moves >= 0"),
    ("mcts:4:5", "mcts takes a whole number"),
    ("mcts:4:foo=1", "bad player 'mcts:4:foo=1': mcts has no option 'foo'; options: c, max_depth"),
    ("random:x=1", "random has no option 'x'; options: none"),
])
def test_bad_specs_name_the_spec_and_list_the_choices(text, message):
  with pytest.raises(ValueError) as err:
    agents.parse_spec(text)
  assert message in str(err.value)


def test_build_from_a_spec(ttt):
  assert agents.build("mcts:7", ttt).name == "mcts-7"
  assert agents.build(agents.parse_spec("alphabeta"), ttt).name == "alphabeta-d2"
  assert agents.build("mcts", ttt, fallback=5).name == "mcts-5"  # No strength: the fallback.
  assert agents.build("solver:0", ttt).name == "solver-r0"
  with pytest.raises(ValueError, match="openspiel-mcts:10 is not an azjax agent"):
    agents.build("openspiel-mcts:10", ttt)
  with pytest.raises(ValueError, match="az:8 needs a trained network"):
    agents.build("az:8", ttt)
  with pytest.raises(ValueError, match="search algorithm: unknown 'nope'"):
    agents.build("az:algorithm=nope", ttt, model=None, variables=None)


# -- Legality on every game ------------------------------------------------------------------------


@pytest.fixture(scope="module", params=GAME_PARAMS)
def game_and_positions(request):
  env = games.make(request.param)
  max_plies = min(env.max_game_length // 2, 40)
  states = random_positions(env, jax.random.key(1), NUM_POSITIONS, max_plies)
  live = ~np.asarray(states.terminated)
  assert live.sum() >= NUM_POSITIONS // 2  # The sample must mostly be live positions.
  return env, states


# Deep: the random agent is `base.uniform_legal_actions`, whose actions test_api's
# test_random_batched_play_to_the_end checks legal on every game in the full suite.
@pytest.mark.slow
@pytest.mark.parametrize("agent_name,kwargs", [
    pytest.param("random", {}, marks=pytest.mark.deep), ("mcts", {"simulations": 8})])
def test_actions_are_legal(game_and_positions, agent_name, kwargs):
  env, states = game_and_positions
  agent = agents.make(agent_name, env, **kwargs)
  actions = np.asarray(agent.act(states, jax.random.key(2)))
  assert actions.shape == (NUM_POSITIONS,) and actions.dtype == np.int32
  mask = np.asarray(states.legal_action_mask)
  live = ~np.asarray(states.terminated)
  assert np.all((0 <= actions) & (actions < env.num_actions))
  assert np.all(mask[np.arange(NUM_POSITIONS), actions][live])


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


@pytest.mark.slow
def test_mcts_beats_random_in_tic_tac_toe(ttt):
  mcts = agents.make("mcts", ttt, simulations=400)
  result = arena.play(ttt, mcts, agents.make("random", ttt), 40, jax.random.key(0))
  assert result.score >= 0.8, str(result)
  assert result.first[2] == 0, str(result)  # Never loses with the first move.
  assert result.illegal_a == result.illegal_b == 0


def test_network_agents_read_positions_in_their_own_encoding():
  """`reading_with`: a network agent of a Breakthrough run trained on the attack maps gets its
  six planes from positions of a game object that encodes two."""
  from azjax.games.breakthrough import Breakthrough
  mover = Breakthrough(rows=5, cols=5)
  attacks = Breakthrough(rows=5, cols=5, observation="attacks")
  seen = []

  def policy(states, key):
    seen.append(states.observation.shape)
    return np.argmax(states.legal_action_mask, axis=-1).astype(np.int32)

  states = jax.vmap(mover.init)(jax.random.split(jax.random.key(0), 3))
  agents.reading_with(attacks, agents.Agent("net", policy)).policy(states, jax.random.key(1))
  agents.reading_with(mover, agents.Agent("net", policy)).policy(states, jax.random.key(1))
  assert seen == [(3, 5, 5, 6), (3, 5, 5, 2)]
  plain = agents.Agent("net", policy)
  assert agents.reading_with(games.make("connect_four"), plain) is plain
