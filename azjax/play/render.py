"""ASCII and SVG pictures of one (unbatched) game state, for logs, notebooks and a web UI.

Both functions use only the `Game` interface: `game.board_array(state)` (absolute piece codes,
row 0 = rank 1), `game.piece_symbols`, `game.rows`, `game.cols`, `game.name`, the hooks
`game.svg_style`, `game.piece_owner` and `game.piece_is_king`, and the state fields
`current_player`, `terminated`, `rewards` and `last_move` (absolute from/to squares, -1 for
none). So they draw every game registered in `azjax.games`.

Piece codes follow the convention of every game's `board_array` (the default of
`Game.piece_owner` and `Game.piece_is_king`): 0 is empty, and with `n` non-empty codes, codes
`1..n/2` belong to player 0 and `n/2+1..n` to player 1; when a player has two codes
(checkers), the second is a king.

Tic-tac-toe after X played b2, `print(to_ascii(env, state))`:

3  .  .  .
2  . [X] .
1  .  .  .
   a  b  c
player 1 (O) to move
"""

from __future__ import annotations

from typing import Any, Iterable
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from azjax.games import base, notation

# -- Shared helpers --------------------------------------------------------------------------------


def _codes(game: base.Game) -> list[int]:
  return sorted(code for code in game.piece_symbols if code != 0)


def piece_owner(game: base.Game, code: int) -> int | None:
  """The player (0 or 1) owning piece `code` (non-zero), None for a neutral piece (a Slider
  block): `game.piece_owner`, by default the convention in the docstring."""
  return game.piece_owner(code)


def piece_is_king(game: base.Game, code: int) -> bool:
  """Whether `code` is a king (`game.piece_is_king`; by default a player's second code)."""
  return game.piece_is_king(code)


def player_name(game: base.Game, player: int) -> str:
  """"player 0 (X)": the player's number and the symbol of its first piece code."""
  codes = _codes(game)
  symbol = game.piece_symbols[codes[0 if player == 0 else len(codes) // 2]]
  return f"player {player} ({symbol})"


def status(game: base.Game, state: Any) -> str:
  """Who is to move, or the result ("player 0 (X) wins", "draw").

  The result is read from `state.rewards`, the reward of the last transition: a terminated state
  that was stepped again (a no-op that zeroes the rewards) reads as a draw.
  """
  if bool(np.asarray(state.terminated)):
    rewards = np.asarray(state.rewards)
    if rewards[0] > 0:
      return f"game over: {player_name(game, 0)} wins"
    if rewards[1] > 0:
      return f"game over: {player_name(game, 1)} wins"
    return "game over: draw"
  return f"{player_name(game, int(state.current_player))} to move"


def _last_move(game: base.Game, state: Any) -> tuple[int, int]:
  """Absolute (from, to) squares of the last move; -1 for none or out of range."""
  num_squares = game.rows * game.cols
  squares = [int(s) for s in np.asarray(state.last_move).reshape(-1)[:2]]
  return tuple(s if 0 <= s < num_squares else -1 for s in squares)  # type: ignore[return-value]


# -- ASCII -----------------------------------------------------------------------------------------


def to_ascii(game: base.Game, state: Any, *, highlight_last: bool = True) -> str:
  """The board as text, in absolute orientation (player 0 at the bottom), and a status line.

  Rank numbers are on the left (the last rank at the top), file letters below, as in OpenSpiel's
  printout. Every square is three characters wide: ` X ` normally. With `highlight_last`, the
  square the last move went to is drawn `[X]` and the square it came from `(.)` (a drop, as in
  Connect Four and tic-tac-toe, has no from-square). The last line says who is to move, or the
  result.

  Args:
    game: the game.
    state: one unbatched state.
    highlight_last: mark the last move's squares.
  Returns:
    Lines joined with "\\n", without trailing spaces or a final newline.
  """
  board = np.asarray(game.board_array(state))
  frm, to = _last_move(game, state) if highlight_last else (-1, -1)
  width = len(str(game.rows))
  lines = []
  for row in range(game.rows - 1, -1, -1):
    cells = []
    for col in range(game.cols):
      square = row * game.cols + col
      symbol = game.piece_symbols.get(int(board[row, col]), "?")
      if square == to:
        cells.append(f"[{symbol}]")
      elif square == frm:
        cells.append(f"({symbol})")
      else:
        cells.append(f" {symbol} ")
    lines.append(f"{row + 1:>{width}} " + "".join(cells))
  lines.append(" " * (width + 1) + "".join(f" {notation.FILES[c]} " for c in range(game.cols)))
  lines.append(status(game, state))
  return "\n".join(line.rstrip() for line in lines)


# -- SVG -------------------------------------------------------------------------------------------


def _square_index(game: base.Game, square: int | str) -> int:
  if isinstance(square, str):
    (index,) = notation.parse_squares(square, game.rows, game.cols, game.name)
    return index
  return int(square)


def _num(x: float) -> str:
  return f"{x:.2f}".rstrip("0").rstrip(".")


def _attrs(**kw: Any) -> str:
  return " ".join(f"{k.rstrip('_').replace('_', '-')}={quoteattr(str(v))}" for k, v in kw.items())


def to_svg(game: base.Game, state: Any, *, size: int = 400, highlight_last: bool = True,
           highlight_squares: Iterable[int | str] = (), flip: bool = False) -> str:
  """The board as a self-contained SVG document (no external resources, no scripts).

  Layout: one `<g class="square" data-square="e4">` per square holds that square's background,
  its highlights and its piece, so a web page can handle a click with
  `event.target.closest("[data-square]")`. (In Connect Four the square's file letter is the
  column to play.) Coordinates are drawn outside the board: rank numbers on the left, file
  letters below.

  Looks: the game's `svg_style` (`azjax.games.base.SvgStyle`): a checkered board (a1 dark) by
  default, as for Breakthrough and checkers; a blue frame with round holes for Connect Four; a
  plain grid for tic-tac-toe. Pieces are circles in each
  player's colour (tic-tac-toe draws X and O marks); a king (a player's second piece code, as
  in checkers) has a gold crown ring and the class `king`. With `highlight_last`, the last
  move's from- and to-squares get a yellow overlay (a light blue ring around the dropped disc in
  Connect Four; class `last-move`, plus `from` or `to`); each of
  `highlight_squares` (names like "e4" or absolute indices, e.g. legal targets) gets a green
  dot, or a green ring when a piece stands there (class `highlight`).

  Args:
    game: the game.
    state: one unbatched state.
    size: width of the picture in pixels (the height follows the board's shape).
    highlight_last: mark the last move.
    highlight_squares: extra squares to mark.
    flip: draw from player 1's side (rank 1 at the top, files from right to left).
  Returns:
    The SVG document as a string.
  """
  style = game.svg_style
  rows, cols = game.rows, game.cols
  board = np.asarray(game.board_array(state))
  frm, to = _last_move(game, state) if highlight_last else (-1, -1)
  extra = {_square_index(game, s) for s in highlight_squares}

  cell = size / (cols + 0.7)
  margin, pad = 0.6 * cell, 0.1 * cell  # room for the coordinates (left, bottom); other sides
  width, height = margin + cols * cell + pad, pad + rows * cell + margin
  top, bottom = pad, pad + rows * cell  # the board's vertical extent

  def origin(row: int, col: int) -> tuple[float, float]:
    """Top-left corner of absolute square (row, col) in the picture."""
    x_col = cols - 1 - col if flip else col
    y_row = row if flip else rows - 1 - row
    return margin + x_col * cell, top + y_row * cell

  out = [
      '<svg xmlns="http://www.w3.org/2000/svg" ' + _attrs(
          width=_num(width), height=_num(height), viewBox=f"0 0 {_num(width)} {_num(height)}",
          class_=f"azjax-board {game.name}", data_game=game.name, data_flip=str(flip).lower())
      + ">",
      f"<title>{escape(game.name)}: {escape(status(game, state))}</title>",
      "<rect " + _attrs(x=0, y=0, width=_num(width), height=_num(height), fill=style.background)
      + "/>",
  ]
  if style.kind == "frame":  # Connect Four: one blue panel; each square cuts a hole in it.
    out.append("<rect " + _attrs(x=_num(margin), y=_num(top), width=_num(cols * cell),
                                 height=_num(rows * cell), rx=_num(cell * 0.12),
                                 fill=style.dark, class_="frame") + "/>")

  for row in range(rows):
    for col in range(cols):
      square = row * cols + col
      name = notation.square_name(square, cols)
      x, y = origin(row, col)
      cx, cy = x + cell / 2, y + cell / 2
      code = int(board[row, col])
      out.append("<g " + _attrs(class_="square", data_square=name) + ">")
      # Background.
      if style.kind == "checkered":
        shade = "dark" if (row + col) % 2 == 0 else "light"
        out.append("<rect " + _attrs(x=_num(x), y=_num(y), width=_num(cell), height=_num(cell),
                                     fill=getattr(style, shade), class_=shade) + "/>")
      else:  # An invisible (but painted, so clickable) rect over the frame or grid.
        out.append("<rect " + _attrs(x=_num(x), y=_num(y), width=_num(cell), height=_num(cell),
                                     fill=style.background, fill_opacity="0", class_="cell")
                   + "/>")
      if square in (frm, to) and style.kind != "frame":
        kind = "to" if square == to else "from"
        out.append("<rect " + _attrs(x=_num(x), y=_num(y), width=_num(cell), height=_num(cell),
                                     fill=style.last_move, fill_opacity="0.55" if kind == "to"
                                     else "0.35", class_=f"last-move {kind}") + "/>")
      if style.kind == "frame":  # The hole (the disc, if any, fills it below).
        out.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(cell * 0.39),
                                       fill=style.light, class_="hole") + "/>")
      # Piece.
      if code != 0:
        out.append(_piece(game, code, cx, cy, cell, style))
      if square in (frm, to) and style.kind == "frame":  # A ring around the dropped disc.
        kind = "to" if square == to else "from"
        out.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(cell * 0.42), fill="none",
                                       stroke=style.last_move, stroke_width=_num(cell * 0.07),
                                       class_=f"last-move {kind}") + "/>")
      if square in extra:
        if code != 0:
          out.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(cell * 0.45),
                                         fill="none", stroke=style.highlight,
                                         stroke_width=_num(cell * 0.07), class_="highlight")
                     + "/>")
        else:
          out.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(cell * 0.14),
                                         fill=style.highlight, fill_opacity="0.8",
                                         class_="highlight") + "/>")
      out.append("</g>")

  if style.kind == "grid":  # Tic-tac-toe: the inner lines only.
    stroke = _attrs(stroke=style.dark, stroke_width=_num(cell * 0.04), stroke_linecap="round")
    for k in range(1, cols):
      x = margin + k * cell
      out.append(f'<line {_attrs(x1=_num(x), y1=_num(top + cell * 0.05), x2=_num(x))} '
                 f'{_attrs(y2=_num(bottom - cell * 0.05))} {stroke} class="grid"/>')
    for k in range(1, rows):
      y = top + k * cell
      out.append(f'<line {_attrs(x1=_num(margin + cell * 0.05), y1=_num(y))} '
                 f'{_attrs(x2=_num(margin + cols * cell - cell * 0.05), y2=_num(y))} {stroke} '
                 'class="grid"/>')
  elif style.kind == "checkered":
    out.append("<rect " + _attrs(x=_num(margin), y=_num(top), width=_num(cols * cell),
                                 height=_num(rows * cell), fill="none", stroke="#333333",
                                 stroke_width=_num(max(cell * 0.02, 1)), class_="border") + "/>")

  # Coordinates.
  font = _attrs(font_family="sans-serif", font_size=_num(min(cell * 0.3, 18)), fill="#444444",
                text_anchor="middle", dominant_baseline="central")
  for col in range(cols):
    x, _ = origin(0, col)
    out.append(f'<text {_attrs(x=_num(x + cell / 2), y=_num(bottom + margin / 2))} {font} '
               f'class="coord file">{notation.FILES[col]}</text>')
  for row in range(rows):
    _, y = origin(row, 0)
    out.append(f'<text {_attrs(x=_num(margin / 2), y=_num(y + cell / 2))} {font} '
               f'class="coord rank">{row + 1}</text>')
  out.append("</svg>")
  return "\n".join(out)


def _piece(game: base.Game, code: int, cx: float, cy: float, cell: float,
           style: base.SvgStyle) -> str:
  """SVG of piece `code` centred on (cx, cy)."""
  owner = piece_owner(game, code)
  symbol = escape(game.piece_symbols.get(code, "?"))
  if owner is None:  # A neutral piece (a Slider block): a grey stone, no side's colour.
    side = cell * 0.7
    return (f"<g {_attrs(class_='piece block', data_piece=symbol)}><title>{symbol}</title>"
            "<rect " + _attrs(x=_num(cx - side / 2), y=_num(cy - side / 2), width=_num(side),
                              height=_num(side), rx=_num(cell * 0.08), fill="#8a8a8a",
                              stroke="#555555", stroke_width=_num(cell * 0.03)) + "/></g>")
  fill, outline = style.pieces[owner], style.outlines[owner]
  classes = f"piece player{owner}" + (" king" if piece_is_king(game, code) else "")
  head = _attrs(class_=classes, data_piece=game.piece_symbols.get(code, "?"))
  if style.kind == "grid":  # Tic-tac-toe marks: X as a cross, O as a ring.
    stroke = _attrs(stroke=fill, stroke_width=_num(cell * 0.1), stroke_linecap="round", fill="none")
    if owner == 0:
      d = cell * 0.28
      return (f"<g {head}><title>{symbol}</title>"
              f'<line {_attrs(x1=_num(cx - d), y1=_num(cy - d), x2=_num(cx + d), y2=_num(cy + d))} '
              f"{stroke}/>"
              f'<line {_attrs(x1=_num(cx - d), y1=_num(cy + d), x2=_num(cx + d), y2=_num(cy - d))} '
              f"{stroke}/></g>")
    return (f"<g {head}><title>{symbol}</title>"
            f"<circle {_attrs(cx=_num(cx), cy=_num(cy), r=_num(cell * 0.3))} {stroke}/></g>")
  radius = cell * (0.37 if style.kind == "frame" else 0.38)
  parts = [f"<g {head}><title>{symbol}</title>",
           "<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(radius), fill=fill,
                               stroke=outline, stroke_width=_num(cell * 0.03)) + "/>"]
  if style.kind != "frame":  # An inner ring gives checkers-like pieces some depth.
    parts.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(radius * 0.72), fill="none",
                                     stroke=outline, stroke_opacity="0.35",
                                     stroke_width=_num(cell * 0.02)) + "/>")
  if piece_is_king(game, code):  # Crown: a gold ring and a gold dot.
    parts.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(radius * 0.55), fill="none",
                                     stroke="#d4a017", stroke_width=_num(cell * 0.06),
                                     class_="crown") + "/>")
    parts.append("<circle " + _attrs(cx=_num(cx), cy=_num(cy), r=_num(radius * 0.18),
                                     fill="#d4a017", class_="crown") + "/>")
  parts.append("</g>")
  return "".join(parts)
