"""Matches between players of every origin: opponents from specs, round robins, and the Elo of
every network snapshot of a run over training.

The functions that play several matches are generators: each yields a match as soon as it is
played, so a caller prints it, records it (`match_row`, a JSONL row of `matches.jsonl`) and
keeps what was played when it is stopped (Ctrl-C) half way. `azjax.cli.evaluate` is their
command line; `azjax.evaluate.ladder` plays the rollout-MCTS ladder with them.

>>> env = games.make("tic_tac_toe")
>>> pool = [parse_opponent(env, "random"), parse_opponent(env, "mcts:50")]
>>> for i, j, result, seconds in round_robin(env, pool, games=20, key=jax.random.key(0)):
...   print(result)
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import jax

from azjax import agents, arena, games, runs
from azjax.runs import checkpoint


@dataclasses.dataclass(frozen=True)
class OpenSpielMCTS:
  """OpenSpiel's C++ rollout MCTS as an opponent (one bot per game, on the host), or
  as the ladder's control on the OpenSpiel engine (`label="control"`)."""

  simulations: int
  label: str = ""

  @property
  def name(self) -> str:
    name = f"openspiel-mcts{self.simulations}"
    return f"{self.label} ({name})" if self.label else name


Player = agents.Agent | OpenSpielMCTS

# The kinds an opponent may be (`azjax.agents.KINDS`): the baselines, played by azjax or by
# OpenSpiel; a network plays as a run directory.
OPPONENT_KINDS = tuple(k for k in agents.kinds("jax", "openspiel") if not agents.KINDS[k].network)


def parse_opponent(env, spec: str) -> Player:
  """The opponent of a player spec (`azjax.agents.parse_spec`: "random", "mcts:200",
  "alphabeta:2", "solver", ...): an azjax agent, or for "openspiel-mcts:<simulations>"
  OpenSpiel's bot, played on the host (see `play`).

  Raises:
    ValueError: for a bad spec, or a kind that cannot be an opponent here (the message lists
      those that can).
  """
  parsed = agents.parse_spec(spec)
  if parsed.kind not in OPPONENT_KINDS:
    raise ValueError(f"opponent {spec!r} ({parsed.info.summary}) cannot be an opponent here; "
                     f"use one of: {', '.join(OPPONENT_KINDS)}")
  if parsed.info.plays == "openspiel":
    return OpenSpielMCTS(parsed.number())
  return agents.build(parsed, env)


def play(env, player: Player, opponent: Player, games: int, key: jax.Array,
         openings: int = 0) -> arena.MatchResult:
  """A colour-balanced match: batched in JAX, or side by side against OpenSpiel's bots (or,
  OpenSpiel's bot against another, for the ladder's control on the OpenSpiel engine); with
  `openings`, from paired random openings of that many plies (`arena.paired_openings`).

  Raises:
    ValueError: `openings` with an OpenSpiel bot (its games start from the initial position;
      its rollouts already make them differ).
  """
  if isinstance(player, OpenSpielMCTS) or isinstance(opponent, OpenSpielMCTS):
    if openings:
      raise ValueError("random openings are for azjax agents' matches; OpenSpiel's bots play "
                       "from the initial position")
    from azjax.evaluate import openspiel_bridge  # noqa: PLC0415  (needs the open-spiel extra)

    seed = int(jax.random.randint(key, (), 0, 2**30))
    if isinstance(player, OpenSpielMCTS):
      if not isinstance(opponent, OpenSpielMCTS):
        raise ValueError("play: an OpenSpiel player needs an OpenSpiel opponent")
      return openspiel_bridge.match_bots(
          env, openspiel_bridge.openspiel_mcts_factory(player.simulations),
          openspiel_bridge.openspiel_mcts_factory(opponent.simulations), games, seed,
          name_a=player.name, name_b=opponent.name)
    return openspiel_bridge.match_vs_openspiel(
        env, player, openspiel_bridge.openspiel_mcts_factory(opponent.simulations), games,
        seed, bot_name=opponent.name)
  return arena.play(env, player, opponent, games, key, openings=openings)


def timed_play(env, player: Player, opponent: Player, games: int, key: jax.Array,
               openings: int = 0) -> tuple[arena.MatchResult, float]:
  """`play`, and the match's wall-clock seconds."""
  t0 = time.time()
  result = play(env, player, opponent, games, key, openings)
  return result, time.time() - t0


def match_row(result: arena.MatchResult, seconds: float, **extra: Any) -> dict[str, Any]:
  """A match as a row of `matches.jsonl`: the result (`MatchResult.to_row`), its wall time
  and `extra` (the mode that played it, the command, a ladder's rung, ...)."""
  return {**extra, **result.to_row(), "seconds": round(seconds, 3)}


# -- Round robin -----------------------------------------------------------------------------------


def round_robin(env, pool: Sequence[agents.Agent], games: int, key: jax.Array,
                openings: int = 0) -> Iterator[tuple[int, int, arena.MatchResult, float]]:
  """Every pair of `pool` plays a `games`-game match (`play`, with `openings`): yields
  `(i, j, result, seconds)`."""
  for i in range(len(pool)):
    for j in range(i + 1, len(pool)):
      key, match_key = jax.random.split(key)
      result, seconds = timed_play(env, pool[i], pool[j], games, match_key, openings)
      yield i, j, result, seconds


def num_pairs(n: int) -> int:
  return n * (n - 1) // 2


def score_matrix_markdown(names: Sequence[str], scores: dict[tuple[int, int], float]) -> str:
  """Row agent's score against the column agent (`#k` columns follow the row numbering)."""
  n = len(names)
  lines = ["| # | agent | " + " | ".join(f"#{j + 1}" for j in range(n)) + " |",
           "|---|---|" + "---|" * n]
  for i, name in enumerate(names):
    cells = ["-" if i == j else (f"{scores[i, j]:.3f}" if (i, j) in scores else "")
             for j in range(n)]
    lines.append(f"| {i + 1} | {name} | " + " | ".join(cells) + " |")
  return "\n".join(lines)


def pool_game(run_dirs: Sequence[str], game: str | None) -> tuple[str, dict[str, Any]]:
  """`(game, options)` that every run directory of a pool plays, read through its run kind
  (`azjax.runs.run_game`: an AlphaZero, TD-Leaf or KLENT run alike) before any network loads,
  or `game` when there is none. The options are the rules (`rules_options`): the runs may
  differ in their networks' encodings.

  Raises:
    ValueError: the runs play different games (or rules), or `game` names another game, or
      there is neither a run nor `game`.
    FileNotFoundError: a directory holds no run.
  """
  played = {d: runs.run_game(d) for d in run_dirs}
  ids = {d: (env.name, rules_options(env)) for d, env in played.items()}
  distinct = sorted(set(ids.values()))
  if game is not None and any(g[0] != game for g in distinct):
    raise ValueError(f"--game {game} but the run directories are "
                     + ", ".join(f"{d}: {g[0]}" for d, g in ids.items()))
  if len(distinct) > 1:
    raise ValueError("all agents of a pool must play the same game; got "
                     + ", ".join(f"{d}: {g[0]}{dict(g[1]) or ''}" for d, g in ids.items()))
  if not distinct and game is None:
    raise ValueError("a pool without a run directory needs --game to name the game")
  return (distinct[0][0], dict(distinct[0][1])) if distinct else (game, {})


def rules_options(env) -> tuple[tuple[str, Any], ...]:
  """A game object's options that are rules (not its `encoding_options`), sorted: runs equal
  in them play each other (`azjax.runs.load` gives each network its own encoding)."""
  return tuple(sorted((k, v) for k, v in env.options().items()
                      if k not in env.encoding_options))


def split_snapshot(item: str) -> tuple[str, int | None]:
  """`"runs/a@2500" -> ("runs/a", 2500)`: a run directory's network snapshot `models/2500`
  (the name `azjax.runs.load` gives it); any other item -> `(item, None)`."""
  head, sep, tail = item.rpartition("@")
  if sep and tail.isdigit() and Path(head).is_dir():
    return head, int(tail)
  return item, None


def build_pool(items: Sequence[str], load: Callable[[str, int | None], tuple],
               game: str | None = None):
  """`(env, agents, run directories)` of a pool: each item a run directory, or one of its
  snapshots as `RUN_DIR@ITERATION` (loaded with `load(run_dir, step) -> (env, agent)`), or an
  opponent spec (`parse_opponent`).

  Raises:
    ValueError: an item is none of these, an OpenSpiel bot (it plays only matches against an
      azjax agent), the games differ, an agent is listed twice, or fewer than two agents.
  """
  runs = {item: split_snapshot(item) for item in items}
  runs = {item: run for item, run in runs.items() if Path(run[0]).is_dir()}
  for item in items:
    if item not in runs and ("/" in item or Path(item).exists()):
      raise ValueError(f"--pool item {item!r}: no such run directory")
  run_dirs = [runs[item][0] for item in items if item in runs]
  game, options = pool_game(run_dirs, game)
  env = games.make(game, **options)
  pool = []
  for item in items:
    if item in runs:
      pool.append(load(*runs[item])[1])
      continue
    try:
      agent = parse_opponent(env, item)
    except ValueError as err:
      raise ValueError(f"--pool item {item!r} is neither a run directory nor an opponent "
                       f"spec: {err}") from None
    if isinstance(agent, OpenSpielMCTS):
      raise ValueError(f"--pool item {item!r}: OpenSpiel opponents play only in the default "
                       "mode and --ladder --engine openspiel")
    pool.append(agent)
  names = [a.name for a in pool]
  twice = sorted({n for n in names if names.count(n) > 1})
  if twice:
    raise ValueError(f"--pool lists the same agent twice: {', '.join(twice)}")
  if len(pool) < 2:
    raise ValueError("--pool needs at least two agents (with --checkpoint, if given)")
  return env, pool, run_dirs


# -- Elo over training -----------------------------------------------------------------------------


def snapshot_matches(env, run_dir: str | Path, abstract: Any, steps: Sequence[int],
                     player: Callable[[Any], agents.Policy], anchors: Sequence[agents.Agent],
                     games: int, key: jax.Array, openings: int = 0
                     ) -> Iterator[tuple[str, str, arena.MatchResult, float]]:
  """The matches that rate every network snapshot of a run (`models/<iteration>`): the
  anchors play each other, then each snapshot (named `it<iteration>`) plays every anchor and
  the snapshot before it. Yields `(name_a, name_b, result, seconds)`.

  The anchors tie the scale down (Elo 0 = uniform random when it is an anchor), the chain of
  neighbouring snapshots separates checkpoints that all beat the anchors. Every match reuses
  one compiled program: the networks' variables are arguments, not constants.

  Args:
    abstract: the network's abstract variables (`agents.load_network`), which the snapshots
      are read into.
    steps: the iterations of the snapshots to rate (`checkpoint.list_models`), in order.
    player: the policy of a snapshot's variables; it should be stochastic (two deterministic
      snapshots would replay the same two games), or the matches start from `openings`.
    openings: random plies before the agents play (`arena.paired_openings`).
  """
  def outcomes(policy_a, policy_b, key):
    return arena.match_outcomes(env, policy_a, policy_b, games, env.max_game_length, key,
                                openings)

  vs_anchor = {a.name: jax.jit(lambda v, k, p=a.policy: outcomes(player(v), p, k))
               for a in anchors}
  vs_snapshot = jax.jit(lambda va, vb, k: outcomes(player(va), player(vb), k))
  for i, a in enumerate(anchors):
    for b in anchors[i + 1:]:
      key, match_key = jax.random.split(key)
      result, seconds = timed_play(env, a, b, games, match_key, openings)
      yield a.name, b.name, result, seconds
  previous = None
  for step in steps:
    variables = checkpoint.load_model(run_dir, abstract, step=step)
    matches = [(a.name, lambda k, a=a: vs_anchor[a.name](variables, k)) for a in anchors]
    if previous is not None:
      matches.append((previous[0], lambda k, pv=previous[1]: vs_snapshot(variables, pv, k)))
    for opponent, fn in matches:
      key, match_key = jax.random.split(key)
      t0 = time.time()
      result = arena.summarize(env, f"it{step}", opponent, fn(match_key))
      yield f"it{step}", opponent, result, time.time() - t0
    previous = (f"it{step}", variables)


def fit_played(results: Sequence[arena.MatchResult]) -> arena.EloFit:
  """One Elo fit of the agents that played `results`, anchored at "random" if it played,
  else at the first agent.

  Raises:
    ValueError: no result, or a fit that is impossible (see `arena.fit_elo`).
  """
  if not results:
    raise ValueError("no match was played")
  names = list(dict.fromkeys(n for r in results for n in (r.agent_a, r.agent_b)))
  index = {n: i for i, n in enumerate(names)}
  rows = [r.elo_row(index[r.agent_a], index[r.agent_b]) for r in results]
  anchor = names.index("random") if "random" in names else 0
  return arena.fit_elo(names, rows, anchor=anchor)
