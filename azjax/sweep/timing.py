"""How long a sweep takes (`azjax sweep --dry-run`): each group's time per iteration as recorded
for a group of the same structure, size and devices in an earlier sweep's sweep.json, capped by
its minutes budget.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from azjax import sharding
from azjax.config import Config
from azjax.runs import checkpoint
from azjax.sweep import Group, _structure

# What sets a run's length and its evaluations, not the time of one training iteration (the
# recorded `GroupTiming.seconds_per_iteration` leaves evaluations and checkpoints out).
_UNTIMED_KEYS = ("iterations", "minutes", "eval_every", "eval_games", "eval_simulations",
                 "eval_mcts_simulations", "checkpoint_every", "solver_every",
                 "solver_positions")


def _timing_key(config: Config) -> Any:
  """What decides a group's time per iteration: its structure, whatever its length."""
  structure, clipped = _structure(config)
  return dataclasses.replace(structure, **{k: None for k in _UNTIMED_KEYS}), clipped


@dataclasses.dataclass(frozen=True)
class RecordedTiming:
  """One group's timing in an earlier sweep's sweep.json."""

  source: str  # "<sweep dir>, group <n>"
  key: Any  # `_timing_key` of the group's config
  runs: int
  mesh: str
  compile_seconds: float
  seconds_per_iteration: float


def recorded_timings(roots: Iterable[str | Path]) -> list[RecordedTiming]:
  """The group timings of the sweeps in `roots` (`<root>/<sweep>/sweep.json`), newest sweep first;
  sweeps that cannot be read, or groups stopped before a second iteration, are skipped."""
  found = []
  for path in sorted((p for root in roots for p in Path(root).glob("*/sweep.json")),
                     key=_mtime, reverse=True):
    try:
      info = json.loads(path.read_text())
      for index, (names, timing) in enumerate(zip(info["groups"], info.get("timings", []))):
        if timing["iterations"] < 2 or timing["seconds_per_iteration"] <= 0:
          continue
        config = checkpoint.read_config(path.parent / names[0])
        found.append(RecordedTiming(
            source=f"{path.parent}, group {index + 1}", key=_timing_key(config),
            runs=timing["runs"], mesh=timing["mesh"],
            compile_seconds=float(timing["compile_seconds"]),
            seconds_per_iteration=float(timing["seconds_per_iteration"])))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
      continue
  return found


def _mtime(path: Path) -> float:
  try:
    return path.stat().st_mtime
  except OSError:  # Gone since it was listed.
    return 0.0


@dataclasses.dataclass(frozen=True)
class TimeEstimate:
  """How long a group takes: `seconds` (None: unknown), and what that rests on."""

  seconds: float | None
  basis: str
  at_most: bool = False  # `seconds` is an upper bound (the minutes budget), compiling left out


def _duration(seconds: float) -> str:
  if seconds < 90:
    return f"{seconds:.0f} s"
  if seconds < 90 * 60:
    return f"{seconds / 60:.0f} min"
  return f"{seconds / 3600:.1f} h"


def estimate_time(group: Group, mesh: Any = None,
                  records: Sequence[RecordedTiming] = ()) -> TimeEstimate:
  """How long `group` trains: its iterations at the time per iteration recorded for a group of
  the same structure, size and devices in an earlier sweep (`records`), capped by the minutes
  budget; else at most the budget; else unknown. Evaluations and checkpoints are not counted.
  """
  config = group.config
  budget = config.minutes * 60 or None
  key, where = _timing_key(config), sharding.describe(mesh)
  record = next((r for r in records if r.key == key and r.runs == len(group)
                 and r.mesh == where), None)
  if record is not None:
    training = config.iterations * record.seconds_per_iteration
    if budget is not None and budget < training:
      basis = f"the {config.minutes:g}-minute budget"
      training = budget
    else:
      basis = f"{config.iterations} iterations x {record.seconds_per_iteration:.3g} s"
    return TimeEstimate(
        record.compile_seconds + training,
        f"{basis} + {record.compile_seconds:.0f} s compiling, as recorded in {record.source}")
  if budget is not None:
    return TimeEstimate(budget, f"the {config.minutes:g}-minute budget, plus compiling (no "
                        "recorded time for this group)", at_most=True)
  return TimeEstimate(None, f"no minutes budget and no recorded time for this group: up to "
                      f"{config.iterations} iterations (--minutes bounds it)")


def describe_time(estimate: TimeEstimate) -> str:
  """`"~4 min: <basis>"`, `"at most 15 min: <basis>"` or `"unknown: <basis>"`."""
  if estimate.seconds is None:
    return f"unknown: {estimate.basis}"
  prefix = "at most " if estimate.at_most else "~"
  return f"{prefix}{_duration(estimate.seconds)}: {estimate.basis}"


def describe_total(estimates: Sequence[TimeEstimate]) -> str:
  """One line on the whole sweep's time (its groups train one after another), saying what it
  rests on."""
  groups = f"{len(estimates)} groups one after another" if len(estimates) > 1 else "1 group"
  unknown = [str(i + 1) for i, e in enumerate(estimates) if e.seconds is None]
  known = sum(e.seconds for e in estimates if e.seconds is not None)
  if unknown:
    others = f"; the others ~{_duration(known)}" if len(unknown) < len(estimates) else ""
    return (f"time: unknown ({groups}; no minutes budget and no recorded time for "
            f"group{'s' * (len(unknown) > 1)} {', '.join(unknown)}{others})")
  bases = (["times per iteration recorded in earlier sweeps"]
           if not all(e.at_most for e in estimates) else [])
  bases += ["minutes budgets, plus compiling"] if any(e.at_most for e in estimates) else []
  bound = "at most " if any(e.at_most for e in estimates) else "~"
  return (f"time: {bound}{_duration(known)} in all ({groups}; from {' and '.join(bases)}; "
          "evaluations and checkpoints not counted)")
