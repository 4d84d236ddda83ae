"""The source projects' benchmark: rollout-MCTS opponents whose simulations double rung by rung,
played by an agent and by the control (a 50-simulation rollout MCTS).

`play_ladder` yields each match as it is played; `azjax evaluate --ladder` records them as rows
of `matches.jsonl` (`ladder_rows` reads them back) and renders the markdown table of eval.md
from them. Ladders of runs evaluated before matches.jsonl existed live only in their eval.md;
`read_markdown_ladders` reads those tables (and only those).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import jax
import numpy as np

from azjax import agents, arena, files
from azjax.evaluate import tournament
from azjax.runs import layout

CONTROL_SIMULATIONS = 50  # The source projects' control: a 50-simulation rollout MCTS.
ENGINES = ("azjax", "openspiel")
MODE = "ladder"  # The `mode` of its rows in matches.jsonl.

HEADER = ("| player | rung (MCTS simulations) | games | W | D | L | score | 95% CI "
          "| seconds |\n|---|---|---|---|---|---|---|---|---|")

Ladder = dict[str, list[tuple[int, arena.MatchResult]]]  # {player: [(rung, result), ...]}


def rungs(low: int, high: int) -> list[int]:
  """`low, 2 low, 4 low, ...` up to `high` inclusive."""
  out = [low]
  while out[-1] * 2 <= high:
    out.append(out[-1] * 2)
  return out


def control(env, engine: str) -> tournament.Player:
  """The control player of `engine`'s ladder. It plays with the rungs' own engine: OpenSpiel's
  MCTS (with its solver) is stronger per simulation than azjax's plain UCT, so a mixed control
  would read low."""
  if engine == "openspiel":
    return tournament.OpenSpielMCTS(CONTROL_SIMULATIONS, label="control")
  mcts = agents.make("mcts", env, simulations=CONTROL_SIMULATIONS)
  return agents.Agent(f"control ({mcts.name})", mcts.policy)


def rung_opponent(env, engine: str, simulations: int) -> tournament.Player:
  if engine == "openspiel":
    return tournament.OpenSpielMCTS(simulations)
  return agents.make("mcts", env, simulations=simulations)


def play_ladder(env, players: Sequence[tournament.Player], simulations: Sequence[int],
                engine: str, games: int, key: jax.Array
                ) -> Iterator[tuple[int, tournament.Player, arena.MatchResult, float]]:
  """Every player plays every rung in turn: yields `(rung simulations, player, result,
  seconds)`."""
  if engine not in ENGINES:
    raise ValueError(f"ladder engine {engine!r}: use one of {', '.join(ENGINES)}")
  for sims in simulations:
    opponent = rung_opponent(env, engine, sims)
    for player in players:
      key, match_key = jax.random.split(key)
      result, seconds = tournament.timed_play(env, player, opponent, games, match_key)
      yield sims, player, result, seconds


def markdown_row(player: str, rung: int, result: arena.MatchResult, seconds: float) -> str:
  """A row under `HEADER`."""
  low, high = result.interval
  return (f"| {player} | {rung} | {result.num_games} | {result.wins} | {result.draws} "
          f"| {result.losses} | {result.score:.3f} | [{low:.3f}, {high:.3f}] | {seconds:.0f} |")


def average_line(name: str, played: Sequence[tuple[int, arena.MatchResult]]) -> str:
  """The ladder's headline for one player: its mean score over the rungs it played."""
  mean = np.mean([r.score for _, r in played])
  return (f"- {name}: average score {mean:.3f} over {len(played)} rung(s) "
          f"(MCTS {played[0][0]}..{played[-1][0]})")


def ladder_rows(rows: Sequence[Mapping[str, Any]], engine: str | None = None) -> Ladder:
  """`{player: [(rung, result)]}` from the ladder rows of matches.jsonl (of `engine`, or of
  every engine), rungs in increasing order; a later row for a player's rung replaces an
  earlier one, so a ladder played in pieces joins into one."""
  found: dict[str, dict[int, arena.MatchResult]] = {}
  for row in rows:
    if row.get("mode") == MODE and engine in (None, row.get("engine")):
      found.setdefault(row["player"], {})[int(row["rung"])] = arena.MatchResult.from_row(row)
  return {player: sorted(by_rung.items()) for player, by_rung in found.items()}


def read_markdown_ladders(text: str) -> Ladder:
  """The ladder tables (`HEADER`) of an older run's eval.md, as `ladder_rows` returns them;
  the tables hold no split by colour (`first`, `second` are zeros), which no plot needs."""
  header, rule = HEADER.split("\n")
  lines = text.splitlines()
  found: dict[str, dict[int, tuple[int, int, int]]] = {}
  for start, line in enumerate(lines):
    if line != header or start + 1 >= len(lines) or lines[start + 1] != rule:
      continue
    for row in lines[start + 2:]:
      if not row.startswith("|"):
        break
      cells = [c.strip() for c in row.strip().strip("|").split("|")]
      player, rung, _, wins, draws, losses = cells[:6]
      found.setdefault(player, {})[int(rung)] = (int(wins), int(draws), int(losses))
  return {player: [(rung, arena.MatchResult(agent_a=player, agent_b=f"mcts-{rung}", game="",
                                            wins=w, draws=d, losses=l, first=(0, 0, 0),
                                            second=(0, 0, 0)))
                   for rung, (w, d, l) in sorted(by_rung.items())]
          for player, by_rung in found.items()}


def read_run(run: str | Path) -> Ladder:
  """Every ladder match of a run directory: its matches.jsonl rows, or for a run evaluated
  before that file existed, the ladder tables of its eval.md.

  Raises:
    FileNotFoundError: the run has neither file.
    ValueError: the file holds no ladder.
  """
  run = Path(run)
  if (run / layout.MATCHES).exists():
    source = run / layout.MATCHES
    played = ladder_rows(files.read_jsonl(source))
  elif (run / layout.EVAL_TABLE).exists():
    source = run / layout.EVAL_TABLE
    played = read_markdown_ladders(source.read_text())
  else:
    raise FileNotFoundError(f"{run} has neither {layout.MATCHES} nor {layout.EVAL_TABLE}")
  if not played:
    raise ValueError(f"{source} has no ladder table")
  return played
