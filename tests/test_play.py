"""Playing against agents: the session logic, the engines' explanations, and the terminal.

The terminal is driven through its standard input: in-process (`azjax.cli.play.run` with a
`StringIO`, or an input that answers each prompt from the position) and once as a real
`python -m experiments.play` subprocess.
"""

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from azjax import agents, games, play, runs, search
from azjax.cli import play as play_cli

from positions import CHECKERS_CHOICE

REPO = Path(__file__).resolve().parent.parent
# Breakthrough 5x5 (one rank each): white runs up the a-file and captures onto b5.
QUICK_WIN_5X5 = "a1a2 e5e4 a2a3 e4e3 a3a4 d5d4 a4b5"


@pytest.fixture(scope="module")
def factory():
  return play.EngineFactory()


@pytest.fixture(scope="module")
def bt5():
  return games.make("breakthrough", rows=5, cols=5)


def boards_equal(env, a, b):
  return np.array_equal(env.board_array(a), env.board_array(b))


# -- Sides, rules, notation ------------------------------------------------------------------------


def test_rules_and_colours():
  for name in games.GAMES:
    env = games.make(name)
    text = play.rules(env)
    assert "Notation" in text and len(text.splitlines()) >= 4, name
  assert "6x6" in play.rules(games.make("breakthrough", rows=6, cols=6))
  assert play.parse_color("checkers", "red") == 0
  assert play.parse_color("checkers", "black") == 1
  assert play.parse_color("connect_four", "white") == 0  # white = the first player anywhere
  assert play.parse_color("tic_tac_toe", "o") == 1
  with pytest.raises(ValueError, match="unknown colour 'green'"):
    play.parse_color("breakthrough", "green")
  assert play.normalise_move(" A2-A3 ") == "a2a3"
  assert play.normalise_move("c3xe5xg7") == "c3e5g7"
  env = games.make("connect_four")
  assert play.move_squares(env, "d") == (None, [f"d{r}" for r in range(1, 7)])
  assert play.move_squares(games.make("tic_tac_toe"), "b2") == (None, ["b2"])
  assert play.move_squares(games.make("checkers"), "c3e5") == ("c3", ["e5"])


def test_engine_specs():
  assert play.parse_spec("mcts:400") == agents.Spec("mcts", 400)
  assert play.parse_spec("AZ") == agents.Spec("az")
  assert play.parse_spec("azab:3") == agents.Spec("azab", 3)
  for bad in ("gnugo", "random:3", "mcts:0", "mcts:x"):
    with pytest.raises(ValueError, match="player"):
      play.parse_spec(bad)
  # Every kind of the table has an engine here, except OpenSpiel's bots (evaluate only).
  assert set(play.opponents()) == set(agents.KINDS) - {"openspiel-mcts"}
  # ... and play's own kind, a TD-Leaf run's player (not a row of the table).
  assert set(play.ENGINES) == set(agents.kinds("jax")) | {"tdleaf"}
  assert "tdleaf" not in play.opponents() and play.TDLEAF.name == "tdleaf"
  with pytest.raises(ValueError, match="'openspiel-mcts:5'.*evaluate only.*use one of: random"):
    play.parse_spec("openspiel-mcts:5")


# -- Sessions --------------------------------------------------------------------------------------


def test_bad_input_never_changes_the_position(bt5):
  session = play.Session(bt5, (None, None))
  start = session.state
  cases = {
      "a2a5": "not a one-step forward move",  # a move that breaks the rules
      "a1a3": "not a one-step forward move",
      "b1a2x": "malformed move",
      "hello": "malformed move",
      "a9a1": "off the 5x5 board",
      "": "empty move",
      "e5e4": "not a one-step forward move for white",  # black's piece, white to move
  }
  for text, reason in cases.items():
    with pytest.raises(ValueError, match=reason) as err:
      session.play(text)
    assert "legal moves: a1a2" in str(err.value)
    assert session.state is start and session.moves == []
  assert session.play("A1-A2") == ["a1a2"]
  assert session.moves == ["a1a2"] and len(session.history) == 2
  session.play("a5a4")
  session.play("a2a3")
  session.play("e5e4")
  with pytest.raises(ValueError, match="illegal move 'a3a4'; legal moves: "):
    session.play("a3a4")  # straight into a piece
  assert session.moves == ["a1a2", "a5a4", "a2a3", "e5e4"]


def test_full_game_result_record_and_replay(bt5, tmp_path):
  session = play.Session(bt5, (None, None))
  for move in QUICK_WIN_5X5.split():
    session.play(move)
  assert session.over and session.result() == ("1-0", "white wins")
  assert "game over: white wins" in session.board_text()
  with pytest.raises(ValueError, match="the game is over"):
    session.play("b1b2")
  path = session.save(tmp_path)
  text = path.read_text()
  assert '[Game "breakthrough"]' in text and '[Board "5x5"]' in text
  assert "1. a1a2 e5e4 2. a2a3 e4e3 3. a3a4 d5d4 4. a4b5 1-0" in text
  replayed = play.replay_file(path)
  assert replayed.result == "1-0" and replayed.session.moves == session.moves
  assert boards_equal(bt5, replayed.session.state, session.state)
  assert session.save(tmp_path) == path  # one game, one file
  with pytest.raises(ValueError, match=r"turn 3 \(a2a4\)"):
    play.replay(text.replace("a2a3", "a2a4"))


def test_checkers_paths_hops_record_and_undo(factory):
  env = games.make("checkers")
  start = env.from_ascii(CHECKERS_CHOICE)
  session = play.Session(env, (None, None), start=start)
  # A whole double jump at once: two actions, then the turn passes.
  assert session.play("c3e5g7") == ["c3e5", "e5g7"]
  assert session.to_move == 1 and session.turns() == ["c3e5g7"]
  # Hop by hop: the same piece must go on, and the status says so.
  session = play.Session(env, (None, None), start=start)
  session.play("c3e5")
  assert session.to_move == 0 and session.continuing_square() == "e5"
  assert "must go on jumping with the piece on e5" in session.status()
  with pytest.raises(ValueError, match="illegal move 'a3c5'"):
    session.play("a3c5")
  with pytest.raises(ValueError, match="mandatory"):
    session.play("a3b4")
  assert session.undo() == ["c3e5"]  # one hop back: the person decided each hop
  session.play("c3e5")
  session.play("e5g7")
  assert session.turns() == ["c3e5g7"]
  # A path that breaks off after a legal hop leaves the position unchanged.
  session = play.Session(env, (None, None), start=start)
  with pytest.raises(ValueError, match="path 'c3e5c7'"):
    session.play("c3e5c7")
  assert session.moves == []


def test_undo_takes_back_the_reply_too(bt5, factory):
  random = factory.make(bt5, "random")
  session = play.Session(bt5, (None, random), seed=1)
  with pytest.raises(ValueError, match="nothing to undo"):
    session.undo()
  session.play("c1c2")
  reply = session.agent_move()
  assert session.moves == ["c1c2", reply.move]
  assert session.undo() == ["c1c2", reply.move]
  assert len(session.history) == 1 and session.human_to_move
  # Playing black: the engine's opening move cannot be taken back by the person.
  session = play.Session(bt5, (random, None), seed=1)
  with pytest.raises(ValueError, match="not yours"):
    session.play("a1a2")
  session.agent_move()
  with pytest.raises(ValueError, match="nothing to undo"):
    session.undo()
  # A resignation is undone first, alone.
  session.resign()
  assert session.over and session.result()[0] == "1-0"
  assert session.undo() == [] and not session.over


# -- Engines ---------------------------------------------------------------------------------------


TTT_WIN_IN_ONE = "a1 a2 b1 b2"  # X to move; c1 wins


# PUCT follows a barely trained prior (the tiny network of `trained_run`) longer than Gumbel's
# Sequential Halving does: it needs 64 simulations to see the win.
# The network kinds train the session's tiny run: the full suite's.
@pytest.mark.parametrize("spec", [
    pytest.param("az:16", marks=pytest.mark.slow),
    pytest.param("az:64:algorithm=puct", marks=pytest.mark.slow), "mcts:200", "alphabeta:2",
    pytest.param("azab:2", marks=pytest.mark.slow), pytest.param("policy", marks=pytest.mark.slow),
    "random"])
def test_engines_explain_their_moves(spec, factory, trained_run):
  env = games.make("tic_tac_toe")
  run_dir = trained_run("tic_tac_toe") if agents.parse_spec(spec).info.network else None
  engine = factory.make(env, spec, run_dir)
  session = play.Session(env, (None, None))
  for move in TTT_WIN_IN_ONE.split():
    session.play(move)
  analysis = session.analyse(engine)
  assert analysis.move in session.legal_moves()
  text = play.describe(env, analysis, 0)
  if spec == "random":
    assert analysis.value is None and text == "no evaluation (random play)"
    return
  if spec == "policy":  # No search: the network's most probable move, its probabilities shown.
    assert analysis.top[0].move == analysis.move and "top moves (policy): " in text
    assert sum(t.share for t in analysis.top) == pytest.approx(1.0, abs=1e-3)
    return
  assert analysis.move == "c1", text  # every searching engine finds the win in one
  assert analysis.top[0].move == "c1"
  if spec.startswith(("alphabeta", "azab")):
    assert analysis.value_kind == "score" and "wins in 1 plies" in text
  else:
    assert analysis.value_kind == "value" and 0.5 < analysis.value <= 1.0
    shares = [t.share for t in analysis.top]
    assert all(0 <= s <= 1 for s in shares) and 0.99 <= sum(shares) <= 1.0 + 1e-6
    assert "value for X +" in text and "top moves (visit share): c1" in text


@pytest.mark.slow
def test_analysis_numbers_come_from_the_search(factory, trained_run):
  """The az engine's shares and Q-values are `search.search`'s root statistics: with PUCT the
  visit shares are the search's action weights, and they sum to 1 over the legal moves."""
  env = games.make("tic_tac_toe")
  run_dir = trained_run("tic_tac_toe")
  engine = factory.make(env, "az:32:algorithm=puct", run_dir)
  session = play.Session(env, (None, None))
  session.play("b2")  # O to move: eight legal moves.
  state, key = session.state, jax.random.key(11)
  analysis = engine.analyse(state, key)
  network = play._load_network(run_dir)
  search_config = network.config.search_config(evaluation=True, simulations=32,
                                                algorithm="puct")
  # Jitted: one compilation, not the search op by op.
  out = jax.jit(lambda variables, states, key: search.search(
      env, agents.network_eval_fn(network.model), search_config, variables, states, key))(
          network.variables, jax.tree.map(lambda x: x[None], state), key)
  weights = {env.action_to_move(state, a): float(out.action_weights[0, a])
             for a in env.legal_actions(state)}
  q = {env.action_to_move(state, a): float(out.qvalues[0, a]) for a in env.legal_actions(state)}
  assert len(analysis.top) == len(weights) == 8
  assert sum(t.share for t in analysis.top) == pytest.approx(1.0)
  for stat in analysis.top:
    assert stat.share == pytest.approx(weights[stat.move], abs=1e-6)
    if stat.value is not None:
      assert stat.value == pytest.approx(q[stat.move], abs=1e-6)
  assert analysis.action == int(out.action[0])


# -- Choosing the board and the opponent -----------------------------------------------------------


def _fake_run(root: Path, name: str, evaluated: bool = False, **changes) -> Path:
  """A run directory with the CPU preset's config (plus `changes`) and an empty model/."""
  from azjax import config as config_lib

  config = json.loads(config_lib.preset("breakthrough_cpu", game="breakthrough").to_json())
  config.update(changes)
  run = root / name
  (run / "model").mkdir(parents=True)
  (run / "config.json").write_text(json.dumps(config))
  if evaluated:
    (run / "eval.md").write_text("table")
  return run


def test_find_checkpoint_prefers_evaluated_runs_and_the_standard_board(tmp_path):
  _fake_run(tmp_path, "b6_curve")
  best = _fake_run(tmp_path, "b6_long_name", evaluated=True)
  big = _fake_run(tmp_path, "b8", rows=8, cols=8)
  assert play.find_checkpoint("breakthrough", search=[tmp_path]) == best
  assert play.find_checkpoint("breakthrough", 8, 8, search=[tmp_path]) == big
  assert play.find_checkpoint("breakthrough", 5, 5, search=[tmp_path]) is None
  assert play.find_checkpoint("checkers", search=[tmp_path]) is None
  # Where the agent is shown, the choice says why (checkers' default is the CPU run).
  why = play.checkpoints.checkpoint_choice("breakthrough", search=[tmp_path])
  assert why.startswith(f"{best} (ResNet 32x3, 6x6), chosen from the 3 breakthrough agents")
  assert f"because it is evaluated (eval.md) and {big} is not" in why
  assert f"also there: {big} (ResNet 32x3, 8x8), {tmp_path / 'b6_curve'}" in why
  (big / "eval.md").write_text("table")  # evaluated too: the full board wins
  assert play.find_checkpoint("breakthrough", search=[tmp_path]) == big
  why = play.checkpoints.checkpoint_choice("breakthrough", search=[tmp_path])
  assert "because it plays on the standard 8x8 board" in why
  (tmp_path / "b6_curve" / "eval.md").write_text("table")
  why = play.checkpoints.checkpoint_choice("breakthrough", 6, 6, search=[tmp_path])
  assert why.startswith(f"{tmp_path / 'b6_curve'} (ResNet 32x3, 6x6), chosen from the 2")
  assert f"because it and {best} tie on evaluation (eval.md) and board, so the shorter name " \
         "(a preset's own run, not a variant) comes first" in why
  assert play.checkpoints.checkpoint_choice("checkers", search=[tmp_path]) is None
  mlp = _fake_run(tmp_path, "b6_mlp", net="mlp", hidden=256, blocks=2)
  why = play.checkpoints.checkpoint_choice("breakthrough", 6, 6, search=[tmp_path])
  assert f"{mlp} (MLP 256x3, 6x6)" in why  # width x hidden layers (the stem's and 2 blocks')


def test_default_opponent_is_the_trained_agent(monkeypatch, tmp_path):
  run = _fake_run(tmp_path, "breakthrough_cpu", evaluated=True)
  monkeypatch.setattr(play.checkpoints, "results_dirs", lambda: [tmp_path])
  setup = play.resolve_setup("breakthrough")
  assert setup.players == (agents.Spec("human"), agents.Spec("az"))
  assert setup.run_dir == run and (setup.env.rows, setup.env.cols) == (6, 6)
  assert any("board 6x6: the trained agent's board" in n for n in setup.notes)
  assert f"trained agent: {run} (ResNet 32x3, 6x6), the only breakthrough agent in results/" in (
      setup.notes)
  full = play.resolve_setup("breakthrough", rows=8, cols=8)
  assert (full.env.rows, full.env.cols) == (8, 8) and full.players[1].kind == "mcts"
  assert any("no trained agent for breakthrough 8x8" in n for n in full.notes)
  black = play.resolve_setup("breakthrough", color="black", opponent="alphabeta:1")
  assert black.players == (agents.Spec("alphabeta", 1), agents.Spec("human"))
  watch = play.resolve_setup("breakthrough", watch=True, players=(None, "mcts:50"))
  assert watch.players == (agents.Spec("az"), agents.Spec("mcts", 50))
  with pytest.raises(ValueError, match="holds a breakthrough agent, not checkers"):
    play.resolve_setup("checkers", checkpoint=str(run))
  with pytest.raises(ValueError, match="plays on 6x6"):
    play.resolve_setup(checkpoint=str(run), rows=8)
  with pytest.raises(ValueError, match="no trained agent for breakthrough 7x7"):
    play.resolve_setup("breakthrough", rows=7, cols=7, opponent="az")
  with pytest.raises(ValueError, match="no trained agent for breakthrough 7x7"):
    play.resolve_setup("breakthrough", rows=7, cols=7, opponent="azab:2")
  azab = play.resolve_setup("breakthrough", opponent="azab")  # finds the trained agent
  assert azab.players[1] == agents.Spec("azab") and azab.run_dir == run


@pytest.mark.slow
def test_a_results_directory_gives_the_default_opponent(monkeypatch, tmp_path, trained_run):
  """A trained run under ./results is found from the working directory (a wheel has no
  repository results/ to search)."""
  run = tmp_path / "results" / "breakthrough_tiny"
  shutil.copytree(trained_run("breakthrough"), run)
  monkeypatch.chdir(tmp_path)
  monkeypatch.setattr(play.checkpoints, "__file__", str(tmp_path / "site" / "a" / "b" / "c.py"))
  assert play.checkpoints.results_dirs() == [tmp_path / "results"]
  assert play.find_checkpoint("breakthrough").resolve() == run.resolve()
  setup = play.resolve_setup("breakthrough", rows=5, cols=5)
  assert setup.players[1].kind == "az" and setup.run_dir.resolve() == run.resolve()


def test_the_repository_connect_four_default_is_its_strongest_agent(monkeypatch):
  """results/connect_four_cpu makes 2.6% mistakes at 32 simulations on the strong-play set
  (strength.json), the two ResNets 10.7% and 23.7%: it plays, and the line says so."""
  monkeypatch.chdir(REPO)
  if not (REPO / "results" / "connect_four_cpu" / "strength.json").exists():
    pytest.skip("results/ holds no measured Connect Four agents")
  assert play.find_checkpoint("connect_four").name == "connect_four_cpu"
  why = play.checkpoints.checkpoint_choice("connect_four")
  assert "because it is the strongest measured (strength.json): 2.6% against 10.7%" in why


# -- The terminal, through standard input ---------------------------------------------------------


def run_cli(argv, text):
  out = io.StringIO()
  code = play_cli.run(argv, stdin=io.StringIO(text), stdout=out)
  return code, out.getvalue()


def test_terminal_scripted_game(tmp_path):
  script = "\n".join([
      "help", "rules", "moves",
      "a1a3",  # illegal: two squares
      "zz9",  # malformed
      "a1a2", "undo", "undo",  # hot seat: undo takes back one move, then nothing is left
      *QUICK_WIN_5X5.split(),
      "b1b2",  # after the end
      "quit",
  ]) + "\n"
  code, out = run_cli(["--game", "breakthrough", "--rows", "5", "--cols", "5", "--opponent",
                       "human", "--save-dir", str(tmp_path)], script)
  assert code == 0
  assert "a  b  c  d  e" in out and "5  b  b  b  b  b" in out  # rank and file labels
  assert "commands:" in out and "Breakthrough (5x5)" in out
  assert "legal moves (13): a1a2 a1b2 b1a2" in out and "white plays a1a2" in out
  assert "not played: breakthrough: 'a1a3' is not a one-step forward move" in out
  assert "not played: breakthrough: malformed move 'zz9'" in out
  assert "took back: a1a2" in out and "cannot undo: nothing to undo" in out
  assert "white wins." in out
  records = list(tmp_path.glob("breakthrough-*.txt"))
  assert len(records) == 1
  # The record replays to the same final position, on the command line too.
  replayed = play.replay_file(records[0])
  assert replayed.result == "1-0" and replayed.session.moves == QUICK_WIN_5X5.split()
  code, shown = run_cli(["--replay", str(records[0])], "last\n")
  assert code == 0 and "result 1-0" in shown and "game over: white wins" in shown
  final = [line for line in out.splitlines() if line.startswith("5 ")][-1]
  assert final in shown


def test_replay_steps_through_the_game(bt5, tmp_path):
  """`--replay FILE` shows the start, then each move on Enter / next, and goes back, to the
  start, to the end or to a ply on request; the end of the input quits."""
  session = play.Session(bt5, (None, None))
  for move in QUICK_WIN_5X5.split():
    session.play(move)
  path = session.save(tmp_path)
  code, out = run_cli(["--replay", str(path)], "\nn\np\nlast\nnext\nfirst\n3\nhello\nq\n")
  assert code == 0
  assert "7 turns (7 plies), result 1-0 (white wins); white human, black human" in out
  assert "Enter or 'n' = next move, 'p' = previous" in out
  shown = [line for line in out.splitlines() if line.startswith(("start position", "ply "))]
  assert shown == ["start position (ply 0 of 7)",
                   "ply 1 of 7: white plays a1a2", "ply 2 of 7: black plays e5e4",
                   "ply 1 of 7: white plays a1a2", "ply 7 of 7: white plays a4b5",
                   "start position (ply 0 of 7)", "ply 3 of 7: white plays a2a3"]
  assert out.count("game over: white wins") == 1 and "(already at the end)" in out
  assert "unknown command 'hello'" in out
  # Each position is the session's own: after ply 2 the board of `history[2]`.
  after_two = out.split("ply 2 of 7: black plays e5e4\n")[1].splitlines()
  assert after_two[0] == "5  b  b  b  b (.)" and after_two[1] == "4  .  .  .  . [b]"
  assert after_two[6] == "white to move"


def test_terminal_tells_commands_from_moves(tmp_path):
  """A word that is no move ("hello") is an unknown command, answered with the commands; what
  looks like a move ("zz9") gets the game's reason; `legend` explains the board's markers."""
  script = "hello\nzz9\nHINTS\npass\nlegend\nquit\n"
  code, out = run_cli(["--game", "breakthrough", "--rows", "5", "--cols", "5", "--opponent",
                       "human", "--no-save"], script)
  assert code == 0
  assert ("unknown command 'hello'; commands: moves, hint, undo, resign, rules, board, legend, "
          "pass, new, help, quit ('help' says what each does), or type a move like a1a2") in out
  assert "unknown command 'HINTS'" in out and "malformed move 'hello'" not in out
  assert "not played: breakthrough: malformed move 'zz9'" in out
  assert "not played: passing is not a legal move here" in out
  legend = "w = white, b = black; . = empty; [w] = the square the last move went to, (.) = the "
  assert out.count(legend) == 2  # under the title, and for `legend`


def test_terminal_turns_the_board_for_the_second_side():
  """Playing black in Breakthrough, the person's pieces are at the bottom (rank 1 at the top,
  files from h to a); white's player sees the usual board."""
  code, out = run_cli(["--game", "breakthrough", "--rows", "5", "--cols", "5", "--opponent",
                       "random", "--color", "black", "--no-save"], "board\nquit\n")
  assert code == 0 and "turned round, your side at the bottom." in out
  board = out.split("black> board\n")[1].splitlines()
  assert board[0].startswith("1 ") and board[4] == "5  b  b  b  b  b"
  assert board[5] == "   e  d  c  b  a" and board[6] == "black (you) to move"
  code, out = run_cli(["--game", "breakthrough", "--rows", "5", "--cols", "5", "--opponent",
                       "random", "--no-save"], "quit\n")
  assert "turned round" not in out and "5  b  b  b  b  b\n4 " in out


def test_terminal_passes_in_slider():
  """Slider's pass is a command too (`pass`, or "-" in notation) when it is the legal move."""
  args = play_cli.build_parser().parse_args(["--game", "slider", "--opponent", "human",
                                             "--no-save"])
  out = io.StringIO()
  terminal = play_cli.Terminal(args, io.StringIO(""), out)
  env = games.make("slider", size=4, blocks="none")
  terminal.session = play.Session(env, (None, None), start=env.from_ascii(
      "....\n..V.\n#...\nHV..\n"))
  terminal.command("pass")
  assert "H plays -" in out.getvalue() and terminal.session.moves == ["-"]


def test_typed_columns_in_connect_four():
  """Connect Four takes the column ("d"), any square of it ("d4", as a click there) or its
  number ("4"); tic-tac-toe's squares are moves of their own, and a number is none."""
  session = play.Session(games.make("connect_four"), (None, None))
  assert session.play("d4") == ["d"] and session.play("4") == ["d"]
  assert session.play("D") == ["d"] and session.play("g6") == ["g"]
  for bad, reason in (("h1", "malformed move 'h1'"), ("8", "malformed move '8'"),
                      ("d9", "malformed move 'd9'")):
    with pytest.raises(ValueError, match=reason):
      session.play(bad)
  ttt = play.Session(games.make("tic_tac_toe"), (None, None))
  with pytest.raises(ValueError, match="malformed move '2'"):
    ttt.play("2")
  assert ttt.play("b2") == ["b2"]


class Autoplayer(io.StringIO):
  """Standard input that answers each prompt with a legal move of the current position.

  A script cannot know an engine's replies in advance; this plays the first legal move (and
  asks for a hint and an undo once, to exercise them against a real engine).
  """

  def __init__(self):
    super().__init__()
    self.terminal = None
    self.lines = ["hint", "moves"]

  def readline(self, *args):
    session = self.terminal.session
    if self.lines:
      return self.lines.pop(0) + "\n"
    if session.over:
      return "quit\n"
    if len(session.moves) >= 3 and not getattr(self, "undone", False):
      self.undone = True
      return "undo\n"
    return session.legal_moves()[-1] + "\n"


def test_terminal_full_game_against_an_engine(tmp_path):
  args = play_cli.build_parser().parse_args(
      ["--game", "connect_four", "--opponent", "mcts:100", "--color", "yellow",
       "--save-dir", str(tmp_path)])
  stdin, out = Autoplayer(), io.StringIO()
  terminal = play_cli.Terminal(args, stdin, out)
  stdin.terminal = terminal
  assert terminal.run() == 0
  text = out.getvalue()
  session = terminal.session
  assert session.over and session.engines[0] is not None and session.engines[1] is None
  assert "red (mcts-100) is thinking: running 100 UCT simulations" in text
  assert "(compiling the search first" in text  # said once, before the first move
  assert "red plays " in text and "value for red" in text and "top moves (visit share)" in text
  assert "hint: " in text and "took back: " in text
  assert "Board: X = red, O = yellow; . = empty; [X] = the last move." in text
  # Yellow is the second side, but Connect Four is not turned round: discs fall down.
  assert not terminal.flip and "\n1 " in text.split("yellow>")[-1]
  assert session.result()[1] + "." in text
  (record,) = tmp_path.glob("connect_four-*.txt")
  replayed = play.replay_file(record)
  assert replayed.session.moves == session.moves
  assert boards_equal(session.env, replayed.session.state, session.state)
  assert '[Red "mcts-100"]' in record.read_text() and '[Yellow "human"]' in record.read_text()


def test_watch_mode(tmp_path):
  code, out = run_cli(["--game", "tic_tac_toe", "--white", "alphabeta:2", "--black", "mcts:50",
                       "--save-dir", str(tmp_path)], "")
  assert code == 0
  assert "X (alphabeta-d2) is thinking" in out and "O (mcts-50) is thinking" in out
  assert "game over: " in out and "game record saved to" in out
  assert "Type a move" not in out  # nobody is asked anything


def test_bad_command_lines_exit_with_a_message(capsys, monkeypatch, tmp_path):
  monkeypatch.setattr(play.checkpoints, "results_dirs", lambda: [tmp_path])  # no trained agent
  assert play_cli.run(["--opponent", "gnugo"], stdin=io.StringIO(""), stdout=io.StringIO()) == 2
  assert "unknown player 'gnugo'; kinds: random, mcts" in capsys.readouterr().err
  assert play_cli.run(["--game", "checkers", "--opponent", "az"], stdin=io.StringIO(""),
                       stdout=io.StringIO()) == 2
  assert "no trained agent for checkers" in capsys.readouterr().err
  assert play_cli.run(["--replay", "/nonexistent/game.txt"], stdout=io.StringIO()) == 1


@pytest.mark.slow
def test_terminal_as_a_real_process(tmp_path):
  """`python -m experiments.play` with piped input: tic-tac-toe between two people, a draw."""
  script = "b2\nb2\na1\nundo\na1\nc3\na3\na2\nc2\nb1\nb3\nc1\nquit\n"
  result = subprocess.run(
      [sys.executable, "-m", "experiments.play", "--game", "tic_tac_toe", "--opponent", "human",
       "--save-dir", str(tmp_path)],
      input=script, capture_output=True, text=True, timeout=120, cwd=REPO)
  assert result.returncode == 0, result.stderr
  out = result.stdout
  assert "not played: tic_tac_toe: illegal move 'b2'" in out
  assert "took back: a1" in out
  assert "game over: draw" in out and "game record saved to" in out
  (record,) = tmp_path.glob("tic_tac_toe-*.txt")
  assert "1. b2 a1 2. c3 a3 3. a2 c2 4. b1 b3 5. c1 1/2-1/2" in record.read_text()
  replayed = play.replay_file(record)
  assert replayed.result == "1/2-1/2" and replayed.session.result()[1] == "draw"


def test_the_command_lives_in_the_library():
  """`azjax.cli.play.main(argv)` is the command (for `azjax play`); experiments.play a shim."""
  import inspect

  from experiments import play as shim

  assert list(inspect.signature(play_cli.main).parameters) == ["argv"]
  assert shim.main is play_cli.main
  with pytest.raises(SystemExit) as exit_info:
    play_cli.main(["--help"])
  assert exit_info.value.code == 0


def test_the_documented_records_replay():
  """The records under docs/games/ (written by real games) replay to their recorded result,
  and every record docs/play.md names is one of them."""
  records = sorted((REPO / "docs" / "games").glob("*.txt"))
  assert records
  for path in records:
    replayed = play.replay_file(path)
    assert replayed.result == replayed.session.result()[0] != "*", path.name
  named = set(re.findall(r"docs/games/[\w.-]+\.txt", (REPO / "docs" / "play.md").read_text()))
  assert named and named <= {f"docs/games/{p.name}" for p in records}


# -- TD-Leaf runs ----------------------------------------------------------------------------------

TDLEAF_CONFIG = dict(game="slider", game_options={"size": 4, "blocks": "none"}, depth=2, batch=4,
                     max_plies=24, sgd_steps=1, eval_every=0, iterations=1, checkpoint_every=1)


def tiny_tdleaf_run(tmp_path_factory) -> Path:
  """A TD-Leaf run of one iteration (Slider 4x4 without blocks, depth 2), trained once a test
  session (the web tests use it too): a minute or so on a loaded CPU."""
  from azjax import tdleaf

  run = tmp_path_factory.getbasetemp() / "tdleaf_slider4"
  if not (run / "model").is_dir():
    tdleaf.train(tdleaf.Config(**TDLEAF_CONFIG), run, log=lambda *_: None)
  return run


@pytest.fixture(scope="module")
def tdleaf_run(tmp_path_factory):
  return tiny_tdleaf_run(tmp_path_factory)


@pytest.mark.slow
def test_tdleaf_specs_and_setup(tdleaf_run, monkeypatch, tmp_path):
  """A TD-Leaf run's player is the default opponent ("tdleaf", play's own kind, its number the
  depth) on the run's board; the notes say what it is. AlphaZero's kinds are refused, naming
  what plays the run, and tdleaf needs a TD-Leaf run."""
  monkeypatch.setattr(play.checkpoints, "results_dirs", lambda: [tmp_path])  # no trained agent
  assert play.parse_spec("tdleaf").kind == "tdleaf" and play.parse_spec("tdleaf").strength is None
  assert play.parse_spec("TDLEAF:3").strength == 3 and play.parse_spec("tdleaf:3").info.network
  assert str(play.parse_spec("tdleaf:3")) == "tdleaf:3"
  for bad in ("tdleaf:0", "tdleaf:x", "tdleaf:3:width=2"):
    with pytest.raises(ValueError, match=f"bad player '{bad}': tdleaf takes a search depth"):
      play.parse_spec(bad)
  setup = play.resolve_setup(checkpoint=str(tdleaf_run))
  assert setup.env.name == "slider" and (setup.env.rows, setup.env.cols) == (4, 4)
  assert [s.kind for s in setup.players] == ["human", "tdleaf"] and setup.run_dir == tdleaf_run
  assert setup.notes[0] == (f"trained agent: {tdleaf_run} (TD-Leaf alpha-beta, depth 2, feature "
                            "MLP; slider 4x4, 1 iteration)")
  deeper = play.resolve_setup(checkpoint=str(tdleaf_run), opponent="tdleaf:3", color="black")
  assert deeper.players[0] == play.parse_spec("tdleaf:3") and "depth 3" in deeper.notes[0]
  assert "depth 4" in play.resolve_setup(checkpoint=str(tdleaf_run), depth=4).notes[0]
  other = play.resolve_setup(checkpoint=str(tdleaf_run), opponent="mcts:50")
  assert other.players[1] == agents.Spec("mcts", 50) and other.env.rows == 4
  assert not any("TD-Leaf" in n for n in other.notes)
  for kind in ("az", "azab:2", "policy"):
    with pytest.raises(ValueError, match=rf"{kind}: .* is a TD-Leaf run \(alpha-beta with a "
                       r"learned evaluation\), not an AlphaZero network, so policy, az, azab "
                       r"cannot play it; its player is the default opponent \(leave the "
                       r"opponent out, or tdleaf, tdleaf:N for depth N\), and random, mcts, "
                       r"alphabeta, solver play without it"):
      play.resolve_setup(checkpoint=str(tdleaf_run), opponent=kind)
  with pytest.raises(ValueError, match="is a TD-Leaf run"):
    play.resolve_setup(checkpoint=str(tdleaf_run), watch=True, players=(None, "az"))
  with pytest.raises(ValueError, match="holds a slider agent, not breakthrough"):
    play.resolve_setup("breakthrough", checkpoint=str(tdleaf_run))
  with pytest.raises(ValueError, match="tdleaf plays a TD-Leaf run: pass --checkpoint RUN"):
    play.resolve_setup("slider", opponent="tdleaf")
  network_run = _fake_run(tmp_path, "breakthrough_cpu")
  with pytest.raises(ValueError, match="tdleaf: .* is not a TD-Leaf run .*az, azab or policy"):
    play.resolve_setup(checkpoint=str(network_run), opponent="tdleaf")


@pytest.mark.slow
def test_tdleaf_bad_kinds_on_the_command_line(tdleaf_run, capsys):
  code = play_cli.run(["--checkpoint", str(tdleaf_run), "--opponent", "azab"],
                      stdin=io.StringIO(""), stdout=io.StringIO())
  err = capsys.readouterr().err
  assert code == 2 and "error: azab: " in err and "is a TD-Leaf run" in err
  assert "its player is the default opponent" in err
  assert play_cli.run(["--checkpoint", str(tdleaf_run), "--white", "policy", "--watch"],
                      stdin=io.StringIO(""), stdout=io.StringIO()) == 2
  assert "policy: " in capsys.readouterr().err
  with pytest.raises(SystemExit):
    play_cli.main(["--help"])
  assert "tdleaf[:N]" in capsys.readouterr().out


@pytest.mark.slow
def test_tdleaf_engine_is_the_runs_player(tdleaf_run, factory):
  """The engine moves as `runs.load(run)`'s player does, and its analysis is
  `alphabeta.search`'s value and principal variation with the learned evaluation."""
  from azjax import alphabeta, tdleaf

  setup = play.resolve_setup(checkpoint=str(tdleaf_run))
  env = setup.env
  engine = factory.make(env, setup.players[1], setup.run_dir)
  assert engine.name == f"tdleaf-d2 [{tdleaf_run}]" and engine.kind == "tdleaf"
  assert engine.thinking == ("searching 2 plies deep with alpha-beta, scoring the leaves with "
                             "its learned evaluation")
  assert factory.make(env, "tdleaf", tdleaf_run) is engine  # cached: no second compilation
  assert factory.make(env, "tdleaf:3", tdleaf_run).name.startswith("tdleaf-d3 ")
  with pytest.raises(ValueError, match="is a TD-Leaf run"):
    factory.make(env, "az", tdleaf_run)
  with pytest.raises(ValueError, match="tdleaf plays a TD-Leaf run"):
    factory.make(env, "tdleaf")
  session = play.Session(env, (None, engine))
  session.play(session.legal_moves()[0])
  state, key = session.state, jax.random.key(3)
  analysis = engine.analyse(state, key)
  batched = jax.tree.map(lambda x: x[None], state)
  _, agent = runs.load(tdleaf_run)
  assert analysis.action == int(agent.act(batched, key)[0])
  learner, params = tdleaf.load(tdleaf_run)
  found = jax.jit(lambda states, key: alphabeta.search(  # Jitted: not op by op.
      env, states, key, depth=2, evaluation=learner.evaluation(params)))(batched, key)
  assert analysis.action == int(found.action[0])
  assert analysis.value == pytest.approx(float(found.value[0]), abs=1e-5)
  assert analysis.value_kind == "score" and analysis.top == ()
  pv = [int(a) for a in found.pv[0] if a >= 0]
  assert len(analysis.pv) == len(pv) >= 1 and analysis.pv[0] == analysis.move
  assert analysis.move in session.legal_moves()
  follow = play.Session(env, (None, None), start=state)
  for move in analysis.pv:  # the line is legal, move after move
    follow.play(move)
  text = play.describe(env, analysis, 1)
  assert text.startswith("evaluation for V ") and "principal variation: " + " ".join(
      analysis.pv) in text
  assert analysis.method == "depth-2 alpha-beta with the learned evaluation (feature MLP)"


class TdleafPlayer(io.StringIO):
  """Standard input that asks for a hint, then plays the first legal move at each prompt, and
  quits after four moves of its own or at the end of the game."""

  def __init__(self):
    super().__init__()
    self.terminal, self.lines, self.played = None, ["hint"], 0

  def readline(self, *args):
    session = self.terminal.session
    if self.lines:
      return self.lines.pop(0) + "\n"
    if session.over or self.played == 4:
      return "quit\n"
    self.played += 1
    return session.legal_moves()[0] + "\n"


@pytest.mark.slow
def test_terminal_against_a_tdleaf_run(tdleaf_run, tmp_path):
  args = play_cli.build_parser().parse_args(["--checkpoint", str(tdleaf_run), "--save-dir",
                                             str(tmp_path)])
  stdin, out = TdleafPlayer(), io.StringIO()
  terminal = play_cli.Terminal(args, stdin, out)
  stdin.terminal = terminal
  assert terminal.run() == 0
  text = out.getvalue()
  session = terminal.session
  name = f"tdleaf-d2 [{tdleaf_run}]"
  assert text.startswith(f"azjax play: slider 4x4, H (you) against V ({name}).")
  assert "(trained agent: " in text and "(TD-Leaf alpha-beta, depth 2, feature MLP;" in text
  assert f"asking {name}...\nhint: " in text  # the opponent's own search gives the hint
  assert f"V ({name}) is thinking: searching 2 plies deep with alpha-beta" in text
  replies = re.findall(r"\nV plays (\S+) .*\n  (evaluation for V .*)\n", text)
  assert replies and all("; principal variation: " + move in line for move, line in replies)
  assert session.players.count(1) >= 1
  # Every move, the engine's included, was legal: a game between two people replays them.
  again = play.Session(session.env, (None, None))
  for move in session.moves:
    again.play(move)
  assert again.over == bool(session.state.terminated)
  (record,) = tmp_path.glob("slider-*.txt")
  assert f'[V "{name}"]' in record.read_text()
  # The record says the run's board (its size, no blocks), so it replays.
  assert '[Board "4x4"]\n[Options "size=4 blocks=none"]' in record.read_text()
  replayed = play.replay_file(record)
  assert replayed.env.describe() == "slider 4x4" and replayed.session.moves == session.moves
  assert boards_equal(session.env, replayed.session.state, session.state)


def test_slider_records_keep_their_board():
  """A Slider record names its size and the blocks of its start (`Session.game_options`), so
  a game on another board, or with blocks drawn at random, replays."""
  for env in (games.make("slider"), games.make("slider", size=6, blocks="c3,d4")):
    session = play.Session(env, (None, None))
    for _ in range(3):
      session.play(session.legal_moves()[0])
    replayed = play.replay(session.record())
    assert replayed.env.rows == env.rows and replayed.session.moves == session.moves
    assert boards_equal(env, replayed.session.history[0], session.history[0])
  assert play.Session(env, (None, None)).game_options() == {"size": "6", "blocks": "c3,d4"}
  assert play.Session(games.make("breakthrough"), (None, None)).game_options() == {}
  with pytest.raises(ValueError, match="record: bad option 'size' in the options tag"):
    play.replay('[Game "slider"]\n[Options "size"]\n')
  with pytest.raises(ValueError, match="record: slider with options"):
    play.replay('[Game "slider"]\n[Options "size=4 blocks=zz"]\n')


@pytest.mark.slow
def test_watching_a_tdleaf_run(tdleaf_run):
  """--watch: the run's player against itself (or --black another), to the end of the game."""
  code, out = run_cli(["--checkpoint", str(tdleaf_run), "--watch", "--no-save"], "")
  assert code == 0
  assert "H (tdleaf-d2 [" in out and "V (tdleaf-d2 [" in out and "game over: " in out
  assert out.count("principal variation: ") == out.count(" is thinking: ") >= 2
  assert "Type a move" not in out


def test_find_checkpoint_prefers_the_strongest_measured_run(tmp_path):
  """strength.json (azjax evaluate --solver or --pool) orders runs before eval.md and the name;
  runs scored at different simulations are compared on a player both have."""
  from azjax.evaluate import strength

  def measured(run, **players):
    results = {p: {"all": {"mistake_rate": v, "decisive": 495}} for p, v in players.items()}
    strength.write(run, strength.from_solver(results, "c4.npz", "cmd"))

  short = _fake_run(tmp_path, "b8", rows=8, cols=8, evaluated=True)
  weak = _fake_run(tmp_path, "b8_weak", rows=8, cols=8)
  strong = _fake_run(tmp_path, "b8_strong", rows=8, cols=8)
  measured(weak, policy=0.27, search32=0.16)
  measured(strong, policy=0.036, search32=0.020, search128=0.012)
  assert play.find_checkpoint("breakthrough", search=[tmp_path]) == strong
  why = play.checkpoints.checkpoint_choice("breakthrough", search=[tmp_path])
  assert (f"because it is the strongest measured (strength.json): 2.0% against 16.0% for {weak}, "
          "mistakes against perfect play (search32)") in why
  assert [c[0] for c in play.checkpoints._candidates("breakthrough", None, None, [tmp_path])] \
      == [strong, weak, short]


def test_strength_keeps_every_basis_and_ranks_on_the_one_runs_share(tmp_path):
  """A run scored on a second position set keeps the first set's rate (`earlier`), so runs
  scored last on different sets are still compared, on a set they all have; scoring a set again
  replaces its rate; a file of one measurement (before `earlier`) still reads."""
  from azjax.evaluate import strength

  def measured(run, basis, policy):
    results = {"policy": {"all": {"mistake_rate": policy, "decisive": 469}}}
    strength.write(run, strength.from_solver(results, basis, "cmd"))

  a, b, c = (tmp_path / name for name in "abc")
  measured(a, "standard.npz", 0.03)
  measured(a, "strong.npz", 0.06)
  measured(b, "strong.npz", 0.05)
  measured(b, "standard.npz", 0.02)
  measured(c, "strong.npz", 0.10)
  assert strength.read(a).basis == "strong.npz" and strength.read(b).basis == "standard.npz"
  assert [s.basis for s in strength.read_all(a)] == ["strong.npz", "standard.npz"]
  ranking = strength.rank([a, b, c])  # All three have strong.npz; only a and b standard.npz.
  assert ranking.order == (b, a, c) and ranking.strengths[b].basis == "strong.npz"
  assert ranking.text(b) == "5.0% mistakes against perfect play (policy)"
  measured(b, "strong.npz", 0.07)  # Scored again: replaced, and now the latest.
  assert [(s.basis, s.value) for s in strength.read_all(b)] == [
      ("strong.npz", 0.07), ("standard.npz", 0.02)]
  assert strength.rank([a, b, c]).order == (a, b, c)
  # Where as many runs share two bases, the one more of them were scored on last wins (here
  # not the larger name, which breaks a tie of both counts).
  measured(a, "standard.npz", 0.03)
  measured(b, "standard.npz", 0.02)
  assert strength.rank([a, b]).order == (b, a)
  assert strength.rank([a, b]).strengths[a].basis == "standard.npz"
  old = json.loads((c / strength.FILE).read_text())
  assert "earlier" not in old
  assert strength.read_all(c) == (strength.Strength(**old),)
  (c / strength.FILE).write_text("[1, 2]")
  assert strength.read_all(c) == () and strength.read(c) is None
