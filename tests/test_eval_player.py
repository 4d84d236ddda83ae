"""One network, one evaluation player: every place that plays or scores a trained network with
search builds the same search from the run's own settings (`azjax.search.for_evaluation`).

Nothing is trained or searched: a run directory holds an untrained network, `search.search` is
replaced by a recorder that stops at the first call, and each place's recorded `SearchConfig`
is compared with one written out by hand.
"""

import dataclasses

import jax
import numpy as np
import pytest

from azjax import games, nets, runs, search
from azjax.cli import evaluate as evaluate_cli
from azjax.cli import export as export_cli
from azjax.config import Config
from azjax.evaluate import curves, evaluators
from azjax.games import base
from azjax.play import engines
from azjax.probe import dataset
from azjax.runs import checkpoint
from azjax.solver import benchmark as solver_benchmark
from azjax.train import Trainer

SIMULATIONS = 8  # every place is asked for these; the run's eval_simulations too
TINY = dict(game="tic_tac_toe", net="mlp", hidden=8, blocks=1, value_hidden=8, simulations=4,
            eval_simulations=SIMULATIONS, selfplay_batch=8, buffer_size=64, min_buffer=8,
            train_batch=8, eval_games=2)

# Non-default search settings, and the evaluation player each must give, field by field: the
# run's own settings, no noise, the recommended move from the first move (temperature_moves 0).
RUNS = {
    "gumbel": (
        Config(**TINY, max_num_considered_actions=4, gumbel_moves=3, gumbel_scale=0.5),
        search.SearchConfig(
            algorithm="gumbel", simulations=SIMULATIONS, max_num_considered_actions=4,
            gumbel_scale=0.0, gumbel_moves=3, dirichlet_alpha=0.3, dirichlet_fraction=0.0,
            pb_c_init=1.25, pb_c_base=19652.0, temperature=1.0, temperature_moves=0)),
    "puct": (
        Config(**TINY, search="puct", pb_c_init=2.0, dirichlet_alpha=0.5, temperature=0.5,
               temperature_moves=4),
        search.SearchConfig(
            algorithm="puct", simulations=SIMULATIONS, max_num_considered_actions=16,
            gumbel_scale=0.0, gumbel_moves=0, dirichlet_alpha=0.5, dirichlet_fraction=0.0,
            pb_c_init=2.0, pb_c_base=19652.0, temperature=0.5, temperature_moves=0)),
}


class Searched(Exception):
  """Raised by the recorder: the search configuration is known, nothing needs to run."""


@pytest.fixture
def recorded(monkeypatch):
  """The `SearchConfig`s that `search.search` is called with (the first call raises)."""
  configs = []

  def record(game, eval_fn, config, variables, states, key):
    configs.append(config)
    raise Searched

  monkeypatch.setattr(search, "search", record)
  # The probe's dataset holds the function itself (`from azjax.search import search`).
  monkeypatch.setattr(dataset, "search", record)
  return configs


def _run_dir(root, config: Config):
  """A run directory with an untrained network: config.json, model/ and models/2."""
  env = games.make(config.game)
  model = nets.make(config.net_config(), env.num_actions)
  variables = nets.init_variables(model, jax.random.key(0), env.observation_shape)
  checkpoint.write_config(root, config)
  checkpoint.save_model(root, variables)
  checkpoint.save_model(root, variables, step=2)
  return root


@pytest.fixture(scope="module")
def positions_file(tmp_path_factory):
  """A few labelled tic-tac-toe positions (the solver benchmark's own, thinned)."""
  positions = solver_benchmark.Positions.load(
      solver_benchmark.positions_path("tic_tac_toe", None))
  return positions.subset(np.arange(0, len(positions), 200)).save(
      tmp_path_factory.mktemp("positions") / "ttt.npz")


def _first_state(env):
  return base.stack_states([env.init(jax.random.key(0))])


# -- The places, each asked for SIMULATIONS simulations --------------------------------------------


def via_load(run, config, positions):
  """`runs.load` (evaluate, tournaments, the OpenSpiel match script)."""
  env, agent = runs.load(run, simulations=SIMULATIONS)
  agent.act(_first_state(env), jax.random.key(0))


def via_evaluator(run, config, positions):
  """The in-training evaluation's matches."""
  trainer = Trainer.create(config)
  variables = checkpoint.load_model(run, nets.init_variables(
      trainer.model, jax.random.key(0), trainer.game.observation_shape))
  evaluators.Evaluator(trainer).evaluate(variables, jax.random.key(0))


def via_solver_evaluator(run, config, positions):
  """The in-training solver scoring (`solver_every`)."""
  trainer = Trainer.create(config)
  variables = nets.init_variables(trainer.model, jax.random.key(0),
                                  trainer.game.observation_shape)
  evaluators.SolverEvaluator(trainer, str(positions))(variables, jax.random.key(0))


def via_play_engine(run, config, positions):
  """Play's "az" engine (the terminal and the web page)."""
  env = games.make(config.game)
  engine = engines.EngineFactory().make(env, f"az:{SIMULATIONS}", run)
  engine.analyse(env.init(jax.random.key(0)), jax.random.key(0))


def via_evaluate_solver(run, config, positions):
  """`azjax evaluate --solver` (the solver benchmark through `evaluate_agent`)."""
  evaluate_cli.main(["--checkpoint", str(run), "--solver", "--positions", str(positions),
                     "--simulations", str(SIMULATIONS), "--out", str(run / "eval")])


def via_curves(run, config, positions):
  """Learning curves: every snapshot on the solver benchmark."""
  curves.solver_curve(run, solver_benchmark.Positions.load(positions),
                      simulations=(0, SIMULATIONS))


def via_export(run, config, positions):
  """`azjax export --agent random`: positions labelled by the evaluation search."""
  export_cli.main(["--checkpoint", str(run), "--agent", "random", "--states", "4",
                   "--batch", "2", "--out", str(run / "export")])


PLACES = [via_load, via_evaluator, via_solver_evaluator, via_play_engine, via_evaluate_solver,
          via_curves, via_export]


@pytest.mark.slow
@pytest.mark.parametrize("run_name", list(RUNS))
@pytest.mark.parametrize("place", PLACES, ids=lambda place: place.__name__)
def test_every_place_searches_with_the_run_evaluation_player(tmp_path, recorded, positions_file,
                                                             run_name, place):
  config, expected = RUNS[run_name]
  run = _run_dir(tmp_path / "run", config)
  with pytest.raises(Searched):
    place(run, config, positions_file)
  assert recorded == [expected]


# -- The override itself ---------------------------------------------------------------------------


def test_for_evaluation_takes_the_noise_out_and_nothing_else():
  run = search.SearchConfig(algorithm="puct", simulations=64, dirichlet_fraction=0.4,
                            temperature_moves=6, pb_c_init=3.0, gumbel_scale=2.0)
  assert search.for_evaluation(run) == dataclasses.replace(
      run, dirichlet_fraction=0.0, temperature_moves=0, gumbel_scale=0.0)
  assert search.for_evaluation(run, 8, pb_c_init=1.0) == dataclasses.replace(
      run, simulations=8, pb_c_init=1.0, dirichlet_fraction=0.0, temperature_moves=0,
      gumbel_scale=0.0)
  # What a caller passes explicitly wins, the noise included (gating's stochastic player).
  assert search.for_evaluation(run, gumbel_scale=1.0).gumbel_scale == 1.0
  # Applying it twice changes nothing.
  once = search.for_evaluation(run, 8)
  assert search.for_evaluation(once) == once
  with pytest.raises(ValueError, match="bad option"):
    search.for_evaluation(run, noise=0.1)
  with pytest.raises(ValueError, match="simulations"):
    search.for_evaluation(run, 0)


def test_config_search_config_is_the_run_search_made_an_evaluation_player():
  config, expected = RUNS["gumbel"]
  assert config.search_config(evaluation=True) == expected
  assert config.search_config(evaluation=True, simulations=3) == dataclasses.replace(
      expected, simulations=3)
  assert config.search_config(evaluation=True, algorithm="puct").algorithm == "puct"
  # Without `evaluation`, the self-play search: the noise stays.
  assert config.search_config(simulations=3) == dataclasses.replace(
      expected, simulations=3, gumbel_scale=0.5, dirichlet_fraction=0.25)


def test_defaults_are_declared_once():
  """`Config`'s network and search defaults are `NetConfig`'s and `SearchConfig`'s."""
  config = Config()
  assert config.search_config() == search.SearchConfig()
  assert config.net_config() == nets.NetConfig()
