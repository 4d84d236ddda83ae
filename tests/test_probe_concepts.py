"""Concept functions on scripted positions, from the side of the player to move.

Every position is drawn as seen by player 0 (rank 1 at the bottom) and evaluated for the mover
given; the expected values are counted by hand in the comments.
"""

import jax
import numpy as np
import pytest

from azjax import games
from azjax.probe import concepts

BT = games.make("breakthrough", rows=6, cols=6)
CK = games.make("checkers")
PAD = 8  # Labels are computed on batches of this size: one compilation per game.


def labels(env, *states):
  """`[{concept: value}]` for each state, computed batched (padded to `PAD` states)."""
  padded = list(states) + [states[0]] * (PAD - len(states))
  batch = jax.tree.map(lambda *xs: np.stack(xs), *padded)
  out = concepts.labels(env, batch)
  return [{name: float(values[i]) for name, values in out.items()} for i in range(len(states))]


# -- Breakthrough ---------------------------------------------------------------------------------

# White: a1 b1 d1 e1 c3 (5); black: a6 b6 d6 e6 f6 d4 (6).
MIDGAME = """
6 b b . b b b
5 . . . . . .
4 . . . b . .
3 . . w . . .
2 . . . . . .
1 w w . w w .
  a b c d e f
"""


def test_breakthrough_start():
  (start,) = labels(BT, BT.init(jax.random.key(0)))
  assert start == dict(material=0, material_advantage=0, mobility=0, capture_available=0,
                       win_in_one=0, must_defend=0, advancement=0, home_guards=6,
                       free_runner=0)


def test_breakthrough_midgame_from_both_sides():
  white, black = labels(BT, BT.from_ascii(MIDGAME, 0), BT.from_ascii(MIDGAME, 1))
  # White's moves: a1 2, b1 3, d1 3, e1 3, c3 3 (b4, c4, takes d4) = 14. Black's: a6 2, b6 3,
  # d6 3, e6 3, f6 2, d4 3 (takes c3, d3, e3) = 16.
  assert white == dict(material=-1, material_advantage=0, mobility=-2, capture_available=1,
                       win_in_one=0, must_defend=0, advancement=0, home_guards=4,
                       free_runner=0)
  # Advancement: white c3 is 2 rows up, black d4 2 rows down: 2 - 2.
  assert black == dict(material=1, material_advantage=1, mobility=2, capture_available=1,
                       win_in_one=0, must_defend=0, advancement=0, home_guards=5,
                       free_runner=0)


def test_breakthrough_win_in_one_and_must_defend():
  # White e5 reaches rank 6 next move (straight is blocked by e6, both diagonals capture).
  board = """
  6 b . . b b b
  5 . . . . w .
  4 . . . . . .
  3 . . . . . .
  2 . . . . . .
  1 w . . . . .
  """
  white, black = labels(BT, BT.from_ascii(board, 0), BT.from_ascii(board, 1))
  assert white["win_in_one"] == 1 and white["must_defend"] == 0
  assert black["win_in_one"] == 0 and black["must_defend"] == 1
  # White e5 is 4 rows up and a1 0; black's pieces are home: advancement 4 for white.
  assert white["advancement"] == 4 and black["advancement"] == -4


def test_breakthrough_win_by_taking_the_last_piece():
  # Black's only piece c4 can be taken by b3; white a1 cannot reach rank 6 in one move.
  board = """
  6 . . . . . .
  5 . . . . . .
  4 . . b . . .
  3 . w . . . .
  2 . . . . . .
  1 w . . . . .
  """
  white, black = labels(BT, BT.from_ascii(board, 0), BT.from_ascii(board, 1))
  assert white["win_in_one"] == 1 and white["capture_available"] == 1
  # Black (two white pieces) takes b3 with c4 but does not win; it has no piece one step
  # from rank 1 either.
  assert black["win_in_one"] == 0 and black["capture_available"] == 1
  assert black["must_defend"] == 1


def test_breakthrough_free_runner_cone():
  # c4 (row 3, col 2): its cone is b5-d5 and a6-e6. f6 lies outside, e6 inside.
  outside = """
  6 . . . . . b
  5 . . . . . .
  4 . . w . . .
  3 . . . . . .
  2 . . . . . .
  1 . . . . . .
  """
  inside = outside.replace(". . . . . b", ". . . . b .")
  free, black_free, blocked = labels(BT, BT.from_ascii(outside, 0), BT.from_ascii(outside, 1),
                                     BT.from_ascii(inside, 0))
  assert free["free_runner"] == 1
  # Seen by black, f6 runs down the f file and c4 is outside its cone (3 files over, 2 ranks).
  assert black_free["free_runner"] == 1
  assert blocked["free_runner"] == 0


def test_breakthrough_single_state_matches_batch():
  state = BT.from_ascii(MIDGAME, 1)
  (batched,) = labels(BT, state)
  for name, concept in concepts.concepts_for(BT).items():
    assert float(concept.fn(state)) == batched[name], name


def test_breakthrough_5x5_home_ranks():
  env = games.make("breakthrough", rows=5, cols=5)
  start = concepts.labels(env, jax.tree.map(lambda x: np.stack([x]),
                                            env.init(jax.random.key(0))))
  assert start["home_guards"][0] == 5 and start["mobility"][0] == 0


# -- Checkers --------------------------------------------------------------------------------------


def test_checkers_start():
  (start,) = labels(CK, CK.init(jax.random.key(0)))
  assert start == dict(material=0, material_advantage=0, king_difference=0, forced_jump=0,
                       multi_jump_available=0, pieces_en_prise=0, back_rank_guards=4,
                       promotion_threat=0, centre_control=0)


def test_checkers_capture_from_both_sides():
  board = """
  8 . . . . . . . .
  7 . . . . . . . .
  6 . . . . . . . .
  5 . . . . . . . .
  4 . . . x . . . .
  3 . . o . . . . .
  2 . . . . . . . .
  1 o . . . . . . .
  """
  white, black = labels(CK, CK.from_ascii(board, 0), CK.from_ascii(board, 1))
  # o: c3 takes d4 (to e5); x: d4 takes c3 (to b2). One piece en prise each side.
  assert white["forced_jump"] == 1 and white["pieces_en_prise"] == 1
  assert black["forced_jump"] == 1 and black["pieces_en_prise"] == 1
  assert white["material"] == 1 and white["material_advantage"] == 1
  assert black["material"] == -1 and black["material_advantage"] == 0
  assert white["back_rank_guards"] == 1 and black["back_rank_guards"] == 0
  # Centre (c3-f6): o c3 and x d4 are both in it.
  assert white["centre_control"] == 0
  assert white["multi_jump_available"] == 0


def test_checkers_multi_jump_and_pending_jump():
  board = """
  8 . . . . . . . .
  7 . . . . . . . .
  6 . . . . . x . .
  5 . . . . . . . .
  4 . . . x . . . .
  3 . . o . . . . .
  2 . . . . . . . .
  1 . . . . . . . .
  """
  state = CK.from_ascii(board, 0)
  after_first_hop = CK.step(state, CK.move_to_action(state, "c3e5"))
  assert int(after_first_hop.jump_square) >= 0  # e5 must go on jumping
  first, pending = labels(CK, state, after_first_hop)
  # c3xe5 can go on over f6 to g7.
  assert first["multi_jump_available"] == 1 and first["forced_jump"] == 1
  # The pending hop e5xg7 ends the turn: no further multi-jump, but the jump is forced.
  assert pending["forced_jump"] == 1 and pending["multi_jump_available"] == 0
  assert pending["material"] == 0


def test_checkers_promotion_threat_and_kings():
  simple = """
  8 . . . . . . . .
  7 . . o . . . . .
  6 . . . . . . . .
  5 . . . . . . . .
  4 . . . . . . . .
  3 . . . . . . . .
  2 . . . . . . . .
  1 . . . . . . X .
  """
  # A capture elsewhere is mandatory (d2 takes e3): c7 cannot step to the crowning rank...
  forced_elsewhere = simple.replace("3 . . . . . . . .", "3 . . . . x . . .").replace(
      "2 . . . . . . . .", "2 . . . o . . . .")
  # ...unless the capture itself crowns: d6 takes e7 and lands on f8.
  crowning_jump = """
  8 . . . . . . . .
  7 . . . . x . . .
  6 . . . o . . . .
  5 . . . . . . . .
  4 . . . . . . . .
  3 . . . . . . . .
  2 . . . . . . . .
  1 . . . . . . . .
  """
  plain, elsewhere, jump = labels(CK, CK.from_ascii(simple, 0),
                                  CK.from_ascii(forced_elsewhere, 0),
                                  CK.from_ascii(crowning_jump, 0))
  assert plain["promotion_threat"] == 1
  assert plain["king_difference"] == -1  # the opponent's king on g1
  assert elsewhere["promotion_threat"] == 0 and elsewhere["forced_jump"] == 1
  assert jump["promotion_threat"] == 1 and jump["forced_jump"] == 1


def test_checkers_kings_jump_backwards():
  # x on d2 can take c3 only by jumping up the board to b4: backwards for x, so only a king
  # can.
  board = """
  8 . . . . . . . .
  7 . . . . . . . .
  6 . . . . . . . .
  5 . . . . . . . .
  4 . . . . . . . .
  3 . . o . . . . .
  2 . . . {} . . . .
  1 . . . . . . . .
  """
  king, man = labels(CK, CK.from_ascii(board.format("X"), 0), CK.from_ascii(board.format("x"), 0))
  assert king["pieces_en_prise"] == 1 and man["pieces_en_prise"] == 0
  assert king["king_difference"] == -1 and man["king_difference"] == 0


def test_unknown_game_and_concept():
  with pytest.raises(ValueError, match="no concepts"):
    concepts.concepts_for(games.make("tic_tac_toe"))
  with pytest.raises(ValueError, match="unknown concepts"):
    concepts.labels(BT, jax.tree.map(lambda x: np.stack([x]), BT.init(jax.random.key(0))),
                    ["nope"])
