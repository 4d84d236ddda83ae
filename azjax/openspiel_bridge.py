"""Play azjax agents against OpenSpiel bots, move by move, through move notation.

>>> env = azjax.games.make("breakthrough")
>>> agent = azjax.agents.make("alphabeta", env)
>>> wins, draws, losses = play_vs_openspiel(
...     env, agent, openspiel_mcts_factory(simulations=1000), num_games=20, seed=0)

Both sides keep their own state: the azjax side steps with its own `env.step`, the OpenSpiel
side with `state.apply_action`. Before every move the two legal move sets are translated to a
common key and **must be equal** (a `NotationMismatch` is raised otherwise), and the games must
end together with the same result. Player `p` of azjax is player `p` of OpenSpiel (player 0
moves first in both). The keys:

* Breakthrough: azjax's player 0 (white) starts at the bottom and moves up; OpenSpiel's player 0
  ("b") starts at the top (ranks 7-8) and moves down. The boards correspond by mirroring the
  ranks (`rank -> rows + 1 - rank`, files unchanged), so azjax's "a2a3" is OpenSpiel's "a7a6".
  OpenSpiel appends "*" to captures ("e4d5*"); it is dropped.
* Checkers: the same square names and orientation in both ("c3d4", hops "c3e5"); a multi-jump
  is one action per hop in both, the same player staying to move.
* Connect Four: the column index (azjax action = column "a".."g"; OpenSpiel "x3" / "o3").
* Tic-tac-toe: OpenSpiel prints "x(r,c)" with row 0 at the top; azjax's row 0 (rank 1) is at the
  bottom, so OpenSpiel's `(r, c)` is azjax's square `(2 - r) * 3 + c` (rows mirrored, as above).

Bots come from a factory `bot_factory(game, player_id, seed) -> pyspiel.Bot`, called once per
game, e.g. `openspiel_random_factory` or `openspiel_mcts_factory(simulations)`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import arena
from azjax.agents import Agent
from azjax.games import base

BotFactory = Callable[[Any, int, int], Any]  # (pyspiel game, player_id, seed) -> bot


class NotationMismatch(AssertionError):
  """The azjax and OpenSpiel states disagree (legal moves, termination or result)."""


# -- Game correspondence ---------------------------------------------------------------------------


def openspiel_game(env: base.Game):
  """The OpenSpiel game matching `env` (same board size)."""
  import pyspiel  # noqa: PLC0415 (optional dependency, imported on use)

  if env.name == "breakthrough":
    return pyspiel.load_game("breakthrough", {"rows": env.rows, "columns": env.cols})
  if env.name in ("checkers", "connect_four", "tic_tac_toe"):
    return pyspiel.load_game(env.name)
  raise ValueError(f"openspiel_bridge: no OpenSpiel counterpart for {env.name!r}")


def _mirror_ranks(move: str, rows: int) -> str:
  squares = base.parse_squares(move, rows, 26, "move")
  out = []
  for square in squares:
    row, col = divmod(square, 26)
    out.append(f"{base.FILES[col]}{rows - row}")
  return "".join(out)


def azjax_keys(env: base.Game, state: Any) -> dict[str, int]:
  """Common key -> azjax action, over the legal actions of one (unbatched, host) state."""
  actions = env.legal_actions(state)
  if env.name == "breakthrough":
    return {_mirror_ranks(env.action_to_move(state, a), env.rows): a for a in actions}
  if env.name == "checkers":
    return {env.action_to_move(state, a): a for a in actions}
  if env.name == "connect_four":
    return {str(a): a for a in actions}
  if env.name == "tic_tac_toe":
    return {f"({2 - a // 3},{a % 3})": a for a in actions}
  raise ValueError(f"openspiel_bridge: no notation bridge for {env.name!r}")


def openspiel_keys(env: base.Game, state: Any) -> dict[str, int]:
  """Common key -> OpenSpiel action, over the legal actions of an OpenSpiel state."""
  keys = {}
  for a in state.legal_actions():
    text = state.action_to_string(state.current_player(), a)
    if env.name == "breakthrough":
      text = text.rstrip("*")
    elif env.name in ("connect_four", "tic_tac_toe"):
      text = text[1:]  # drop the player's mark, "x" or "o"
    keys[text] = a
  return keys


# -- Bots ------------------------------------------------------------------------------------------


def openspiel_random_factory(game, player_id: int, seed: int):
  """`pyspiel.make_uniform_random_bot` as a bot factory."""
  import pyspiel  # noqa: PLC0415

  del game
  return pyspiel.make_uniform_random_bot(player_id, seed)


def openspiel_mcts_bot(game, simulations: int, seed: int, *, uct_c: float = 2.0,
                       rollouts: int = 1, solve: bool = True, backend: str = "cpp"):
  """OpenSpiel's `MCTSBot` with `RandomRolloutEvaluator` (random playouts).

  `backend="cpp"` is the C++ bot (`pyspiel.MCTSBot`, about 15k simulations/s on Breakthrough
  8x8 here, so 10k-simulation opponents are practical); "python" is
  `open_spiel.python.algorithms.mcts`, the same algorithm some 50x slower.
  """
  if backend == "cpp":
    import pyspiel  # noqa: PLC0415

    evaluator = pyspiel.RandomRolloutEvaluator(rollouts, seed)
    return pyspiel.MCTSBot(game, evaluator, uct_c, simulations, 1000, solve, seed, False)
  if backend != "python":
    raise ValueError(f"openspiel_mcts_bot: backend must be 'cpp' or 'python', got {backend!r}")
  from open_spiel.python.algorithms import mcts  # noqa: PLC0415

  rng = np.random.RandomState(seed)
  evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rng)
  return mcts.MCTSBot(game, uct_c, simulations, evaluator, solve=solve, random_state=rng)


def openspiel_mcts_factory(simulations: int, **kwargs) -> BotFactory:
  """A bot factory of `openspiel_mcts_bot(game, simulations, seed, **kwargs)`."""

  def factory(game, player_id: int, seed: int):
    del player_id
    return openspiel_mcts_bot(game, simulations, seed, **kwargs)

  return factory


# -- Matches ---------------------------------------------------------------------------------------


def play_game(env: base.Game, agent: Agent, bot, agent_player: int, key: jax.Array, *,
              game=None, step_fn=None, max_steps: int | None = None) -> float:
  """Plays one game; returns the agent's result, +1, 0 or -1 (0 if cut at `max_steps`).

  Raises:
    NotationMismatch: when the two sides' legal moves, termination or result disagree.
  """
  game = game or openspiel_game(env)
  step_fn = step_fn or jax.jit(env.step)
  max_steps = env.max_game_length if max_steps is None else max_steps
  az_state = env.init(jax.random.key(0))
  os_state = game.new_initial_state()
  for ply in range(max_steps):
    host = jax.device_get(az_state)
    if bool(host.terminated) or os_state.is_terminal():
      break
    player = int(host.current_player)
    if player != os_state.current_player():
      raise NotationMismatch(f"ply {ply}: azjax player {player} to move, OpenSpiel "
                             f"{os_state.current_player()}\n{os_state}")
    az_keys, os_keys = azjax_keys(env, host), openspiel_keys(env, os_state)
    if set(az_keys) != set(os_keys):
      raise NotationMismatch(
          f"ply {ply}: legal moves differ: azjax only {sorted(set(az_keys) - set(os_keys))}, "
          f"OpenSpiel only {sorted(set(os_keys) - set(az_keys))}\n{os_state}")
    if player == agent_player:
      batched = jax.tree.map(lambda x: jnp.asarray(x)[None], az_state)
      az_action = int(agent.act(batched, jax.random.fold_in(key, ply))[0])
      move = {a: k for k, a in az_keys.items()}.get(az_action)
      if move is None:
        raise NotationMismatch(f"ply {ply}: agent {agent.name} played illegal action {az_action}")
      os_action = os_keys[move]
    else:
      os_action = int(bot.step(os_state))
      move = {a: k for k, a in os_keys.items()}[os_action]
      az_action = az_keys[move]
    os_state.apply_action(os_action)
    az_state = step_fn(az_state, jnp.int32(az_action))
  host = jax.device_get(az_state)
  if bool(host.terminated) != os_state.is_terminal():
    if not bool(host.terminated) and not os_state.is_terminal():
      return 0.0  # cut at max_steps
    raise NotationMismatch(f"termination differs: azjax {bool(host.terminated)}, OpenSpiel "
                           f"{os_state.is_terminal()}\n{os_state}")
  az_result = float(host.rewards[agent_player])
  os_result = float(os_state.returns()[agent_player])
  if az_result != os_result:
    raise NotationMismatch(f"results differ: azjax {az_result}, OpenSpiel {os_result}")
  return az_result


def play_vs_openspiel(env: base.Game, agent: Agent, bot_factory: BotFactory, num_games: int,
                      seed: int, *, max_steps: int | None = None) -> tuple[int, int, int]:
  """Plays `num_games` games of `agent` against OpenSpiel bots, half with each colour.

  The agent is player 0 in games `0, 2, 4, ...` and player 1 in the others; each game gets a
  fresh bot `bot_factory(game, bot_player, seed + game_index)`.

  Returns:
    `(wins, draws, losses)` from the agent's side (games cut at `max_steps` count as draws).
  Raises:
    NotationMismatch: if the two implementations ever disagree.
  """
  if num_games <= 0 or num_games % 2:
    raise ValueError(f"num_games must be positive and even (half per colour), got {num_games}")
  result = match_vs_openspiel(env, agent, bot_factory, num_games, seed, max_steps=max_steps)
  return result.wins, result.draws, result.losses


def match_vs_openspiel(env: base.Game, agent: Agent, bot_factory: BotFactory, num_games: int,
                       seed: int, *, bot_name: str = "openspiel-bot",
                       max_steps: int | None = None) -> arena.MatchResult:
  """`play_vs_openspiel` as an `arena.MatchResult` (with the per-colour split), so matches
  against OpenSpiel's bots go into the same tables, intervals and Elo fits as the others."""
  if num_games <= 0 or num_games % 2:
    raise ValueError(f"num_games must be positive and even (half per colour), got {num_games}")
  game = openspiel_game(env)
  step_fn = jax.jit(env.step)
  key = jax.random.key(seed)
  results = []  # (the agent's player, its result)
  for i in range(num_games):
    agent_player = i % 2
    bot = bot_factory(game, 1 - agent_player, seed + i)
    results.append((agent_player, play_game(
        env, agent, bot, agent_player, jax.random.fold_in(key, i), game=game, step_fn=step_fn,
        max_steps=max_steps)))
  return _match_result(env, agent.name, bot_name, results)


def match_bots(env: base.Game, factory_a: BotFactory, factory_b: BotFactory, num_games: int,
               seed: int, *, name_a: str = "openspiel-bot-a",
               name_b: str = "openspiel-bot-b") -> arena.MatchResult:
  """Two OpenSpiel bots against each other on `env`'s game, half the games with each colour:
  bot a is player 0 in games `0, 2, ...`. For controls that must use the same engine as their
  opponents (a 50-simulation OpenSpiel MCTS against the OpenSpiel ladder)."""
  if num_games <= 0 or num_games % 2:
    raise ValueError(f"num_games must be positive and even (half per colour), got {num_games}")
  game = openspiel_game(env)
  results = []  # (bot a's player, its result)
  for i in range(num_games):
    a_player = i % 2
    bots = [None, None]
    bots[a_player] = factory_a(game, a_player, seed + i)
    bots[1 - a_player] = factory_b(game, 1 - a_player, seed + num_games + i)
    state = game.new_initial_state()
    while not state.is_terminal():
      state.apply_action(int(bots[state.current_player()].step(state)))
    results.append((a_player, state.returns()[a_player]))
  return _match_result(env, name_a, name_b, results)


def _match_result(env: base.Game, name_a: str, name_b: str,
                  results: Sequence[tuple[int, float]]) -> arena.MatchResult:
  """The `arena.MatchResult` of games given as `(a's player, a's result)`, with the split by
  the colour a played."""
  def wdl(player: int) -> tuple[int, int, int]:
    scores = [r for p, r in results if p == player]
    return (sum(r > 0 for r in scores), sum(r == 0 for r in scores),
            sum(r < 0 for r in scores))

  first, second = wdl(0), wdl(1)
  return arena.MatchResult(agent_a=name_a, agent_b=name_b, game=env.name,
                           wins=first[0] + second[0], draws=first[1] + second[1],
                           losses=first[2] + second[2], first=first, second=second)


__all__ = ["NotationMismatch", "azjax_keys", "match_bots", "match_vs_openspiel", "openspiel_game",
           "openspiel_keys",
           "openspiel_mcts_bot", "openspiel_mcts_factory", "openspiel_random_factory",
           "play_game", "play_vs_openspiel"]
