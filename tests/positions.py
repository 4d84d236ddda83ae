"""Scripted positions shared by several test modules (imported as `positions`: pytest puts this
folder on the path)."""

import jax

_jitted_steps = {}


def tic_tac_toe_position(env, moves):
  """The position after `moves` (notation) from the start (any game: its moves in notation)."""
  step = _jitted_steps.setdefault(env, jax.jit(env.step))
  state = env.init(jax.random.key(0))
  for move in moves:
    state = step(state, env.move_to_action(state, move))
  return state


# Checkers, o to move with two captures to choose from: c3e5 (over d4) and a3c5 (over b4).
CHECKERS_CHOICE = """
8 . . . . . . . x
7 . . . . . . . .
6 . . . . . x . .
5 . . . . . . . .
4 . x . x . . . .
3 o . o . . . . .
2 . . . . . . . .
1 . . . . . . . .
"""
