"""Checkers' board and action-space sizes and piece codes: what the rules (`checkers.py`) and
what a player knows beyond them (`checkers_knowledge.py`) share, so neither imports the other."""

ROWS = COLS = 8
NUM_SQUARES = ROWS * COLS
NUM_DIRECTIONS = 4
NUM_ACTIONS = NUM_SQUARES * NUM_DIRECTIONS  # an action is a from-square and a direction
MAN, KING = 1, 2  # a square's value: + player 0's piece, - player 1's, 0 empty
