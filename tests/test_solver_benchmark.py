"""The solver benchmark: metrics on hand-made cases, the committed sets against the solver, a
tiny network end to end, and the evaluate command's --solver mode."""

import dataclasses
import json
import shutil
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import agents, games, nets, solver
from azjax.evaluate import tournament
from azjax.solver import benchmark as sb
from azjax.solver import positions as solver_positions

BITBULLY_REASON = f'the Connect Four solver needs bitbully: {solver.INSTALL_HINT}'
X = sb.ILLEGAL


def hand_made():
  """Four tic-tac-toe-shaped positions with made-up scores (only the labels matter here).

  0: ply 1, moves 0..2 score 2 (win), 0 (draw), -1 (loss): decisive, value +1.
  1: ply 4, every move draws: not decisive.
  2: ply 7, moves 3 and 4 score 0 and -2: decisive, value 0.
  3: ply 8, one legal move that loses: not decisive, value -1.
  """
  scores = np.full((4, 9), X, np.int8)
  scores[0, :3] = [2, 0, -1]
  scores[1, :5] = 0
  scores[2, 3:5] = [0, -2]
  scores[3, 8] = -1
  return sb.Positions(game="tic_tac_toe", moves=np.full((4, 9), -1, np.int8),
                      num_moves=np.array([1, 4, 7, 8], np.int16), scores=scores,
                      source=np.array([0, 0, 1, 1], np.int8), sources=("a", "b"))


def test_labels_of_the_hand_made_case():
  positions = hand_made()
  np.testing.assert_array_equal(positions.values, [1, 0, 0, -1])
  np.testing.assert_array_equal(positions.decisive, [True, False, True, False])


def test_metrics_of_perfect_and_of_losing_moves():
  positions = hand_made()
  perfect = sb.move_metrics(positions, np.array([0, 2, 3, 8]), np.array([0.9, 0.1, -0.2, -0.5]))
  assert perfect["all"] == {"positions": 4, "decisive": 2, "mistakes": 0, "mistake_rate": 0.0,
                            "optimal_rate": 1.0, "value_accuracy": 1.0,
                            "value_mse": pytest.approx((0.01 + 0.01 + 0.04 + 0.25) / 4)}
  # The worst move everywhere: both decisive positions are mistakes, the forced loss is not.
  worst = sb.move_metrics(positions, np.array([2, 0, 4, 8]), np.array([0.2, 0.5, -0.5, 0.0]))
  assert worst["all"]["mistakes"] == 2 and worst["all"]["mistake_rate"] == 1.0
  assert worst["all"]["optimal_rate"] == 0.5  # The all-draw position and the forced move.
  assert worst["all"]["value_accuracy"] == 0.0  # 0.2 (not a win), 0.5, -0.5 (not draws), 0.
  # A draw thrown from a win is a mistake too; an illegal move counts as losing.
  mixed = sb.move_metrics(positions, np.array([1, 7, 3, 8]), ply_ranges=((0, 4), (5, 8)),
                          by_source=True)
  assert mixed["0-4"]["mistakes"] == 1 and mixed["0-4"]["decisive"] == 1
  assert mixed["0-4"]["optimal_rate"] == 0.0  # Square 7 is not legal in position 1.
  assert mixed["5-8"]["mistake_rate"] == 0.0
  assert mixed["src0"]["positions"] == 2 and mixed["src1"]["mistakes"] == 0
  assert "value_accuracy" not in mixed["all"]
  table = sb.markdown_table({"mixed": mixed})
  assert "| mixed | 0-4 | 2 | 1 | 1 | 100.0% | 0.0% | - |" in table
  assert sb.flatten({"mixed": mixed})["solver/mixed/all/mistakes"] == 1.0


def test_positions_round_trip(tmp_path):
  positions = hand_made()
  loaded = sb.Positions.load(positions.save(tmp_path / "p.npz"))
  assert loaded.game == "tic_tac_toe" and loaded.sources == ("a", "b")
  np.testing.assert_array_equal(loaded.scores, positions.scores)


def test_committed_tic_tac_toe_set_is_every_live_position_labelled_by_the_solver():
  env = games.make("tic_tac_toe")
  positions = sb.Positions.load(sb.positions_path("tic_tac_toe"))
  assert len(positions) == 4520  # 5478 reachable states, 958 of them finished.
  rng = np.random.default_rng(0)
  sample = positions.subset(rng.choice(len(positions), 64, replace=False))
  states = sample.states(env)
  assert not np.asarray(states.terminated).any()
  np.testing.assert_array_equal(solver.move_scores(env, states), sample.move_scores)
  np.testing.assert_array_equal(np.asarray(states.legal_action_mask), sample.legal)
  # The empty board: every move draws.
  start = positions.subset(positions.num_moves == 0)
  np.testing.assert_array_equal(start.move_values, np.zeros((1, 9)))


def test_committed_connect_four_set_matches_the_solver():
  pytest.importorskip("bitbully", reason=BITBULLY_REASON)
  env = games.make("connect_four")
  positions = sb.Positions.load(sb.positions_path("connect_four"))
  assert len(positions) == 1000
  np.testing.assert_array_equal(np.bincount(positions.source), [500, 500])
  sample = positions.subset(np.random.default_rng(1).choice(len(positions), 12, replace=False))
  np.testing.assert_array_equal(solver.move_scores(env, sample.states(env)), sample.move_scores)
  for lo, hi in env.benchmark_ply_ranges:  # Every ply range is represented.
    assert np.sum((positions.num_moves >= lo) & (positions.num_moves <= hi)) > 100


def test_the_games_give_the_ply_ranges_and_the_sets():
  tic_tac_toe = games.make("tic_tac_toe")
  assert sb.ply_ranges_of(tic_tac_toe) == sb.ply_ranges_of("tic_tac_toe") == ((0, 2), (3, 5),
                                                                             (6, 8))
  # A game with no ranges of its own: four equal ranges over the positions' plies (1..8).
  positions = dataclasses.replace(hand_made(), game="breakthrough")
  assert sb.ply_ranges_of("breakthrough", positions) == ((0, 1), (2, 3), (4, 5), (6, 8))
  # One packaged set per solved game, found by name; a missing one is named in the error.
  assert tuple(sb.DEFAULT_PATHS) == solver.SOLVED_GAMES == ("connect_four", "tic_tac_toe")
  assert all(Path(path).exists() for path in sb.DEFAULT_PATHS.values())
  assert sb.positions_path("tic_tac_toe") == sb.packaged_path("tic_tac_toe")
  assert None in sb.packaged_sets("tic_tac_toe")
  with pytest.raises(ValueError, match="tic_tac_toe has no solver benchmark set 'nonesuch'"):
    sb.positions_path("tic_tac_toe", name="nonesuch")
  with pytest.raises(ValueError, match="breakthrough has no solver benchmark"):
    sb.positions_path("breakthrough")


def test_the_sets_are_package_data():
  """The sets are read from the installed package (importlib.resources), not from a checkout's
  results/, and pyproject.toml declares them, so that a wheel holds them (.ci/wheel)."""
  import importlib.resources

  packaged = importlib.resources.files("azjax") / "data" / "solver_positions"
  assert Path(sb.BENCHMARK_DIR) == Path(str(packaged))
  assert (packaged / "tic_tac_toe.npz").is_file()
  pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
  assert '"azjax" = ["data/solver_positions/*.npz"]' in pyproject


def test_built_sets_are_reproducible_distinct_and_live():
  env = games.make("tic_tac_toe")
  sources = [("random", agents.random_policy, 30, 60)]
  a = sb.build_positions(env, sources, seed=7)
  b = sb.build_positions(env, sources, seed=7)
  np.testing.assert_array_equal(a.moves, b.moves)
  states = a.states(env)
  assert not np.asarray(states.terminated).any()
  assert len(set(solver_positions._position_keys(states))) == 30
  np.testing.assert_array_equal(np.asarray(states.step_count), a.num_moves)


def test_agents_on_the_benchmark():
  env = games.make("tic_tac_toe")
  positions = sb.Positions.load(sb.positions_path("tic_tac_toe"))
  positions = positions.subset(np.arange(0, len(positions), 15))
  key = jax.random.key(0)
  perfect = sb.evaluate_policy(env, agents.make("solver", env, random_opening_moves=0),
                               positions, key)
  assert perfect["all"]["mistakes"] == 0 and perfect["all"]["optimal_rate"] == 1.0
  # The first legal square, always: its mistakes are exactly the positions where it loses value.
  first = agents.Agent("first", lambda states, key: jnp.argmax(states.legal_action_mask, -1))
  metrics = sb.evaluate_policy(env, first, positions, key)["all"]
  chosen = np.argmax(positions.legal, axis=-1)
  lowers = positions.move_values[np.arange(len(positions)), chosen] < positions.values
  assert metrics["mistakes"] == int(np.sum(lowers & positions.decisive))
  assert metrics["mistake_rate"] == pytest.approx(lowers[positions.decisive].mean())


@pytest.mark.slow
def test_network_benchmark_compiles_once():
  env = games.make("tic_tac_toe")
  positions = sb.Positions.load(sb.positions_path("tic_tac_toe")).subset(
      np.arange(0, 4520, 90))
  model = nets.make(nets.NetConfig(kind="mlp", blocks=0, hidden=8, value_hidden=8),
                    env.num_actions)
  variables = nets.init_variables(model, jax.random.key(0), env.observation_shape)
  results = sb.evaluate_agent(env, model, variables, positions, simulations=(0, 2),
                              batch_size=32)
  assert set(results) == {"policy", "search2"}
  for metrics in results.values():
    assert metrics["all"]["positions"] == len(positions)
    assert 0.0 <= metrics["all"]["mistake_rate"] <= 1.0
    assert 0.0 <= metrics["all"]["value_accuracy"] <= 1.0
  (bench, _), = [v for k, v in sb._BENCHMARKS.items() if k[2] == id(positions)]
  # A second call (new variables, new key) reuses the benchmark and compiles nothing.
  before = {name: f._cache_size() for name, f in bench._players.items()}
  sb.evaluate_agent(env, model, jax.tree.map(lambda x: x * 0.5, variables), positions,
                    simulations=(0, 2), batch_size=32, key=jax.random.key(1))
  assert {name: f._cache_size() for name, f in bench._players.items()} == before


def test_play_vs_solver_reports_both_colours():
  env = games.make("tic_tac_toe")
  result = sb.play_vs_solver(env, agents.make("random", env), 4, jax.random.key(0))
  assert sum(result.first) == 4 and sum(result.second) == 4
  assert result.wins == 0  # Nobody beats perfect play.


@pytest.mark.slow
def test_evaluate_solver_mode(tmp_path, trained_run, monkeypatch):
  from azjax.cli import evaluate
  from azjax.evaluate import strength

  assert evaluate.simulation_counts("32,128") == (32, 128) and evaluate.simulation_counts("8") == 8
  positions = sb.Positions.load(sb.positions_path("tic_tac_toe"))
  small = positions.subset(np.arange(0, 4520, 150)).save(tmp_path / "small.npz")
  out = tmp_path / "table.md"
  run = shutil.copytree(trained_run("tic_tac_toe"), tmp_path / "run")  # It gets a strength.json.
  evaluate.main(["--checkpoint", str(run), "--solver", "--simulations", "2",
                 "--positions", str(small), "--solver-out", str(out)])
  text = out.read_text()
  assert f"on {small} (" in text  # A set of one's own by its path; a packaged one by name:
  assert sb.positions_label(sb.packaged_path("tic_tac_toe")) == (
      "azjax/data/solver_positions/tic_tac_toe.npz")
  assert strength.read(run).basis == str(small)
  # Runs are compared on the basis string, so a packaged set is named as the tables name it,
  # never by this machine's install path.
  monkeypatch.setattr(solver_positions, "BENCHMARK_DIR", str(tmp_path))
  evaluate.main(["--checkpoint", str(run), "--solver", "--simulations", "2",
                 "--positions", str(small)])
  assert strength.read(run).basis == "azjax/data/solver_positions/small.npz"
  assert "--solver" in text and "| search2 | all |" in text and "| policy | 0-2 |" in text
  report = json.loads(out.with_suffix(".json").read_text())
  assert set(report["metrics"]) == {"policy", "search2"}
  with pytest.raises(SystemExit):  # Several counts are for --solver only.
    evaluate.main(["--checkpoint", str(trained_run("tic_tac_toe")), "--simulations", "2,4"])
  assert tournament.parse_opponent(games.make("tic_tac_toe"), "solver:0").name == "solver-r0"
