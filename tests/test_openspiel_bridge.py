"""Tests of the azjax <-> OpenSpiel match bridge."""

import jax
import jax.numpy as jnp
import pytest

pytest.importorskip("pyspiel")

from azjax import agents, games  # noqa: E402
from azjax.evaluate import openspiel_bridge as ob  # noqa: E402

GAMES = ("tic_tac_toe", "connect_four", "breakthrough", "checkers")


def test_breakthrough_notation_mirrors_ranks():
  env = games.make("breakthrough")
  az_keys = ob.azjax_keys(env, env.init(jax.random.key(0)))
  os_keys = ob.openspiel_keys(env, ob.openspiel_game(env).new_initial_state())
  assert set(az_keys) == set(os_keys)
  assert az_keys["a7a6"] == env.move_to_action(env.init(jax.random.key(0)), "a2a3")


def test_tic_tac_toe_rows_mirrored():
  env = games.make("tic_tac_toe")
  state = env.init(jax.random.key(0))
  keys = ob.azjax_keys(env, state)
  assert keys["(0,0)"] == env.move_to_action(state, "a3")  # OpenSpiel's top-left
  assert keys["(2,2)"] == env.move_to_action(state, "c1")


@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_random_vs_openspiel_random(name):
  env = games.make(name)
  wins, draws, losses = ob.play_vs_openspiel(env, agents.make("random", env),
                                             ob.openspiel_random_factory, 8, seed=0)
  assert wins + draws + losses == 8


# Deep: OpenSpiel's Python MCTS on the three larger games; tic-tac-toe checks the backend,
# and the C++ bots check the bridge on every game.
@pytest.mark.slow
@pytest.mark.parametrize("name,backend", [
    *((name, "cpp") for name in GAMES), ("tic_tac_toe", "python"),
    *(pytest.param(name, "python", marks=pytest.mark.deep) for name in GAMES[1:])])
def test_vs_small_mcts(name, backend):
  env = games.make(name)
  result = ob.play_vs_openspiel(env, agents.make("random", env),
                                ob.openspiel_mcts_factory(10, backend=backend), 2, seed=1)
  assert sum(result) == 2


@pytest.mark.slow
@pytest.mark.parametrize("name", ["connect_four", "checkers"])
def test_games_side_by_side_match_games_one_by_one(name):
  """Side by side, games end at different plies and keep their own results: with a
  deterministic agent and seeded bots, each game is the one it would be alone."""
  env = games.make(name)
  first_legal = agents.Agent(
      "first-legal", lambda s, k: jnp.argmax(s.legal_action_mask, -1).astype(jnp.int32))
  bots = ob.openspiel_mcts_factory(10)
  together = ob.match_vs_openspiel(env, first_legal, bots, 4, seed=0, side_by_side=True)
  alone = ob.match_vs_openspiel(env, first_legal, bots, 4, seed=0, side_by_side=False)
  assert together == alone
  with pytest.raises(ValueError, match="one agent player per bot"):
    ob.play_games(env, first_legal, [bots(ob.openspiel_game(env), 1, 0)], [0, 1], jax.random.key(0))


def test_cpp_mcts_with_many_simulations_beats_random():
  env = games.make("tic_tac_toe")
  wins, draws, losses = ob.play_vs_openspiel(env, agents.make("random", env),
                                             ob.openspiel_mcts_factory(500), 8, seed=3)
  # Random play draws about one game in twelve against it (2 of 24 in a check): never a win.
  assert wins == 0 and losses >= 5


def test_bot_against_bot_balances_colours_and_ranks_the_stronger():
  env = games.make("tic_tac_toe")
  result = ob.match_bots(env, ob.openspiel_mcts_factory(500), ob.openspiel_random_factory, 6,
                         seed=0, name_a="mcts500", name_b="random")
  assert result.num_games == 6 and sum(result.first) == sum(result.second) == 3
  assert result.losses == 0 and result.wins >= 4  # MCTS-500 never loses tic-tac-toe to random
  assert (result.agent_a, result.agent_b) == ("mcts500", "random")
  with pytest.raises(ValueError, match="even"):
    ob.match_bots(env, ob.openspiel_random_factory, ob.openspiel_random_factory, 3, seed=0)


def test_unknown_backend():
  with pytest.raises(ValueError, match="backend"):
    ob.openspiel_mcts_bot(ob.openspiel_game(games.make("tic_tac_toe")), 10, 0, backend="java")


@pytest.mark.slow
def test_alphabeta_beats_openspiel_random_at_connect_four():
  env = games.make("connect_four")
  wins, _, losses = ob.play_vs_openspiel(env, agents.make("alphabeta", env, depth=2),
                                         ob.openspiel_random_factory, 4, seed=2)
  assert wins >= 3 and losses == 0


def test_mismatch_is_detected(monkeypatch):
  env = games.make("tic_tac_toe")
  # A wrong bridge: identity rows would still be consistent, so drop a move instead.
  real = ob.azjax_keys
  monkeypatch.setattr(ob, "azjax_keys", lambda e, s: dict(list(real(e, s).items())[1:]))
  with pytest.raises(ob.NotationMismatch, match="legal moves differ"):
    ob.play_vs_openspiel(env, agents.make("random", env), ob.openspiel_random_factory, 2, seed=0)
