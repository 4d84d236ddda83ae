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
     "command": "azjax evaluate --checkpoint results/connect_four_cpu --solver ...",
     "earlier": [{"measure": "solver_mistake_rate", ..., "basis": "azjax/data/...strong.npz"}]}

The top level is the latest measurement; `earlier` keeps the latest of every other (measure,
basis), so scoring a run on a second position set or in a second pool loses nothing, and runs
are compared on a basis they all have even when each was scored last on a different one. A file
without `earlier` (written before session 80) is one measurement.
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
  """Writes `strength` as `run_dir/strength.json`'s latest measurement (atomically), keeping
  the run's measurements of other (measure, basis) under `earlier`; one of the same (measure,
  basis) is replaced."""
  path = Path(run_dir) / FILE
  path.parent.mkdir(parents=True, exist_ok=True)
  kept = [s for s in read_all(run_dir) if _key(s) != _key(strength)]
  data = dataclasses.asdict(strength)
  if kept:
    data["earlier"] = [dataclasses.asdict(s) for s in kept]
  files.write_atomic(path, json.dumps(data, indent=1) + "\n")
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
  """The latest measurement in `run_dir/strength.json`, or None when there is none or the file
  cannot be read."""
  measurements = read_all(run_dir)
  return measurements[0] if measurements else None


def read_all(run_dir: str | Path) -> tuple[Strength, ...]:
  """Every measurement in `run_dir/strength.json`, the latest first, one per (measure, basis);
  empty when there is no file or it cannot be read (an entry that cannot is skipped)."""
  try:
    data = json.loads((Path(run_dir) / FILE).read_text())
  except (OSError, ValueError):
    return ()
  if not isinstance(data, dict):
    return ()
  earlier = data.get("earlier", [])
  entries = [data] + (earlier if isinstance(earlier, list) else [])
  out = []
  for entry in entries:
    try:
      out.append(Strength(**{f.name: entry[f.name] for f in dataclasses.fields(Strength)}))
    except (KeyError, TypeError):
      continue
  return tuple(out)


def _key(strength: Strength) -> tuple[str, str]:
  """What makes two measurements comparable (and one replace the other): (measure, basis)."""
  return strength.measure, strength.basis


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
  """The runs measured on the (measure, basis) most of them share, best first, compared on the
  player they all have with the most simulations (the raw policy at least). Among bases shared
  by as many runs, the one more of the runs were measured on last wins."""
  groups: dict[tuple[str, str], dict[Path, Strength]] = {}
  latest: dict[tuple[str, str], int] = {}
  for run in map(Path, runs):
    for i, s in enumerate(read_all(run)):
      groups.setdefault(_key(s), {})[run] = s
      latest[_key(s)] = latest.get(_key(s), 0) + (i == 0)
  if not groups:
    return Ranking((), {}, None)
  basis = max(groups, key=lambda k: (len(groups[k]), latest[k], k))
  measured = groups[basis]
  shared = set.intersection(*(set(s.players) for s in measured.values()))
  if not shared:
    return Ranking((), measured, None)
  key = max(shared, key=_simulations)
  sign = 1.0 if next(iter(measured.values())).better == "lower" else -1.0
  order = tuple(sorted(measured, key=lambda r: sign * measured[r].players[key]))
  return Ranking(order, measured, key)
