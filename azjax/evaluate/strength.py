"""A run's measured strength: one number in `<run>/strength.json`, how it was measured, and the
order of a game's runs it gives (play's default opponent is the strongest, `azjax.play`).

Two measures write it:

* `azjax evaluate --checkpoint RUN --solver` (tic-tac-toe, Connect Four): the mistake rate
  against perfect play over the decisive positions of a solver-labelled set
  (`azjax.solver.benchmark`), lower is better. `value` is the player with the most simulations
  scored; `players` keeps every player's rate, so two runs scored at different simulation counts
  are compared on a player both have (the raw policy always is).
* `azjax evaluate --pool RUN_A RUN_B ...` (every game): the Elo of each run in the round robin,
  higher is better; runs are compared on it only within one pool (`basis` names it).

    {"measure": "solver_mistake_rate", "better": "lower", "value": 0.0121, "player": "search128",
     "players": {"policy": 0.0364, "search32": 0.0202, "search128": 0.0121},
     "basis": "results/solver_benchmark/connect_four.npz", "positions": 495,
     "how": "mistakes against perfect play on 495 decisive positions of ...",
     "command": "azjax evaluate --checkpoint results/connect_four_cpu --solver ..."}
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from azjax import files
from azjax.runs import layout

FILE = layout.STRENGTH
SOLVER = "solver_mistake_rate"
ELO = "elo"


@dataclasses.dataclass(frozen=True)
class Strength:
  """A run's measured strength (the fields of `strength.json`).

  Attributes:
    measure: `SOLVER` or `ELO`.
    better: "lower" or "higher".
    value: the headline number: `players[player]`.
    player: the player `value` is of ("search128", "policy"; "elo" for an Elo).
    players: every player's number under this measure.
    basis: what makes two numbers comparable: the positions file, or the pool's agents.
    positions: the decisive positions (solver) or the games played (Elo) behind the number.
    how: one line saying how it was measured.
    command: the command that measured it.
  """

  measure: str
  better: str
  value: float
  player: str
  players: Mapping[str, float]
  basis: str
  positions: int
  how: str
  command: str

  def number(self, key: str | None = None) -> str:
    """`players[key]` (default `player`) for people: "1.2%" or "Elo +24"."""
    value = self.players[key or self.player]
    return f"{100 * value:.1f}%" if self.measure == SOLVER else f"Elo {value:+.0f}"

  def label(self, key: str | None = None) -> str:
    """What the number is: "mistakes against perfect play (search128)" or "in pool A, B"."""
    if self.measure == SOLVER:
      return f"mistakes against perfect play ({key or self.player})"
    return f"in {self.basis}"

  def text(self, key: str | None = None) -> str:
    """"1.2% mistakes against perfect play (search128)", "Elo +24 in pool A, B"."""
    return f"{self.number(key)} {self.label(key)}"


def from_solver(results: Mapping[str, Mapping[str, Mapping[str, float]]], positions_path: str,
                command: str) -> Strength:
  """The strength of a solver benchmark's `results` (`{player: {"all": {"mistake_rate", ...}}}`,
  as `azjax.solver.benchmark` returns them): the player with the most simulations."""
  players = {name: float(parts["all"]["mistake_rate"]) for name, parts in results.items()}
  player = max(players, key=_simulations)
  decisive = int(results[player]["all"]["decisive"])
  return Strength(
      measure=SOLVER, better="lower", value=players[player], player=player, players=players,
      basis=str(positions_path), positions=decisive,
      how=f"mistakes against perfect play on the {decisive} decisive positions of "
      f"{positions_path} (azjax evaluate --solver), {player}", command=command)


def from_elo(name: str, ratings: Mapping[str, float], games: int, command: str) -> Strength:
  """The strength of agent `name` in an Elo fit of a pool (`ratings`: every agent's Elo)."""
  basis = "pool " + ", ".join(sorted(ratings))
  return Strength(measure=ELO, better="higher", value=float(ratings[name]), player=ELO,
                  players={ELO: float(ratings[name])}, basis=basis, positions=games,
                  how=f"Elo of {name} in a round robin ({basis}; {games} games a pair; azjax "
                  "evaluate --pool)", command=command)


def of_pool(items: Sequence[str], names: Sequence[str], results: Sequence[Any], games: int,
            command: str) -> list[tuple[str, Strength]]:
  """`(run directory, its Elo strength)` of each item of a finished round robin that is a run
  directory (not a snapshot, `RUN@ITERATION`): `items` and the agents' `names` in pool order,
  `results` its `arena.MatchResult`s. Empty when the results fit no Elo."""
  from azjax.evaluate import tournament  # noqa: PLC0415

  try:
    ratings = tournament.fit_played(list(results)).as_dict()
  except ValueError:
    return []
  return [(item, from_elo(name, ratings, games, command)) for item, name in zip(items, names)
          if Path(item).is_dir() and name in ratings]


def _simulations(player: str) -> int:
  """"search128" -> 128, "policy" -> 0."""
  digits = "".join(c for c in player if c.isdigit())
  return int(digits) if player.startswith("search") and digits else 0


def write(run_dir: str | Path, strength: Strength) -> Path:
  """Writes `run_dir/strength.json` (atomically)."""
  path = Path(run_dir) / FILE
  path.parent.mkdir(parents=True, exist_ok=True)
  files.write_atomic(path, json.dumps(dataclasses.asdict(strength), indent=1) + "\n")
  return path


def write_measured(run_dir: str | Path, strength: Strength, *,
                   out: str | Path | None = None) -> Path | None:
  """`write`, except to a run in the committed results/ that `out` (a command's `--out`) does not
  name, which is a record changed only on purpose: None then."""
  run = Path(run_dir)
  named = out is not None and Path(out).resolve() == run.resolve()
  if not named and layout.in_committed_results(run):
    return None
  return write(run, strength)


def read(run_dir: str | Path) -> Strength | None:
  """`run_dir/strength.json`, or None when there is none or it cannot be read."""
  path = Path(run_dir) / FILE
  try:
    data = json.loads(path.read_text())
    return Strength(**{f.name: data[f.name] for f in dataclasses.fields(Strength)})
  except (OSError, ValueError, KeyError, TypeError):
    return None


@dataclasses.dataclass(frozen=True)
class Ranking:
  """The order measured strength gives some runs: `order` (best first) over those compared on
  `key` (a player every one of them has) of one measure and basis; the rest are unmeasured."""

  order: tuple[Path, ...]
  strengths: Mapping[Path, Strength]
  key: str | None

  def rank(self, run: Path) -> int:
    """The run's place in `order`, or `len(order)` for a run not compared."""
    return self.order.index(run) if run in self.order else len(self.order)

  def text(self, run: Path) -> str:
    return self.strengths[run].text(self.key)

  def versus(self, run: Path, other: Path, other_name: str) -> str:
    """"2.0% against 5.9% for OTHER, mistakes against perfect play (search32)"."""
    mine, theirs = self.strengths[run], self.strengths[other]
    return (f"{mine.number(self.key)} against {theirs.number(self.key)} for {other_name}, "
            f"{mine.label(self.key)}")


def rank(runs: Sequence[Path | Any]) -> Ranking:
  """The runs with a `strength.json` of the most common (measure, basis), best first, compared
  on the player they all have with the most simulations (the raw policy at least)."""
  measured = {Path(r): s for r in runs if (s := read(r)) is not None}
  if not measured:
    return Ranking((), {}, None)
  groups: dict[tuple[str, str], list[Path]] = {}
  for run, s in measured.items():
    groups.setdefault((s.measure, s.basis), []).append(run)
  group = max(groups.values(), key=len)
  shared = set.intersection(*(set(measured[r].players) for r in group))
  if not shared:
    return Ranking((), measured, None)
  key = max(shared, key=_simulations)
  sign = 1.0 if measured[group[0]].better == "lower" else -1.0
  order = tuple(sorted(group, key=lambda r: sign * measured[r].players[key]))
  return Ranking(order, {r: measured[r] for r in group}, key)
