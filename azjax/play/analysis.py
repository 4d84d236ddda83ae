"""What an engine found in a position (`Analysis`), and its one line for people."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from azjax.games import base
from azjax.play.texts import side_name

State = Any  # A game's state pytree, live and unbatched.

# -- Analyses --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MoveStat:
  """One candidate move of an analysis."""

  move: str  # notation
  share: float | None  # share of the search spent on it (visits / total), if the engine searches
  value: float | None  # its value from the mover's side (engine's units, see Analysis)


@dataclasses.dataclass(frozen=True)
class Analysis:
  """What an engine found in one position, from the side of the player to move.

  `value_kind` says what `value` measures: "value" is an expected outcome in [-1, 1] (win +1,
  draw 0, loss -1), from a network or from random playouts; "score" is alpha-beta's
  evaluation (hand-written, material and advancement; or the network's value, in [-1, 1]
  for azab; or a TD-Leaf run's learned evaluation, in (-1, 1)), +-1000 meaning a forced win or
  loss; None means the engine has no opinion (random play). `pv` is the line the search
  expects (the move played first), where the engine has one.
  """

  action: int
  move: str
  value: float | None  # the value of the position, i.e. of the move played, mover's side
  value_kind: str | None
  top: tuple[MoveStat, ...]
  method: str  # what the engine did, e.g. "Gumbel search, 64 simulations"
  seconds: float = 0.0
  share_label: str = "visit share"  # what the moves' shares are: "visit share" or "policy"
  pv: tuple[str, ...] = ()  # the principal variation in notation (alpha-beta's `search`)


def value_text(env: base.Game, analysis: Analysis, player: int) -> str | None:
  """"value for black +0.42 (about 71% winning chances)", or None without an estimate."""
  side = side_name(env, player)
  if analysis.value is not None and analysis.value_kind == "value":
    v = float(analysis.value)
    return f"value for {side} {v:+.2f} (about {100 * (v + 1) / 2:.0f}% winning chances)"
  if analysis.value is not None and analysis.value_kind == "score":
    return f"evaluation for {side} {_score_text(analysis.value)}"
  return None


def describe(env: base.Game, analysis: Analysis, player: int, *, top: int = 4) -> str:
  """One line for people: the value estimate, the top moves of `analysis` by `player` and the
  line the engine expects (its principal variation), those it has."""
  value = value_text(env, analysis, player)
  parts = [value] if value else []
  moves = []
  for stat in analysis.top[:top]:
    text = stat.move
    if stat.share is not None:
      text += f" {100 * stat.share:.0f}%"
    if stat.value is not None:
      text += (f" (q {stat.value:+.2f})" if analysis.value_kind == "value"
               else f" ({_score_text(stat.value)})")
    moves.append(text)
  if moves:
    label = (f"top moves ({analysis.share_label})" if analysis.top[0].share is not None
             else "top moves")
    parts.append(f"{label}: " + ", ".join(moves))
  if analysis.pv:
    parts.append("principal variation: " + " ".join(analysis.pv))
  return "; ".join(parts) if parts else "no evaluation (random play)"


def _score_text(score: float) -> str:
  from azjax.alphabeta import WIN_SCORE

  if score >= WIN_SCORE - 100:
    return f"wins in {int(round(WIN_SCORE - score))} plies"
  if score <= -(WIN_SCORE - 100):
    return f"loses in {int(round(WIN_SCORE + score))} plies"
  return f"{score:+.2f}"


def _top_moves(env: base.Game, state: State, chosen: int, order_by: np.ndarray,
               shares: np.ndarray | None, values: np.ndarray | None,
               count: int = 8) -> tuple[MoveStat, ...]:
  """The legal moves sorted by `order_by` (descending), at most `count` of them.

  Among equals the move played comes first, then the better valued: Gumbel search often ends
  with a few moves at the same visit count and picks one of them by its Q-value and prior.
  """
  legal = env.legal_actions(state)

  def rank(a):
    value = np.nan_to_num(values[a], nan=-np.inf) if values is not None else 0.0
    return (-float(order_by[a]), a != chosen, -float(value))

  legal.sort(key=rank)
  stats = []
  for action in legal[:count]:
    stats.append(MoveStat(
        move=env.action_to_move(state, action),
        share=None if shares is None else float(shares[action]),
        value=None if values is None or not np.isfinite(values[action]) else float(values[action])))
  return tuple(stats)
