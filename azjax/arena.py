"""Arena: batched matches between two agents, with colour swapping, intervals and Elo.

>>> env = azjax.games.make("tic_tac_toe")
>>> result = play(env, agents.make("mcts", env, simulations=200), agents.make("random", env),
...               num_games=100, key=jax.random.key(0))
>>> print(result)                         # W/D/L from agent a's side, per colour, score, 95% CI
>>> fit_elo(["random", "mcts-200"], [result.elo_row(1, 0)])

A match is one `jax.jit` of one `lax.while_loop` over plies: all games of the match step
together, and at every ply **both** agents compute actions for the whole batch; each game takes
the action of the agent whose seat is to move (`current_player == seat of a`). A ply therefore
costs `cost_a(B) + cost_b(B)`, about twice the work of running each agent only on the games
where it moves (and finished games keep being fed to the agents until the last game ends): this
is the price of one fixed-shape loop that also handles games where one player moves several
times in a row (checkers multi-jumps), where the movers of a ply are not a fixed half of the
batch.

Two noiseless agents (a network's evaluation search) are deterministic, so from the initial
position their match is one game per seating, repeated; `openings` starts each pair of games
(one per seating) from its own random opening instead (`paired_openings`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import selfplay
from azjax.agents import Agent, Policy
from azjax.games import base

# Two-sided 95% normal quantile.
Z95 = 1.959963984540054


# -- Match results ---------------------------------------------------------------------------------


def wilson_interval(score: float, n: int, z: float = Z95) -> tuple[float, float]:
  """Wilson score interval for a proportion `score` observed over `n` trials.

  Used on a match score with draws counted as half a win, i.e. as if each game were a Bernoulli
  trial with success probability `score`. A draw has less variance than a coin flip, so with
  many draws the interval is conservative (wider than needed); unlike the normal approximation
  it stays inside [0, 1] and is not degenerate at scores of 0 or 1.
  """
  if n <= 0:
    return (0.0, 1.0)
  z2 = z * z
  denom = 1.0 + z2 / n
  center = (score + z2 / (2.0 * n)) / denom
  half = z / denom * math.sqrt(score * (1.0 - score) / n + z2 / (4.0 * n * n))
  # The bounds always contain the observed score (at 0 or 1 rounding could put them a hair
  # inside it).
  return (max(0.0, min(center - half, score)), min(1.0, max(center + half, score)))


def elo_from_score(score: Any, eps: float = 1e-3) -> Any:
  """Elo difference `400 log10(s / (1 - s))` implied by an expected score `s`.

  `s` is clipped to `[eps, 1 - eps]` (by default +-1200 Elo at most), so a 100% score gives a
  large finite number rather than infinity. Works on floats and numpy arrays.
  """
  s = np.clip(np.asarray(score, dtype=np.float64), eps, 1.0 - eps)
  elo = 400.0 * np.log10(s / (1.0 - s))
  return float(elo) if elo.ndim == 0 else elo


@dataclasses.dataclass(frozen=True)
class MatchResult:
  """Outcome of a match, from agent a's side.

  Attributes:
    agent_a, agent_b, game: names.
    wins, draws, losses: a's results over all games.
    first: `(wins, draws, losses)` of a in the games where a was player 0 (moved first).
    second: the same where a was player 1.
    truncated: games still running at `max_steps`; counted as draws.
    illegal_a, illegal_b: illegal actions played by each agent (each loses its game; a correct
      agent has 0).
    mean_length: mean number of plies per game.
  """

  agent_a: str
  agent_b: str
  game: str
  wins: int
  draws: int
  losses: int
  first: tuple[int, int, int]
  second: tuple[int, int, int]
  truncated: int = 0
  illegal_a: int = 0
  illegal_b: int = 0
  mean_length: float = float("nan")

  MARKDOWN_HEADER = ("| game | agent a | agent b | games | W | D | L | W/D/L as first "
                     "| W/D/L as second | score | 95% CI | Elo diff |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|---|")

  @property
  def num_games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def score(self) -> float:
    """`(wins + draws / 2) / games`."""
    return (self.wins + 0.5 * self.draws) / max(self.num_games, 1)

  @property
  def interval(self) -> tuple[float, float]:
    """95% Wilson interval on `score`, draws counted as half a win (see `wilson_interval`)."""
    return wilson_interval(self.score, self.num_games)

  @property
  def elo(self) -> float:
    """Elo difference of a over b implied by the score (`elo_from_score`)."""
    return elo_from_score(self.score)

  @property
  def elo_interval(self) -> tuple[float, float]:
    """The 95% score interval mapped through `elo_from_score`."""
    low, high = self.interval
    return (elo_from_score(low), elo_from_score(high))

  def elo_row(self, index_a: int, index_b: int) -> tuple[int, int, int, int, int]:
    """This match as a `fit_elo` result row `(i, j, wins_i, draws, wins_j)`."""
    return (index_a, index_b, self.wins, self.draws, self.losses)

  def markdown_row(self) -> str:
    """One row under `MatchResult.MARKDOWN_HEADER`."""
    low, high = self.interval
    wdl = lambda t: "/".join(str(x) for x in t)  # noqa: E731
    return (f"| {self.game} | {self.agent_a} | {self.agent_b} | {self.num_games} | {self.wins} "
            f"| {self.draws} | {self.losses} | {wdl(self.first)} | {wdl(self.second)} "
            f"| {self.score:.3f} | [{low:.3f}, {high:.3f}] | {self.elo:+.0f} |")

  def to_row(self) -> dict[str, Any]:
    """This result as a JSON row (`from_row` reads it back), with its score and interval."""
    low, high = self.interval
    return {**dataclasses.asdict(self), "first": list(self.first), "second": list(self.second),
            "score": self.score, "low": low, "high": high}

  @classmethod
  def from_row(cls, row: dict[str, Any]) -> "MatchResult":
    """The result a `to_row` row holds (its other keys, such as the score, are ignored)."""
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in row.items() if k in fields}
    return cls(**{**values, "first": tuple(values["first"]), "second": tuple(values["second"])})

  def __str__(self) -> str:
    low, high = self.interval
    text = (f"{self.game}: {self.agent_a} vs {self.agent_b}: {self.num_games} games, "
            f"W/D/L {self.wins}/{self.draws}/{self.losses} "
            f"(first {'/'.join(map(str, self.first))}, second {'/'.join(map(str, self.second))}), "
            f"score {self.score:.3f} [95% CI {low:.3f}, {high:.3f}], Elo {self.elo:+.0f}")
    extras = []
    if self.truncated:
      extras.append(f"{self.truncated} truncated")
    if self.illegal_a or self.illegal_b:
      extras.append(f"illegal moves a/b {self.illegal_a}/{self.illegal_b}")
    return text + (f" ({', '.join(extras)})" if extras else "")


# -- Playing a match -------------------------------------------------------------------------------


def paired_openings(env: base.Game, key: jax.Array, num_games: int, plies: int) -> Any:
  """`num_games` start states (a batched State): `num_games / 2` openings of `plies` uniformly
  random moves (`selfplay.random_opening`, stopping before a move that would end the game),
  game `i` and game `i + num_games / 2` from the same one, so every opening is played once
  with each seating.

  Why: two noiseless searches of fixed networks are deterministic, so from the initial
  position a match between them is two distinct games however many are played; the openings
  make the games distinct and keep the colours fair.
  """
  half = jax.vmap(lambda k: selfplay.random_opening(env, k, plies, exact=True))(
      jax.random.split(key, num_games // 2))
  return jax.tree.map(lambda x: jnp.concatenate([x, x]), half)


def match_outcomes(env: base.Game, policy_a: Policy, policy_b: Policy, num_games: int,
                   max_steps: int | jax.Array, key: jax.Array,
                   openings: int = 0) -> dict[str, jax.Array]:
  """The whole match as one `while_loop` over plies (see the module docstring); traceable.

  Not jitted itself, so it can sit inside a larger jit, e.g. with a network's variables as an
  argument of the jitted function rather than constants (`azjax.evaluate.evaluators` does this).
  `summarize` turns its output into a `MatchResult`; `play` does both.

  Args:
    env: the game.
    policy_a, policy_b: batched policies `(states [n], key) -> int32[n]`.
    num_games: `n`, even (not checked here; `play` checks). Games `[0, n/2)` seat a as
      player 0, games `[n/2, n)` as player 1.
    max_steps: ply limit (Python int or traced int32).
    key: PRNG key, consumed.
    openings: start from `paired_openings` of this many random plies (0: the initial
      position; a game with random initial states, such as Slider's obstacles, then starts
      each game from its own).
  Returns:
    Per game (`[n]`): `outcome` (a's total reward: +1, 0 or -1), `seat_a`, `terminated`,
    `length` (plies the agents played, after the opening), `illegal_a`, `illegal_b` (illegal
    actions played).
  """
  init_key, play_key = jax.random.split(key)
  if openings:
    states = paired_openings(env, init_key, num_games, openings)
  else:
    states = jax.vmap(env.init)(jax.random.split(init_key, num_games))
  seat_a = (jnp.arange(num_games) >= num_games // 2).astype(jnp.int32)
  zeros = jnp.zeros(num_games, jnp.int32)

  def cond(carry):
    states, _, ply, *_ = carry
    return (ply < max_steps) & ~jnp.all(states.terminated)

  def body(carry):
    states, key, ply, returns, length, illegal_a, illegal_b = carry
    key, key_a, key_b = jax.random.split(key, 3)
    live = ~states.terminated
    a_to_move = states.current_player == seat_a
    actions = jnp.where(a_to_move, policy_a(states, key_a), policy_b(states, key_b))
    actions = actions.astype(jnp.int32)
    legal = jnp.take_along_axis(states.legal_action_mask, actions[:, None], axis=1)[:, 0]
    illegal = live & ~legal
    next_states = jax.vmap(env.step)(states, actions)
    return (next_states, key, ply + 1, returns + next_states.rewards,
            length + live.astype(jnp.int32),
            illegal_a + (illegal & a_to_move).astype(jnp.int32),
            illegal_b + (illegal & ~a_to_move).astype(jnp.int32))

  carry = (states, play_key, jnp.int32(0), jnp.zeros((num_games, 2), jnp.float32), zeros, zeros,
           zeros)
  states, _, _, returns, length, illegal_a, illegal_b = jax.lax.while_loop(cond, body, carry)
  outcome = jnp.take_along_axis(returns, seat_a[:, None], axis=1)[:, 0]
  return dict(outcome=outcome, seat_a=seat_a, terminated=states.terminated, length=length,
              illegal_a=illegal_a, illegal_b=illegal_b)


# Compiled once per (env, policy_a, policy_b, num_games): games and policies hash by identity,
# so a match between the same two Agent objects reuses its compilation (`max_steps` is traced).
_match_jit = jax.jit(match_outcomes, static_argnums=(0, 1, 2, 3), static_argnames=("openings",))


def summarize(env: base.Game, name_a: str, name_b: str,
              outcomes: dict[str, Any]) -> MatchResult:
  """The `MatchResult` of `match_outcomes`' per-game arrays (fetched to the host)."""
  out = jax.device_get(outcomes)
  outcome, seat_a = np.asarray(out["outcome"]), np.asarray(out["seat_a"])

  def wdl(mask: np.ndarray) -> tuple[int, int, int]:
    o = outcome[mask]
    return (int(np.sum(o > 0)), int(np.sum(o == 0)), int(np.sum(o < 0)))

  wins, draws, losses = wdl(np.ones_like(seat_a, dtype=bool))
  return MatchResult(
      agent_a=name_a, agent_b=name_b, game=env.name,
      wins=wins, draws=draws, losses=losses, first=wdl(seat_a == 0), second=wdl(seat_a == 1),
      truncated=int(np.sum(~np.asarray(out["terminated"]))),
      illegal_a=int(np.sum(out["illegal_a"])), illegal_b=int(np.sum(out["illegal_b"])),
      mean_length=float(np.mean(out["length"])))


def play(env: base.Game, agent_a: Agent, agent_b: Agent, num_games: int, key: jax.Array, *,
         max_steps: int | None = None, openings: int = 0) -> MatchResult:
  """Plays `num_games` games between `agent_a` and `agent_b`, half with each colour.

  Args:
    env: the game.
    agent_a, agent_b: the agents; results are from a's side.
    num_games: even number of games; a is player 0 in the first half, player 1 in the second.
    key: PRNG key, consumed.
    max_steps: stop after this many plies (unfinished games count as draws and as
      `truncated`); default `env.max_game_length`, which ends every game.
    openings: random plies before the agents play (`paired_openings`); 0: none.
  Returns:
    The `MatchResult`.
  Raises:
    ValueError: if `num_games` is not a positive even number, or `openings` is negative.
  """
  if num_games <= 0 or num_games % 2:
    raise ValueError(f"num_games must be positive and even (half per colour), got {num_games}")
  if openings < 0:
    raise ValueError(f"openings must be >= 0 random plies, got {openings}")
  if max_steps is None:
    max_steps = env.max_game_length
  outcomes = _match_jit(env, agent_a.policy, agent_b.policy, int(num_games),
                        jnp.int32(max_steps), key, openings=int(openings))
  return summarize(env, agent_a.name, agent_b.name, outcomes)


# -- Elo over a pool -------------------------------------------------------------------------------

_ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of logit.


@dataclasses.dataclass(frozen=True)
class EloFit:
  """Bradley-Terry Elo ratings of a pool of agents.

  Attributes:
    names: agent names, in the order given to `fit_elo`.
    ratings: `[n]` Elo ratings.
    stderr: `[n]` standard errors (from the observed information at the maximum; 0 for an
      anchored agent).
    anchor: index of the agent fixed at 0, or None if the ratings have mean 0.
  """

  names: tuple[str, ...]
  ratings: np.ndarray
  stderr: np.ndarray
  anchor: int | None

  @property
  def interval(self) -> np.ndarray:
    """`[n, 2]` 95% intervals, `rating -+ 1.96 stderr`."""
    return np.stack([self.ratings - Z95 * self.stderr, self.ratings + Z95 * self.stderr], axis=1)

  def as_dict(self) -> dict[str, float]:
    return {name: float(r) for name, r in zip(self.names, self.ratings)}

  def markdown(self) -> str:
    """Markdown table, best first."""
    lines = ["| agent | Elo | 95% CI |", "|---|---|---|"]
    for i in np.argsort(-self.ratings, kind="stable"):
      low, high = self.interval[i]
      lines.append(f"| {self.names[i]} | {self.ratings[i]:+.0f} | [{low:+.0f}, {high:+.0f}] |")
    return "\n".join(lines)

  def __str__(self) -> str:
    return self.markdown()


def fit_elo(names: Sequence[str], results: Sequence[tuple[int, int, float, float, float]], *,
            anchor: int | None = 0, prior_draws: float = 1.0, max_iter: int = 100,
            tol: float = 1e-9) -> EloFit:
  """Maximum-likelihood Elo ratings (Bradley-Terry with draws as half points).

  Model: agent i scores `p_ij = 1 / (1 + 10^((r_j - r_i) / 400))` in expectation against j. Each
  result row `(i, j, wins_i, draws, wins_j)` contributes
  `s log p_ij + (n - s) log(1 - p_ij)` with `s = wins_i + draws / 2` and `n` its games. The
  log-likelihood is concave; it is maximised by Newton's method with step halving.

  `prior_draws` virtual draws are added to every pair that played (as in BayesElo), so a pair
  with a 100% score still gets finite ratings; 0 gives the plain maximum likelihood, which is
  infinite in that case. Intervals are `rating -+ 1.96 stderr` with the covariance the inverse
  of the observed information (`-Hessian`) under the anchoring constraint.

  Args:
    names: the `n` agents.
    results: rows `(i, j, wins_i, draws, wins_j)`; several rows may name the same pair.
    anchor: index of the agent whose rating is fixed at 0 (default: the first), or None to
      make the ratings' mean 0.
    prior_draws: virtual draws per pair that played.
    max_iter, tol: Newton iterations and convergence threshold (max step, in logits).
  Returns:
    An `EloFit`.
  Raises:
    ValueError: for bad indices or counts, or when the pool is not connected by games (the
      relative ratings of two groups that never met are not determined).
  """
  n = len(names)
  if n < 1:
    raise ValueError("fit_elo needs at least one agent")
  if anchor is not None and not 0 <= anchor < n:
    raise ValueError(f"anchor {anchor} out of range for {n} agents")
  score = np.zeros((n, n))  # score[i, j]: points of i against j (draws as half)
  games = np.zeros((n, n))
  for row in results:
    i, j, wins_i, draws, wins_j = row
    i, j = int(i), int(j)
    if not (0 <= i < n and 0 <= j < n) or i == j:
      raise ValueError(f"bad result row {row}: indices must be distinct agents in [0, {n})")
    if min(wins_i, draws, wins_j) < 0:
      raise ValueError(f"bad result row {row}: negative count")
    total = wins_i + draws + wins_j
    score[i, j] += wins_i + draws / 2
    score[j, i] += wins_j + draws / 2
    games[i, j] += total
    games[j, i] += total
  played = games > 0
  score += prior_draws / 2 * played
  games += prior_draws * played

  # Connectivity of the comparison graph.
  reached = np.zeros(n, bool)
  reached[0] = True
  frontier = [0]
  while frontier:
    k = frontier.pop()
    for m in np.flatnonzero(played[k] & ~reached):
      reached[m] = True
      frontier.append(m)
  if not reached.all():
    missing = [names[k] for k in np.flatnonzero(~reached)]
    raise ValueError(f"fit_elo: the pool is not connected by games; no path from {names[0]!r} "
                     f"to {missing}")

  def loglik(theta):
    logits = theta[:, None] - theta[None, :]
    # log p = -log(1 + e^-x), log(1 - p) = -log(1 + e^x), written stably.
    return float(np.sum(-score * np.logaddexp(0.0, -logits)
                        - (games - score) * np.logaddexp(0.0, logits)) / 2)

  def derivatives(theta):
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    grad = np.sum(score - games * p, axis=1)
    w = games * p * (1.0 - p)
    hess = w - np.diag(np.sum(w, axis=1))  # Negative semi-definite; null space: constants.
    return grad, hess

  free = np.arange(n) if anchor is None else np.delete(np.arange(n), anchor)
  theta = np.zeros(n)
  value = loglik(theta)
  for _ in range(max_iter):
    grad, hess = derivatives(theta)
    step = np.zeros(n)
    if anchor is None:
      step = -np.linalg.pinv(hess) @ grad
    elif free.size:
      step[free] = -np.linalg.solve(hess[np.ix_(free, free)], grad[free])
    # Step halving keeps the (concave) likelihood increasing far from the optimum.
    t = 1.0
    while t > 1e-8:
      candidate = theta + t * step
      if anchor is None:
        candidate -= candidate.mean()
      new_value = loglik(candidate)
      if new_value >= value - 1e-12:
        break
      t /= 2
    theta, value = candidate, new_value
    if np.max(np.abs(t * step)) < tol:
      break

  _, hess = derivatives(theta)
  cov = np.zeros((n, n))
  if anchor is None:
    cov = np.linalg.pinv(-hess)  # Covariance under the sum-to-zero constraint.
  elif free.size:
    cov[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)])
  stderr = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * _ELO_PER_NAT
  return EloFit(names=tuple(names), ratings=theta * _ELO_PER_NAT, stderr=stderr, anchor=anchor)


__all__ = ["EloFit", "MatchResult", "Z95", "elo_from_score", "fit_elo", "match_outcomes", "play",
           "summarize", "wilson_interval"]
