"""Checkers: perft, scripted positions, notation, and a differential test against OpenSpiel."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games
from azjax.games import base, notation, perft
from azjax.games.checkers import Checkers

from positions import CHECKERS_CHOICE

GAME = games.make("checkers")
STEP = jax.jit(GAME.step)
BATCH_STEP = jax.jit(jax.vmap(GAME.step))
PERFT_TURNS = [7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680]
PERFT_ACTIONS = [7, 49, 302, 1469, 7361, 36768, 179255, 838248]
CHUNK = 2048


def play(state, *moves):
  """Plays moves given in notation (one action each), checking each is legal."""
  for move in moves:
    state = STEP(state, jnp.int32(GAME.move_to_action(state, move)))
  return state


def moves(state):
  """The legal moves of `state`, sorted (legal_moves lists them in the mover's action order)."""
  return sorted(GAME.legal_moves(state))


def board_of(text):
  """`[8, 8]` absolute codes of a drawing (row 0 = rank 1), for comparing with board_array."""
  return GAME.board_array(GAME.from_ascii(text))


# -- Perft -----------------------------------------------------------------------------------------


def _take(states, keep):
  return jax.tree.map(lambda x: np.asarray(x)[keep], states)


def _expand(states):
  """`perft.expand`, with the batch padded by dead states to whole chunks (one compilation)."""
  n = states.terminated.shape[0]
  dead = jax.tree.map(lambda x: np.repeat(np.asarray(x)[:1], -n % CHUNK, 0), states)
  dead = dead.replace(legal_action_mask=np.zeros_like(dead.legal_action_mask))
  padded = jax.tree.map(lambda a, b: np.concatenate([np.asarray(a), b]), states, dead)
  return perft.expand(GAME, padded, CHUNK)


def _captures(states):
  """`[N]` bool: whether each state's legal actions are jumps (its first one passes an enemy)."""
  first = np.argmax(np.asarray(states.legal_action_mask), axis=-1)
  frm, direction = np.divmod(first, 4)
  mid = np.clip(frm + np.array([7, 9, -9, -7])[direction], 0, 63)
  return np.take_along_axis(np.asarray(states.board), mid[:, None], axis=-1)[:, 0] < 0


def perft_turns(depth):
  """Perft where a whole turn (a multi-jump sequence) is one move.

  The hops of a turn are expanded until the player to move changes or the game ends. At the last
  level only positions with captures are stepped: a simple move always ends the turn.
  """
  frontier = jax.tree.map(lambda x: np.asarray(x)[None], GAME.init(jax.random.key(0)))
  counts = []
  for level in range(depth):
    mover, last = level % 2, level == depth - 1
    count, finished, pending = 0, [], frontier
    while pending.terminated.shape[0]:
      if last:
        capture = _captures(pending)
        count += int(np.asarray(pending.legal_action_mask)[~capture].sum())
        pending = _take(pending, capture)
        if not capture.any():
          break
      children = _expand(pending)
      terminated = np.asarray(children.terminated)
      over = terminated | (np.asarray(children.current_player) != mover)
      count += int(over.sum())
      if not last:
        finished.append(_take(children, over & ~terminated))
      pending = _take(children, ~over)
    counts.append(count)
    if not last:
      frontier = jax.tree.map(lambda *xs: np.concatenate(xs), *finished)
  return counts


@pytest.mark.slow
def test_perft_by_actions():
  assert perft.perft(GAME, 7) == PERFT_ACTIONS[:7]


@pytest.mark.deep
def test_perft_by_actions_depth_8():
  assert perft.perft(GAME, 8) == PERFT_ACTIONS[:8]


@pytest.mark.slow
def test_perft_by_turns():
  assert perft_turns(7) == PERFT_TURNS[:7]


@pytest.mark.deep
@pytest.mark.parametrize("depth", [8, 9])
def test_perft_by_turns_deep(depth):
  assert perft_turns(depth) == PERFT_TURNS[:depth]


# -- Start position and construction ------------------------------------------------------------

START = """
8 . x . x . x . x
7 x . x . x . x .
6 . x . x . x . x
5 . . . . . . . .
4 . . . . . . . .
3 o . o . o . o .
2 . o . o . o . o
1 o . o . o . o .
  a b c d e f g h
"""


def test_start_position():
  state = GAME.init(jax.random.key(0))
  chex.assert_trees_all_equal(state, GAME.from_ascii(START))
  assert GAME.legal_moves(state) == ["a3b4", "c3b4", "c3d4", "e3d4", "e3f4", "g3f4", "g3h4"]
  assert int(state.jump_square) == -1 and int(state.no_capture_count) == 0
  assert GAME.max_game_length == 920 and GAME.num_actions == 256
  # Player 1 sees the same start from its side: the board is symmetric under the rotation.
  after = play(state, "c3d4")
  assert int(after.current_player) == 1
  assert moves(after) == ["b6a5", "b6c5", "d6c5", "d6e5", "f6e5", "f6g5", "h6g5"]
  np.testing.assert_array_equal(after.last_move, [18, 27])  # c3, d4


def test_from_ascii_rejects_bad_drawings():
  for text, match in [
      ("o . o", "has 3 squares, not 8"),
      ("\n".join(START.strip().splitlines()[:7]), "7 ranks, not 8"),
      (START.replace("7 x", "7 q"), "bad rank"),
      (START.replace(". x . x . x . x\n7", ". x . x . x x .\n7"), "light square"),
      (START.replace(". x . x . x . x\n7", ". o . x . x . x\n7"), "crowning rank"),
  ]:
    with pytest.raises(ValueError, match=match):
      GAME.from_ascii(text)
  with pytest.raises(ValueError, match="jump_square 'c3' is not a piece of player 0 that can"):
    GAME.from_ascii(START, jump_square="c3")
  for square in ("c3d4", 64, -1):
    with pytest.raises(ValueError, match="not one square"):
      GAME.from_ascii(START, jump_square=square)
  with pytest.raises(ValueError, match="to_move"):
    GAME.from_ascii(START, to_move=2)


# -- Rules in scripted positions -------------------------------------------------------------------

MANDATORY = """
8 . . . . . . . x
7 . . . . . . . .
6 . . . . . . . .
5 . . . . . . . .
4 . . . x . . . .
3 . . o . . . o .
2 . . . . . . . .
1 . . . . . . . .
"""


def test_capture_is_mandatory():
  state = GAME.from_ascii(MANDATORY)
  assert GAME.legal_moves(state) == ["c3e5"]  # g3's simple moves are not allowed
  with pytest.raises(ValueError, match="capture is mandatory.*legal moves: c3e5"):
    GAME.move_to_action(state, "g3h4")
  after = play(state, "c3e5")
  assert int(after.current_player) == 1 and int(after.no_capture_count) == 0
  np.testing.assert_array_equal(GAME.board_array(after), board_of("""
    8 . . . . . . . x
    7 . . . . . . . .
    6 . . . . . . . .
    5 . . . . o . . .
    4 . . . . . . . .
    3 . . . . . . o .
    2 . . . . . . . .
    1 . . . . . . . .
  """))


CHOICE = CHECKERS_CHOICE


def test_any_capture_may_be_chosen():
  state = GAME.from_ascii(CHOICE)
  # c3e5 leads on to a double jump, but the single jumps are just as legal.
  assert moves(state) == ["a3c5", "c3a5", "c3e5"]
  after = play(state, "a3c5")
  assert int(after.current_player) == 1 and int(after.jump_square) == -1


def test_multi_jump_continues_with_the_same_piece():
  state = play(GAME.from_ascii(CHOICE), "c3e5")
  assert int(state.current_player) == 0 and not bool(state.terminated)
  assert int(state.jump_square) == 36  # e5
  np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
  # Only the jumping piece moves, although a3 still has a capture (a3c5).
  assert GAME.legal_moves(state) == ["e5g7"]
  with pytest.raises(ValueError, match="illegal move 'a3c5'"):
    GAME.move_to_action(state, "a3c5")
  lost = STEP(state, jnp.int32(GAME.move_to_action(GAME.from_ascii(CHOICE), "a3c5")))
  assert bool(lost.terminated) and list(np.asarray(lost.rewards)) == [-1.0, 1.0]
  # The same position drawn, with the pending jump given to from_ascii.
  drawn = GAME.from_ascii("""
    8 . . . . . . . x
    7 . . . . . . . .
    6 . . . . . x . .
    5 . . . . o . . .
    4 . x . . . . . .
    3 o . . . . . . .
    2 . . . . . . . .
    1 . . . . . . . .
  """, jump_square="e5")
  chex.assert_trees_all_equal(drawn.replace(step_count=state.step_count,
                                            last_move=state.last_move), state)
  state = play(state, "e5g7")
  assert int(state.current_player) == 1 and int(state.jump_square) == -1
  np.testing.assert_array_equal(state.last_move, [36, 54])  # e5, g7
  np.testing.assert_array_equal(GAME.board_array(state), board_of("""
    8 . . . . . . . x
    7 . . . . . . o .
    6 . . . . . . . .
    5 . . . . . . . .
    4 . x . . . . . .
    3 o . . . . . . .
    2 . . . . . . . .
    1 . . . . . . . .
  """))


def test_multi_jump_for_player_1_and_path_to_actions():
  # The CHOICE position turned around, for player 1.
  text = """
    8 . . . . . . . .
    7 . . . . . . . .
    6 . . . . . x . x
    5 . . . . o . o .
    4 . . . . . . . .
    3 . . o . . . . .
    2 . . . . . . . .
    1 o . . . . . . .
  """
  state = GAME.from_ascii(text, to_move=1)
  assert moves(state) == ["f6d4", "f6h4", "h6f4"]
  actions = GAME.path_to_actions(state, "f6d4b2")
  middle = STEP(state, jnp.int32(actions[0]))
  assert [GAME.action_to_move(s, a) for s, a in zip([state, middle], actions)] == ["f6d4", "d4b2"]
  assert int(middle.current_player) == 1 and int(middle.jump_square) == 63 - 27  # d4
  np.testing.assert_array_equal(np.argwhere(middle.observation[..., 4]), [[4, 4]])
  drawn = GAME.from_ascii(text.replace("6 . . . . . x", "6 . . . . . .").replace(
      "5 . . . . o", "5 . . . . .").replace("4 . . . . .", "4 . . . x ."), to_move=1,
                          jump_square="d4")
  np.testing.assert_array_equal(drawn.legal_action_mask, middle.legal_action_mask)
  np.testing.assert_array_equal(drawn.board, middle.board)
  end = STEP(middle, jnp.int32(actions[1]))
  assert int(end.current_player) == 0 and int(end.no_capture_count) == 0
  np.testing.assert_array_equal(end.last_move, [27, 9])  # d4, b2
  assert GAME.path_to_actions(state, "h6f4") == [GAME.move_to_action(state, "h6f4")]
  for path, match in [("f6d4", "incomplete.*d4b2"), ("f6d4b2a1", "after the turn ended"),
                      ("f6d4d2", "not a diagonal step or jump"),
                      ("f6d4f2", "illegal move 'd4f2'"), ("f6", "at least two squares"),
                      ("f6e5", "capture is mandatory")]:
    with pytest.raises(ValueError, match=match):
      GAME.path_to_actions(state, path)


def test_promotion_ends_the_turn():
  text = """
    8 . . . . . . . .
    7 . . . . x . x .
    6 . . . o . . . .
    5 . . . . . . . .
    4 . . . . . . . .
    3 . . . . . . . .
    2 . . . . . . . .
    1 . . . . . . . .
  """
  # A man crowned by a capture stops, although the new king could take g7 from f8.
  state = play(GAME.from_ascii(text), "d6f8")
  assert int(state.current_player) == 1 and int(state.jump_square) == -1
  assert GAME.board_array(state)[7, 5] == 2  # f8: player 0's king
  assert moves(state) == ["g7f6", "g7h6"]
  # A king that jumps onto the far rank was not crowned there: it goes on.
  state = play(GAME.from_ascii(text.replace(" o ", " O ")), "d6f8")
  assert int(state.current_player) == 0 and GAME.legal_moves(state) == ["f8h6"]
  # Promotion by a simple move.
  state = play(GAME.from_ascii(text.replace("7 . . . . x", "7 . . . . .")), "d6e7")
  state = play(state, "g7h6")
  state = play(state, "e7f8")
  assert GAME.board_array(state)[7, 5] == 2 and int(state.current_player) == 1


def test_kings_move_and_capture_backwards_men_do_not():
  king = """
    8 . . . . . . . x
    7 . . . . . . . .
    6 . . . . . . . .
    5 . . . . . . . .
    4 . . . O . . . .
    3 . . . . . . . .
    2 . . . . . . . .
    1 . . . . . . . .
  """
  assert moves(GAME.from_ascii(king)) == ["d4c3", "d4c5", "d4e3", "d4e5"]
  assert moves(GAME.from_ascii(king.replace("O", "o"))) == ["d4c5", "d4e5"]
  behind = king.replace("3 . . . .", "3 . . x .")  # an enemy man on c3
  assert moves(GAME.from_ascii(behind)) == ["d4b2"]
  assert moves(GAME.from_ascii(behind.replace("O", "o"))) == ["d4c5", "d4e5"]
  with pytest.raises(ValueError, match="illegal move 'd4c3'"):
    GAME.move_to_action(GAME.from_ascii(king.replace("O", "o")), "d4c3")
  # Player 1: its men move down the board, its kings both ways.
  theirs = """
    8 . . . . . . . .
    7 . . . . . . . .
    6 . . . . . . . .
    5 . . . . x . . .
    4 . . . . . . . .
    3 . . . . . . . .
    2 . . . . . . . .
    1 o . . . . . . .
  """
  assert moves(GAME.from_ascii(theirs, to_move=1)) == ["e5d4", "e5f4"]
  assert moves(GAME.from_ascii(theirs.replace("x", "X"), to_move=1)) == [
      "e5d4", "e5d6", "e5f4", "e5f6"]


BLOCK = """
8 . . . . . . . .
7 . . . . . . . .
6 . . . . . . . .
5 . . . . . . . .
4 . . . . . . . x
3 . . . . . . . .
2 . . . . . o . o
1 . . . . . . . .
"""


def test_loss_when_blocked_or_without_pieces():
  # After h2g3 the man on h4 can neither step to g3 nor jump it (f2 is occupied).
  state = play(GAME.from_ascii(BLOCK), "h2g3")
  assert bool(state.terminated) and not bool(state.legal_action_mask.any())
  np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
  # Taking the last piece wins.
  state = play(GAME.from_ascii(MANDATORY.replace("8 . . . . . . . x", "8 . . . . . . . .")),
               "c3e5")
  assert bool(state.terminated)
  np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
  # A drawn position whose mover is stuck comes back terminated.
  stuck = GAME.from_ascii(BLOCK.replace("3 . . . . . . . .", "3 . . . . . . o ."), to_move=1)
  assert bool(stuck.terminated) and not bool(stuck.legal_action_mask.any())


def test_forty_actions_without_capture_draw_before_the_no_move_loss():
  # The 40th action without a capture draws, even though it also leaves the opponent stuck.
  state = play(GAME.from_ascii(BLOCK, no_capture_count=39), "h2g3")
  assert bool(state.terminated) and int(state.no_capture_count) == 40
  np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
  # The 39th does not, and the counter goes on through both players' moves.
  state = play(GAME.from_ascii(BLOCK, no_capture_count=38), "f2e3")
  assert not bool(state.terminated) and int(state.no_capture_count) == 39
  state = play(state, "h4g3")
  assert bool(state.terminated) and int(state.no_capture_count) == 40
  np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
  # A capture on the 40th action resets the counter instead.
  state = play(GAME.from_ascii(MANDATORY, no_capture_count=39), "c3e5")
  assert not bool(state.terminated) and int(state.no_capture_count) == 0
  # A position with the counter already at 40 is over.
  assert bool(GAME.from_ascii(BLOCK, no_capture_count=40).terminated)


def test_observation_planes():
  state = play(GAME.from_ascii(CHOICE, no_capture_count=7), "c3e5")
  obs = np.asarray(state.observation)
  assert obs.shape == GAME.observation_shape == (8, 8, 6) and obs.dtype == np.float32
  np.testing.assert_array_equal(np.argwhere(obs[..., 4]), [[4, 4]])  # e5 must go on jumping
  np.testing.assert_array_equal(obs[..., 5], 0.0)  # the capture reset the counter
  np.testing.assert_array_equal(np.argwhere(obs[..., 0]), [[2, 0], [4, 4]])  # a3, e5
  np.testing.assert_array_equal(np.argwhere(obs[..., 2]), [[3, 1], [5, 5], [7, 7]])
  # Player 1 sees the board rotated: its man on e5 is on its row 3, column 3 (d from its side).
  text = BLOCK.replace("5 . . . . . . . .", "5 . . . . x . . .").replace(
      "2 . . . . . o . o", "2 . . . . . O . o")
  state = GAME.from_ascii(text, to_move=1, no_capture_count=10)
  obs = np.asarray(state.observation)
  np.testing.assert_array_equal(np.argwhere(obs[..., 0]), [[3, 3], [4, 0]])  # e5, h4
  np.testing.assert_array_equal(np.argwhere(obs[..., 2]), [[6, 0]])  # h2
  np.testing.assert_array_equal(np.argwhere(obs[..., 3]), [[6, 2]])  # f2 (a king)
  assert not obs[..., 1].any() and not obs[..., 4].any()
  np.testing.assert_allclose(obs[..., 5], 0.25)
  # Batched states give batched observations.
  batch = base.stack_states([state, state])
  np.testing.assert_array_equal(batch.observation, np.stack([obs, obs]))


def test_illegal_action_loses_and_terminated_step_is_noop():
  state = GAME.from_ascii(CHOICE)
  illegal = 16 * 4 + 0  # a3 forward-left: off the board
  assert not bool(state.legal_action_mask[illegal])
  lost = STEP(state, jnp.int32(illegal))
  assert bool(lost.terminated) and not bool(lost.legal_action_mask.any())
  np.testing.assert_array_equal(lost.rewards, [-1.0, 1.0])
  np.testing.assert_array_equal(GAME.board_array(lost), GAME.board_array(state))
  np.testing.assert_array_equal(lost.last_move, [-1, -1])
  for action in (0, 255, illegal):  # out-of-range ids are just as illegal
    again = STEP(lost, jnp.int32(action))
    chex.assert_trees_all_equal(again, lost.replace(rewards=jnp.zeros(2, jnp.float32)))
  for action in (-1, 256, 1000):
    assert bool(STEP(state, jnp.int32(action)).terminated)


def test_illegal_action_in_a_batch_leaves_the_others_alone():
  states = [GAME.from_ascii(CHOICE), GAME.init(None), GAME.from_ascii(BLOCK, to_move=1)]
  moves = ["c3e5", "c3d4", "h4g3"]
  legal = [GAME.move_to_action(s, m) for s, m in zip(states, moves)]
  batch = base.stack_states(states * 2)
  illegal = 16 * 4 + 0  # a3 forward-left: off the board
  actions = jnp.array(legal + [legal[0], illegal, legal[2]], jnp.int32)
  stepped = BATCH_STEP(batch, actions)
  for i in (0, 1, 2, 3, 5):
    expected = STEP(states[i % 3], jnp.int32(legal[i % 3]))
    chex.assert_trees_all_equal(base.unstack_state(stepped, i), expected)
  assert bool(stepped.terminated[4])
  np.testing.assert_array_equal(stepped.rewards[4], [-1.0, 1.0])


# -- Notation --------------------------------------------------------------------------------------


def test_notation_round_trip_for_both_players():
  start = GAME.init(None)
  positions = [start, play(start, "c3d4"), play(start, "c3d4", "f6e5"),
               play(start, "c3d4", "f6e5", "d4f6"), GAME.from_ascii(CHOICE),
               play(GAME.from_ascii(CHOICE), "c3e5"), GAME.from_ascii(BLOCK, to_move=1)]
  assert {int(s.current_player) for s in positions} == {0, 1}
  for state in positions:
    moves = GAME.legal_moves(state)
    assert moves
    for action, move in zip(GAME.legal_actions(state), moves):
      assert GAME.move_to_action(state, move) == action
      assert GAME.move_to_action(state, move.upper()) == action


@pytest.mark.parametrize("move, problem", [
    ("c3", "exactly two squares"),
    ("c3d4e5", "exactly two squares"),
    ("c3-d4", "malformed"),
    ("", "malformed"),
    ("i3j4", "off the 8x8 board"),
    ("c9d8", "off the 8x8 board"),
    ("c3c4", "not a diagonal step or jump"),
    ("c3f6", "not a diagonal step or jump"),
    ("c3e5", "no capture"),
    ("c3b2", "illegal move"),
    ("d4e5", "illegal move"),
])
def test_bad_moves_raise_and_list_the_legal_moves(move, problem):
  with pytest.raises(ValueError, match=f"{problem}.*legal moves: a3b4 c3b4 c3d4"):
    GAME.move_to_action(GAME.init(None), move)


def test_action_to_move_rejects_actions_off_the_board():
  state = GAME.init(None)
  assert GAME.action_to_move(state, 18 * 4 + 1) == "c3d4"
  with pytest.raises(ValueError, match="leaves the board"):
    GAME.action_to_move(state, 0 * 4 + 0)  # a1 forward-left
  with pytest.raises(ValueError, match="out of range"):
    GAME.action_to_move(state, 256)


# -- Differential test against OpenSpiel -----------------------------------------------------------


def _azjax_move_names():
  """`[player][hops]` -> {action: "c3d4"}: every action on the board, named in absolute squares."""
  names = {}
  for player in (0, 1):
    for hops in (1, 2):
      table = {}
      for action in range(GAME.num_actions):
        frm, direction = divmod(action, 4)
        row, col = divmod(frm, 8)
        row_to = row + hops * (1 if direction < 2 else -1)
        col_to = col + hops * (1 if direction % 2 else -1)
        if 0 <= row_to < 8 and 0 <= col_to < 8:
          squares = [notation.to_absolute_square(s, player, 64) for s in (frm, row_to * 8 + col_to)]
          table[action] = "".join(notation.square_name(s, 8) for s in squares)
      names[player, hops] = table
  return names


def test_against_openspiel():
  """100 random games played move for move in both implementations.

  At every position the sets of legal (from, to) moves must agree (OpenSpiel names a hop, like
  azjax, by its from and to squares, e.g. "c3e5"; a multi-jump is one action per hop in both),
  and so must the player to move, the ply at which the game ends and the returns. OpenSpiel's
  `max_game_length` of 1000 is only a declared bound, not a rule; no game here gets near it, and
  an azjax game cannot pass 920 actions.
  """
  pyspiel = pytest.importorskip("pyspiel")
  game = pyspiel.load_game("checkers")
  num_games = 100
  rng = np.random.default_rng(2024)
  names = _azjax_move_names()
  probe = game.new_initial_state()
  os_names = {a: probe.action_to_string(0, a) for a in range(game.num_distinct_actions())}
  states = base.stack_states([GAME.init(None)] * num_games)
  os_states = [game.new_initial_state() for _ in range(num_games)]
  lengths = np.zeros(num_games, int)
  live = np.ones(num_games, bool)
  ply = 0
  outcomes = set()
  while live.any():
    masks, boards = np.asarray(states.legal_action_mask), np.asarray(states.board)
    players, terminated = np.asarray(states.current_player), np.asarray(states.terminated)
    rewards = np.asarray(states.rewards)
    actions = np.zeros(num_games, np.int32)
    for i in np.flatnonzero(live):
      theirs = os_states[i]
      assert bool(terminated[i]) == theirs.is_terminal(), (i, ply)
      if theirs.is_terminal():
        assert list(rewards[i]) == theirs.returns(), (i, ply)
        outcomes.add(tuple(theirs.returns()))
        live[i], lengths[i] = False, ply
        continue
      assert players[i] == theirs.current_player(), (i, ply)
      legal = np.flatnonzero(masks[i])
      frm, direction = divmod(int(legal[0]), 4)
      hops = 2 if boards[i, frm + (7, 9, -9, -7)[direction]] < 0 else 1
      ours = {names[players[i], hops][a]: a for a in legal}
      os_moves = {os_names[a]: a for a in theirs.legal_actions()}
      assert set(ours) == set(os_moves), (i, ply, str(theirs))
      move = sorted(ours)[rng.integers(len(ours))]
      actions[i] = ours[move]
      theirs.apply_action(os_moves[move])
    states = BATCH_STEP(states, jnp.asarray(actions))
    ply += 1
  assert lengths.max() <= GAME.max_game_length
  assert outcomes == {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}  # wins both ways and draws seen


def test_is_the_registered_game():
  assert isinstance(GAME, Checkers) and GAME.name == "checkers"
  assert GAME.piece_symbols == {0: ".", 1: "o", 2: "O", 3: "x", 4: "X"}


# -- History planes (the source project's 5-position input) ----------------------------------------


def test_history_planes_show_earlier_positions_from_the_movers_side():
  """With `history=3` the observation is the plain one, then the piece planes of the two
  positions before (newest first) as the player to move now sees them; empty at the start.
  The rules are those of the plain game: the same actions give the same boards."""
  game = games.make("checkers", history=3)
  assert game.observation_shape == (8, 8, 14) and "3 positions" in game.describe()
  step = jax.jit(game.step)
  state, plain = game.init(jax.random.key(0)), GAME.init(jax.random.key(0))
  assert not np.asarray(state.observation)[..., 6:].any()
  seen_before = []  # The absolute boards played through, oldest first.
  key = jax.random.key(3)
  for _ in range(14):  # On this seed: 7 captures, and turns of both sides.
    seen_before.append(GAME.board_array(plain))
    key, k = jax.random.split(key)
    mask = plain.legal_action_mask
    action = jax.random.choice(k, GAME.num_actions, p=mask / mask.sum())
    state, plain = step(state, action), STEP(plain, action)
    obs = np.asarray(state.observation)
    np.testing.assert_array_equal(obs[..., :6], np.asarray(plain.observation))
    mover = int(state.current_player)
    for k_back, absolute in enumerate(reversed(seen_before[-2:])):
      # board_array codes: 1 / 2 player 0's man / king, 3 / 4 player 1's.
      own = (1, 2) if mover == 0 else (3, 4)
      theirs = (3, 4) if mover == 0 else (1, 2)
      grid = absolute if mover == 0 else absolute[::-1, ::-1]  # The mover's frame.
      expected = np.stack([grid == own[0], grid == own[1], grid == theirs[0],
                           grid == theirs[1]], -1)
      np.testing.assert_array_equal(obs[..., 6 + 4 * k_back:10 + 4 * k_back], expected)


def test_history_is_checked_and_reaches_a_run():
  from azjax.config import Config

  for bad in (0, 9, 2.5, True):
    with pytest.raises(ValueError, match="history must be (an int|in 1..8)"):
      games.make("checkers", history=bad)
  config = Config(game="checkers", game_options={"history": 5}).validate()
  assert games.make(config.game, **config.game_kwargs()).observation_shape == (8, 8, 22)
  with pytest.raises(ValueError, match="connect_four has no option 'history'"):
    Config(game="connect_four", game_options={"history": 5}).validate()
