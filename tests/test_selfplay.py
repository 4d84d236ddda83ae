"""Self-play (azjax.selfplay): playout caps, openings, restarts, the Go-Exploit archive."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games, selfplay
from azjax.games import base
from azjax.search import SearchConfig


def _zero_eval(variables, observation):
  """A 'network' with no knowledge: zero logits and zero value (tic-tac-toe's 9 actions)."""
  del variables
  return jnp.zeros((observation.shape[0], 9)), jnp.zeros(observation.shape[0])


@jax.jit
def _capped_chunk(state, key, prob):
  """3 moves with playout cap randomisation; `prob` is traced, so both parametrizations below
  run one compiled program (half the test's time)."""
  return selfplay.play_chunk(games.make("tic_tac_toe"), _zero_eval, SearchConfig(simulations=8),
                             None, state, key, 3, cheap_config=SearchConfig(simulations=2),
                             full_search_prob=prob)


@pytest.mark.slow
@pytest.mark.parametrize("prob", [1e-9, 1.0])
def test_playout_cap_randomisation_marks_policy_targets(prob):
  env = games.make("tic_tac_toe")
  state = selfplay.init(env, 4, 64, jax.random.key(0))
  state, _ = _capped_chunk(state, jax.random.key(1), prob)
  written = np.asarray(state.buffer.episode) >= 0
  assert written.sum() == 12
  assert bool(np.all(np.asarray(state.buffer.full_search)[written] == (prob == 1.0)))

def test_random_openings_are_short_legal_and_never_finished():
  """`opening_moves=k`: each fresh game is `init` after 0..k random legal moves, never ended."""
  env = games.make("tic_tac_toe")
  start = jax.random.key(5)
  chex.assert_trees_all_equal(selfplay.random_opening(env, start, 0), env.init(start))
  states = jax.jit(selfplay.fresh_games, static_argnums=(0, 2, 3))(env, start, 512, 8)
  counts = np.asarray(states.step_count)
  assert not np.asarray(states.terminated).any()
  # Every count from 0 to 8 occurs (a game ending on a random move stops its opening early).
  assert counts.min() == 0 and counts.max() <= 8 and len(set(counts.tolist())) == 9
  # Positions of real games (boards from the mover's side): the opponent has made as many moves
  # as the mover, or one more when it is O's turn.
  board = np.asarray(states.board)
  mine, theirs = (board == 1).sum(1), (board == -1).sum(1)
  np.testing.assert_array_equal(mine + theirs, counts)
  np.testing.assert_array_equal(theirs - mine, counts % 2)

def test_uniform_legal_action_draws_every_legal_action_alike():
  mask = jnp.zeros(9, bool).at[jnp.array([1, 4, 8])].set(True)
  draws = jax.jit(jax.vmap(base.uniform_legal_action, (0, None)))(
      jax.random.split(jax.random.key(0), 3000), mask)
  counts = np.bincount(np.asarray(draws), minlength=9)
  assert counts[[0, 2, 3, 5, 6, 7]].sum() == 0
  np.testing.assert_allclose(counts[[1, 4, 8]] / 3000, 1 / 3, atol=0.04)  # ~4.5 sigma

@pytest.mark.slow
def test_restart_ended_fills_only_ended_slots_from_a_pool_of_fresh_games():
  """With openings, 16 slots draw on a pool of 2 fresh games: the ended slots get them in turn
  (the third ended slot shares the first's), the others keep their games."""
  env = games.make("tic_tac_toe")
  assert selfplay.fresh_pool_size(16, 8) == 2 and selfplay.fresh_pool_size(16, 0) == 16
  playing = selfplay.fresh_games(env, jax.random.key(0), 16, 0)
  ended_slots = np.array([1, 6, 9])
  after = playing.replace(terminated=playing.terminated.at[ended_slots].set(True))
  key = jax.random.key(3)
  out = jax.jit(selfplay.restart_ended, static_argnums=(0, 3))(env, after, key, 8)
  pool = selfplay.fresh_games(env, key, 2, 8)
  assert not np.array_equal(pool.board[0], pool.board[1])  # so the order below is checked
  boards = np.asarray(out.board)
  for slot, index in zip(ended_slots, [0, 1, 0]):
    np.testing.assert_array_equal(boards[slot], np.asarray(pool.board)[index])
  kept = np.setdiff1d(np.arange(16), ended_slots)
  np.testing.assert_array_equal(boards[kept], np.asarray(playing.board)[kept])
  assert not np.asarray(out.terminated).any()

def _ttt_after(env, actions):
  state = env.init(jax.random.key(0))
  for action in actions:
    state = env.step(state, action)
  return state

@pytest.mark.slow
def test_archive_writes_slots_in_turn_and_overwrites_its_oldest_rows():
  env = games.make("tic_tac_toe")
  games4 = base.stack_states([_ttt_after(env, [cell]) for cell in range(4)])  # X on cell k
  archive = selfplay.init(env, 4, 8, jax.random.key(0), archive_size=3).archive
  assert int(archive.count) == 0 and archive.states.board.shape == (3, 9)
  write = jax.jit(selfplay.archive_games, static_argnums=2)  # One program, not op by op.
  for _ in range(2):
    archive = write(archive, games4, 2)
  # Slots 0, 1, 2, 3 went to rows 0, 1, 2, 0: slot 3 overwrote slot 0.
  assert int(archive.count) == 4
  np.testing.assert_array_equal(archive.states.board, np.asarray(games4.board)[[3, 1, 2]])

@pytest.mark.slow
def test_from_archive_draws_written_rows_with_its_probability():
  env = games.make("tic_tac_toe")
  fresh = selfplay.fresh_games(env, jax.random.key(0), 64)
  archive = selfplay.init(env, 4, 8, jax.random.key(0), archive_size=8).archive
  key = jax.random.key(1)
  draw = jax.jit(selfplay.from_archive)  # `prob` traced: one program for all four draws.
  # Empty: nothing to draw, even with probability 1.
  chex.assert_trees_all_equal(draw(archive, fresh, key, 1.0), fresh)
  marked = base.stack_states([_ttt_after(env, [cell]) for cell in (4, 5)])
  archive = selfplay.archive_games(archive, marked, 2)  # rows 0, 1 written; 2..7 never
  drawn = np.asarray(draw(archive, fresh, key, 1.0).board)
  assert {tuple(b) for b in drawn} == {tuple(b) for b in np.asarray(marked.board)}
  chex.assert_trees_all_equal(draw(archive, fresh, key, 0.0), fresh)
  half = np.asarray(draw(archive, fresh, key, 0.5).step_count)
  assert 16 < (half == 1).sum() < 48  # 64 coins of 1/2: about 32 from the archive

@pytest.mark.slow
def test_go_exploit_restarts_games_from_archived_positions():
  """With `archive_start=1` every restarted game descends from an archived position: here
  (tic-tac-toe, an archive filled with one position of four marks) nearly all restarts hold
  those four marks, since self-play overwrites only 12 of the 256 rows in 12 moves."""
  env = games.make("tic_tac_toe")

  def eval_fn(variables, observation):
    return jnp.zeros((observation.shape[0], env.num_actions)), jnp.zeros(observation.shape[0])

  marks = _ttt_after(env, [0, 4, 8, 2])
  state = selfplay.init(env, 8, 128, jax.random.key(0), archive_size=256)
  state = state.replace(archive=selfplay.Archive(
      states=jax.tree.map(lambda x: jnp.broadcast_to(x, (256,) + x.shape), marks),
      count=jnp.int32(256)))
  play = jax.jit(functools.partial(selfplay.play_chunk, env, eval_fn, SearchConfig(simulations=4),
                                   None, num_steps=12, archive_start=1.0))
  out, stats = play(state, jax.random.key(1))
  assert int(out.archive.count) == 256 + 12 * selfplay.an_eighth(8)
  restarted = np.asarray(out.episode) > 0
  assert int(stats.games_finished) >= 8 and restarted.sum() >= 4
  occupied = np.asarray(out.games.board)[restarted] != 0
  descends = occupied[:, [0, 2, 4, 8]].all(axis=1)
  assert descends.mean() >= 0.75, descends

@pytest.mark.slow
def test_selfplay_value_targets_match_game_outcomes():
  """Every stored position of a finished game gets that game's outcome from its mover's side."""
  env = games.make("tic_tac_toe")

  def eval_fn(variables, observation):
    return jnp.zeros((observation.shape[0], env.num_actions)), jnp.zeros(observation.shape[0])

  state = selfplay.init(env, 4, 64, jax.random.key(0))
  state, stats = jax.jit(selfplay.play_chunk, static_argnums=(0, 1, 2, 6))(
      env, eval_fn, SearchConfig(simulations=4), None, state, jax.random.key(1), 12)
  buf = jax.device_get(state.buffer)
  assert int(stats.moves) == 48 and int(stats.games_finished) >= 4
  for slot in range(4):
    for episode in range(int(state.episode[slot]) + 1):
      rows = (np.arange(4) == slot) & (buf.episode == episode)  # column `slot`, [T, B]
      finished = episode < int(state.episode[slot])
      # A game that began on the chunk's last move has no rows yet.
      assert not rows.any() or bool(buf.has_target[rows].all()) == finished
      if finished and rows.any():
        players, values = buf.player[rows], buf.value[rows]
        # Players alternate from player 0; values are zero-sum between the two sides.
        np.testing.assert_array_equal(players, np.arange(rows.sum()) % 2)
        for p in (0, 1):
          assert len(set(values[players == p].tolist())) <= 1
        if (players == 1).any():
          assert values[players == 0][0] == -values[players == 1][0]
