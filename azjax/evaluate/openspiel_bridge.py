"""Play azjax agents against OpenSpiel bots, move by move, through move notation.

>>> env = azjax.games.make("breakthrough")
>>> agent = azjax.agents.make("alphabeta", env)
>>> wins, draws, losses = play_vs_openspiel(
...     env, agent, openspiel_mcts_factory(simulations=1000), num_games=20, seed=0)

Both sides keep their own state: the azjax side steps with its own `env.step`, the OpenSpiel
side with `state.apply_action`. Before every move the two legal move sets are translated to a
common key and **must be equal** (a `NotationMismatch` is raised otherwise), and the games must
end together with the same result. Player `p` of azjax is player `p` of OpenSpiel (player 0
moves first in both). Each game says which OpenSpiel game it matches and how its moves map to
the common key (`Game.openspiel_game`, `Game.openspiel_key`, `Game.openspiel_action_key`):
Breakthrough mirrors the ranks (OpenSpiel's player 0 starts at the top, so azjax's "a2a3" is
OpenSpiel's "a7a6"), checkers uses the same notation in both, Connect Four the column index,
tic-tac-toe OpenSpiel's "(row, col)" with row 0 at the top.

Bots come from a factory `bot_factory(game, player_id, seed) -> pyspiel.Bot`, called once per
game, e.g. `openspiel_random_factory` or `openspiel_mcts_factory(simulations)`. The games of a
match are played side by side (`play_games`): one batched call of the agent moves in every game
where it is to move, instead of one search per game and move.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import arena, console
from azjax.agents import Agent
from azjax.games import base

BotFactory = Callable[[Any, int, int], Any]  # (pyspiel game, player_id, seed) -> bot


class NotationMismatch(AssertionError):
  """The azjax and OpenSpiel states disagree (legal moves, termination or result)."""


# -- Game correspondence ---------------------------------------------------------------------------


def _pyspiel():
  """The optional `pyspiel` module (open-spiel), imported on use; `console.MissingExtra`
  naming the "openspiel" extra when it is not installed."""
  return console.require("pyspiel", "openspiel", "OpenSpiel's bots")


def openspiel_game(env: base.Game):
  """The OpenSpiel game matching `env` (same board size): `env.openspiel_game()`, loaded."""
  counterpart = env.openspiel_game()
  if counterpart is None:
    raise ValueError(f"openspiel_bridge: no OpenSpiel counterpart for {env.name!r}")
  pyspiel = _pyspiel()

  name, params = counterpart
  return pyspiel.load_game(name, params)


def azjax_keys(env: base.Game, state: Any) -> dict[str, int]:
  """Common key -> azjax action, over the legal actions of one (unbatched, host) state."""
  return {env.openspiel_key(state, a): a for a in env.legal_actions(state)}


def openspiel_keys(env: base.Game, state: Any) -> dict[str, int]:
  """Common key -> OpenSpiel action, over the legal actions of an OpenSpiel state."""
  player = state.current_player()
  return {env.openspiel_action_key(state.action_to_string(player, a)): a
          for a in state.legal_actions()}


# -- Bots ------------------------------------------------------------------------------------------


def openspiel_random_factory(game, player_id: int, seed: int):
  """`pyspiel.make_uniform_random_bot` as a bot factory."""
  pyspiel = _pyspiel()

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
    pyspiel = _pyspiel()

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
              game=None, max_steps: int | None = None) -> float:
  """Plays one game; returns the agent's result, +1, 0 or -1 (0 if cut at `max_steps`).

  Raises:
    NotationMismatch: when the two sides' legal moves, termination or result disagree.
  """
  return play_games(env, agent, [bot], [agent_player], key, game=game, max_steps=max_steps)[0]


def play_games(env: base.Game, agent: Agent, bots: Sequence[Any], agent_players: Sequence[int],
               key: jax.Array, *, game=None, max_steps: int | None = None) -> list[float]:
  """Plays `len(bots)` games side by side: in game `i` the agent is player `agent_players[i]`
  and `bots[i]` the other one.

  Every ply advances each unfinished game by one move: one batched `agent.act` over the boards
  where the agent is to move (a network searches them together, not one game after another),
  and each OpenSpiel bot moves in its own game. The two implementations are checked against
  each other before every move, in every game.

  Returns:
    each game's result from the agent's side, +1, 0 or -1 (0 if cut at `max_steps`).
  Raises:
    NotationMismatch: when the two sides' legal moves, termination or result disagree.
  """
  if len(bots) != len(agent_players) or not bots:
    raise ValueError(f"play_games: need one agent player per bot, got {len(agent_players)} "
                     f"for {len(bots)} bots")
  game = game or openspiel_game(env)
  max_steps = env.max_game_length if max_steps is None else max_steps
  num_games = len(bots)
  init_fn, step_fn = _batched(env)
  az_states = init_fn(jax.random.split(jax.random.key(0), num_games))
  os_states = [game.new_initial_state() for _ in range(num_games)]
  # Each game's azjax state when it ended: stepping a finished state zeroes its rewards.
  final: dict[int, Any] = {}
  for ply in range(max_steps):
    host = jax.device_get(az_states)
    for i in range(num_games):
      if i not in final and _ended(bool(host.terminated[i]), os_states[i], f"ply {ply}"):
        final[i] = _row(host, i)
    live = [i for i in range(num_games) if i not in final]
    if not live:
      break
    keys = {i: _common_keys(env, _row(host, i), os_states[i], ply) for i in live}
    movers = [i for i in live if int(host.current_player[i]) == agent_players[i]]
    chosen = _act(agent, az_states, movers, jax.random.fold_in(key, ply)) if movers else {}
    actions = np.zeros(num_games, np.int32)  # finished games: a no-op on a terminated state
    for i in live:
      az_keys, os_keys = keys[i]
      if i in chosen:
        move = {a: k for k, a in az_keys.items()}.get(chosen[i])
        if move is None:
          raise NotationMismatch(f"ply {ply}: agent {agent.name} played illegal action "
                                 f"{chosen[i]}")
        os_action = os_keys[move]
      else:
        os_action = int(bots[i].step(os_states[i]))
        move = {a: k for k, a in os_keys.items()}[os_action]
      os_states[i].apply_action(os_action)
      actions[i] = az_keys[move]
    az_states = step_fn(az_states, jnp.asarray(actions))
  host = jax.device_get(az_states)
  return [_result(env, final.get(i, _row(host, i)), os_states[i], agent_players[i])
          for i in range(num_games)]


@functools.lru_cache(maxsize=None)
def _batched(env: base.Game) -> tuple[Callable, Callable]:
  """Jitted batched `env.init` and `env.step`, compiled once per game (and batch size) rather
  than once per game played."""
  return jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def _act(agent: Agent, states: Any, games: list[int], key: jax.Array) -> dict[int, int]:
  """The agent's actions in `games` (indices into the batched `states`): only those boards are
  searched, gathered into a batch padded to a power of two, so a match compiles the agent for
  a few sizes and never searches a board where the bot is to move or the game is over."""
  size = 1 << (len(games) - 1).bit_length()
  index = jnp.asarray(games + games[:1] * (size - len(games)))
  actions = np.asarray(agent.act(jax.tree.map(lambda x: x[index], states), key))
  return {game: int(a) for game, a in zip(games, actions)}


def _row(batch: Any, i: int) -> Any:
  return jax.tree.map(lambda x: x[i], batch)


def _ended(az_terminated: bool, os_state: Any, when: str) -> bool:
  """Whether a game has ended; raises if only one side says so."""
  if az_terminated != os_state.is_terminal():
    raise NotationMismatch(f"{when}: termination differs: azjax {az_terminated}, OpenSpiel "
                           f"{os_state.is_terminal()}\n{os_state}")
  return az_terminated


def _common_keys(env: base.Game, host: Any, os_state: Any,
                 ply: int) -> tuple[dict[str, int], dict[str, int]]:
  """`(azjax_keys, openspiel_keys)` of one position, after checking that both sides agree on
  the player to move and the legal moves."""
  player = int(host.current_player)
  if player != os_state.current_player():
    raise NotationMismatch(f"ply {ply}: azjax player {player} to move, OpenSpiel "
                           f"{os_state.current_player()}\n{os_state}")
  az_keys, os_keys = azjax_keys(env, host), openspiel_keys(env, os_state)
  if set(az_keys) != set(os_keys):
    raise NotationMismatch(
        f"ply {ply}: legal moves differ: azjax only {sorted(set(az_keys) - set(os_keys))}, "
        f"OpenSpiel only {sorted(set(os_keys) - set(az_keys))}\n{os_state}")
  return az_keys, os_keys


def _result(env: base.Game, host: Any, os_state: Any, agent_player: int) -> float:
  """The agent's result of a finished (or cut) game, once both sides agree on it."""
  if not _ended(bool(host.terminated), os_state, "at the end"):
    return 0.0  # cut at max_steps
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
                       max_steps: int | None = None,
                       side_by_side: bool = True) -> arena.MatchResult:
  """`play_vs_openspiel` as an `arena.MatchResult` (with the per-colour split), so matches
  against OpenSpiel's bots go into the same tables, intervals and Elo fits as the others.

  `side_by_side`: play the games together (`play_games`, the default) or one after another.
  Together was 1.0-1.8x faster for 8-16 games on an idle 2-core CPU (`python -m
  benchmarks.openspiel_match`, `results/benchmarks/openspiel_match_cpu.md`).
  """
  if num_games <= 0 or num_games % 2:
    raise ValueError(f"num_games must be positive and even (half per colour), got {num_games}")
  game = openspiel_game(env)
  players = [i % 2 for i in range(num_games)]  # the agent's player in game i
  bots = [bot_factory(game, 1 - player, seed + i) for i, player in enumerate(players)]
  key = jax.random.key(seed)
  if side_by_side:
    results = play_games(env, agent, bots, players, key, game=game, max_steps=max_steps)
  else:
    results = [play_game(env, agent, bot, player, jax.random.fold_in(key, i), game=game,
                         max_steps=max_steps)
               for i, (bot, player) in enumerate(zip(bots, players))]
  return _match_result(env, agent.name, bot_name, list(zip(players, results)))


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
           "play_game", "play_games", "play_vs_openspiel"]
