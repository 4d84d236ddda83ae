"""KLENT: the policy target and the lambda-returns against hand-computed values, and one tiny
jitted iteration on tic-tac-toe that trains, checkpoints and resumes exactly."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import files
from azjax.klent import KlentConfig, Learner, lambda_returns, policy_target
from azjax.klent.config import ConfigError
from azjax.runs import checkpoint

PI = jnp.log(jnp.array([0.5, 0.25, 0.25]))
Q = jnp.array([0.0, 1.0, -1.0])
ALL = jnp.ones(3, bool)


def test_policy_target_by_hand():
  # alpha = beta = 1: pi' ~ pi^(1/2) exp(Q/2)
  #   a0: sqrt(0.5)           = 0.707107
  #   a1: sqrt(0.25) e^0.5    = 0.5 * 1.648721 = 0.824361
  #   a2: sqrt(0.25) e^-0.5   = 0.5 * 0.606531 = 0.303265
  #   sum 1.834733 -> 0.385398, 0.449308, 0.165292
  got = policy_target(PI, Q, ALL, alpha=1.0, beta=1.0)
  np.testing.assert_allclose(got, [0.385398, 0.449308, 0.165292], atol=1e-5)
  weights = [math.sqrt(0.5), 0.5 * math.exp(0.5), 0.5 * math.exp(-0.5)]
  np.testing.assert_allclose(got, np.array(weights) / sum(weights), rtol=1e-5)


def test_no_kl_weight_is_the_softmax_of_q():
  # beta = 0, alpha = 0.5: softmax(Q / 0.5) = softmax([0, 2, -2]), whatever pi is:
  #   1, e^2 = 7.389056, e^-2 = 0.135335; sum 8.524391 -> 0.117311, 0.866813, 0.015876
  got = policy_target(PI, Q, ALL, alpha=0.5, beta=0.0)
  np.testing.assert_allclose(got, [0.117311, 0.866813, 0.015876], atol=1e-5)
  uniform = policy_target(jnp.zeros(3), Q, ALL, alpha=0.5, beta=0.0)
  np.testing.assert_allclose(uniform, got, atol=1e-6)


def test_no_entropy_is_a_tilt_of_the_previous_policy():
  # alpha = 0, beta = 1: pi exp(Q) normalised:
  #   0.5, 0.25 e = 0.679570, 0.25 / e = 0.091970; sum 1.271540 -> 0.393224, 0.534445, 0.072330
  got = policy_target(PI, Q, ALL, alpha=0.0, beta=1.0)
  np.testing.assert_allclose(got, [0.393224, 0.534445, 0.072330], atol=1e-5)
  # Equal Q: no tilt at all, the previous policy comes back.
  np.testing.assert_allclose(policy_target(PI, jnp.zeros(3), ALL, alpha=0.0, beta=2.0),
                             [0.5, 0.25, 0.25], atol=1e-6)


def test_illegal_actions_are_masked():
  # Action 3 is illegal and looks best; it gets exactly 0 and the rest is the 3-action answer.
  log_pi = jnp.array([math.log(0.5), math.log(0.25), math.log(0.25), -1e9])
  q = jnp.array([0.0, 1.0, -1.0, 5.0])
  legal = jnp.array([True, True, True, False])
  got = policy_target(log_pi, q, legal, alpha=1.0, beta=1.0)
  assert got[3] == 0.0
  np.testing.assert_allclose(got[:3], [0.385398, 0.449308, 0.165292], atol=1e-5)
  # One legal action: probability 1 there, 0 elsewhere, nothing NaN (even at -1e9 log-probs
  # and in a batch whose other row has no legal action at all).
  one = jnp.array([[False, False, True, False], [False] * 4])
  got = policy_target(jnp.stack([log_pi, log_pi]), jnp.stack([q, q]), one, alpha=0.0, beta=1.0)
  assert np.all(np.isfinite(got))
  np.testing.assert_array_equal(got[0], [0.0, 0.0, 1.0, 0.0])


def test_policy_target_refuses_no_regularisation():
  with pytest.raises(ValueError, match="alpha"):
    policy_target(PI, Q, ALL, alpha=0.0, beta=0.0)
  with pytest.raises(ConfigError, match="alpha"):
    KlentConfig(alpha=0.0, beta=0.0).validate()


# A game of three plies in column 0: player 0 moves (V = 0.2), player 1 (V = -0.4, its own
# side), player 0 (V = 0.6), whose move wins (+1 to its mover). Column 1: player 0 moves
# (V = 0.2), then player 1 (V = -0.4) wins (+1 to player 1), and the slot's next game starts
# (player 0, V = 0.6), still on when the chunk ends (bootstrap V = 0.8).
VALUE = jnp.array([[0.2, 0.2], [-0.4, -0.4], [0.6, 0.6]])
REWARD = jnp.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
DONE = jnp.array([[False, False], [False, True], [True, False]])
FLIP = jnp.ones((3, 2), bool)
BOOTSTRAP = jnp.array([0.9, 0.8])


def returns(td_lambda):
  return lambda_returns(VALUE, REWARD, DONE, FLIP, BOOTSTRAP, td_lambda=td_lambda)


def test_lambda_returns_zero_is_one_step_td():
  # Column 0: G2 = 1 (the win); G1 = -V2 = -0.6; G0 = -V1 = 0.4.
  # Column 1: G2 = -bootstrap = -0.8; G1 = 1 (player 1's win); G0 = -V1 = 0.4.
  np.testing.assert_allclose(returns(0.0), [[0.4, 0.4], [-0.6, 1.0], [1.0, -0.8]], atol=1e-6)


def test_lambda_returns_one_is_the_result_from_each_side():
  # Column 0, player 0 wins: +1 for player 0's plies, -1 for player 1's.
  # Column 1, player 1 wins: -1 for player 0's ply, +1 for player 1's; the new game's ply
  # gets the bootstrap from its own side: -0.8.
  np.testing.assert_allclose(returns(1.0), [[1.0, -1.0], [-1.0, 1.0], [1.0, -0.8]], atol=1e-6)


def test_lambda_returns_in_between():
  # lambda = 0.5, column 0: G2 = 1; G1 = -(0.5 * 0.6 + 0.5 * 1) = -0.8;
  #   G0 = -(0.5 * -0.4 + 0.5 * -0.8) = 0.6.
  # Column 1: G2 = -(0.5 * 0.8 + 0.5 * 0.8) = -0.8; G1 = 1; G0 = -(0.5 * -0.4 + 0.5 * 1) = -0.3.
  np.testing.assert_allclose(returns(0.5), [[0.6, -0.3], [-0.8, 1.0], [1.0, -0.8]], atol=1e-6)


def test_lambda_returns_same_mover_keeps_the_sign():
  # A checkers jump: player 0 moves twice (V = 0.2, 0.4), then the turn passes (bootstrap
  # -0.5 from player 1's side). lambda = 0: G1 = 0.5, G0 = +V1 = 0.4 (no flip).
  got = lambda_returns(jnp.array([0.2, 0.4]), jnp.zeros(2), jnp.zeros(2, bool),
                       jnp.array([False, True]), jnp.array(-0.5), td_lambda=0.0)
  np.testing.assert_allclose(got, [0.4, 0.5], atol=1e-6)


TINY = KlentConfig(selfplay_batch=8, selfplay_steps=6, buffer_size=96, min_buffer=16,
                   train_batch=16, sgd_steps=2, hidden=16, value_hidden=8, blocks=1)


@pytest.mark.slow
def test_tiny_iteration_trains_and_resumes_exactly(tmp_path):
  learner = Learner(TINY)
  state = learner.init()
  before = jax.tree.map(np.asarray, state.params)
  state, metrics = learner.iteration(state)
  metrics = jax.device_get(metrics)
  assert metrics["trained"]
  for name in ("loss", "policy_loss", "value_loss", "q_loss", "policy_entropy", "target_kl"):
    assert np.isfinite(metrics[name]), name
  changed = jax.tree.map(lambda a, b: not np.allclose(a, b), before, state.params)
  assert any(jax.tree.leaves(changed))
  assert int(state.written) == 48 and int(state.positions) == 48

  # Checkpointed and restored, the next iteration is the same one.
  mngr = checkpoint.manager(tmp_path / "run")
  checkpoint.save(mngr, 1, state)
  restored, _ = checkpoint.restore(mngr, learner.init())
  copy = jax.tree.map(jnp.copy, state)
  a, metrics_a = learner.iteration(copy)
  b, metrics_b = learner.iteration(restored)
  for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  assert float(metrics_a["loss"]) == float(metrics_b["loss"])

  # The policy network is an ordinary (logits, value) network.
  logits, value = learner.eval_fn(learner.variables(a), a.games.observation)
  assert logits.shape == (8, 9) and value.shape == (8,)


@pytest.mark.slow
def test_run_trains_resumes_and_loads_as_any_run(tmp_path):
  import dataclasses

  from azjax import runs as all_runs
  from azjax.klent import runs

  config = dataclasses.replace(TINY, iterations=2, checkpoint_every=1, eval_every=0,
                               eval_games=0, minutes=0.0)
  run_dir = tmp_path / "klent"
  assert runs.train(config, run_dir, progress=False, log=lambda m: None).iterations == 2
  with pytest.raises(ValueError, match="already holds a run"):
    runs.train(config, run_dir, progress=False)
  with pytest.raises(ValueError, match="alpha"):
    runs.train(dataclasses.replace(config, alpha=0.5), run_dir, resume=True, progress=False)
  more = dataclasses.replace(config, iterations=3)
  assert runs.train(more, run_dir, resume=True, progress=False, log=lambda m: None
                    ).iterations == 3
  rows = [r["iteration"] for r in runs.loop.read_metrics(run_dir)]
  assert rows == [1, 2, 3]
  assert (run_dir / "klent.json").exists() and (run_dir / "model").is_dir()
  assert all_runs.kind_of(run_dir).name == "klent"
  assert all_runs.players(run_dir).snapshots == (1, 2, 3)
  env, agent = all_runs.load(str(run_dir), simulations=4)
  states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
  actions = np.asarray(agent.act(states, jax.random.key(1)))
  assert np.all(np.asarray(states.legal_action_mask)[np.arange(2), actions])
  # Play's engines read its network as an AlphaZero run's.
  from azjax import play

  assert all_runs.network_config(run_dir).game == "tic_tac_toe"
  assert play._load_network(run_dir).model is not None
  # A pool reads its game through the run kinds: a KLENT run plays a round robin.
  from azjax.cli import evaluate

  evaluate.main(["--pool", str(run_dir), "random", "--games", "2", "--simulations", "2",
                 "--out", str(tmp_path / "pool")])
  rows = files.read_jsonl(tmp_path / "pool" / "matches.jsonl")
  assert len(rows) == 1 and rows[0]["wins"] + rows[0]["draws"] + rows[0]["losses"] == 2


def test_the_klent_command(capsys, monkeypatch):
  import sys

  from azjax.cli import main as cli

  monkeypatch.setattr(sys, "argv", ["/usr/local/bin/azjax", "klent", "--help"])
  with pytest.raises(SystemExit) as info:
    cli.main(["klent", "--help"])
  assert info.value.code == 0 and capsys.readouterr().out.startswith("usage: azjax klent")
  assert cli.main(["klent", "connect_four", "--print-config", "--set", "alpha=0.2",
                   "--minutes", "3"]) == 0
  out = capsys.readouterr().out
  assert 'game = "connect_four"' in out and "alpha = 0.2" in out and "minutes = 3.0" in out
  for argv, why in ((["--set", "alfa=0.1"], "did you mean alpha"),
                    (["--set", "sgd_steps=two"], "sgd_steps: expected int"),
                    (["--set", "game=connect_four"], "this command trains tic_tac_toe"),
                    (["--set", "alpha=0", "--set", "beta=0"], "cannot both be 0")):
    with pytest.raises(SystemExit) as info:
      cli.main(["klent", "tic_tac_toe", "--print-config", *argv])
    assert info.value.code == 2 and why in capsys.readouterr().err, argv


def test_klent_reads_back_the_settings_it_prints(capsys, tmp_path):
  """`azjax klent --print-config` writes the file that `--config` reads, as its header says;
  `--set` goes over the file, and a bad key names the file."""
  from azjax.cli import main as cli

  assert cli.main(["klent", "connect_four", "--print-config", "--set", "alpha=0.2"]) == 0
  printed = capsys.readouterr().out
  assert "`--config FILE` reads it" in printed.splitlines()[0]
  path = tmp_path / "klent.toml"
  path.write_text(printed.replace("hidden = 64 ", "hidden = 48 "))
  assert cli.main(["klent", "connect_four", "--config", str(path), "--set", "beta=2",
                   "--print-config"]) == 0
  out = capsys.readouterr().out
  assert all(line in out for line in ("alpha = 0.2 ", "beta = 2.0 ", "hidden = 48 "))
  (tmp_path / "bad.json").write_text('{"alfa": 1}')
  for argv, why in (([str(tmp_path / "bad.json")], "bad.json: config: unknown key 'alfa'"),
                    ([str(path), "--resume", "--run-dir", str(tmp_path)], "drop --config")):
    with pytest.raises(SystemExit) as info:
      cli.main(["klent", "connect_four", "--config", *argv, "--print-config"])
    assert info.value.code == 2 and why in capsys.readouterr().err, argv


def test_eval_every_zero_evaluates_at_the_end_only():
  """As an AlphaZero run's: `eval_every=0` leaves one evaluation, at the last iteration (the
  loop's `is_last`); `eval_games=0` none."""
  import dataclasses

  from azjax.klent import runs

  at_end = runs.learning(Learner(dataclasses.replace(TINY, eval_every=0, eval_games=2)))
  assert at_end.evaluate is not None
  assert runs.learning(Learner(dataclasses.replace(TINY, eval_games=0))).evaluate is None
