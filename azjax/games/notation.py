"""Square notation shared by the games: files a, b, ... and ranks 1, 2, ... in the absolute
frame (row 0 = rank 1, player 0's home rank), as in "a2a3"; and ASCII board drawings.

Pure Python on host values (move text, `from_ascii`), never traced.
"""

from __future__ import annotations

import re

import numpy as np

FILES = "abcdefghijklmnopqrstuvwxyz"
_SQUARE_RE = re.compile(r"([a-z])(\d+)")


def parse_drawing(text: str, game: str, codes: dict[str, int], rows: int, cols: int, *,
                  symbols: str, case_sensitive: bool = False,
                  ignore: str = r"[\s|]") -> np.ndarray:
  """`[rows, cols]` int8 board (row 0 = rank 1) of an ASCII drawing, for a game's `from_ascii`.

  One line per rank, the top rank first; rank numbers at either end, a line of file letters,
  blank lines and the characters matching `ignore` are skipped. `codes` maps a square's
  character (lower-cased first unless `case_sensitive`) to its board code.

  Raises:
    ValueError: naming `game`, for an unknown character (`symbols` lists the known ones), a
      rank of the wrong length or the wrong number of ranks.
  """
  ranks = []
  for line in text.strip("\n").splitlines():
    cells = re.sub(ignore, "", line if case_sensitive else line.lower())
    cells = re.sub(r"^\d+|\d+$", "", cells)
    if not cells or cells.lower() == FILES[:len(cells)]:
      continue  # blank line or file labels
    if set(cells) - set(codes):
      raise ValueError(f"{game}: bad rank {line!r}: use {symbols}")
    if len(cells) != cols:
      raise ValueError(f"{game}: rank {line!r} has {len(cells)} squares, not {cols}")
    ranks.append([codes[c] for c in cells])
  if len(ranks) != rows:
    raise ValueError(f"{game}: drawing has {len(ranks)} ranks, not {rows}")
  return np.array(ranks[::-1], np.int8)


def square_name(square: int, cols: int) -> str:
  """Absolute square index (row-major, row 0 = rank 1) -> "a1"."""
  row, col = divmod(int(square), cols)
  return f"{FILES[col]}{row + 1}"


def parse_squares(text: str, rows: int, cols: int, game: str) -> list[int]:
  """Splits a string of concatenated squares ("a2a3", "c3e5g7") into absolute square indices.

  Raises:
    ValueError: when the string is not squares, or a square is off the board.
  """
  text = text.strip().lower()
  parts = _SQUARE_RE.findall(text)
  if not parts or "".join(f + r for f, r in parts) != text:
    raise ValueError(f"{game}: malformed move {text!r}: expected squares like 'a2a3'")
  squares = []
  for file, rank in parts:
    col, row = FILES.index(file), int(rank) - 1
    if not (0 <= col < cols and 0 <= row < rows):
      raise ValueError(
          f"{game}: square {file}{rank} is off the {rows}x{cols} board "
          f"(files a-{FILES[cols - 1]}, ranks 1-{rows})")
    squares.append(row * cols + col)
  return squares


def to_absolute_square(square: int, player: int, num_squares: int) -> int:
  """Maps a square index in the mover's frame to the absolute frame (rotation by 180 degrees).

  The map is its own inverse, so it also maps absolute squares to the mover's frame.
  """
  return int(square) if int(player) == 0 else num_squares - 1 - int(square)
