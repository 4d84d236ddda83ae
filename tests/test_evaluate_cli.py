"""`azjax evaluate` (python -m experiments.evaluate): --ladder, --pool and argument errors."""

import json
import shutil

import pytest
import tiny

from azjax import files, plots
from azjax.cli import evaluate
from azjax.evaluate import ladder, tournament
from azjax.runs import driver


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, trained_run):
  """A copy of the session's tiny tic-tac-toe run (tests/conftest.py), without its snapshots:
  the tests below write their tables into it."""
  path = tmp_path_factory.mktemp("evaluate_cli") / "ttt"
  shutil.copytree(trained_run("tic_tac_toe"), path, ignore=shutil.ignore_patterns("models"))
  return path


def _error(capsys, argv) -> str:
  """Runs `main(argv)`, expects exit status 2 and returns stderr."""
  with pytest.raises(SystemExit) as exc:
    evaluate.main(argv)
  assert exc.value.code == 2
  return capsys.readouterr().err


def test_ladder_rungs():
  assert ladder.rungs(10, 20480) == [10 * 2**k for k in range(12)]
  assert ladder.rungs(2, 9) == [2, 4, 8]
  assert ladder.rungs(5, 5) == [5]


@pytest.mark.slow
def test_ladder_writes_table_and_plot(run_dir, capsys):
  # Two rungs (each compiles its own MCTS): enough for a table, a plot and their order.
  evaluate.main(["--checkpoint", str(run_dir), "--ladder", "--ladder-min", "2", "--ladder-max",
                 "4", "--games", "4", "--raw-policy"])  # Raw policy: compiles faster.
  out = capsys.readouterr().out
  assert "rung 2/2" in out
  text = (run_dir / "eval.md").read_text()
  assert "--ladder" in text
  rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
  players = {row.split("|")[1].strip() for row in rows[1:]}
  assert len(rows) == 1 + 2 * 2, rows  # Header, 2 rungs for the agent and for the control.
  assert any(p.startswith("control (mcts-50)") for p in players)
  assert sorted(int(row.split("|")[2]) for row in rows[1:]) == [2, 2, 4, 4]
  assert text.count("average score") == 2
  png = (run_dir / "ladder.png").read_bytes()
  assert png.startswith(b"\x89PNG") and len(png) > 1000
  # The tables are rendered from matches.jsonl, which --ladder-plot reads back.
  rows = [r for r in files.read_jsonl(run_dir / "matches.jsonl") if r["mode"] == "ladder"]
  assert sorted(r["rung"] for r in rows) == [2, 2, 4, 4]
  assert all(r["wins"] + r["draws"] + r["losses"] == 4 for r in rows)
  played = ladder.ladder_rows(rows)
  assert [rung for rung, _ in played[rows[0]["player"]]] == [2, 4]
  evaluate.main(["--checkpoint", str(run_dir), "--ladder-plot", str(run_dir / "all.png")])
  assert "average score" in capsys.readouterr().out
  assert (run_dir / "all.png").read_bytes().startswith(b"\x89PNG")


def test_ladder_plot_joins_the_pieces_of_a_ladder(tmp_path, capsys):
  header = ladder.HEADER
  (tmp_path / "eval.md").write_text(
      f"`first command`\n\n{header}\n| net | 10 | 4 | 4 | 0 | 0 | 1.000 | [0.5, 1.0] | 3 |\n"
      "| control | 10 | 4 | 1 | 2 | 1 | 0.500 | [0.2, 0.8] | 1 |\n| net | 20 | 4 | 0 | 0 | 4 "
      "| 0.000 | [0.0, 0.5] | 3 |\n\n- net: average score 0.500\n\n"
      f"`second command`\n\n{header}\n| net | 20 | 4 | 2 | 2 | 0 | 0.750 | [0.3, 0.9] | 5 |\n"
      "| net | 40 | 4 | 1 | 0 | 3 | 0.250 | [0.1, 0.7] | 9 |\n")
  found = ladder.read_markdown_ladders((tmp_path / "eval.md").read_text())
  assert {player: {rung: (r.wins, r.draws, r.losses) for rung, r in played}
          for player, played in found.items()} == {
      "net": {10: (4, 0, 0), 20: (2, 2, 0), 40: (1, 0, 3)}, "control": {10: (1, 2, 1)}}
  evaluate.main(["--checkpoint", str(tmp_path), "--ladder-plot", str(tmp_path / "all.png")])
  out = capsys.readouterr().out
  assert "net: average score 0.667 over 3 rung(s) (MCTS 10..40)" in out
  assert (tmp_path / "all.png").read_bytes().startswith(b"\x89PNG")
  (tmp_path / "eval.md").write_text("no tables here\n")
  err = _error(capsys, ["--checkpoint", str(tmp_path), "--ladder-plot", "x.png"])
  assert "has no ladder table" in err


@pytest.mark.slow
def test_openspiel_ladder_control_uses_the_same_engine(run_dir, tmp_path, capsys):
  pytest.importorskip("pyspiel")
  run = tmp_path / "run"
  shutil.copytree(run_dir, run)
  evaluate.main(["--checkpoint", str(run), "--ladder", "--engine", "openspiel", "--ladder-min",
                 "2", "--ladder-max", "4", "--games", "2", "--raw-policy"])
  text = (run / "eval.md").read_text()
  players = {line.split("|")[1].strip() for line in text.splitlines()
             if line.startswith("| ") and "---" not in line}
  assert "control (openspiel-mcts50)" in players
  assert (run / "ladder_openspiel.png").exists()


@pytest.mark.slow
def test_pool_writes_elo_table(run_dir, capsys):
  evaluate.main(["--pool", str(run_dir), "random", "mcts:4", "--games", "4", "--raw-policy"])
  out = capsys.readouterr().out
  assert "Elo (anchor random = 0)" in out
  text = (run_dir / "eval.md").read_text()
  assert "--pool" in text and "| agent | Elo | 95% CI |" in text
  assert "| random | +0 | [+0, +0] |" in text
  assert "Pairwise scores" in text and "| 3 | mcts-4 |" in text
  assert "pair 3/3" in out


@pytest.mark.parametrize("extra, message", [
    (["--games", "3"], "--games must be positive and even, got 3"),
    (["--pool", "random", "bogus:3"], "'bogus:3' is neither a run directory nor an opponent"),
    (["--pool", "random", "mcts:x", "--game", "tic_tac_toe"],
     "'mcts:x' is neither a run directory nor an opponent spec: bad player 'mcts:x': mcts takes "
     "a whole number of simulations"),
    (["--pool", "random", "az", "--game", "tic_tac_toe"], "'az' (the trained network with "
     "search"),
    (["--pool", "random", "openspiel-mcts:8", "--game", "tic_tac_toe"],
     "OpenSpiel opponents play only in the default mode"),
    (["--pool", "random", "mcts:4"], "needs --game"),
    (["--pool", "random", "no/such/dir"], "no such run directory"),
    (["--pool", "random", "--game", "tic_tac_toe"], "at least two agents"),
    (["--pool", "random", "random", "--game", "tic_tac_toe"], "the same agent twice"),
    (["--ladder", "--pool", "random"], "not allowed with argument"),
    (["--alphabeta", "2", "--raw-policy"], "--alphabeta and --raw-policy"),
    (["--alphabeta", "2", "--progress"], "not --alphabeta"),
    (["--alphabeta", "2", "--width", "-1"], "--width must be 0"),
    (["--snapshot", "2", "--progress"], "--snapshot picks the network of --checkpoint"),
    (["--openings", "-1"], "--openings must be >= 0 random plies, got -1"),
    (["--openings", "2", "--ladder"], "--openings applies to the default mode"),
])
def test_bad_arguments(capsys, extra, message):
  assert message in _error(capsys, extra)


def test_missing_checkpoint(capsys):
  err = _error(capsys, ["--games", "4"])
  assert "--checkpoint" in err and "--pool" in err
  err = _error(capsys, ["--ladder", "--games", "4"])
  assert "required: --checkpoint" in err


@pytest.mark.slow
def test_bad_ladder_bounds(run_dir, capsys):
  err = _error(capsys, ["--checkpoint", str(run_dir), "--ladder", "--ladder-min", "8",
                        "--ladder-max", "4"])
  assert "--ladder-min" in err


@pytest.mark.slow
def test_pool_of_mixed_games(run_dir, tmp_path, capsys):
  other = tmp_path / "c4"
  other.mkdir()
  config = json.loads((run_dir / "config.json").read_text())
  config["game"] = "connect_four"
  (other / "config.json").write_text(json.dumps(config))
  err = _error(capsys, ["--pool", str(run_dir), str(other), "--games", "4"])
  assert "same game" in err and "connect_four" in err and "tic_tac_toe" in err
  shutil.rmtree(other)


@pytest.mark.slow
def test_pool_of_networks_with_different_encodings(tmp_path, capsys):
  """Breakthrough runs that differ only in their observation encoding play each other, each
  network reading the positions in its own encoding; other rules still must match."""
  paths = {}
  for observation in ("mover", "attacks"):
    paths[observation] = tmp_path / observation
    config = tiny.config("breakthrough", observation=observation, iterations=1)
    driver.train_and_evaluate(config, paths[observation], progress=False)
  evaluate.main(["--pool", str(paths["mover"]), str(paths["attacks"]), "--games", "2",
                 "--simulations", "4", "--out", str(tmp_path / "pool")])
  rows = files.read_jsonl(tmp_path / "pool" / "matches.jsonl")
  assert len(rows) == 1 and rows[0]["wins"] + rows[0]["losses"] == 2
  config = json.loads((paths["attacks"] / "config.json").read_text())
  config["rows"] = 6
  (paths["attacks"] / "config.json").write_text(json.dumps(config))
  err = _error(capsys, ["--pool", str(paths["mover"]), str(paths["attacks"]), "--games", "2"])
  assert "same game" in err and "'rows': 6" in err


@pytest.mark.slow
def test_progress_rates_every_snapshot(tmp_path, capsys):
  path = tmp_path / "ttt_progress"
  config = tiny.config(iterations=3, checkpoint_every=1)
  driver.train_and_evaluate(config, path, progress=False)
  evaluate.main(["--checkpoint", str(path), "--progress", "--opponents", "random,mcts:4",
                 "--games", "4", "--raw-policy"])
  out = capsys.readouterr().out
  assert "snapshot 3/3" in out and "Elo (anchor random = 0)" in out
  text = (path / "eval.md").read_text()
  # The anchors' match, 3 snapshots x 2 anchors and 2 neighbour matches.
  rows = [line for line in text.splitlines() if line.startswith("| tic_tac_toe |")]
  assert len(rows) == 9, rows
  for name in ("it1", "it2", "it3", "mcts-4"):
    assert f"| {name} |" in text
  png = (path / "progress.png").read_bytes()
  assert png.startswith(b"\x89PNG") and len(png) > 1000
  # A run directory is an anchor too: a fixed network (here the run's own final one).
  evaluate.main(["--checkpoint", str(path), "--progress", "--opponents", f"random,{path}",
                 "--games", "2", "--raw-policy", "--out", str(tmp_path / "fixed")])
  out = capsys.readouterr().out
  assert "snapshot 3/3" in out and "Elo (anchor random = 0)" in out
  rows = [r for r in files.read_jsonl(tmp_path / "fixed" / "matches.jsonl")]
  assert len(rows) == 1 + 3 * 2 + 2 and all(r["mode"] == "progress" for r in rows)
  # One snapshot plays as the run's network does (--snapshot); a missing one is named.
  evaluate.main(["--checkpoint", str(path), "--snapshot", "2", "--opponents", "random",
                 "--games", "2", "--raw-policy", "--out", str(tmp_path / "snap")])
  assert f"{path}@2" in capsys.readouterr().out
  err = _error(capsys, ["--checkpoint", str(path), "--snapshot", "7", "--games", "2"])
  assert "no model snapshot for iteration 7" in err and "1, 2, 3" in err
  # Snapshots as pool items (RUN_DIR@ITERATION): two points of one run's training.
  evaluate.main(["--pool", f"{path}@1", f"{path}@3", "--games", "2", "--raw-policy",
                 "--out", str(tmp_path / "pool")])
  rows = files.read_jsonl(tmp_path / "pool" / "matches.jsonl")
  assert len(rows) == 1 and {rows[0]["agent_a"], rows[0]["agent_b"]} == {
      f"policy(tic_tac_toe:{path}@1)", f"policy(tic_tac_toe:{path}@3)"}
  err = _error(capsys, ["--pool", f"{path}@1", f"{path}@7", "--games", "2"])
  assert "no model snapshot for iteration 7" in err


@pytest.mark.slow
def test_progress_without_snapshots(run_dir, capsys):
  # The module's run has checkpoint_every=0: only model/, no snapshots.
  shutil.rmtree(run_dir / "models", ignore_errors=True)
  err = _error(capsys, ["--checkpoint", str(run_dir), "--progress", "--games", "4"])
  assert "no network snapshots" in err


def test_ladder_plot_of_perfect_scores(tmp_path):
  from azjax import arena
  perfect = arena.MatchResult(agent_a="a", agent_b="b", game="g", wins=10, draws=0, losses=0,
                              first=(5, 0, 0), second=(5, 0, 0))
  low, high = perfect.interval
  path = plots.plot_ladder({"a": [(10, perfect), (20, perfect)]}, tmp_path / "l.png")
  assert path.read_bytes().startswith(b"\x89PNG") and high <= 1.0


@pytest.mark.slow
def test_openings_are_not_for_openspiel(run_dir, capsys):
  err = _error(capsys, ["--checkpoint", str(run_dir), "--openings", "2", "--opponents",
                        "openspiel-mcts:8", "--games", "2"])
  assert "--openings: OpenSpiel's bots play from the initial position" in err


@pytest.mark.slow
def test_network_alphabeta_against_opponents(run_dir, capsys):
  evaluate.main(["--checkpoint", str(run_dir), "--opponents", "random", "--games", "2",
                 "--alphabeta", "2", "--width", "3"])
  assert "ab-d2w3(tic_tac_toe:" in (run_dir / "eval.md").read_text()
  err = _error(capsys, ["--checkpoint", str(run_dir), "--opponents", "random", "--games", "2",
                        "--alphabeta", "12"])
  assert "depth must be in 1..8 with 8 actions searched a node" in err


def test_opponent_specs():
  """`--opponents` and `--pool` read the agents' spec grammar; OpenSpiel's bot is dispatched on
  its kind; a network kind, or a person, cannot be an opponent; the help lists the kinds."""
  from azjax import agents, games

  env = games.make("tic_tac_toe")
  assert tournament.parse_opponent(env, "mcts:100").name == "mcts-100"
  assert tournament.parse_opponent(env, "alphabeta:2").name == "alphabeta-d2"
  assert tournament.parse_opponent(env, "random").name == "random"
  assert tournament.parse_opponent(env, "solver").name == "solver"
  assert tournament.parse_opponent(env, "openspiel-mcts") == tournament.OpenSpielMCTS(1000)
  assert tournament.parse_opponent(env, "openspiel-mcts:64") == tournament.OpenSpielMCTS(64)
  for spec in ("human", "az:8", "policy"):
    with pytest.raises(ValueError, match="cannot be an opponent here; use one of: random, mcts"):
      tournament.parse_opponent(env, spec)
  with pytest.raises(ValueError, match="unknown player 'bogus'; kinds: random"):
    tournament.parse_opponent(env, "bogus")
  text = evaluate.build_parser().format_help()
  for kind in tournament.OPPONENT_KINDS:
    assert agents.KINDS[kind].help_line() in text


@pytest.mark.slow
def test_pool_reads_a_tdleaf_runs_game_through_its_kind(tmp_path_factory, tmp_path):
  """A TD-Leaf run (no config.json: its `tdleaf.json` names Slider 4x4) plays a round robin
  with its alpha-beta player, on its own board."""
  from test_play import tiny_tdleaf_run

  run = tiny_tdleaf_run(tmp_path_factory)
  evaluate.main(["--pool", str(run), "random", "--games", "2", "--out", str(tmp_path)])
  rows = files.read_jsonl(tmp_path / "matches.jsonl")
  assert len(rows) == 1 and rows[0]["wins"] + rows[0]["draws"] + rows[0]["losses"] == 2
  assert rows[0]["game"].startswith("slider") and rows[0]["agent_a"].startswith("tdleaf-d2")
