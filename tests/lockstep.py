"""Random games played in lockstep with OpenSpiel, for the games whose OpenSpiel board prints as
rows of ".", "x" (player 0) and "o" with the top row first: tic-tac-toe and Connect Four
(imported as `lockstep`: pytest puts this folder on the path)."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

_batch_steps = {}


def play_random_games(env, spiel_game, rows: int, cols: int, to_spiel: Callable[[int], int],
                      num_games: int = 100, seed: int = 0) -> np.ndarray:
  """Plays `num_games` uniformly random games in both implementations at once and asserts, every
  ply, the same board, mover, legal moves and end. `to_spiel` maps azjax's action to OpenSpiel's.

  Returns the games' returns, (num_games, 2), after checking they are OpenSpiel's.
  """
  batch_step = _batch_steps.setdefault(env, jax.jit(jax.vmap(env.step)))
  rng = np.random.default_rng(seed)
  spiel = [spiel_game.new_initial_state() for _ in range(num_games)]
  states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), num_games))
  returns = np.zeros((num_games, 2))
  for _ in range(rows * cols + 1):
    masks = np.asarray(states.legal_action_mask)
    boards = np.asarray(states.board, np.int64)
    players = np.asarray(states.current_player)
    actions = np.zeros(num_games, np.int32)
    for g, s in enumerate(spiel):
      assert bool(states.terminated[g]) == s.is_terminal()
      absolute = boards[g] * (1 if players[g] == 0 else -1)  # The board is in the mover's frame.
      ours = "\n".join("".join(".xo"[v] for v in row)
                       for row in np.where(absolute == -1, 2, absolute).reshape(rows, cols)[::-1])
      assert ours == str(s).strip(), (g, ours, str(s))
      if s.is_terminal():
        continue
      assert int(players[g]) == s.current_player()
      legal = np.flatnonzero(masks[g])
      assert sorted(to_spiel(int(a)) for a in legal) == s.legal_actions()
      actions[g] = rng.choice(legal)
      s.apply_action(to_spiel(int(actions[g])))
    states = batch_step(states, jnp.asarray(actions))
    returns += np.asarray(states.rewards)
  assert all(s.is_terminal() for s in spiel)
  np.testing.assert_array_equal(returns, [s.returns() for s in spiel])
  return returns
