"""Batched self-play: `B` games step together, one search per move, inside one `lax.scan`.

Games continue across calls (the chunk boundary is not the end of a game), each position goes
into the replay buffer as it is searched, and its value target arrives when its game ends.
A finished game is replaced by a fresh one in the same slot right away, so the games carried
between calls are never terminated. With `opening_moves`, a fresh game begins after a few
uniformly random moves (`random_opening`), so self-play also visits positions its own
policy would not reach. With an `Archive` (Go-Exploit, Trudeau and Bowling 2023), a fresh game
may instead start from a position of an earlier self-play game: shorter games from positions
the agent reaches, so more independent value targets per position played.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

from azjax import replay
from azjax.games.base import Game, uniform_legal_action
from azjax.search import EvalFn, SearchConfig, search


@chex.dataclass(frozen=True)
class Archive:
  """A ring of `K` positions from earlier self-play games (Go-Exploit's archive)."""

  states: Any  # game State batched [K]; the first min(count, K) rows are positions played
  count: chex.Array  # [] int32: positions written so far (the next goes to row count % K)

  @property
  def size(self) -> int:
    return self.states.terminated.shape[0]


@chex.dataclass(frozen=True)
class SelfPlayState:
  games: Any  # game State batched [B]: never terminated between calls
  episode: chex.Array  # [B] int32: number of games finished in each slot so far
  buffer: replay.ReplayBuffer
  archive: Archive | None = None  # with Go-Exploit starts (`init(archive_size=...)`)


@chex.dataclass(frozen=True)
class ChunkStats:
  """Totals over one chunk (summed over moves and slots)."""

  moves: chex.Array  # [] int32: positions played
  games_finished: chex.Array  # [] int32
  game_length_sum: chex.Array  # [] int32: summed length of the games that finished
  first_player_wins: chex.Array  # [] int32
  draws: chex.Array  # [] int32
  root_value_abs_sum: chex.Array  # [] float32


def random_opening(game: Game, key: chex.PRNGKey, max_moves: int, exact: bool = False) -> Any:
  """A fresh game after `k ~ Uniform{0..max_moves}` uniformly random legal moves (one state);
  with `exact`, after `k = max_moves` of them (evaluation's openings, `arena.paired_openings`).

  A random move that would end the game is not played (the opening stops before it), so the
  result is never terminated. The random moves are not searched and never reach the buffer:
  only the positions after them are played and trained on.
  """
  if max_moves == 0:
    return game.init(key)
  init_key, count_key, moves_key = jax.random.split(key, 3)
  state = game.init(init_key)
  count = max_moves if exact else jax.random.randint(count_key, (), 0, max_moves + 1)

  def one(i, carry):
    state, stopped = carry
    action = uniform_legal_action(jax.random.fold_in(moves_key, i), state.legal_action_mask)
    stepped = game.step(state, action)
    stopped = stopped | (i >= count) | stepped.terminated
    state = jax.tree.map(lambda old, new: jnp.where(stopped, old, new), state, stepped)
    return state, stopped

  state, _ = jax.lax.fori_loop(0, max_moves, one, (state, jnp.bool_(False)))
  return state


def fresh_games(game: Game, key: chex.PRNGKey, batch: int, opening_moves: int = 0) -> Any:
  """`batch` fresh games (a batched State), each after its own random opening."""
  return jax.vmap(lambda k: random_opening(game, k, opening_moves))(jax.random.split(key, batch))


def fresh_pool_size(batch: int, opening_moves: int) -> int:
  """How many fresh games `restart_ended` makes for a batch of `batch` slots.

  One per slot without openings (`init` is cheap, and random for some games). With openings a
  fresh game costs up to `opening_moves` steps, and a move ends only a few games (one slot in
  `L` for games of `L` moves), so an eighth of the slots: for Breakthrough 8x8 (about 75
  moves, 512 slots) about 7 games end a move, against a pool of 64. (Making a fresh game for
  every slot took about 5% of the `breakthrough8_cpu` preset's iteration, 0.317 s against
  0.300 s without openings; with the pool 0.293 s against 0.306 s, within the timings' noise.)
  """
  return batch if opening_moves == 0 else an_eighth(batch)


def an_eighth(batch: int) -> int:
  """`ceil(batch / 8)`: the fresh games made, and the positions archived, per move."""
  return max(1, -(-batch // 8))


def archive_games(archive: Archive, games: Any, count: int) -> Archive:
  """`archive` with `count` of the `B` live `games` written into it, the slots taken in turn
  (`count` a move covers every slot in `B / count` moves) over its oldest rows."""
  written = archive.count + jnp.arange(count)
  slots, rows = written % games.terminated.shape[0], written % archive.size
  states = jax.tree.map(lambda a, g: a.at[rows].set(g[slots]), archive.states, games)
  return Archive(states=states, count=archive.count + count)


def from_archive(archive: Archive, fresh: Any, key: chex.PRNGKey, prob: float) -> Any:
  """`fresh` (batched games) with each game replaced, with probability `prob`, by a position
  drawn uniformly from the filled part of `archive` (none while it is empty)."""
  pick_key, coin_key = jax.random.split(key)
  pool = fresh.terminated.shape[0]
  filled = jnp.minimum(archive.count, archive.size)
  rows = jax.random.randint(pick_key, (pool,), 0, jnp.maximum(filled, 1))
  use = (jax.random.uniform(coin_key, (pool,)) < prob) & (filled > 0)
  return _select(use, jax.tree.map(lambda a: a[rows], archive.states), fresh)


def _select(take: chex.Array, chosen: Any, others: Any) -> Any:
  """Batched games: `chosen`'s in the slots where `take` (`[B]` bool) holds, else `others`'."""
  return jax.tree.map(lambda c, o: jnp.where(take.reshape((-1,) + (1,) * (o.ndim - 1)), c, o),
                      chosen, others)


def restart_ended(game: Game, games: Any, key: chex.PRNGKey, opening_moves: int = 0,
                  archive: Archive | None = None, archive_start: float = 0.0) -> Any:
  """`games` (batched) with a fresh game in each slot whose game has ended.

  The `k`-th ended slot (in slot order) takes game `k mod P` of a pool of `P =
  fresh_pool_size(B, opening_moves)` fresh games (`fresh_games`): two slots share an opening
  only when more than `P` games end on one move (their searches then part them). With an
  `archive`, each pool game is an archived position instead with probability `archive_start`.
  """
  ended = games.terminated
  batch = ended.shape[0]
  pool_size = fresh_pool_size(batch, opening_moves)
  if archive is None:
    fresh = fresh_games(game, key, pool_size, opening_moves)
  else:
    key, archive_key = jax.random.split(key)
    fresh = from_archive(archive, fresh_games(game, key, pool_size, opening_moves),
                         archive_key, archive_start)
  if pool_size < batch:
    rank = (jnp.cumsum(ended, dtype=jnp.int32) - 1) % pool_size
    fresh = jax.tree.map(lambda f: f[rank], fresh)
  return _select(ended, fresh, games)


def init(game: Game, batch: int, buffer_size: int, key: chex.PRNGKey,
         opening_moves: int = 0, archive_size: int = 0) -> SelfPlayState:
  """Fresh games in `batch` slots, an empty buffer, and an empty archive of `archive_size`
  positions (none with 0)."""
  games = fresh_games(game, key, batch, opening_moves)
  archive = None
  if archive_size:
    # Placeholder rows (copies of the start): `from_archive` only draws the written ones.
    start = game.init(key)
    archive = Archive(
        states=jax.tree.map(lambda x: jnp.broadcast_to(x, (archive_size,) + x.shape), start),
        count=jnp.int32(0))
  return SelfPlayState(
      games=games,
      episode=jnp.zeros(batch, jnp.int32),
      buffer=replay.init(buffer_size, batch, game.observation_shape, game.num_actions),
      archive=archive)


def play_chunk(game: Game, eval_fn: EvalFn, search_config: SearchConfig, variables: Any,
               state: SelfPlayState, key: chex.PRNGKey, num_steps: int,
               cheap_config: SearchConfig | None = None,
               full_search_prob: float = 1.0,
               opening_moves: int = 0,
               archive_start: float = 0.0) -> tuple[SelfPlayState, ChunkStats]:
  """Plays `num_steps` moves in every slot; returns the new state and chunk totals.

  Games that end are replaced by `fresh_games(..., opening_moves)`; a game's length counts its
  random opening moves too. With an archive (`state.archive`), each move writes an eighth
  of the positions it searches into it (`an_eighth`), and a fresh game starts from an
  archived position with probability `archive_start` (its length then counts the moves before
  that position too).

  With `cheap_config` (playout cap randomisation, KataGo section 3.1), each move is searched
  with `search_config` with probability `full_search_prob` and with the cheaper `cheap_config`
  otherwise; only the full searches' action weights are marked as policy targets. The coin is
  tossed once per move for the whole batch, so a move costs one search of either size (a
  per-game coin would run both searches on every move). Under a sweep's vmap the coins differ
  between runs and both searches run.
  """

  def move_search(games, search_key, coin_key):
    if cheap_config is None:
      return search(game, eval_fn, search_config, variables, games, search_key), True
    full = jax.random.uniform(coin_key) < full_search_prob
    out = jax.lax.cond(
        full, lambda: search(game, eval_fn, search_config, variables, games, search_key),
        lambda: search(game, eval_fn, cheap_config, variables, games, search_key))
    return out, full

  def one_move(carry: SelfPlayState, move_key):
    search_key, reset_key, coin_key = jax.random.split(move_key, 3)
    games = carry.games
    out, full = move_search(games, search_key, coin_key)
    buffer = replay.add(carry.buffer, games.observation, out.action_weights,
                        games.legal_action_mask, games.current_player, carry.episode,
                        root_value=out.root_value, full_search=full)
    stepped = jax.vmap(game.step)(games, out.action)
    ended = stepped.terminated
    buffer = replay.assign_outcomes(buffer, ended, carry.episode, stepped.rewards)
    batch = ended.shape[0]
    archive = carry.archive
    if archive is not None:
      archive = archive_games(archive, games, an_eighth(batch))
    games = restart_ended(game, stepped, reset_key, opening_moves, archive, archive_start)
    stats = ChunkStats(
        moves=jnp.int32(batch),
        games_finished=jnp.sum(ended, dtype=jnp.int32),
        game_length_sum=jnp.sum(jnp.where(ended, stepped.step_count, 0), dtype=jnp.int32),
        first_player_wins=jnp.sum(ended & (stepped.rewards[:, 0] > 0), dtype=jnp.int32),
        draws=jnp.sum(ended & (stepped.rewards[:, 0] == 0), dtype=jnp.int32),
        root_value_abs_sum=jnp.sum(jnp.abs(out.root_value)),
    )
    next_state = SelfPlayState(games=games, episode=carry.episode + ended, buffer=buffer,
                               archive=archive)
    return next_state, stats

  state, stats = jax.lax.scan(one_move, state, jax.random.split(key, num_steps))
  return state, jax.tree.map(lambda x: jnp.sum(x, axis=0), stats)
